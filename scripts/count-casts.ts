import { findingsUnder } from "./typeCasts.ts"

/**
 * Lists each type cast and `any` under a directory (default `src`), then the totals:
 * `bun scripts/count-casts.ts src`. test/docs/casts.test.ts holds the bound.
 */

const findings = findingsUnder(process.argv[2] ?? "src")
for (const finding of findings) {
  const where = `${finding.file}:${finding.line}`
  if (finding.kind === "cast") console.log("cast", where, finding.text)
  else console.log("any", where)
}
const count = (kind: "cast" | "any") => findings.filter((finding) => finding.kind === kind).length
console.log(`casts ${count("cast")}, any ${count("any")}`)
