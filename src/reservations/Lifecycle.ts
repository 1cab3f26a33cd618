import { Either, Schema } from "effect"
import type { Environment } from "../shared/Environment.ts"
import type { CheckinStatus, ReportStatus, ReservationStatus, SandboxSimulate, Status } from "./Reservation.ts"
import {
  AlreadyReported,
  GuestsAlreadyRegistered,
  InvalidRequest,
  RegistrationOpen,
  RegistrationRejected,
  ReservationCancelled
} from "../shared/errors.ts"

/**
 * The reservation state machine (spec "States and transitions", design §6.4–6.6, §6.9, §6.12) as pure data and
 * functions: no I/O, no clock. Dates are Bogotá calendar dates as "YYYY-MM-DD" strings, which compare correctly
 * as strings. Callers load a `LifecycleSnapshot`, ask these rules what a change means, store the next snapshot
 * and write the events returned, in order, in the same transaction.
 */

// ---------------------------------------------------------------------------------------------------------------
// Types

/** The event types a reservation emits (the spec's EventType minus `*` and `ping`). */
export const LifecycleEvent = Schema.Literal(
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
export type LifecycleEvent = typeof LifecycleEvent.Type

/**
 * One report as the rules see it. `reported` is true when an accepted (or simulated-success) report exists, or
 * a submission is in flight or of unknown outcome: from then on the authority may hold the data (design §6.6,
 * §6.9, §6.12), so date changes and reopening are judged as "after reported".
 */
export interface ReportState {
  readonly status: ReportStatus
  readonly reported: boolean
  /**
   * The authority's acceptance code, where it gives one (the TRA's `mincit_code`). A new code on a report that
   * was already `success` means it was accepted again: an extension's added nights (design §6.8).
   */
  readonly code?: number | null
}

/** Everything the lifecycle rules need to know about one reservation. */
export interface LifecycleSnapshot {
  readonly reservation_status: ReservationStatus
  readonly guests_count: number
  readonly guests_registered: number
  readonly registration_complete: boolean
  /** The reservation needs a signed contract before its reports become due (design §6.4; false for endpoint 7). */
  readonly contract_required: boolean
  readonly contract_signed: boolean
  readonly tra: ReportState
  readonly sire: ReportState
  readonly check_in: string
  readonly check_out: string
  /** The day the guests actually left (design §6.8, departure); null until recorded. */
  readonly departed_on: string | null
}

const notApplicable: ReportState = { status: "not_applicable", reported: false }

/** A reservation as endpoint 3 creates it (spec: guests_registered 0, both reports not_applicable). */
export const newReservation = (input: {
  readonly guests_count: number
  readonly contract_required: boolean
  readonly check_in: string
  readonly check_out: string
}): LifecycleSnapshot => ({
  reservation_status: "confirmed",
  guests_count: input.guests_count,
  guests_registered: 0,
  registration_complete: false,
  contract_required: input.contract_required,
  contract_signed: false,
  tra: notApplicable,
  sire: notApplicable,
  check_in: input.check_in,
  check_out: input.check_out,
  departed_on: null
})

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

/** The spec's `status` of a reservation. */
export const deriveStatus = (snapshot: LifecycleSnapshot): Status => {
  if (snapshot.reservation_status === "cancelled") return "cancelled"
  if (!snapshot.registration_complete) return "pending_checkin"
  if (snapshot.contract_required && !snapshot.contract_signed) return "pending_signature"
  return complianceStatus(snapshot.tra.status, snapshot.sire.status)
}

/** The spec's `checkin_status`: `completed` once every guest is registered (design §6.4), else `pending`. */
export const checkinStatus = (snapshot: LifecycleSnapshot): CheckinStatus =>
  snapshot.registration_complete ? "completed" : "pending"

/**
 * Reports are due once registration is complete and, where required, the contract is signed — for test keys
 * too (design §6.4); never for a cancelled reservation. While not due, both reports are `not_applicable`.
 */
export const reportsDue = (snapshot: LifecycleSnapshot): boolean =>
  snapshot.reservation_status === "confirmed" &&
  snapshot.registration_complete &&
  (!snapshot.contract_required || snapshot.contract_signed)

// ---------------------------------------------------------------------------------------------------------------
// Report states when reports become due (design §6.9, §6.12)

/** The `tra` object of the spec's Report, as far as these rules decide it (`reported_at`/`mincit_code`: caller). */
export interface TraReport {
  readonly status: ReportStatus
  readonly sends_on: string | null
  readonly warning?: string
  readonly simulated?: boolean
}

/** The `sire` object of the spec's Report, as far as these rules decide it. */
export interface SireReport {
  readonly status: ReportStatus
  readonly foreign_guests: number
  readonly warning?: string
  readonly simulated?: boolean
}

/** What a property's settings say about reporting. */
export interface ReportingSettings {
  readonly reports_tra: boolean
  readonly reports_sire: boolean
  readonly has_tra_token: boolean
  readonly has_sire_hotel_code: boolean
}

export interface ReportsDueInput {
  readonly environment: Environment
  readonly property: ReportingSettings
  /** Each guest's `nacionalidad` (ISO 3166-1 alpha-2). */
  readonly nationalities: ReadonlyArray<string>
  readonly check_in: string
  /** Ignored with a live key (endpoint validation refuses it there, design §6.12). */
  readonly sandbox_simulate?: SandboxSimulate | null | undefined
}

export interface DueReports {
  readonly tra: TraReport
  readonly sire: SireReport
  /** The report events these outcomes emit, in order (tra before sire), one per change. */
  readonly events: ReadonlyArray<LifecycleEvent>
}

/** Warning texts of report objects; stable enough for tests, human-readable, not a contract. */
export const Warnings = {
  traNotReported: "the property does not report to the TRA; enable TRA reporting in the property settings",
  sireNotReported: "the property does not report to SIRE; enable SIRE reporting in the property settings",
  traTokenMissing: "the property has no TRA token; configure it so the TRA can be sent",
  sireHotelCodeMissing: "the property has no SIRE hotel code; configure it so the SIRE report can be sent",
  simulatedTraRejection: "simulated rejection (sandbox_simulate: tra_failed)",
  simulatedSireRejection: "simulated rejection (sandbox_simulate: sire_failed)",
  cancelledBeforeSending: "the reservation was cancelled before this report went out; it will not be sent"
} as const

/** A guest goes to SIRE when its nationality is not Colombian (design §6.3). */
export const isForeign = (nacionalidad: string): boolean => nacionalidad.toUpperCase() !== "CO"

/** The report objects of a reservation that is created (spec: both `not_applicable`). */
export const initialReports = (environment: Environment): { readonly tra: TraReport; readonly sire: SireReport } => {
  const simulated = environment === "test" ? { simulated: true } : {}
  return {
    tra: { status: "not_applicable", sends_on: null, ...simulated },
    sire: { status: "not_applicable", foreign_guests: 0, ...simulated }
  }
}

/**
 * The simulated answer of one authority to a test key's report (design §6.12): `success`, except the report
 * named by `sandbox_simulate`, which ends in `error`. The simulated authorities themselves are
 * `compliance/Simulated.ts`; this is the rule they follow.
 */
export const simulatedOutcome = (
  report: "tra" | "sire",
  sandboxSimulate: SandboxSimulate | null | undefined
): "success" | "error" => sandboxSimulate === `${report}_failed` ? "error" : "success"

/**
 * The report objects at the moment reports become due (`reportsDue` turns true). Live: an applicable report is
 * `pending` (TRA with `sends_on` = `check_in`), with a warning when a configuration gap will hold it back.
 * Test: an applicable report is at once `success` (or `error` for the one named by `sandbox_simulate`), and
 * its event is returned. A report that does not apply stays `not_applicable`; it carries a warning only when
 * the property does not report to that authority (a stay without foreign guests needs no SIRE and no warning).
 */
export const reportsWhenDue = (input: ReportsDueInput): DueReports => {
  const test = input.environment === "test"
  const simulated = test ? { simulated: true } : {}
  const foreign_guests = input.nationalities.filter(isForeign).length
  const traApplies = input.property.reports_tra
  const sireApplies = input.property.reports_sire && foreign_guests > 0

  const outcome = (report: "tra" | "sire", applies: boolean, configWarning: string | undefined) => {
    if (!applies) return { status: "not_applicable" as const }
    if (!test) return { status: "pending" as const, ...(configWarning === undefined ? {} : { warning: configWarning }) }
    // Test keys: the simulated authorities answer at once (src/compliance/Simulated.ts).
    return { status: simulatedOutcome(report, input.sandbox_simulate) }
  }

  const traOutcome = outcome("tra", traApplies, input.property.has_tra_token ? undefined : Warnings.traTokenMissing)
  const tra: TraReport = {
    ...traOutcome,
    sends_on: traApplies ? input.check_in : null,
    ...(!traApplies ? { warning: Warnings.traNotReported } : {}),
    ...(traOutcome.status === "error" ? { warning: Warnings.simulatedTraRejection } : {}),
    ...simulated
  }

  const sireOutcome = outcome(
    "sire",
    sireApplies,
    input.property.has_sire_hotel_code ? undefined : Warnings.sireHotelCodeMissing
  )
  const sire: SireReport = {
    ...sireOutcome,
    foreign_guests,
    ...(!input.property.reports_sire ? { warning: Warnings.sireNotReported } : {}),
    ...(sireOutcome.status === "error" ? { warning: Warnings.simulatedSireRejection } : {}),
    ...simulated
  }

  return {
    tra,
    sire,
    events: [
      ...reportEvent("tra", notApplicable, { status: tra.status }),
      ...reportEvent("sire", notApplicable, { status: sire.status })
    ]
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Events between two snapshots

/** The event of one report's change: a new outcome, or a success accepted again with a new code. */
const reportEvent = (
  report: "tra" | "sire",
  before: Pick<ReportState, "status" | "code">,
  after: Pick<ReportState, "status" | "code">
): ReadonlyArray<LifecycleEvent> => {
  if (before.status === after.status) {
    const acceptedAgain = after.status === "success" && after.code !== undefined && after.code !== before.code
    return acceptedAgain ? [report === "tra" ? "tra.reported" : "sire.reported"] : []
  }
  if (after.status === "success") return [report === "tra" ? "tra.reported" : "sire.reported"]
  if (after.status === "error") return [report === "tra" ? "tra.failed" : "sire.failed"]
  return []
}

/**
 * The events one change emits, in order, one per change (spec "Events"). `before` null means the reservation
 * is created by this change (`reservation.created` first, then whatever the created reservation already holds:
 * endpoint 7 gives `registration.completed` and the report events). Order: reservation.created,
 * reservation.updated (dates, guests_count or departed_on changed), registration.updated (more guests registered, some
 * still missing), registration.completed (registration closed), contract.signed, tra.*, sire.*. A cancelled
 * reservation emits `reservation.cancelled` once and nothing else, before or after.
 */
export const eventsBetween = (
  before: LifecycleSnapshot | null,
  after: LifecycleSnapshot
): ReadonlyArray<LifecycleEvent> => {
  if (before === null) {
    if (after.reservation_status === "cancelled") return []
    const created = newReservation(after)
    return ["reservation.created", ...changeEvents(created, after)]
  }
  if (before.reservation_status === "cancelled") return []
  if (after.reservation_status === "cancelled") return ["reservation.cancelled"]
  return changeEvents(before, after)
}

/** The fields whose change emits `reservation.updated`, in the order its `changed` names them. */
export const UPDATED_FIELDS = ["check_in", "check_out", "guests_count", "departed_on"] as const
export type UpdatedField = typeof UPDATED_FIELDS[number]

/**
 * The fields of `UPDATED_FIELDS` whose value differs between two snapshots: the `changed` of the
 * `reservation.updated` event they emit (empty: no such event).
 */
export const updatedFields = (
  before: Pick<LifecycleSnapshot, UpdatedField>,
  after: Pick<LifecycleSnapshot, UpdatedField>
): ReadonlyArray<UpdatedField> => UPDATED_FIELDS.filter((field) => before[field] !== after[field])

const changeEvents = (before: LifecycleSnapshot, after: LifecycleSnapshot): ReadonlyArray<LifecycleEvent> => {
  const events: Array<LifecycleEvent> = []
  // Dates, guest count or the recorded departure (design §6.8).
  if (updatedFields(before, after).length > 0) events.push("reservation.updated")
  if (after.guests_registered > before.guests_registered && !after.registration_complete) {
    events.push("registration.updated")
  }
  if (!before.registration_complete && after.registration_complete) events.push("registration.completed")
  if (!before.contract_signed && after.contract_signed) events.push("contract.signed")
  events.push(...reportEvent("tra", before.tra, after.tra))
  events.push(...reportEvent("sire", before.sire, after.sire))
  return events
}

// ---------------------------------------------------------------------------------------------------------------
// Guest registration, contract signature, cancellation

export const cancelledError = () =>
  new ReservationCancelled({ message: "the reservation is cancelled", details: {} })

/**
 * One guest registers through the check-in page (design §5): refused on a cancelled reservation (409
 * reservation_cancelled) and when every guest is already registered (400 registration_rejected).
 */
export const registerGuest = (
  snapshot: LifecycleSnapshot
): Either.Either<LifecycleSnapshot, ReservationCancelled | RegistrationRejected> => {
  if (snapshot.reservation_status === "cancelled") return Either.left(cancelledError())
  if (snapshot.registration_complete) {
    return Either.left(
      new RegistrationRejected({
        message: `all ${snapshot.guests_count} guests are already registered`,
        details: { guests_count: snapshot.guests_count, guests_registered: snapshot.guests_registered }
      })
    )
  }
  const guests_registered = snapshot.guests_registered + 1
  return Either.right({ ...snapshot, guests_registered, registration_complete: guests_registered >= snapshot.guests_count })
}

/**
 * The guest signs the contract (design §5): refused on a cancelled reservation and while registration is open
 * (409 registration_open). Signing again changes nothing.
 */
export const signContract = (
  snapshot: LifecycleSnapshot
): Either.Either<LifecycleSnapshot, ReservationCancelled | RegistrationOpen> => {
  if (snapshot.reservation_status === "cancelled") return Either.left(cancelledError())
  if (!snapshot.registration_complete) {
    return Either.left(
      new RegistrationOpen({
        message: "the contract can be signed only once every guest is registered",
        details: { guests_count: snapshot.guests_count, guests_registered: snapshot.guests_registered }
      })
    )
  }
  return Either.right({ ...snapshot, contract_signed: true })
}

export interface Cancellation {
  readonly next: LifecycleSnapshot
  readonly already_cancelled: boolean
  /** Spec rule 7: which reports had gone out (or may have: in flight); they are not undone. */
  readonly already_reported: { readonly tra: boolean; readonly sire: boolean }
  /** Reports that were waiting and will now never go out (SIRE: remove from batches not yet generated). */
  readonly withdrawn: { readonly tra: boolean; readonly sire: boolean }
}

/**
 * Endpoint 5: idempotent. A report still waiting (pending and not in flight) is withdrawn and becomes
 * `not_applicable` (warning `Warnings.cancelledBeforeSending`); a reported, accepted or rejected one keeps its
 * state. `status` becomes `cancelled` whatever the reports say.
 */
export const cancel = (snapshot: LifecycleSnapshot): Cancellation => {
  const already_reported = { tra: snapshot.tra.reported, sire: snapshot.sire.reported }
  if (snapshot.reservation_status === "cancelled") {
    return { next: snapshot, already_cancelled: true, already_reported, withdrawn: { tra: false, sire: false } }
  }
  const waiting = (report: ReportState) => report.status === "pending" && !report.reported
  const withdrawn = { tra: waiting(snapshot.tra), sire: waiting(snapshot.sire) }
  return {
    next: {
      ...snapshot,
      reservation_status: "cancelled",
      tra: withdrawn.tra ? notApplicable : snapshot.tra,
      sire: withdrawn.sire ? notApplicable : snapshot.sire
    },
    already_cancelled: false,
    already_reported,
    withdrawn
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Modification (spec rule 6, design §6.6)

/** A date change, as the rows of design §6.6's table. */
export type DateChange = "extend_check_out" | "shorten_check_out" | "move_check_in"

/** A cell of design §6.6's table. */
export type DateVerdict = "ok" | "ok_register_extension" | "already_reported"

export interface DateRule {
  readonly change: DateChange
  readonly before_any_report: DateVerdict
  readonly after_tra_reported: DateVerdict
  readonly after_sire_reported: DateVerdict
}

/** Design §6.6's date table, verbatim. */
export const dateRules: ReadonlyArray<DateRule> = [
  {
    change: "extend_check_out",
    before_any_report: "ok",
    after_tra_reported: "ok_register_extension",
    after_sire_reported: "ok"
  },
  {
    change: "shorten_check_out",
    before_any_report: "ok",
    after_tra_reported: "already_reported",
    after_sire_reported: "ok"
  },
  {
    change: "move_check_in",
    before_any_report: "ok",
    after_tra_reported: "already_reported",
    after_sire_reported: "already_reported"
  }
]

/**
 * The verdict for one date change given which reports went out. With both reported, every applicable column
 * must allow it (the strictest cell wins; a TRA extension is still registered).
 */
export const dateVerdict = (
  change: DateChange,
  reported: { readonly tra: boolean; readonly sire: boolean }
): DateVerdict => {
  const rule = dateRules.find((row) => row.change === change)!
  const cells: Array<DateVerdict> = !reported.tra && !reported.sire
    ? [rule.before_any_report]
    : [
      ...(reported.tra ? [rule.after_tra_reported] : []),
      ...(reported.sire ? [rule.after_sire_reported] : [])
    ]
  if (cells.includes("already_reported")) return "already_reported"
  if (cells.includes("ok_register_extension")) return "ok_register_extension"
  return "ok"
}

/** The fields of endpoint 4 these rules judge; omitted fields are not changed. */
export interface ModificationRequest {
  readonly check_in?: string | undefined
  readonly check_out?: string | undefined
  readonly guests_count?: number | undefined
}

export type ModifiableField = "check_in" | "check_out" | "guests_count"

export interface ModificationPlan {
  /** The judged fields whose value changes (a field sent with its current value is no change). */
  readonly changed: ReadonlyArray<ModifiableField>
  /** The date changes found, as rows of `dateRules`. */
  readonly date_changes: ReadonlyArray<DateChange>
  /**
   * guests_count rose after registration completed (no report out): registration reopens — status
   * pending_checkin, checkin_status pending, completed_at null, reports back to not_applicable (a pending
   * SIRE movement leaves its batch), a checkin_url issued if there was none; the signature is kept.
   */
  readonly reopens_registration: boolean
  /** guests_count lowered to exactly guests_registered while registration was open. */
  readonly completes_registration: boolean
  /** After this change the reports are due (`reportsWhenDue` applies; test keys get their outcome now). */
  readonly reports_become_due: boolean
  /** check_out extended after the TRA was reported: the added nights (from → to) go to the TRA (design §6.8). */
  readonly tra_extension: { readonly from: string; readonly to: string } | null
  /** The events, in order: reservation.updated when a judged field changed, then registration.completed. */
  readonly events: ReadonlyArray<LifecycleEvent>
  /** The snapshot after the change (reports still not_applicable where `reports_become_due`). */
  readonly next: LifecycleSnapshot
}

export type ModificationError = ReservationCancelled | InvalidRequest | GuestsAlreadyRegistered | AlreadyReported

const dateChangesOf = (snapshot: LifecycleSnapshot, check_in: string, check_out: string): ReadonlyArray<DateChange> => [
  ...(check_in !== snapshot.check_in ? ["move_check_in" as const] : []),
  ...(check_out > snapshot.check_out ? ["extend_check_out" as const] : []),
  ...(check_out < snapshot.check_out ? ["shorten_check_out" as const] : [])
]

const reportedNames = (snapshot: LifecycleSnapshot) =>
  [...(snapshot.tra.reported ? ["TRA"] : []), ...(snapshot.sire.reported ? ["SIRE"] : [])].join(" and ")

/**
 * Endpoint 4's rules for dates and guest count, in this order: cancelled → 409 reservation_cancelled; resulting
 * check_out not after check_in → 400 invalid_request; guests_count below guests_registered → 409
 * guests_already_registered; the date table (409 already_reported); guests_count raised after completion once a
 * report went out → 409 already_reported.
 */
export const checkModification = (
  snapshot: LifecycleSnapshot,
  change: ModificationRequest
): Either.Either<ModificationPlan, ModificationError> => {
  if (snapshot.reservation_status === "cancelled") return Either.left(cancelledError())

  const check_in = change.check_in ?? snapshot.check_in
  const check_out = change.check_out ?? snapshot.check_out
  const guests_count = change.guests_count ?? snapshot.guests_count

  if (check_out <= check_in) {
    const field = change.check_out !== undefined ? "check_out" : "check_in"
    return Either.left(
      new InvalidRequest({
        message: `check_out (${check_out}) must be later than check_in (${check_in})`,
        details: { fields: [{ field, message: "check_out must be later than check_in" }] }
      })
    )
  }

  if (guests_count < snapshot.guests_registered) {
    return Either.left(
      new GuestsAlreadyRegistered({
        message: `guests_count ${guests_count} is lower than the ${snapshot.guests_registered} guests already registered`,
        details: { guests_count, guests_registered: snapshot.guests_registered }
      })
    )
  }

  const reported = { tra: snapshot.tra.reported, sire: snapshot.sire.reported }
  const date_changes = dateChangesOf(snapshot, check_in, check_out)
  const verdicts = date_changes.map((dateChange) => [dateChange, dateVerdict(dateChange, reported)] as const)
  const refused = verdicts.find(([, verdict]) => verdict === "already_reported")
  if (refused !== undefined) {
    const field = refused[0] === "move_check_in" ? "check_in" : "check_out"
    return Either.left(
      new AlreadyReported({
        message: `${field} cannot change: the stay was already reported to ${reportedNames(snapshot)}`,
        details: { field, change: refused[0], already_reported: reported }
      })
    )
  }

  const raises = guests_count > snapshot.guests_count
  const reopens_registration = raises && snapshot.registration_complete
  if (reopens_registration && (reported.tra || reported.sire)) {
    return Either.left(
      new AlreadyReported({
        message: `guests_count cannot rise: the registration was already reported to ${reportedNames(snapshot)}`,
        details: { field: "guests_count", already_reported: reported }
      })
    )
  }
  const completes_registration = !snapshot.registration_complete && guests_count === snapshot.guests_registered

  const changed: ReadonlyArray<ModifiableField> = [
    ...(check_in !== snapshot.check_in ? ["check_in" as const] : []),
    ...(check_out !== snapshot.check_out ? ["check_out" as const] : []),
    ...(guests_count !== snapshot.guests_count ? ["guests_count" as const] : [])
  ]

  const registration_complete = reopens_registration ? false : completes_registration || snapshot.registration_complete
  const next: LifecycleSnapshot = {
    ...snapshot,
    check_in,
    check_out,
    guests_count,
    registration_complete,
    tra: reopens_registration ? notApplicable : snapshot.tra,
    sire: reopens_registration ? notApplicable : snapshot.sire
  }
  const extension = verdicts.some(([, verdict]) => verdict === "ok_register_extension")

  return Either.right({
    changed,
    date_changes,
    reopens_registration,
    completes_registration,
    reports_become_due: !reportsDue(snapshot) && reportsDue(next),
    tra_extension: extension ? { from: snapshot.check_out, to: check_out } : null,
    events: eventsBetween(snapshot, next),
    next
  })
}
