import { randomInt } from "node:crypto"
import type * as Lifecycle from "../reservations/Lifecycle.ts"

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

/**
 * The stored `tra`/`sire` objects of reports that just became due: a decided report (test keys) gets its
 * `reported_at`, a TRA success its `mincit_code`; pending ones wait for the compliance engine.
 */
export const storedReports = (due: Lifecycle.DueReports, at: string) => {
  const decided = (status: Lifecycle.TraReport["status"]) => status === "success" || status === "error"
  return {
    tra: {
      ...due.tra,
      reported_at: decided(due.tra.status) ? at : null,
      mincit_code: due.tra.status === "success" ? simulatedMincitCode() : null
    },
    sire: { ...due.sire, reported_at: decided(due.sire.status) ? at : null }
  }
}
