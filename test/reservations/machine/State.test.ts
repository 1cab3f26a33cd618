import { describe, expect, test } from "bun:test"
import type { ReportStatus, SandboxSimulate, Status } from "../../../src/reservations/Reservation.ts"
import type { ReservationRow } from "../../../src/reservations/ReservationRow.ts"
import {
  type DueReports,
  type ReportingSettings,
  reportsWhenDue,
  Warnings,
  withDueReports
} from "../../../src/reservations/machine/Reports.ts"
import {
  checkinStatus,
  complianceStatus,
  deriveStatus,
  eventsBetween,
  initialReports,
  isForeign,
  mayBeHeld,
  NO_EXIT,
  type ReservationEvent,
  reportsDue,
  updatedFields
} from "../../../src/reservations/machine/State.ts"
import type { Environment } from "../../../src/shared/Environment.ts"
import { ERROR, IN_FLIGHT, PENDING, reportFixtures, SUCCESS } from "../../support/reportStates.ts"
import { reservationRow } from "../../support/rows.ts"

/** Before check_in (2026-12-10): reports that become due now are not late. */
const AT = new Date("2026-12-05T15:00:00Z")
const CHECK_IN = "2026-12-10"
const SIGNED = new Date("2026-12-03T12:00:00Z")

const { snap, open } = reportFixtures("2026-12-10T15:00:00.000Z", CHECK_IN)

const full: ReportingSettings = { reports_tra: true, reports_sire: true, has_tra_token: true, has_sire_hotel_code: true }

// ---------------------------------------------------------------------------------------------------------------

describe("complianceStatus (design §6.9): every pair of report states", () => {
  const states: ReadonlyArray<ReportStatus> = ["not_applicable", "pending", "success", "error"]
  /** A row per TRA state; its columns are the SIRE states in the order of `states`. */
  const table: ReadonlyArray<readonly [ReportStatus, ReadonlyArray<ReturnType<typeof complianceStatus>>]> = [
    ["not_applicable", ["compliant", "pending_compliance", "compliant", "failed"]],
    ["pending", ["pending_compliance", "pending_compliance", "pending_compliance", "failed"]],
    ["success", ["compliant", "pending_compliance", "compliant", "partial"]],
    ["error", ["failed", "failed", "partial", "failed"]]
  ]
  type Case = [ReportStatus, ReportStatus, ReturnType<typeof complianceStatus>]
  const cases = table.flatMap(([tra, row]) => row.map((expected, column): Case => [tra, states[column]!, expected]))
  test.each<Case>(cases)("tra %s, sire %s → %s", (tra, sire, expected) => {
    expect(complianceStatus(tra, sire)).toBe(expected)
    expect(deriveStatus(snap({ tra: { status: tra, reported: false }, sire: { status: sire, reported: false } })))
      .toBe(expected)
  })
})

describe("deriveStatus and checkinStatus", () => {
  test.each<[string, ReservationRow, Status, "pending" | "completed"]>([
    ["created, nobody registered", open({ guests_registered: 0 }), "pending_checkin", "pending"],
    ["some guests registered", open(), "pending_checkin", "pending"],
    ["reopened with the contract already signed", open({ contract_required: true, contract_signed_at: SIGNED }), "pending_checkin", "pending"],
    ["complete, contract required and unsigned", snap({ contract_required: true }), "pending_signature", "completed"],
    ["complete, contract unsigned, whatever the reports", snap({ contract_required: true, tra: SUCCESS }), "pending_signature", "completed"],
    ["complete, contract signed, reports pending", snap({ contract_required: true, contract_signed_at: SIGNED, tra: PENDING, sire: PENDING }), "pending_compliance", "completed"],
    ["complete, no contract, reports pending", snap({ tra: PENDING }), "pending_compliance", "completed"],
    ["complete, no contract needed, nothing applies", snap(), "compliant", "completed"],
    ["complete, both accepted", snap({ tra: SUCCESS, sire: SUCCESS }), "compliant", "completed"],
    ["complete, one accepted one rejected", snap({ tra: SUCCESS, sire: ERROR }), "partial", "completed"],
    ["complete, TRA rejected, SIRE not applicable", snap({ tra: ERROR }), "failed", "completed"],
    ["complete, TRA rejected, SIRE still pending", snap({ tra: ERROR, sire: PENDING }), "failed", "completed"],
    ["cancelled while open", open({ reservation_status: "cancelled" }), "cancelled", "pending"],
    ["cancelled after completion", snap({ reservation_status: "cancelled" }), "cancelled", "completed"],
    ["cancelled after reports", snap({ reservation_status: "cancelled", tra: SUCCESS, sire: ERROR }), "cancelled", "completed"]
  ])("%s", (_name, row, status, checkin) => {
    expect(deriveStatus(row)).toBe(status)
    expect(checkinStatus(row)).toBe(checkin)
  })

  test("the stored status column is ignored: it is derived from the rest", () => {
    expect(deriveStatus(snap({ status: "failed", tra: SUCCESS }))).toBe("compliant")
  })
})

describe("reportsDue (design §6.4)", () => {
  test.each<[string, ReservationRow, boolean]>([
    ["registration open", open(), false],
    ["complete, no contract needed", snap(), true],
    ["complete, contract unsigned", snap({ contract_required: true }), false],
    ["complete, contract signed", snap({ contract_required: true, contract_signed_at: SIGNED }), true],
    ["signed but reopened", open({ contract_required: true, contract_signed_at: SIGNED }), false],
    ["cancelled", snap({ reservation_status: "cancelled" }), false]
  ])("%s", (_name, row, expected) => {
    expect(reportsDue(row)).toBe(expected)
  })
})

describe("mayBeHeld (design §6.6, §6.9): the *_reported flags, whatever the status", () => {
  test.each<[string, ReservationRow, { tra: boolean; sire: boolean }]>([
    ["nothing sent", snap({ tra: PENDING, sire: PENDING }), { tra: false, sire: false }],
    ["TRA in flight", snap({ tra: IN_FLIGHT, sire: PENDING }), { tra: true, sire: false }],
    ["SIRE accepted", snap({ tra: ERROR, sire: SUCCESS }), { tra: false, sire: true }],
    ["an error the authority may still hold", snap({ tra: { status: "error", reported: true } }), { tra: true, sire: false }]
  ])("%s", (_name, row, expected) => {
    expect(mayBeHeld(row)).toEqual(expected)
  })
})

test("isForeign (design §6.3): any nationality but Colombian, in any case", () => {
  expect(["CO", "co", "Co", "US", "fr", "VE"].map(isForeign)).toEqual([false, false, false, true, true, true])
})

// ---------------------------------------------------------------------------------------------------------------

describe("initialReports (spec: both not_applicable at creation)", () => {
  test("live: no simulated field", () => {
    expect(initialReports("live")).toEqual({
      tra: { status: "not_applicable", sends_on: null, reported_at: null, mincit_code: null },
      sire: { status: "not_applicable", foreign_guests: 0, reported_at: null, exit: NO_EXIT }
    })
  })
  test("test: every report carries simulated true (the exit is armed later, with its own)", () => {
    expect(initialReports("test")).toEqual({
      tra: { status: "not_applicable", sends_on: null, reported_at: null, mincit_code: null, simulated: true },
      sire: { status: "not_applicable", foreign_guests: 0, reported_at: null, exit: NO_EXIT, simulated: true }
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
    DueReports["tra"],
    DueReports["sire"],
    ReadonlyArray<ReservationEvent>,
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
    expect(due).toEqual({ tra, sire })

    // Recorded on the row as `Reservations` stores them (`withDueReports`): the events are exactly the changes,
    // and a (simulated) success counts as reported.
    const before = { ...snap({ environment, sandbox_simulate }), ...initialReports(environment) }
    const after = withDueReports(before, { settings: property, nationalities, simulatedCode: 4242 }, AT)
    expect(after.tra).toMatchObject(tra)
    expect(after.sire).toMatchObject(sire)
    expect(eventsBetween(before, after)).toEqual(events)
    expect(deriveStatus(after)).toBe(status)
    expect(after.tra_reported).toBe(tra.status === "success")
    expect(after.sire_reported).toBe(sire.status === "success")
  })
})

// ---------------------------------------------------------------------------------------------------------------

describe("eventsBetween: one event per change, in order", () => {
  /** As endpoint 3 stores it: two guests, nobody registered. */
  const fresh = reservationRow()
  test.each<[string, ReservationRow | null, ReservationRow, ReadonlyArray<ReservationEvent>]>([
    ["created through the link flow", null, fresh, ["reservation.created"]],
    ["created complete (endpoint 7, live)", null, snap({ tra: PENDING }), ["reservation.created", "registration.completed"]],
    ["created complete (endpoint 7, test)", null, snap({ tra: SUCCESS, sire: SUCCESS }), ["reservation.created", "registration.completed", "tra.reported", "sire.reported"]],
    ["created complete (endpoint 7, test, tra_failed)", null, snap({ tra: ERROR, sire: SUCCESS }), ["reservation.created", "registration.completed", "tra.failed", "sire.reported"]],
    ["created cancelled: nothing", null, snap({ reservation_status: "cancelled" }), []],
    ["nothing changed", snap(), snap(), []],
    ["a guest registers, others remain", open(), open({ guests_registered: 2 }), ["registration.updated"]],
    ["the last guest registers", open({ guests_registered: 2 }), open({ guests_registered: 3, registration_complete: true }), ["registration.completed"]],
    ["the last guest registers and signs", open({ guests_registered: 2 }), open({ guests_registered: 3, registration_complete: true, contract_signed_at: SIGNED }), ["registration.completed", "contract.signed"]],
    ["the contract is signed", snap({ contract_required: true }), snap({ contract_required: true, contract_signed_at: SIGNED }), ["contract.signed"]],
    ["signed, and test-key reports come out", snap({ contract_required: true }), snap({ contract_required: true, contract_signed_at: SIGNED, tra: SUCCESS, sire: ERROR }), ["contract.signed", "tra.reported", "sire.failed"]],
    ["check_out changes", snap(), snap({ check_out: "2026-12-20" }), ["reservation.updated"]],
    ["check_in changes", snap(), snap({ check_in: "2026-12-09" }), ["reservation.updated"]],
    ["guests_count changes", open(), open({ guests_count: 5 }), ["reservation.updated"]],
    ["dates and guests_count change together: one event", open(), open({ guests_count: 5, check_out: "2026-12-20" }), ["reservation.updated"]],
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
    ["cancelled together with other changes: only the cancellation", open(), open({ reservation_status: "cancelled", guests_registered: 2, check_out: "2026-12-20" }), ["reservation.cancelled"]],
    ["after cancellation, an outcome is silent", snap({ reservation_status: "cancelled", tra: IN_FLIGHT }), snap({ reservation_status: "cancelled", tra: SUCCESS }), []],
    ["cancelled twice", snap({ reservation_status: "cancelled" }), snap({ reservation_status: "cancelled" }), []]
  ])("%s", (_name, before, after, events) => {
    expect(eventsBetween(before, after)).toEqual(events)
  })

  test("a success accepted again with a new code emits its event again (an extension, design §6.8)", () => {
    const reported = snap({ tra: SUCCESS })
    expect(eventsBetween(reported, { ...reported, tra: { ...reported.tra, mincit_code: 12 } })).toEqual(["tra.reported"])
    expect(eventsBetween(reported, { ...reported, tra: { ...reported.tra, reported_at: "2026-12-14T15:00:00.000Z" } }))
      .toEqual([])
  })
})

describe("departed_on (design §6.8)", () => {
  test("recording or moving it emits reservation.updated; updatedFields names it", () => {
    expect(eventsBetween(snap(), snap({ departed_on: "2026-12-12" }))).toEqual(["reservation.updated"])
    expect(eventsBetween(snap({ departed_on: "2026-12-12" }), snap({ departed_on: "2026-12-11" }))).toEqual(["reservation.updated"])
    expect(eventsBetween(snap({ departed_on: "2026-12-12" }), snap({ departed_on: "2026-12-12" }))).toEqual([])
    expect(updatedFields(snap(), snap({ departed_on: "2026-12-12", check_out: "2026-12-14" }))).toEqual(["check_out", "departed_on"])
    expect(updatedFields(snap(), snap({ check_in: "2026-12-09", guests_count: 3 }))).toEqual(["check_in", "guests_count"])
    expect(updatedFields(snap(), snap())).toEqual([])
  })
})
