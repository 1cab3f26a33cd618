import { randomInt } from "node:crypto"
import type { ReferenceData } from "./ReferenceData.ts"
import type { SirePlaces } from "./Sire.ts"
import { type Enrolment, type ReportSource, sireWarning, wouldSend } from "./WouldSend.ts"

/**
 * The simulated authorities of test keys (design §6.12): reports never leave the process. When reports become
 * due both applicable reports are decided at once — `success` with `simulated: true` (the TRA with a
 * `mincit_code`), except the one named by `sandbox_simulate`, which ends in `error`. The live path is the report
 * run (`ReportRuns.ts`) over the real clients; this is its stand-in for the test environment.
 *
 * Before it answers, a simulated report goes through everything a live run does before the network — the
 * reference tables with the operators' overrides, and the fields the bodies and lines need (`simulatedWarnings`)
 * —, so an integrator sees in the test environment the warning a live run would give.
 */

/** The simulated answer of one authority to a test key's report (the rule lives with the lifecycle's). */
export { simulatedOutcome } from "../reservations/machine/Reports.ts"

/** A simulated TRA acceptance code for test keys (design §6.12): a positive integer like the ministry's. */
export const simulatedMincitCode = () => randomInt(100_000, 1_000_000_000)

/** A reservation as the simulated authorities check it: what a live run builds its bodies and lines from. */
export type SimulationSource = ReportSource

/** What a live run would say about these reports, or null where it would send them as they are. */
export interface SimulatedWarnings {
  readonly tra: string | null
  readonly sire: string | null
}

/**
 * Enrolment credentials (the TRA token, the SIRE hotel and city codes) are left out: a test property is never
 * enrolled with the authorities, and a live property's settings are checked by its own live reports. The codes
 * are placeholders, so that only the guests' own values are checked.
 */
const UNCHECKED_ENROLMENT: Enrolment = {
  reports_tra: true,
  reports_sire: true,
  has_tra_token: true,
  sire_hotel_code: "1",
  sire_city_code: "1"
}

/**
 * The warning a live run would put on each report (design §6.12), from the same builders (`wouldSend`): a value
 * the reference tables do not map (`motivo`, a document label, a SIRE country or document code), a missing RNT,
 * or the notice of a room sent blank.
 */
export const simulatedWarnings = (
  reference: ReferenceData,
  source: SimulationSource,
  places: SirePlaces
): SimulatedWarnings => {
  const { tra, sire } = wouldSend(reference, source, UNCHECKED_ENROLMENT, places)
  return { tra: tra.problems[0]?.message ?? tra.notice, sire: sireWarning(sire.problems) }
}
