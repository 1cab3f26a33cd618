import ts from "typescript"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
const files: string[] = []
const walk = (d: string) => { for (const f of readdirSync(d)) { const p = join(d, f); if (statSync(p).isDirectory()) walk(p); else if (p.endsWith(".ts")) files.push(p) } }
walk(process.argv[2] ?? "src")
let casts = 0, anys = 0
for (const f of files) {
  const src = ts.createSourceFile(f, readFileSync(f, "utf8"), ts.ScriptTarget.Latest, true)
  const visit = (n: ts.Node) => {
    if ((ts.isAsExpression(n) || ts.isTypeAssertionExpression(n)) && !(ts.isTypeReferenceNode(n.type) && n.type.getText() === "const")) { casts++; console.log("cast", f + ":" + (src.getLineAndCharacterOfPosition(n.getStart()).line + 1), n.getText().slice(0, 100).replace(/\n/g, " ")) }
    if (n.kind === ts.SyntaxKind.AnyKeyword) { anys++; console.log("any", f + ":" + (src.getLineAndCharacterOfPosition(n.getStart()).line + 1)) }
    ts.forEachChild(n, visit)
  }
  visit(src)
}
console.log(`casts ${casts}, any ${anys}`)
