import { Schema } from "effect"
import type { Environment } from "../../shared/Environment.ts"
import type { CheckinStatus, ReportStatus, SireExitReport, Status } from "../Reservation.ts"
import type { ReservationRow } from "../ReservationRow.ts"

/**
 * The state of the reservation machine (spec "States and transitions", design §6.4–6.9, §6.12), in one vocabulary:
 * the reservation as stored. Everything the machine decides — creation, check-in, modification, departure,
 * cancellation, each report's outcome — reads and writes this state; what is derived from it (the `status`, the
 * `checkin_status`, whether reports are due, the events between two states) is read here. Dates are Bogotá
 * calendar dates as "YYYY-MM-DD" strings, which compare correctly as strings. Pure: no I/O, no clock.
 */

/** The machine's state: a reservation, stored or about to be (every column but the id the database assigns). */
export type State = Omit<ReservationRow, "id">

/** The event types a reservation emits (the spec's EventType minus `*` and `ping`). */
export const ReservationEvent = Schema.Literal(
  "reservation.created",
  "reservation.updated",
  "reservation.cancelled",
  "registration.updated",
  "registration.completed",
  "contract.signed",
  "tra.reported",
  "tra.failed",
  "sire.reported",
  "sire.failed"
)
export type ReservationEvent = typeof ReservationEvent.Type

/** The events whose `data` carries the guests (spec "Events": `registration.*`). */
export const carriesGuests = (type: ReservationEvent) => type.startsWith("registration.")

// ---------------------------------------------------------------------------------------------------------------
// Derived fields

/**
 * `status` from the applicable reports (design §6.9). `not_applicable` reports are ignored. An `error` decides
 * before a `pending`: error with a success → partial, error without one → failed (even while the other report
 * is still pending; it may later become partial). Otherwise any pending → pending_compliance, else compliant
 * (which includes "nothing applies").
 */
export const complianceStatus = (
  tra: ReportStatus,
  sire: ReportStatus
): "pending_compliance" | "compliant" | "partial" | "failed" => {
  const applicable: ReadonlyArray<ReportStatus> = [tra, sire].filter((status) => status !== "not_applicable")
  const any = (status: ReportStatus) => applicable.includes(status)
  if (any("error")) return any("success") ? "partial" : "failed"
  if (any("pending")) return "pending_compliance"
  return "compliant"
}

type Registration = Pick<
  State,
  "reservation_status" | "registration_complete" | "contract_required" | "contract_signed_at"
>

/** The spec's `status` of a reservation. */
export const deriveStatus = (state: Registration & Pick<State, "tra" | "sire">): Status => {
  if (state.reservation_status === "cancelled") return "cancelled"
  if (!state.registration_complete) return "pending_checkin"
  if (state.contract_required && state.contract_signed_at === null) return "pending_signature"
  return complianceStatus(state.tra.status, state.sire.status)
}

/** The spec's `checkin_status`: `completed` once every guest is registered (design §6.4), else `pending`. */
export const checkinStatus = (state: Pick<State, "registration_complete">): CheckinStatus =>
  state.registration_complete ? "completed" : "pending"

/**
 * Reports are due once registration is complete and, where required, the contract is signed — for test keys
 * too (design §6.4); never for a cancelled reservation. While not due, both reports are `not_applicable`.
 */
export const reportsDue = (state: Registration): boolean =>
  state.reservation_status === "confirmed" &&
  state.registration_complete &&
  (!state.contract_required || state.contract_signed_at !== null)

/**
 * Whether the authority holds or may hold each report: accepted (or simulated-success), or a submission in flight
 * or of unknown outcome (design §6.6, §6.9, §6.12). What a cancellation answers as `already_reported`, and how
 * date changes are judged ("after reported").
 */
export const mayBeHeld = (state: Pick<State, "tra_reported" | "sire_reported">) => ({
  tra: state.tra_reported,
  sire: state.sire_reported
})

/** A guest goes to SIRE when its nationality is not Colombian (design §6.3). */
export const isForeign = (nacionalidad: string): boolean => nacionalidad.toUpperCase() !== "CO"

/** No exit movement: the entry has not gone out (design §6.8). */
export const NO_EXIT: SireExitReport = { status: "not_applicable", sends_on: null, reported_at: null }

/** The report objects of a reservation that is created (spec: both `not_applicable`). */
export const initialReports = (environment: Environment): Pick<State, "tra" | "sire"> => {
  const simulated = environment === "test" ? { simulated: true } : {}
  return {
    tra: { status: "not_applicable", sends_on: null, reported_at: null, mincit_code: null, ...simulated },
    sire: { status: "not_applicable", foreign_guests: 0, reported_at: null, exit: NO_EXIT, ...simulated }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Events between two states

/** The event of one report's change: a new outcome, or a success accepted again with a new code. */
const reportEvent = (
  report: "tra" | "sire",
  before: { readonly status: ReportStatus; readonly mincit_code?: number | null },
  after: { readonly status: ReportStatus; readonly mincit_code?: number | null }
): ReadonlyArray<ReservationEvent> => {
  if (before.status === after.status) {
    const acceptedAgain = after.status === "success" && after.mincit_code !== undefined &&
      after.mincit_code !== before.mincit_code
    return acceptedAgain ? [report === "tra" ? "tra.reported" : "sire.reported"] : []
  }
  if (after.status === "success") return [report === "tra" ? "tra.reported" : "sire.reported"]
  if (after.status === "error") return [report === "tra" ? "tra.failed" : "sire.failed"]
  return []
}

/** The fields whose change emits `reservation.updated`, in the order its `changed` names them. */
export const UPDATED_FIELDS = ["check_in", "check_out", "guests_count", "departed_on"] as const
export type UpdatedField = typeof UPDATED_FIELDS[number]

/**
 * The fields of `UPDATED_FIELDS` whose value differs between two states: the `changed` of the
 * `reservation.updated` event they emit (empty: no such event).
 */
export const updatedFields = (
  before: Pick<State, UpdatedField>,
  after: Pick<State, UpdatedField>
): ReadonlyArray<UpdatedField> => UPDATED_FIELDS.filter((field) => before[field] !== after[field])

/** What events compare: the state's registration, signature, stay and reports. */
export type Observed = Pick<
  State,
  | UpdatedField
  | "reservation_status"
  | "guests_registered"
  | "registration_complete"
  | "contract_signed_at"
  | "tra"
  | "sire"
>

/**
 * The events one change emits, in order, one per change (spec "Events"). `before` null means the reservation
 * is created by this change (`reservation.created` first, then whatever the created reservation already holds:
 * endpoint 7 gives `registration.completed` and the report events). Order: reservation.created,
 * reservation.updated (dates, guests_count or departed_on changed), registration.updated (more guests registered,
 * some still missing), registration.completed (registration closed), contract.signed, tra.*, sire.*. A cancelled
 * reservation emits `reservation.cancelled` once and nothing else, before or after.
 */
export const eventsBetween = (before: Observed | null, after: Observed): ReadonlyArray<ReservationEvent> => {
  if (before === null) {
    if (after.reservation_status === "cancelled") return []
    // The reservation as endpoint 3 creates it: nothing registered, signed or reported yet.
    const created: Observed = {
      ...after,
      guests_registered: 0,
      registration_complete: false,
      contract_signed_at: null,
      tra: { ...after.tra, status: "not_applicable", mincit_code: null },
      sire: { ...after.sire, status: "not_applicable" }
    }
    return ["reservation.created", ...changeEvents(created, after)]
  }
  if (before.reservation_status === "cancelled") return []
  if (after.reservation_status === "cancelled") return ["reservation.cancelled"]
  return changeEvents(before, after)
}

const changeEvents = (before: Observed, after: Observed): ReadonlyArray<ReservationEvent> => {
  const events: Array<ReservationEvent> = []
  // Dates, guest count or the recorded departure (design §6.8).
  if (updatedFields(before, after).length > 0) events.push("reservation.updated")
  if (after.guests_registered > before.guests_registered && !after.registration_complete) {
    events.push("registration.updated")
  }
  if (!before.registration_complete && after.registration_complete) events.push("registration.completed")
  if (before.contract_signed_at === null && after.contract_signed_at !== null) events.push("contract.signed")
  events.push(...reportEvent("tra", before.tra, after.tra))
  events.push(...reportEvent("sire", before.sire, after.sire))
  return events
}
