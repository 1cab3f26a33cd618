import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import {
  cancel,
  checkinStatus,
  checkModification,
  complianceStatus,
  type DateChange,
  dateRules,
  type DateVerdict,
  dateVerdict,
  deriveStatus,
  eventsBetween,
  initialReports,
  type LifecycleEvent,
  type LifecycleSnapshot,
  type ModifiableField,
  type ModificationRequest,
  newReservation,
  registerGuest,
  type ReportingSettings,
  type ReportState,
  reportsDue,
  reportsWhenDue,
  signContract,
  updatedFields,
  type SireReport,
  type TraReport,
  Warnings
} from "../../src/reservations/Lifecycle.ts"
import type { ReportStatus, SandboxSimulate, Status } from "../../src/reservations/Reservation.ts"
import type { Environment } from "../../src/shared/Environment.ts"

/** The snapshot once due reports are recorded, as `Reservations` stores them: a (simulated) success counts as reported. */
const withReports = (
  snapshot: LifecycleSnapshot,
  reports: { readonly tra: { readonly status: ReportStatus }; readonly sire: { readonly status: ReportStatus } }
): LifecycleSnapshot => ({
  ...snapshot,
  tra: { status: reports.tra.status, reported: reports.tra.status === "success" },
  sire: { status: reports.sire.status, reported: reports.sire.status === "success" }
})

// Report states: not applicable, waiting, in flight (outcome unknown), accepted, rejected.
const NA: ReportState = { status: "not_applicable", reported: false }
const PENDING: ReportState = { status: "pending", reported: false }
const IN_FLIGHT: ReportState = { status: "pending", reported: true }
const SUCCESS: ReportState = { status: "success", reported: true }
const ERROR: ReportState = { status: "error", reported: false }

const CHECK_IN = "2026-11-10"
const CHECK_OUT = "2026-11-13"

/** Two guests, both registered, no contract, reports not yet due. */
const base: LifecycleSnapshot = {
  reservation_status: "confirmed",
  guests_count: 2,
  guests_registered: 2,
  registration_complete: true,
  contract_required: false,
  contract_signed: false,
  tra: NA,
  sire: NA,
  check_in: CHECK_IN,
  check_out: CHECK_OUT,
  departed_on: null
}
const snap = (overrides: Partial<LifecycleSnapshot> = {}): LifecycleSnapshot => ({ ...base, ...overrides })
const open = (overrides: Partial<LifecycleSnapshot> = {}) =>
  snap({ guests_count: 3, guests_registered: 1, registration_complete: false, ...overrides })

const tagOf = <A>(result: Either.Either<A, { readonly _tag: string }>) =>
  Either.match(result, { onLeft: (error) => error._tag, onRight: () => "ok" })
const rightOf = <A, E>(result: Either.Either<A, E>): A => {
  if (Either.isLeft(result)) throw new Error(`expected Right, got ${JSON.stringify(result.left)}`)
  return result.right
}

const full: ReportingSettings = { reports_tra: true, reports_sire: true, has_tra_token: true, has_sire_hotel_code: true }

// ---------------------------------------------------------------------------------------------------------------

describe("complianceStatus (design §6.9): every pair of report states", () => {
  test.each<[ReportStatus, ReportStatus, ReturnType<typeof complianceStatus>]>([
    ["not_applicable", "not_applicable", "compliant"],
    ["not_applicable", "pending", "pending_compliance"],
    ["not_applicable", "success", "compliant"],
    ["not_applicable", "error", "failed"],
    ["pending", "not_applicable", "pending_compliance"],
    ["pending", "pending", "pending_compliance"],
    ["pending", "success", "pending_compliance"],
    ["pending", "error", "failed"],
    ["success", "not_applicable", "compliant"],
    ["success", "pending", "pending_compliance"],
    ["success", "success", "compliant"],
    ["success", "error", "partial"],
    ["error", "not_applicable", "failed"],
    ["error", "pending", "failed"],
    ["error", "success", "partial"],
    ["error", "error", "failed"]
  ])("tra %s, sire %s → %s", (tra, sire, expected) => {
    expect(complianceStatus(tra, sire)).toBe(expected)
    expect(deriveStatus(snap({ tra: { status: tra, reported: false }, sire: { status: sire, reported: false } }))).toBe(
      expected
    )
  })
})

describe("deriveStatus and checkinStatus", () => {
  test.each<[string, LifecycleSnapshot, Status, "pending" | "completed"]>([
    ["created, nobody registered", open({ guests_registered: 0 }), "pending_checkin", "pending"],
    ["some guests registered", open(), "pending_checkin", "pending"],
    ["reopened with the contract already signed", open({ contract_required: true, contract_signed: true }), "pending_checkin", "pending"],
    ["complete, contract required and unsigned", snap({ contract_required: true }), "pending_signature", "completed"],
    ["complete, contract unsigned, whatever the reports", snap({ contract_required: true, tra: SUCCESS }), "pending_signature", "completed"],
    ["complete, contract signed, reports pending", snap({ contract_required: true, contract_signed: true, tra: PENDING, sire: PENDING }), "pending_compliance", "completed"],
    ["complete, no contract, reports pending", snap({ tra: PENDING }), "pending_compliance", "completed"],
    ["complete, no contract needed, nothing applies", snap(), "compliant", "completed"],
    ["complete, both accepted", snap({ tra: SUCCESS, sire: SUCCESS }), "compliant", "completed"],
    ["complete, one accepted one rejected", snap({ tra: SUCCESS, sire: ERROR }), "partial", "completed"],
    ["complete, TRA rejected, SIRE not applicable", snap({ tra: ERROR }), "failed", "completed"],
    ["complete, TRA rejected, SIRE still pending", snap({ tra: ERROR, sire: PENDING }), "failed", "completed"],
    ["cancelled while open", open({ reservation_status: "cancelled" }), "cancelled", "pending"],
    ["cancelled after completion", snap({ reservation_status: "cancelled" }), "cancelled", "completed"],
    ["cancelled after reports", snap({ reservation_status: "cancelled", tra: SUCCESS, sire: ERROR }), "cancelled", "completed"]
  ])("%s", (_name, snapshot, status, checkin) => {
    expect(deriveStatus(snapshot)).toBe(status)
    expect(checkinStatus(snapshot)).toBe(checkin)
  })
})

describe("reportsDue (design §6.4)", () => {
  test.each<[string, LifecycleSnapshot, boolean]>([
    ["registration open", open(), false],
    ["complete, no contract needed", snap(), true],
    ["complete, contract unsigned", snap({ contract_required: true }), false],
    ["complete, contract signed", snap({ contract_required: true, contract_signed: true }), true],
    ["signed but reopened", open({ contract_required: true, contract_signed: true }), false],
    ["cancelled", snap({ reservation_status: "cancelled" }), false]
  ])("%s", (_name, snapshot, expected) => {
    expect(reportsDue(snapshot)).toBe(expected)
  })
})

// ---------------------------------------------------------------------------------------------------------------

describe("initialReports (spec: both not_applicable at creation)", () => {
  test("live: no simulated field", () => {
    expect(initialReports("live")).toEqual({
      tra: { status: "not_applicable", sends_on: null },
      sire: { status: "not_applicable", foreign_guests: 0 }
    })
  })
  test("test: every report carries simulated true", () => {
    expect(initialReports("test")).toEqual({
      tra: { status: "not_applicable", sends_on: null, simulated: true },
      sire: { status: "not_applicable", foreign_guests: 0, simulated: true }
    })
  })
})

describe("reportsWhenDue (design §6.9, §6.12)", () => {
  const foreign = ["CO", "US"]
  const colombian = ["CO", "CO"]
  test.each<[
    string,
    Environment,
    ReportingSettings,
    ReadonlyArray<string>,
    SandboxSimulate | null,
    TraReport,
    SireReport,
    ReadonlyArray<LifecycleEvent>,
    Status
  ]>([
    // live
    ["live, Colombians only", "live", full, colombian, null, { status: "pending", sends_on: CHECK_IN }, { status: "not_applicable", foreign_guests: 0 }, [], "pending_compliance"],
    ["live, a foreign guest", "live", full, foreign, null, { status: "pending", sends_on: CHECK_IN }, { status: "pending", foreign_guests: 1 }, [], "pending_compliance"],
    ["live, nationality in lower case", "live", full, ["co", "us", "FR"], null, { status: "pending", sends_on: CHECK_IN }, { status: "pending", foreign_guests: 2 }, [], "pending_compliance"],
    ["live, property does not report TRA", "live", { ...full, reports_tra: false }, foreign, null, { status: "not_applicable", sends_on: null, warning: Warnings.traNotReported }, { status: "pending", foreign_guests: 1 }, [], "pending_compliance"],
    ["live, property does not report SIRE, foreign guest", "live", { ...full, reports_sire: false }, foreign, null, { status: "pending", sends_on: CHECK_IN }, { status: "not_applicable", foreign_guests: 1, warning: Warnings.sireNotReported }, [], "pending_compliance"],
    ["live, property does not report SIRE, Colombians only", "live", { ...full, reports_sire: false }, colombian, null, { status: "pending", sends_on: CHECK_IN }, { status: "not_applicable", foreign_guests: 0, warning: Warnings.sireNotReported }, [], "pending_compliance"],
    ["live, property reports neither", "live", { ...full, reports_tra: false, reports_sire: false }, foreign, null, { status: "not_applicable", sends_on: null, warning: Warnings.traNotReported }, { status: "not_applicable", foreign_guests: 1, warning: Warnings.sireNotReported }, [], "compliant"],
    ["live, no TRA token", "live", { ...full, has_tra_token: false }, foreign, null, { status: "pending", sends_on: CHECK_IN, warning: Warnings.traTokenMissing }, { status: "pending", foreign_guests: 1 }, [], "pending_compliance"],
    ["live, no SIRE hotel code, foreign guest", "live", { ...full, has_sire_hotel_code: false }, foreign, null, { status: "pending", sends_on: CHECK_IN }, { status: "pending", foreign_guests: 1, warning: Warnings.sireHotelCodeMissing }, [], "pending_compliance"],
    ["live, no SIRE hotel code, Colombians only", "live", { ...full, has_sire_hotel_code: false }, colombian, null, { status: "pending", sends_on: CHECK_IN }, { status: "not_applicable", foreign_guests: 0 }, [], "pending_compliance"],
    ["live, sandbox_simulate is ignored", "live", full, foreign, "tra_failed", { status: "pending", sends_on: CHECK_IN }, { status: "pending", foreign_guests: 1 }, [], "pending_compliance"],
    // test keys
    ["test, a foreign guest", "test", full, foreign, null, { status: "success", sends_on: CHECK_IN, simulated: true }, { status: "success", foreign_guests: 1, simulated: true }, ["tra.reported", "sire.reported"], "compliant"],
    ["test, Colombians only", "test", full, colombian, null, { status: "success", sends_on: CHECK_IN, simulated: true }, { status: "not_applicable", foreign_guests: 0, simulated: true }, ["tra.reported"], "compliant"],
    ["test, missing credentials do not matter", "test", { ...full, has_tra_token: false, has_sire_hotel_code: false }, foreign, null, { status: "success", sends_on: CHECK_IN, simulated: true }, { status: "success", foreign_guests: 1, simulated: true }, ["tra.reported", "sire.reported"], "compliant"],
    ["test, tra_failed", "test", full, foreign, "tra_failed", { status: "error", sends_on: CHECK_IN, warning: Warnings.simulatedTraRejection, simulated: true }, { status: "success", foreign_guests: 1, simulated: true }, ["tra.failed", "sire.reported"], "partial"],
    ["test, sire_failed", "test", full, foreign, "sire_failed", { status: "success", sends_on: CHECK_IN, simulated: true }, { status: "error", foreign_guests: 1, warning: Warnings.simulatedSireRejection, simulated: true }, ["tra.reported", "sire.failed"], "partial"],
    ["test, tra_failed, Colombians only", "test", full, colombian, "tra_failed", { status: "error", sends_on: CHECK_IN, warning: Warnings.simulatedTraRejection, simulated: true }, { status: "not_applicable", foreign_guests: 0, simulated: true }, ["tra.failed"], "failed"],
    ["test, sire_failed but SIRE does not apply: nothing", "test", full, colombian, "sire_failed", { status: "success", sends_on: CHECK_IN, simulated: true }, { status: "not_applicable", foreign_guests: 0, simulated: true }, ["tra.reported"], "compliant"],
    ["test, tra_failed but the property does not report TRA: nothing", "test", { ...full, reports_tra: false }, foreign, "tra_failed", { status: "not_applicable", sends_on: null, warning: Warnings.traNotReported, simulated: true }, { status: "success", foreign_guests: 1, simulated: true }, ["sire.reported"], "compliant"],
    ["test, property does not report SIRE", "test", { ...full, reports_sire: false }, foreign, "sire_failed", { status: "success", sends_on: CHECK_IN, simulated: true }, { status: "not_applicable", foreign_guests: 1, warning: Warnings.sireNotReported, simulated: true }, ["tra.reported"], "compliant"]
  ])("%s", (_name, environment, property, nationalities, sandbox_simulate, tra, sire, events, status) => {
    const due = reportsWhenDue({ environment, property, nationalities, check_in: CHECK_IN, sandbox_simulate })
    expect(due.tra).toEqual(tra)
    expect(due.sire).toEqual(sire)
    expect(due.events).toEqual(events)
    // the events are exactly the changes: recording the outcome on a snapshot gives the same events
    const after = withReports(snap(), due)
    expect(eventsBetween(snap(), after)).toEqual(events)
    expect(deriveStatus(after)).toBe(status)
    expect(after.tra.reported).toBe(tra.status === "success")
    expect(after.sire.reported).toBe(sire.status === "success")
  })
})

// ---------------------------------------------------------------------------------------------------------------

describe("the date table of design §6.6, every cell", () => {
  test("the table is the design's", () => {
    expect(dateRules.map((row) => [row.change, row.before_any_report, row.after_tra_reported, row.after_sire_reported]))
      .toEqual([
        ["extend_check_out", "ok", "ok_register_extension", "ok"],
        ["shorten_check_out", "ok", "already_reported", "ok"],
        ["move_check_in", "ok", "already_reported", "already_reported"]
      ])
  })

  const changes: Record<DateChange, ModificationRequest> = {
    extend_check_out: { check_out: "2026-11-15" },
    shorten_check_out: { check_out: "2026-11-12" },
    move_check_in: { check_in: "2026-11-11" }
  }
  const reportedAs = { none: [NA, NA], tra: [SUCCESS, NA], sire: [NA, SUCCESS], both: [SUCCESS, SUCCESS] } as const

  test.each<[DateChange, keyof typeof reportedAs, DateVerdict]>([
    ["extend_check_out", "none", "ok"],
    ["extend_check_out", "tra", "ok_register_extension"],
    ["extend_check_out", "sire", "ok"],
    ["extend_check_out", "both", "ok_register_extension"],
    ["shorten_check_out", "none", "ok"],
    ["shorten_check_out", "tra", "already_reported"],
    ["shorten_check_out", "sire", "ok"],
    ["shorten_check_out", "both", "already_reported"],
    ["move_check_in", "none", "ok"],
    ["move_check_in", "tra", "already_reported"],
    ["move_check_in", "sire", "already_reported"],
    ["move_check_in", "both", "already_reported"]
  ])("%s, reported: %s → %s", (change, reported, verdict) => {
    const [tra, sire] = reportedAs[reported]
    expect(dateVerdict(change, { tra: tra.reported, sire: sire.reported })).toBe(verdict)

    const result = checkModification(snap({ tra, sire }), changes[change])
    if (verdict === "already_reported") {
      expect(tagOf(result)).toBe("AlreadyReported")
      return
    }
    const plan = rightOf(result)
    expect(plan.date_changes).toEqual([change])
    expect(plan.events).toEqual(["reservation.updated"])
    expect(plan.tra_extension).toEqual(
      verdict === "ok_register_extension" ? { from: CHECK_OUT, to: "2026-11-15" } : null
    )
  })

  test("a TRA report in flight counts as reported", () => {
    expect(tagOf(checkModification(snap({ tra: IN_FLIGHT }), changes.move_check_in))).toBe("AlreadyReported")
  })
  test("a rejected TRA counts as not reported", () => {
    expect(tagOf(checkModification(snap({ tra: ERROR }), changes.move_check_in))).toBe("ok")
  })
  test("a pending TRA that has not gone out counts as not reported", () => {
    expect(tagOf(checkModification(snap({ tra: PENDING, sire: PENDING }), changes.shorten_check_out))).toBe("ok")
  })
})

describe("checkModification (spec rule 6, design §6.6)", () => {
  type Expected = {
    readonly changed?: ReadonlyArray<ModifiableField>
    readonly events?: ReadonlyArray<LifecycleEvent>
    readonly reopens?: boolean
    readonly completes?: boolean
    readonly due?: boolean
    readonly status?: Status
  }
  test.each<[string, LifecycleSnapshot, ModificationRequest, string, Expected]>([
    // refusals and their order
    ["cancelled", snap({ reservation_status: "cancelled" }), { check_out: "2026-11-15" }, "ReservationCancelled", {}],
    ["cancelled, even with nothing to change", snap({ reservation_status: "cancelled" }), {}, "ReservationCancelled", {}],
    ["cancelled wins over guests_already_registered", snap({ reservation_status: "cancelled" }), { guests_count: 1 }, "ReservationCancelled", {}],
    ["check_out equal to check_in", snap(), { check_out: CHECK_IN }, "InvalidRequest", {}],
    ["check_in moved past check_out", snap(), { check_in: "2026-11-14" }, "InvalidRequest", {}],
    ["guests_count below guests registered", snap(), { guests_count: 1 }, "GuestsAlreadyRegistered", {}],
    ["guests_count below registered while open", open({ guests_registered: 2 }), { guests_count: 1 }, "GuestsAlreadyRegistered", {}],
    ["guests_already_registered wins over already_reported", snap({ tra: SUCCESS }), { guests_count: 1, check_in: "2026-11-11" }, "GuestsAlreadyRegistered", {}],
    ["date refusal wins over a guest raise", snap({ tra: SUCCESS }), { guests_count: 3, check_in: "2026-11-11" }, "AlreadyReported", {}],
    // guest count
    ["raise after completion, nothing reported: reopens", snap(), { guests_count: 3 }, "ok", { changed: ["guests_count"], events: ["reservation.updated"], reopens: true, status: "pending_checkin" }],
    ["raise after completion, reports waiting: reopens", snap({ tra: PENDING, sire: PENDING }), { guests_count: 3 }, "ok", { changed: ["guests_count"], events: ["reservation.updated"], reopens: true, status: "pending_checkin" }],
    ["raise after completion, reports rejected: reopens", snap({ tra: ERROR, sire: ERROR }), { guests_count: 3 }, "ok", { changed: ["guests_count"], events: ["reservation.updated"], reopens: true, status: "pending_checkin" }],
    ["raise while awaiting signature: reopens", snap({ contract_required: true }), { guests_count: 3 }, "ok", { changed: ["guests_count"], events: ["reservation.updated"], reopens: true, status: "pending_checkin" }],
    ["raise after TRA reported", snap({ tra: SUCCESS }), { guests_count: 3 }, "AlreadyReported", {}],
    ["raise after SIRE reported", snap({ tra: ERROR, sire: SUCCESS }), { guests_count: 3 }, "AlreadyReported", {}],
    ["raise while the TRA is in flight", snap({ tra: IN_FLIGHT }), { guests_count: 3 }, "AlreadyReported", {}],
    ["raise while open", open(), { guests_count: 4 }, "ok", { changed: ["guests_count"], events: ["reservation.updated"], reopens: false, status: "pending_checkin" }],
    ["lower to exactly guests_registered while open: completes", open({ guests_registered: 2 }), { guests_count: 2 }, "ok", { changed: ["guests_count"], events: ["reservation.updated", "registration.completed"], completes: true, due: true, status: "compliant" }],
    ["lower to guests_registered, contract unsigned: completes, not due", open({ guests_registered: 2, contract_required: true }), { guests_count: 2 }, "ok", { events: ["reservation.updated", "registration.completed"], completes: true, due: false, status: "pending_signature" }],
    ["lower to guests_registered, contract signed before reopening: due", open({ guests_registered: 2, contract_required: true, contract_signed: true }), { guests_count: 2 }, "ok", { events: ["reservation.updated", "registration.completed"], completes: true, due: true }],
    ["lower while open, still above registered", open({ guests_count: 4, guests_registered: 2 }), { guests_count: 3 }, "ok", { changed: ["guests_count"], events: ["reservation.updated"], completes: false, due: false, status: "pending_checkin" }],
    ["same guests_count after reports", snap({ tra: SUCCESS, sire: SUCCESS }), { guests_count: 2 }, "ok", { changed: [], events: [], reopens: false, status: "compliant" }],
    // dates and no-ops
    ["same dates after reports: no change", snap({ tra: SUCCESS, sire: SUCCESS }), { check_in: CHECK_IN, check_out: CHECK_OUT }, "ok", { changed: [], events: [] }],
    ["nothing sent", snap(), {}, "ok", { changed: [], events: [] }],
    ["both dates moved before any report", snap({ tra: PENDING }), { check_in: "2026-11-20", check_out: "2026-11-22" }, "ok", { changed: ["check_in", "check_out"], events: ["reservation.updated"], status: "pending_compliance" }],
    ["dates and guests changed while open", open(), { check_in: "2026-11-09", guests_count: 5 }, "ok", { changed: ["check_in", "guests_count"], events: ["reservation.updated"] }],
    ["extend after SIRE only: no TRA extension", snap({ sire: SUCCESS }), { check_out: "2026-11-20" }, "ok", { changed: ["check_out"], events: ["reservation.updated"], status: "compliant" }]
  ])("%s", (_name, snapshot, change, outcome, expected) => {
    const result = checkModification(snapshot, change)
    expect(tagOf(result)).toBe(outcome)
    if (outcome !== "ok") return
    const plan = rightOf(result)
    if (expected.changed !== undefined) expect(plan.changed).toEqual(expected.changed)
    if (expected.events !== undefined) expect(plan.events).toEqual(expected.events)
    if (expected.reopens !== undefined) expect(plan.reopens_registration).toBe(expected.reopens)
    if (expected.completes !== undefined) expect(plan.completes_registration).toBe(expected.completes)
    if (expected.due !== undefined) expect(plan.reports_become_due).toBe(expected.due)
    if (expected.status !== undefined) expect(deriveStatus(plan.next)).toBe(expected.status)
    expect(eventsBetween(snapshot, plan.next)).toEqual(plan.events)
  })

  test("reopening resets the reports, keeps the signature and the registered guests", () => {
    const plan = rightOf(
      checkModification(snap({ contract_required: true, contract_signed: true, tra: PENDING, sire: ERROR }), { guests_count: 4 })
    )
    expect(plan.next).toEqual(
      snap({ contract_required: true, contract_signed: true, guests_count: 4, registration_complete: false, tra: NA, sire: NA })
    )
    expect(checkinStatus(plan.next)).toBe("pending")
  })

  test("an extension after the TRA was reported names the added nights and keeps the report", () => {
    const plan = rightOf(checkModification(snap({ tra: SUCCESS }), { check_out: "2026-11-16" }))
    expect(plan.tra_extension).toEqual({ from: CHECK_OUT, to: "2026-11-16" })
    expect(plan.next.tra).toEqual(SUCCESS)
    expect(plan.next.check_out).toBe("2026-11-16")
  })

  test("refusals name the field", () => {
    const moved = checkModification(snap({ sire: SUCCESS }), { check_in: "2026-11-11" })
    Either.mapLeft(moved, (error) => expect(error.details).toMatchObject({ field: "check_in", change: "move_check_in" }))
    const shortened = checkModification(snap({ tra: SUCCESS }), { check_out: "2026-11-11" })
    Either.mapLeft(shortened, (error) => expect(error.details).toMatchObject({ field: "check_out" }))
    const raised = checkModification(snap({ tra: SUCCESS }), { guests_count: 5 })
    Either.mapLeft(raised, (error) =>
      expect(error.details).toMatchObject({ field: "guests_count", already_reported: { tra: true, sire: false } }))
    const invalid = checkModification(snap(), { check_in: "2026-11-14" })
    Either.mapLeft(invalid, (error) =>
      expect(error.details).toMatchObject({ fields: [{ field: "check_in" }] }))
    expect([moved, shortened, raised, invalid].every(Either.isLeft)).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------------------------

describe("guest registration, signature and cancellation", () => {
  test.each<[string, LifecycleSnapshot, string, Partial<LifecycleSnapshot>]>([
    ["a guest registers, others remain", open(), "ok", { guests_registered: 2, registration_complete: false }],
    ["the last guest registers", open({ guests_registered: 2 }), "ok", { guests_registered: 3, registration_complete: true }],
    ["registration already complete", snap(), "RegistrationRejected", {}],
    ["cancelled", open({ reservation_status: "cancelled" }), "ReservationCancelled", {}]
  ])("registerGuest: %s", (_name, snapshot, outcome, fields) => {
    const result = registerGuest(snapshot)
    expect(tagOf(result)).toBe(outcome)
    if (outcome === "ok") expect(rightOf(result)).toMatchObject(fields)
  })

  test.each<[string, LifecycleSnapshot, string]>([
    ["registration complete", snap({ contract_required: true }), "ok"],
    ["signed again: unchanged", snap({ contract_required: true, contract_signed: true }), "ok"],
    ["registration open", open({ contract_required: true }), "RegistrationOpen"],
    ["cancelled", snap({ contract_required: true, reservation_status: "cancelled" }), "ReservationCancelled"]
  ])("signContract: %s", (_name, snapshot, outcome) => {
    const result = signContract(snapshot)
    expect(tagOf(result)).toBe(outcome)
    if (outcome === "ok") expect(rightOf(result).contract_signed).toBe(true)
  })

  test.each<[string, LifecycleSnapshot, boolean, { tra: boolean; sire: boolean }, { tra: boolean; sire: boolean }, ReportState, ReportState]>([
    ["open, nothing reported", open(), false, { tra: false, sire: false }, { tra: false, sire: false }, NA, NA],
    ["reports waiting: withdrawn", snap({ tra: PENDING, sire: PENDING }), false, { tra: false, sire: false }, { tra: true, sire: true }, NA, NA],
    ["TRA accepted, SIRE waiting", snap({ tra: SUCCESS, sire: PENDING }), false, { tra: true, sire: false }, { tra: false, sire: true }, SUCCESS, NA],
    ["TRA in flight, SIRE rejected", snap({ tra: IN_FLIGHT, sire: ERROR }), false, { tra: true, sire: false }, { tra: false, sire: false }, IN_FLIGHT, ERROR],
    ["both accepted", snap({ tra: SUCCESS, sire: SUCCESS }), false, { tra: true, sire: true }, { tra: false, sire: false }, SUCCESS, SUCCESS],
    ["already cancelled", snap({ reservation_status: "cancelled", tra: SUCCESS }), true, { tra: true, sire: false }, { tra: false, sire: false }, SUCCESS, NA]
  ])("cancel: %s", (_name, snapshot, already_cancelled, already_reported, withdrawn, tra, sire) => {
    const result = cancel(snapshot)
    expect(result.already_cancelled).toBe(already_cancelled)
    expect(result.already_reported).toEqual(already_reported)
    expect(result.withdrawn).toEqual(withdrawn)
    expect(result.next.reservation_status).toBe("cancelled")
    expect(result.next.tra).toEqual(tra)
    expect(result.next.sire).toEqual(sire)
    expect(deriveStatus(result.next)).toBe("cancelled")
    expect(eventsBetween(snapshot, result.next)).toEqual(already_cancelled ? [] : ["reservation.cancelled"])
  })
})

// ---------------------------------------------------------------------------------------------------------------

describe("eventsBetween: one event per change, in order", () => {
  const fresh = newReservation({ guests_count: 2, contract_required: false, check_in: CHECK_IN, check_out: CHECK_OUT })
  test.each<[string, LifecycleSnapshot | null, LifecycleSnapshot, ReadonlyArray<LifecycleEvent>]>([
    ["created through the link flow", null, fresh, ["reservation.created"]],
    ["created complete (endpoint 7, live)", null, snap({ tra: PENDING }), ["reservation.created", "registration.completed"]],
    ["created complete (endpoint 7, test)", null, snap({ tra: SUCCESS, sire: SUCCESS }), ["reservation.created", "registration.completed", "tra.reported", "sire.reported"]],
    ["created complete (endpoint 7, test, tra_failed)", null, snap({ tra: ERROR, sire: SUCCESS }), ["reservation.created", "registration.completed", "tra.failed", "sire.reported"]],
    ["created cancelled: nothing", null, snap({ reservation_status: "cancelled" }), []],
    ["nothing changed", snap(), snap(), []],
    ["a guest registers, others remain", open(), open({ guests_registered: 2 }), ["registration.updated"]],
    ["the last guest registers", open({ guests_registered: 2 }), open({ guests_registered: 3, registration_complete: true }), ["registration.completed"]],
    ["the last guest registers and signs", open({ guests_registered: 2 }), open({ guests_registered: 3, registration_complete: true, contract_signed: true }), ["registration.completed", "contract.signed"]],
    ["the contract is signed", snap({ contract_required: true }), snap({ contract_required: true, contract_signed: true }), ["contract.signed"]],
    ["signed, and test-key reports come out", snap({ contract_required: true }), snap({ contract_required: true, contract_signed: true, tra: SUCCESS, sire: ERROR }), ["contract.signed", "tra.reported", "sire.failed"]],
    ["check_out changes", snap(), snap({ check_out: "2026-11-20" }), ["reservation.updated"]],
    ["check_in changes", snap(), snap({ check_in: "2026-11-09" }), ["reservation.updated"]],
    ["guests_count changes", open(), open({ guests_count: 5 }), ["reservation.updated"]],
    ["dates and guests_count change together: one event", open(), open({ guests_count: 5, check_out: "2026-11-20" }), ["reservation.updated"]],
    ["lowering completes registration", open({ guests_registered: 2 }), open({ guests_count: 2, guests_registered: 2, registration_complete: true }), ["reservation.updated", "registration.completed"]],
    ["raising reopens registration", snap({ tra: PENDING }), snap({ guests_count: 3, registration_complete: false }), ["reservation.updated"]],
    ["TRA accepted", snap({ tra: PENDING }), snap({ tra: SUCCESS }), ["tra.reported"]],
    ["TRA rejected", snap({ tra: PENDING }), snap({ tra: ERROR }), ["tra.failed"]],
    ["SIRE accepted", snap({ sire: PENDING }), snap({ sire: SUCCESS }), ["sire.reported"]],
    ["SIRE rejected", snap({ sire: PENDING }), snap({ sire: ERROR }), ["sire.failed"]],
    ["both outcomes in one review: TRA first", snap({ tra: PENDING, sire: PENDING }), snap({ tra: ERROR, sire: SUCCESS }), ["tra.failed", "sire.reported"]],
    ["in flight is not an outcome", snap({ tra: PENDING }), snap({ tra: IN_FLIGHT }), []],
    ["reports become pending: no event", snap(), snap({ tra: PENDING, sire: PENDING }), []],
    ["success stays success: no event", snap({ tra: SUCCESS }), snap({ tra: SUCCESS }), []],
    ["cancelled", snap({ tra: PENDING }), snap({ reservation_status: "cancelled" }), ["reservation.cancelled"]],
    ["cancelled together with other changes: only the cancellation", open(), open({ reservation_status: "cancelled", guests_registered: 2, check_out: "2026-11-20" }), ["reservation.cancelled"]],
    ["after cancellation, an outcome is silent", snap({ reservation_status: "cancelled", tra: IN_FLIGHT }), snap({ reservation_status: "cancelled", tra: SUCCESS }), []],
    ["cancelled twice", snap({ reservation_status: "cancelled" }), snap({ reservation_status: "cancelled" }), []]
  ])("%s", (_name, before, after, events) => {
    expect(eventsBetween(before, after)).toEqual(events)
  })
})

// ---------------------------------------------------------------------------------------------------------------

/**
 * Drives a reservation the way the service will: every change records its events; when reports become due,
 * `reportsWhenDue` is applied in the same step and its events follow.
 */
class Journey {
  current: LifecycleSnapshot | null = null
  readonly events: Array<LifecycleEvent> = []
  readonly statuses: Array<Status> = []
  readonly due: Array<ReturnType<typeof reportsWhenDue>> = []

  constructor(
    readonly environment: Environment,
    readonly property: ReportingSettings,
    readonly nationalities: ReadonlyArray<string>,
    readonly sandbox_simulate: SandboxSimulate | null = null
  ) {}

  get now(): LifecycleSnapshot {
    if (this.current === null) throw new Error("no reservation yet")
    return this.current
  }

  go(next: LifecycleSnapshot): this {
    const wasDue = this.current !== null && reportsDue(this.current)
    this.events.push(...eventsBetween(this.current, next))
    this.current = next
    if (!wasDue && reportsDue(next)) {
      const due = reportsWhenDue({
        environment: this.environment,
        property: this.property,
        nationalities: this.nationalities,
        check_in: next.check_in,
        sandbox_simulate: this.sandbox_simulate
      })
      this.due.push(due)
      const withOutcome = withReports(next, due)
      const reportEvents = eventsBetween(next, withOutcome)
      expect(reportEvents).toEqual(due.events)
      this.events.push(...reportEvents)
      this.current = withOutcome
    }
    this.statuses.push(deriveStatus(this.current))
    return this
  }

  step(result: Either.Either<LifecycleSnapshot, unknown>): this {
    return this.go(rightOf(result))
  }

  /** The authority answers (live keys). */
  outcome(report: "tra" | "sire", status: "success" | "error"): this {
    return this.go({ ...this.now, [report]: { status, reported: status === "success" } })
  }
}

describe("whole lifecycles", () => {
  const linkReservation = (guests_count: number, contract_required: boolean) =>
    newReservation({ guests_count, contract_required, check_in: CHECK_IN, check_out: CHECK_OUT })
  const oneCall = (guests_count: number) => ({
    ...newReservation({ guests_count, contract_required: false, check_in: CHECK_IN, check_out: CHECK_OUT }),
    guests_registered: guests_count,
    registration_complete: true
  })

  test("link flow, live, no contract: both reports accepted", () => {
    const j = new Journey("live", full, ["CO", "US"]).go(linkReservation(2, false))
    expect(tagOf(signContract(j.now))).toBe("RegistrationOpen")
    j.step(registerGuest(j.now)).step(registerGuest(j.now))
    expect(tagOf(registerGuest(j.now))).toBe("RegistrationRejected")
    expect(j.due[0]?.tra).toEqual({ status: "pending", sends_on: CHECK_IN })
    expect(checkinStatus(j.now)).toBe("completed")
    j.outcome("tra", "success").outcome("sire", "success")
    expect(j.statuses).toEqual(["pending_checkin", "pending_checkin", "pending_compliance", "pending_compliance", "compliant"])
    expect(j.events).toEqual(["reservation.created", "registration.updated", "registration.completed", "tra.reported", "sire.reported"])
  })

  test("link flow, live, with contract: reports wait for the signature; TRA rejected, SIRE accepted", () => {
    const j = new Journey("live", full, ["CO", "US"]).go(linkReservation(2, true))
    j.step(registerGuest(j.now)).step(registerGuest(j.now))
    expect(j.now.tra).toEqual(NA)
    expect(j.due).toHaveLength(0)
    j.step(signContract(j.now))
    expect(j.due).toHaveLength(1)
    j.outcome("tra", "error").outcome("sire", "success")
    expect(j.statuses).toEqual(["pending_checkin", "pending_checkin", "pending_signature", "pending_compliance", "failed", "partial"])
    expect(j.events).toEqual([
      "reservation.created",
      "registration.updated",
      "registration.completed",
      "contract.signed",
      "tra.failed",
      "sire.reported"
    ])
  })

  test("link flow, test key, with contract: signing produces the simulated outcome at once", () => {
    const j = new Journey("test", full, ["CO", "US"]).go(linkReservation(2, true))
    j.step(registerGuest(j.now)).step(registerGuest(j.now)).step(signContract(j.now))
    expect(j.statuses).toEqual(["pending_checkin", "pending_checkin", "pending_signature", "compliant"])
    expect(j.events).toEqual([
      "reservation.created",
      "registration.updated",
      "registration.completed",
      "contract.signed",
      "tra.reported",
      "sire.reported"
    ])
    // a simulated success counts as reported (design §6.12)
    expect(tagOf(checkModification(j.now, { check_in: "2026-11-11" }))).toBe("AlreadyReported")
    expect(rightOf(checkModification(j.now, { check_out: "2026-11-14" })).tra_extension).toEqual({
      from: CHECK_OUT,
      to: "2026-11-14"
    })
  })

  test("link flow, test key, no contract, one guest", () => {
    const j = new Journey("test", full, ["CO"]).go(linkReservation(1, false))
    j.step(registerGuest(j.now))
    expect(j.statuses).toEqual(["pending_checkin", "compliant"])
    expect(j.events).toEqual(["reservation.created", "registration.completed", "tra.reported"])
  })

  test.each<[string, Environment, ReadonlyArray<string>, SandboxSimulate | null, Status, ReadonlyArray<LifecycleEvent>]>([
    ["live", "live", ["CO", "US"], null, "pending_compliance", []],
    ["test", "test", ["CO", "US"], null, "compliant", ["tra.reported", "sire.reported"]],
    ["test, tra_failed", "test", ["CO", "US"], "tra_failed", "partial", ["tra.failed", "sire.reported"]],
    ["test, sire_failed", "test", ["CO", "US"], "sire_failed", "partial", ["tra.reported", "sire.failed"]],
    ["test, tra_failed, Colombians only", "test", ["CO", "CO"], "tra_failed", "failed", ["tra.failed"]],
    ["test, sire_failed, Colombians only (does nothing)", "test", ["CO", "CO"], "sire_failed", "compliant", ["tra.reported"]]
  ])("one-call flow (design §6.5), %s", (_name, environment, nationalities, simulate, status, reportEvents) => {
    const j = new Journey(environment, full, nationalities, simulate).go(oneCall(2))
    expect(j.statuses).toEqual([status])
    expect(checkinStatus(j.now)).toBe("completed")
    expect(j.events).toEqual(["reservation.created", "registration.completed", ...reportEvents])
  })

  test("one-call flow, live, then the authorities answer", () => {
    const j = new Journey("live", full, ["US", "FR"]).go(oneCall(2))
    expect(j.due[0]?.sire).toEqual({ status: "pending", foreign_guests: 2 })
    j.outcome("sire", "success").outcome("tra", "success")
    expect(j.statuses).toEqual(["pending_compliance", "pending_compliance", "compliant"])
    expect(j.events).toEqual(["reservation.created", "registration.completed", "sire.reported", "tra.reported"])
  })

  test("reopen: raising guests_count before any report, then the new guest completes it again", () => {
    const j = new Journey("live", full, ["CO", "US"]).go(oneCall(2))
    const plan = rightOf(checkModification(j.now, { guests_count: 3 }))
    expect(plan.reopens_registration).toBe(true)
    j.go(plan.next)
    expect(j.now.tra).toEqual(NA)
    j.step(registerGuest(j.now))
    expect(j.due).toHaveLength(2)
    expect(j.statuses).toEqual(["pending_compliance", "pending_checkin", "pending_compliance"])
    expect(j.events).toEqual(["reservation.created", "registration.completed", "reservation.updated", "registration.completed"])
  })

  test("lowering guests_count to the registered guests completes registration (test key)", () => {
    const j = new Journey("test", full, ["CO", "US"]).go(linkReservation(3, false))
    j.step(registerGuest(j.now)).step(registerGuest(j.now))
    const plan = rightOf(checkModification(j.now, { guests_count: 2 }))
    expect(plan.completes_registration).toBe(true)
    expect(plan.reports_become_due).toBe(true)
    j.go(plan.next)
    expect(j.statuses).toEqual(["pending_checkin", "pending_checkin", "pending_checkin", "compliant"])
    expect(j.events).toEqual([
      "reservation.created",
      "registration.updated",
      "registration.updated",
      "reservation.updated",
      "registration.completed",
      "tra.reported",
      "sire.reported"
    ])
  })

  test("cancel: withdraws waiting reports; nothing follows reservation.cancelled", () => {
    const j = new Journey("live", full, ["CO", "US"]).go(linkReservation(2, false))
    j.step(registerGuest(j.now)).step(registerGuest(j.now))
    const first = cancel(j.now)
    expect(first.withdrawn).toEqual({ tra: true, sire: true })
    expect(first.already_reported).toEqual({ tra: false, sire: false })
    j.go(first.next)
    expect(tagOf(registerGuest(j.now))).toBe("ReservationCancelled")
    expect(tagOf(signContract(j.now))).toBe("ReservationCancelled")
    expect(tagOf(checkModification(j.now, { check_out: "2026-11-20" }))).toBe("ReservationCancelled")
    const second = cancel(j.now)
    expect(second.already_cancelled).toBe(true)
    j.go(second.next)
    expect(j.statuses).toEqual(["pending_checkin", "pending_checkin", "pending_compliance", "cancelled", "cancelled"])
    expect(j.events).toEqual(["reservation.created", "registration.updated", "registration.completed", "reservation.cancelled"])
  })

  test("cancel after the TRA was accepted: already_reported, and a late SIRE outcome is silent", () => {
    const j = new Journey("live", full, ["CO", "US"]).go(oneCall(2)).outcome("tra", "success")
    j.go({ ...j.now, sire: IN_FLIGHT })
    const cancellation = cancel(j.now)
    expect(cancellation.already_reported).toEqual({ tra: true, sire: true })
    expect(cancellation.withdrawn).toEqual({ tra: false, sire: false })
    j.go(cancellation.next).outcome("sire", "success")
    expect(j.statuses.at(-1)).toBe("cancelled")
    expect(j.events).toEqual(["reservation.created", "registration.completed", "tra.reported", "reservation.cancelled"])
  })
})

describe("departed_on (design §6.8)", () => {
  test("recording or moving it emits reservation.updated; updatedFields names it", () => {
    expect(eventsBetween(snap(), snap({ departed_on: "2026-11-12" }))).toEqual(["reservation.updated"])
    expect(eventsBetween(snap({ departed_on: "2026-11-12" }), snap({ departed_on: "2026-11-11" }))).toEqual(["reservation.updated"])
    expect(eventsBetween(snap({ departed_on: "2026-11-12" }), snap({ departed_on: "2026-11-12" }))).toEqual([])
    expect(updatedFields(snap(), snap({ departed_on: "2026-11-12", check_out: "2026-11-14" }))).toEqual(["check_out", "departed_on"])
    expect(updatedFields(snap(), snap())).toEqual([])
  })
})
