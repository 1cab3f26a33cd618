import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import ts from "typescript"

/**
 * The type casts (`as X`, `<X>x`, but not `as const`) and `any` keywords in TypeScript source, found with the
 * compiler's own parser rather than a regular expression, so strings, comments and `as const` do not count.
 * `scripts/count-casts.ts` prints them; test/docs/casts.test.ts holds `src/` to its bound (issue 24 item 5).
 */

/** One cast or `any`, where it stands and how it reads. */
export interface Finding {
  readonly kind: "cast" | "any"
  readonly file: string
  readonly line: number
  readonly text: string
}

/** Every `.ts` file under `directory`, in a stable order. */
export const typeScriptFiles = (directory: string): ReadonlyArray<string> =>
  NodeFs.readdirSync(directory, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = NodePath.join(directory, entry.name)
      if (entry.isDirectory()) return typeScriptFiles(path)
      return path.endsWith(".ts") ? [path] : []
    })

const isConstAssertion = (node: ts.AsExpression | ts.TypeAssertion) =>
  ts.isTypeReferenceNode(node.type) && node.type.getText() === "const"

/** The casts and `any` keywords of one file, in source order (`a as unknown as B` is two casts). */
export const findingsIn = (file: string, text: string): ReadonlyArray<Finding> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: Array<Finding> = []
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1
  const visit = (node: ts.Node) => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isConstAssertion(node)) {
      found.push({ kind: "cast", file, line: at(node), text: node.getText().slice(0, 100).replace(/\n/g, " ") })
    }
    if (node.kind === ts.SyntaxKind.AnyKeyword) found.push({ kind: "any", file, line: at(node), text: "any" })
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The casts and `any` keywords of every `.ts` file under `directory`. */
export const findingsUnder = (directory: string): ReadonlyArray<Finding> =>
  typeScriptFiles(directory).flatMap((file) => findingsIn(file, NodeFs.readFileSync(file, "utf8")))
