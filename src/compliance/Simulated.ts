import { Either } from "effect"
import { randomInt } from "node:crypto"
import { isForeign } from "../reservations/machine/State.ts"
import type { GuestRow } from "../reservations/ReservationRow.ts"
import type { ReferenceData } from "./ReferenceData.ts"
import { mappingWarning, type SirePlaces, sireLine } from "./Sire.ts"
import { type TraSource, traInputs, Warnings as TraWarnings } from "./TraInputs.ts"

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
export interface SimulationSource extends TraSource {
  readonly guests: ReadonlyArray<TraSource["guests"][number] & Pick<GuestRow, "nacionalidad" | "fecha_nacimiento" | "pais_procedencia" | "pais_residencia">>
}

/** What a live run would say about these reports, or null where it would send them as they are. */
export interface SimulatedWarnings {
  readonly tra: string | null
  readonly sire: string | null
}

/**
 * The warning a live run would put on each report (design §6.12): a value the reference tables do not map
 * (`motivo`, a document label, a SIRE country or document code), a missing RNT, or the notice of a room sent
 * blank. Enrolment credentials (the TRA token, the SIRE hotel and city codes) are left out: a test property is
 * never enrolled with the authorities, and a live property's settings are checked by its own live reports.
 */
export const simulatedWarnings = (
  reference: ReferenceData,
  source: SimulationSource,
  places: SirePlaces
): SimulatedWarnings => {
  const rnt = source.property.rnt_id === null || source.property.rnt_id.trim() === "" ? TraWarnings.rntMissing : null
  const inputs = traInputs(reference, source, { from: source.row.check_in, to: source.row.check_out })
  const tra = rnt ?? Either.match(inputs, { onLeft: (warning) => warning, onRight: (built) => built.notice })

  const problems = source.guests.flatMap((guest) => {
    if (guest.nacionalidad === null || !isForeign(guest.nacionalidad)) return []
    const line = sireLine(reference, {
      // Placeholders for the enrolment codes (see above): only the guest's own values are checked.
      hotelCode: "1",
      cityCode: "1",
      guest: {
        tipo_documento: guest.tipo_documento,
        numero_documento: guest.numero_documento,
        nacionalidad: guest.nacionalidad,
        apellido: guest.apellido,
        nombre: guest.nombre,
        fecha_nacimiento: guest.fecha_nacimiento,
        pais_procedencia: guest.pais_procedencia,
        pais_residencia: guest.pais_residencia
      },
      movement: "E",
      date: source.row.check_in,
      places
    })
    return Either.isLeft(line) ? [mappingWarning(guest.position, line.left)] : []
  })
  return { tra, sire: problems.length === 0 ? null : problems.join("; ") }
}
