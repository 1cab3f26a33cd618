import { randomInt } from "node:crypto"

/**
 * The simulated authorities of test keys (design §6.12): reports never leave the process. When reports become
 * due both applicable reports are decided at once — `success` with `simulated: true` (the TRA with a
 * `mincit_code`), except the one named by `sandbox_simulate`, which ends in `error`. The live path is the report
 * run (`ReportRuns.ts`) over the real clients; this is its stand-in for the test environment.
 */

/** The simulated answer of one authority to a test key's report (the rule lives with the lifecycle's). */
export { simulatedOutcome } from "../reservations/Lifecycle.ts"

/** A simulated TRA acceptance code for test keys (design §6.12): a positive integer like the ministry's. */
export const simulatedMincitCode = () => randomInt(100_000, 1_000_000_000)
