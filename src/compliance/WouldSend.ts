import { Either } from "effect"
import { Warnings as ReportWarnings } from "../reservations/machine/Reports.ts"
import { isForeign } from "../reservations/machine/State.ts"
import type { GuestRow } from "../reservations/ReservationRow.ts"
import type { ReferenceData } from "./ReferenceData.ts"
import { mappingWarning, sireCityCodeMissing, sireGuest, sireLine, type SirePlaces, sireProblems } from "./Sire.ts"
import type { TraCompanionFields, TraMainBody } from "./Tra.ts"
import { traBodies, type TraProblem, type TraSource, Warnings as TraWarnings } from "./TraInputs.ts"

/**
 * What the authorities would be sent for a stay (design §8b), from the builders a live run sends with
 * (`traBodies`, `sireLine`): the TRA bodies and the SIRE entry lines, or every problem that would hold them. Pure.
 * The validate endpoint answers it; the simulated authorities of test keys take their warnings from it.
 */

/** A reservation as the reports read it: the TRA's source, and each guest's SIRE values. */
export interface ReportSource extends TraSource {
  readonly guests: ReadonlyArray<
    TraSource["guests"][number] & Pick<GuestRow, "nacionalidad" | "fecha_nacimiento" | "pais_procedencia" | "pais_residencia">
  >
}

/** The property's reporting switches and enrolment with the authorities. */
export interface Enrolment {
  readonly reports_tra: boolean
  readonly reports_sire: boolean
  readonly has_tra_token: boolean
  readonly sire_hotel_code: string | null
  readonly sire_city_code: string | null
}

/** Why a report would be held: the guest (registration position; null for the stay or the property) and field. */
export type Problem = TraProblem

/** A companion's `/two/` fields: `padre` is the main guest's code, known once the TRA accepted it. */
export type WouldSendFields = TraMainBody | (TraCompanionFields & { readonly padre: null })

export interface WouldSend {
  readonly tra: {
    readonly applies: boolean
    readonly would_send: ReadonlyArray<{ readonly guest_index: number; readonly fields: WouldSendFields }>
    readonly problems: ReadonlyArray<Problem>
    /** A value sent blank, as the report's warning says (design §6.10); not a problem. */
    readonly notice: string | null
  }
  readonly sire: {
    readonly applies: boolean
    readonly would_send: ReadonlyArray<{ readonly guest_index: number; readonly line: string }>
    readonly problems: ReadonlyArray<Problem>
  }
}

const propertyProblem = (field: string, message: string): Problem => ({ guest_index: null, field, message })

const blank = (value: string | null) => value === null || value.trim() === ""

const traOf = (reference: ReferenceData, source: ReportSource, enrolment: Enrolment): WouldSend["tra"] => {
  if (!enrolment.reports_tra) return { applies: false, would_send: [], problems: [], notice: null }
  // In the order a live run checks them (`TraReporting`): the first is the warning that holds the report.
  const configuration = [
    ...(enrolment.has_tra_token ? [] : [propertyProblem("tra_token", ReportWarnings.traTokenMissing)]),
    ...(blank(source.property.rnt_id) ? [propertyProblem("rnt_id", TraWarnings.rntMissing)] : [])
  ]
  return Either.match(traBodies(reference, source, { from: source.row.check_in, to: source.row.check_out }), {
    onLeft: (problems) => ({ applies: true, would_send: [], problems: [...configuration, ...problems], notice: null }),
    onRight: ({ guests, notice }) => ({
      applies: true,
      would_send: guests.map((guest) => ({
        guest_index: guest.position,
        fields: guest.role === "main" ? guest.body : { ...guest.body, padre: null }
      })),
      problems: configuration,
      notice
    })
  })
}

/** The property's own codes are written on every line: a problem with one is the property's, said once. */
const PROPERTY_FIELDS: ReadonlySet<string> = new Set(["sire_hotel_code", "sire_city_code"])

const sireOf = (
  reference: ReferenceData,
  source: ReportSource,
  enrolment: Enrolment,
  places: SirePlaces
): WouldSend["sire"] => {
  const foreign = source.guests.filter((guest) => guest.nacionalidad !== null && isForeign(guest.nacionalidad))
  if (!enrolment.reports_sire || foreign.length === 0) return { applies: false, would_send: [], problems: [] }
  const { sire_hotel_code: hotelCode, sire_city_code: cityCode } = enrolment
  const problems: Array<Problem> = [
    ...(hotelCode === null ? [propertyProblem("sire_hotel_code", ReportWarnings.sireHotelCodeMissing)] : []),
    ...(cityCode === null ? [propertyProblem("sire_city_code", sireCityCodeMissing)] : [])
  ]
  const lines: Array<{ readonly guest_index: number; readonly line: string }> = []
  for (const guest of foreign) {
    const input = {
      // Without the property's codes no line can be written; placeholders still check the guest's own values.
      hotelCode: hotelCode ?? "1",
      cityCode: cityCode ?? "1",
      guest: sireGuest(guest),
      movement: "E" as const,
      date: source.row.check_in,
      places
    }
    for (const problem of sireProblems(reference, input)) {
      const ofProperty = PROPERTY_FIELDS.has(problem.field)
      if (ofProperty && problems.some((known) => known.field === problem.field)) continue
      problems.push({ guest_index: ofProperty ? null : guest.position, field: problem.field, message: problem.message })
    }
    const line = sireLine(reference, input)
    if (hotelCode !== null && cityCode !== null && Either.isRight(line)) {
      lines.push({ guest_index: guest.position, line: line.right })
    }
  }
  return { applies: true, would_send: lines, problems }
}

/** What the TRA and SIRE would be sent for the stay as it is registered now, and what would hold either. */
export const wouldSend = (
  reference: ReferenceData,
  source: ReportSource,
  enrolment: Enrolment,
  places: SirePlaces
): WouldSend => ({
  tra: traOf(reference, source, enrolment),
  sire: sireOf(reference, source, enrolment, places)
})

/**
 * The SIRE warning of a report run for these problems: the first problem of each guest, as a live run names it
 * (`mappingWarning`), joined; null when there are none.
 */
export const sireWarning = (problems: ReadonlyArray<Problem>): string | null => {
  const seen = new Set<number | null>()
  const warnings = problems.flatMap((problem) => {
    if (seen.has(problem.guest_index)) return []
    seen.add(problem.guest_index)
    return [
      problem.guest_index === null
        ? problem.message
        : mappingWarning(problem.guest_index, { field: problem.field, value: null, message: problem.message })
    ]
  })
  return warnings.length === 0 ? null : warnings.join("; ")
}
