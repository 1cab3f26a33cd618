import { expect, test } from "bun:test"
import * as NodePath from "node:path"
import { findingsUnder } from "../../scripts/typeCasts.ts"
import { ROOT } from "../support/process.ts"

/**
 * Issue 24 item 5: `src/` holds no `any` and at most 25 type casts (`as X`, `<X>x`; `as const` is not a cast).
 * The casts that remain stand where a library's types say less than it does, each with a comment saying why;
 * everywhere else Schema decoding, type guards and typed tables say it instead. `bun scripts/count-casts.ts src`
 * lists them.
 */

const MAX_CASTS = 25

const findings = findingsUnder(NodePath.join(ROOT, "src"))
const listed = (kind: "cast" | "any") =>
  findings
    .filter((finding) => finding.kind === kind)
    .map((finding) => `${NodePath.relative(ROOT, finding.file)}:${finding.line} ${finding.text}`)

test("src/ has no `any`", () => {
  expect(listed("any")).toEqual([])
})

test(`src/ has at most ${MAX_CASTS} type casts`, () => {
  const casts = listed("cast")
  expect(casts.length, `${casts.length} casts in src/:\n${casts.join("\n")}`).toBeLessThanOrEqual(MAX_CASTS)
})
