import { describe, expect, test } from "bun:test"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ROOT } from "../support/process.ts"

/**
 * The code shown in docs/*.md cannot drift from the tested example files: a fenced block right after
 * `<!-- excerpt: examples/FILE -->` must be a run of consecutive lines of that file (the same lines, indented
 * alike), and every example file is linked from the receiver guide.
 */

const DOCS = NodePath.join(ROOT, "docs")
const EXCERPT = /<!-- excerpt: ([^\s]+) -->\n```[a-z]*\n([\s\S]*?)\n```/g

interface Excerpt {
  readonly doc: string
  readonly file: string
  readonly lines: ReadonlyArray<string>
}

const excerpts: Array<Excerpt> = NodeFs.readdirSync(DOCS)
  .filter((name) => name.endsWith(".md"))
  .flatMap((doc) =>
    [...NodeFs.readFileSync(NodePath.join(DOCS, doc), "utf8").matchAll(EXCERPT)].map((match) => ({
      doc,
      file: match[1]!,
      lines: match[2]!.split("\n")
    }))
  )

/** True when `lines` appear consecutively in `source`, all with the same extra indentation (blank matches blank). */
const containsRun = (source: ReadonlyArray<string>, lines: ReadonlyArray<string>) =>
  source.some((first, start) => {
    const indent = first.length - first.trimStart().length
    const prefix = first.slice(0, indent)
    return lines.every((line, i) => {
      const actual = source[start + i]
      if (actual === undefined) return false
      return line === "" ? actual.trim() === "" : actual === prefix + line
    })
  })

describe("excerpts in docs/*.md are the example files' own lines", () => {
  test("the receiver guide shows an excerpt of every language's example", () => {
    const shown = new Set(excerpts.filter((e) => e.doc === "webhooks.md").map((e) => e.file))
    expect([...shown].sort()).toEqual([
      "examples/standard-webhook-receiver.ts",
      "examples/verify-webhook.php",
      "examples/verify_webhook.py",
      "examples/webhook-receiver.php",
      "examples/webhook-receiver.ts"
    ])
  })

  for (const excerpt of excerpts) {
    test(`${excerpt.doc}: ${excerpt.file} at "${excerpt.lines[0]}"`, () => {
      const path = NodePath.join(DOCS, excerpt.file)
      expect(NodeFs.existsSync(path)).toBe(true)
      const source = NodeFs.readFileSync(path, "utf8").split("\n")
      expect(excerpt.lines.length).toBeGreaterThan(2)
      expect(containsRun(source, excerpt.lines)).toBe(true)
    })
  }

  test("every file under docs/examples/ is linked from docs/webhooks.md, and every link there resolves", () => {
    const guide = NodeFs.readFileSync(NodePath.join(DOCS, "webhooks.md"), "utf8")
    const files = NodeFs.readdirSync(NodePath.join(DOCS, "examples")).filter((name) => !name.startsWith("."))
    for (const file of files) expect(guide).toContain(`](examples/${file})`)
    for (const [, target] of guide.matchAll(/\]\(((?:\.\.\/|examples\/)[^)#]+)\)/g)) {
      expect({ target, exists: NodeFs.existsSync(NodePath.join(DOCS, target!)) }).toEqual({ target, exists: true })
    }
  })
})
