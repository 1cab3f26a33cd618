// Prints the plain line "N passed, N failed" for CI from bun's JUnit report, its log and its exit code.
// bun's XML omits files that crash at import time (stack-notes P9), so the log's "N fail" line and a non-zero
// exit code also count as failures. Exits non-zero when anything failed or nothing ran.
import { existsSync, readFileSync } from "node:fs"

const [xmlPath = "junit.xml", rcText = "0", logPath = "test.log"] = process.argv.slice(2)
const rc = Number(rcText)
const xml = existsSync(xmlPath) ? readFileSync(xmlPath, "utf8") : ""
const log = existsSync(logPath) ? readFileSync(logPath, "utf8") : ""

const root = /<testsuites\b([^>]*)>/.exec(xml)?.[1] ?? ""
const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(root)?.[1] ?? 0)
const tests = attr("tests")
const xmlFailures = attr("failures")
const skipped = attr("skipped")
const logFailures = Number(/^\s*(\d+) fail\s*$/m.exec(log)?.[1] ?? 0)
const logErrors = Number(/^\s*(\d+) errors?\s*$/m.exec(log)?.[1] ?? 0)

const passed = Math.max(0, tests - xmlFailures - skipped)
const failed = Math.max(xmlFailures, logFailures + logErrors, rc !== 0 ? 1 : 0)
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
