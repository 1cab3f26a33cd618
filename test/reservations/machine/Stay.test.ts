import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import type {
  CheckinGuestInput,
  ReportStatus,
  SandboxSimulate,
  Status,
  UpdateReservation
} from "../../../src/reservations/Reservation.ts"
import type { GuestRow, ReservationRow } from "../../../src/reservations/ReservationRow.ts"
import type { Decision } from "../../../src/reservations/machine/Decision.ts"
import * as Machine from "../../../src/reservations/machine/Machine.ts"
import { Command } from "../../../src/reservations/machine/Machine.ts"
import type { Verdict } from "../../../src/reservations/machine/Outcomes.ts"
import * as Reports from "../../../src/reservations/machine/Reports.ts"
import {
  checkinStatus,
  deriveStatus,
  initialReports,
  NO_EXIT,
  type ReservationEvent,
  type State
} from "../../../src/reservations/machine/State.ts"
import * as Stay from "../../../src/reservations/machine/Stay.ts"
import type { Environment } from "../../../src/shared/Environment.ts"
import { dueRow, exitDueRow, guestRow, reservationRow } from "../../support/rows.ts"
import { ERROR, IN_FLIGHT, NA, PENDING, type ReportState, reportFixtures, SUCCESS } from "../../support/reportStates.ts"

/** Before check_in (2026-12-10): reports that become due now are not late. */
const AT = new Date("2026-12-05T15:00:00Z")
const CHECK_IN = "2026-12-10"
const CHECK_OUT = "2026-12-13"
const SIGNED = new Date("2026-12-03T12:00:00Z")

const { snap, open } = reportFixtures("2026-12-04T15:00:00.000Z", CHECK_IN)
/** The report as the row holds it. */
const stateOf = (row: State, report: "tra" | "sire"): ReportState => ({
  status: row[report].status,
  reported: report === "tra" ? row.tra_reported : row.sire_reported
})

const decide = <C extends Command>(row: ReservationRow, command: C, guests: ReadonlyArray<GuestRow> = []) =>
  Machine.decide({ row, guests }, command, AT)
const modify = (row: ReservationRow, body: Omit<UpdateReservation, "external_id"> = {}) =>
  decide(row, Command.Modify({ body: { external_id: "PMS-1", ...body } }))
/** Commits a decision the way `Reservations.apply` does, minus the I/O (no reports becoming due here). */
const commit = <A>(before: ReservationRow, decided: Decision<A>) =>
  Machine.follow(before, { ...before, ...decided.set }, AT)

const right = <A, E>(result: Either.Either<A, E>): A => {
  if (Either.isLeft(result)) throw new Error(`expected Right, got ${JSON.stringify(result.left)}`)
  return result.right
}
const tagOf = <A, E extends { readonly _tag: string }>(result: Either.Either<A, E>) =>
  Either.match(result, { onLeft: (error) => error._tag, onRight: () => "ok" })
const leftOf = <A, E>(result: Either.Either<A, E>): E => {
  if (Either.isRight(result)) throw new Error("expected Left")
  return result.left
}

const guestInput = (overrides: { readonly [K in keyof CheckinGuestInput]?: CheckinGuestInput[K] | undefined } = {}) => ({
  tipo_documento: "C.C",
  numero_documento: "99887766",
  nombre: "Luis",
  apellido: "Rojas",
  nacionalidad: "CO",
  pais_procedencia: "CO",
  ciudad_procedencia: "Cali",
  pais_residencia: "CO",
  ciudad_residencia: "Cali",
  motivo: "Trabajo" as CheckinGuestInput["motivo"],
  ...overrides
}) as CheckinGuestInput
const enter = (requiresDocumentPhotos = false, overrides: Parameters<typeof guestInput>[0] = {}) =>
  Command.EnterGuest({ input: guestInput(overrides), requiresDocumentPhotos })
/** The guests already registered, as stored. */
const registered = (count: number): ReadonlyArray<GuestRow> =>
  Array.from({ length: count }, (_, position) =>
    guestRow({ id: `00000000-0000-4000-8000-00000000000${position}`, position, is_primary: position === 0 }))

// ---------------------------------------------------------------------------------------------------------------

describe("the date table of design §6.6, every cell", () => {
  test("the table is the design's", () => {
    expect(Stay.dateRules.map((row) => [row.change, row.before_any_report, row.after_tra_reported, row.after_sire_reported]))
      .toEqual([
        ["extend_check_out", "ok", "ok_register_extension", "ok"],
        ["shorten_check_out", "ok", "already_reported", "ok"],
        ["move_check_in", "ok", "already_reported", "already_reported"]
      ])
  })

  const changes: Record<Stay.DateChange, Omit<UpdateReservation, "external_id">> = {
    extend_check_out: { check_out: "2026-12-15" },
    shorten_check_out: { check_out: "2026-12-12" },
    move_check_in: { check_in: "2026-12-11" }
  }
  const reportedAs = { none: [NA, NA], tra: [SUCCESS, NA], sire: [NA, SUCCESS], both: [SUCCESS, SUCCESS] } as const

  const reportedColumns: ReadonlyArray<keyof typeof reportedAs> = ["none", "tra", "sire", "both"]
  /** A row per change; its columns are the verdicts when the reports in `reportedColumns` went out. */
  const verdicts: ReadonlyArray<readonly [Stay.DateChange, ReadonlyArray<Stay.DateVerdict>]> = [
    ["extend_check_out", ["ok", "ok_register_extension", "ok", "ok_register_extension"]],
    ["shorten_check_out", ["ok", "already_reported", "ok", "already_reported"]],
    ["move_check_in", ["ok", "already_reported", "already_reported", "already_reported"]]
  ]
  type Case = [Stay.DateChange, keyof typeof reportedAs, Stay.DateVerdict]
  const cases = verdicts.flatMap(([change, row]) => row.map((verdict, column): Case => [change, reportedColumns[column]!, verdict]))
  test.each<Case>(cases)("%s, reported: %s → %s", (change, reported, verdict) => {
    const [tra, sire] = reportedAs[reported]
    expect(Stay.dateVerdict(change, { tra: tra.reported, sire: sire.reported })).toBe(verdict)

    const row = snap({ tra, sire })
    const result = modify(row, changes[change])
    if (verdict === "already_reported") {
      expect(tagOf(result)).toBe("AlreadyReported")
      return
    }
    const decided = right(result)
    expect(decided.result.changed).toEqual([change === "move_check_in" ? "check_in" : "check_out"])
    expect(commit(row, decided).events).toEqual(["reservation.updated"])
    // The added nights go to the TRA from the old check_out (design §6.8).
    expect(decided.set.tra_extension_from).toBe(verdict === "ok_register_extension" ? CHECK_OUT : null)
  })

  test("a TRA report in flight counts as reported", () => {
    expect(tagOf(modify(snap({ tra: IN_FLIGHT }), changes.move_check_in))).toBe("AlreadyReported")
  })
  test("a rejected TRA counts as not reported", () => {
    expect(tagOf(modify(snap({ tra: ERROR }), changes.move_check_in))).toBe("ok")
  })
  test("a pending TRA that has not gone out counts as not reported", () => {
    expect(tagOf(modify(snap({ tra: PENDING, sire: PENDING }), changes.shorten_check_out))).toBe("ok")
  })
})

describe("modify (spec rule 6, design §6.6)", () => {
  type Expected = {
    readonly changed?: ReadonlyArray<string>
    readonly events?: ReadonlyArray<ReservationEvent>
    readonly reopens?: boolean
    readonly completes?: boolean
    readonly due?: boolean
    /** Before the due reports are recorded (`Reports.withDueReports`). */
    readonly status?: Status
  }
  test.each<[string, ReservationRow, Omit<UpdateReservation, "external_id">, string, Expected]>([
    // refusals and their order
    ["cancelled", snap({ reservation_status: "cancelled" }), { check_out: "2026-12-15" }, "ReservationCancelled", {}],
    ["cancelled, even with nothing to change", snap({ reservation_status: "cancelled" }), {}, "ReservationCancelled", {}],
    ["cancelled wins over guests_already_registered", snap({ reservation_status: "cancelled" }), { guests_count: 1 }, "ReservationCancelled", {}],
    ["check_out equal to check_in", snap(), { check_out: CHECK_IN }, "InvalidRequest", {}],
    ["check_in moved past check_out", snap(), { check_in: "2026-12-14" }, "InvalidRequest", {}],
    ["guests_count below guests registered", snap(), { guests_count: 1 }, "GuestsAlreadyRegistered", {}],
    ["guests_count below registered while open", open({ guests_registered: 2 }), { guests_count: 1 }, "GuestsAlreadyRegistered", {}],
    ["guests_already_registered wins over already_reported", snap({ tra: SUCCESS }), { guests_count: 1, check_in: "2026-12-11" }, "GuestsAlreadyRegistered", {}],
    ["date refusal wins over a guest raise", snap({ tra: SUCCESS }), { guests_count: 3, check_in: "2026-12-11" }, "AlreadyReported", {}],
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
    ["lower to guests_registered, contract signed before reopening: due", open({ guests_registered: 2, contract_required: true, contract_signed_at: SIGNED }), { guests_count: 2 }, "ok", { events: ["reservation.updated", "registration.completed"], completes: true, due: true }],
    ["lower while open, still above registered", open({ guests_count: 4, guests_registered: 2 }), { guests_count: 3 }, "ok", { changed: ["guests_count"], events: ["reservation.updated"], completes: false, due: false, status: "pending_checkin" }],
    ["same guests_count after reports", snap({ tra: SUCCESS, sire: SUCCESS }), { guests_count: 2 }, "ok", { changed: [], events: [], reopens: false, status: "compliant" }],
    // dates and no-ops
    ["same dates after reports: no change", snap({ tra: SUCCESS, sire: SUCCESS }), { check_in: CHECK_IN, check_out: CHECK_OUT }, "ok", { changed: [], events: [] }],
    ["nothing sent", snap(), {}, "ok", { changed: [], events: [] }],
    ["both dates moved before any report", snap({ tra: PENDING }), { check_in: "2026-12-20", check_out: "2026-12-22" }, "ok", { changed: ["check_in", "check_out"], events: ["reservation.updated"], status: "pending_compliance" }],
    ["dates and guests changed while open", open(), { check_in: "2026-12-09", guests_count: 5 }, "ok", { changed: ["check_in", "guests_count"], events: ["reservation.updated"] }],
    ["extend after SIRE only: no TRA extension", snap({ sire: SUCCESS }), { check_out: "2026-12-20" }, "ok", { changed: ["check_out"], events: ["reservation.updated"], status: "compliant" }]
  ])("%s", (_name, row, body, outcome, expected) => {
    const result = modify(row, body)
    expect(tagOf(result)).toBe(outcome)
    if (outcome !== "ok") return
    const decided = right(result)
    const next = { ...row, ...decided.set }
    const { after, events } = Machine.follow(row, next, AT)
    if (expected.changed !== undefined) expect(decided.result.changed).toEqual(expected.changed)
    if (expected.changed?.length === 0) expect(decided.set).toEqual({})
    if (expected.events !== undefined) expect(events).toEqual(expected.events)
    if (expected.reopens !== undefined) expect(row.registration_complete && !next.registration_complete).toBe(expected.reopens)
    if (expected.completes !== undefined) {
      expect(!row.registration_complete && next.registration_complete).toBe(expected.completes)
    }
    if (expected.due !== undefined) expect(Machine.reportsBecomeDue(row, next)).toBe(expected.due)
    if (expected.status !== undefined) expect(after.status).toBe(expected.status)
  })

  test("reopening resets the reports, keeps the signature and the registered guests", () => {
    const row = snap({ contract_required: true, contract_signed_at: SIGNED, tra: PENDING, sire: ERROR })
    const next = { ...row, ...right(modify(row, { guests_count: 4 })).set }
    expect(next).toEqual({
      ...row,
      guests_count: 4,
      registration_complete: false,
      ...initialReports("live"),
      tra_reported: false,
      sire_reported: false
    })
    expect([next.contract_signed_at, next.guests_registered]).toEqual([SIGNED, 2])
    expect(checkinStatus(next)).toBe("pending")
  })

  test("reopening a test key's reservation gives back its simulated not_applicable reports", () => {
    const row = snap({ environment: "test", tra: ERROR, sire: ERROR })
    const set = right(modify(row, { guests_count: 3 })).set
    expect([set.tra, set.sire]).toEqual([initialReports("test").tra, initialReports("test").sire])
  })

  test("an extension after the TRA was reported names the added nights and keeps the report", () => {
    const row = snap({ tra: SUCCESS })
    const set = right(modify(row, { check_out: "2026-12-16" })).set
    expect(set.tra_extension_from).toBe(CHECK_OUT)
    expect(set.tra).toEqual(row.tra)
    expect(set.check_out).toBe("2026-12-16")
  })

  test("an extension while the TRA is only in flight owes no extension: the run reports the stay as it is then", () => {
    expect(right(modify(snap({ tra: IN_FLIGHT }), { check_out: "2026-12-16" })).set.tra_extension_from).toBeNull()
  })

  test("refusals name the field", () => {
    expect(leftOf(modify(snap({ sire: SUCCESS }), { check_in: "2026-12-11" })).details)
      .toMatchObject({ field: "check_in", change: "move_check_in" })
    expect(leftOf(modify(snap({ tra: SUCCESS }), { check_out: "2026-12-11" })).details)
      .toMatchObject({ field: "check_out", change: "shorten_check_out" })
    expect(leftOf(modify(snap({ tra: SUCCESS }), { guests_count: 5 })).details)
      .toMatchObject({ field: "guests_count", already_reported: { tra: true, sire: false } })
    expect(leftOf(modify(snap(), { check_in: "2026-12-14" })).details)
      .toMatchObject({ fields: [{ field: "check_in", message: "check_out must be later than check_in" }] })
    expect(leftOf(modify(snap({ tra: SUCCESS, sire: SUCCESS }), { check_in: "2026-12-11" })).message)
      .toBe("check_in cannot change: the stay was already reported to TRA and SIRE")
  })

  // endpoint 4 beyond the stay's rules: the plain fields and the stored report objects
  test("nothing changed: no write, changed []", () => {
    const row = reservationRow({ guest_name: "Ana" })
    const decided = right(modify(row, { guest_name: "Ana" }))
    expect(decided.set).toEqual({})
    expect(decided.result.changed).toEqual([])
  })

  test("dates and plain fields: changed in the spec's order, a pending TRA follows the arrival date", () => {
    const row = dueRow()
    const decided = right(modify(row, { check_in: "2026-12-11", notes: "late", metadata: { room: "12" } }))
    expect(decided.result.changed).toEqual(["check_in", "notes", "metadata"])
    expect(decided.set.tra?.sends_on).toBe("2026-12-11")
    expect([decided.set.notes, decided.set.metadata]).toEqual(["late", { room: "12" }])
    expect(commit(row, decided).events).toEqual(["reservation.updated"])
  })

  test("plain fields only: no reservation.updated; null clears guest_email, guest_phone and notes", () => {
    const row = dueRow({ guest_email: "a@example.com", guest_phone: "300", notes: "n" })
    const decided = right(modify(row, { guest_email: null, guest_phone: null, notes: null, guest_name: "Ana María" }))
    expect(decided.result.changed).toEqual(["guest_name", "guest_email", "guest_phone", "notes"])
    expect(decided.set).toMatchObject({ guest_email: null, guest_phone: null, notes: null, guest_name: "Ana María" })
    const { events, changed } = commit(row, decided)
    expect([events, changed]).toEqual([[], []])
  })

  test("an extension after the TRA was accepted is owed from the old check_out; before acceptance it is not", () => {
    const reported = dueRow({
      tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 5 },
      tra_reported: true
    })
    const extend = { check_out: "2026-12-15" }
    expect(right(modify(reported, extend)).set.tra_extension_from).toBe("2026-12-13")
    // A second extension before the first was registered keeps the first night owed.
    expect(right(modify({ ...reported, tra_extension_from: "2026-12-13", check_out: "2026-12-14" }, extend)).set
      .tra_extension_from).toBe("2026-12-13")
    expect(right(modify(dueRow(), extend)).set.tra_extension_from).toBeNull()
  })

  test("raising guests_count after completion (nothing reported) reopens: reports back to not_applicable", () => {
    const row = dueRow({ tra: { status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null } })
    const decided = right(modify(row, { guests_count: 3 }))
    expect(decided.set.registration_complete).toBe(false)
    expect(decided.set.sire?.status).toBe("not_applicable")
    const { after, events } = commit(row, decided)
    expect(after.status).toBe("pending_checkin")
    expect(after.completed_at).toBeNull()
    expect(events).toEqual(["reservation.updated"])
    // The open registration needs a check-in link again when it had none.
    expect(Machine.needsCheckinToken({ ...after, checkin_token: null })).toBe(true)
  })

  test("the stay's refusals come through as its errors", () => {
    expect(tagOf(modify(reservationRow({ reservation_status: "cancelled" }), { notes: "x" }))).toBe("ReservationCancelled")
    const reported = dueRow({ tra_reported: true, tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 1 } })
    expect(tagOf(modify(reported, { check_in: "2026-12-09" }))).toBe("AlreadyReported")
  })

  test("modify keeps departed_on within the stay", () => {
    const departed = reservationRow({ departed_on: "2026-12-12" })
    const fieldOf = (result: ReturnType<typeof modify>) => (leftOf(result).details as { fields?: ReadonlyArray<unknown> }).fields?.[0]
    expect(tagOf(modify(departed, { check_out: "2026-12-12" }))).toBe("ok")
    expect(fieldOf(modify(departed, { check_out: "2026-12-11" })))
      .toEqual({ field: "check_out", message: "must keep the recorded departed_on (2026-12-12) within the stay" })
    expect(fieldOf(modify(departed, { check_in: "2026-12-13", check_out: "2026-12-14" }))).toMatchObject({ field: "check_in" })
  })
})

// ---------------------------------------------------------------------------------------------------------------

describe("guests, the contract and cancellation", () => {
  test.each<[string, ReservationRow, string, Partial<State>]>([
    ["a guest registers, others remain", open(), "ok", { guests_registered: 2, registration_complete: false }],
    ["the last guest registers", open({ guests_registered: 2 }), "ok", { guests_registered: 3, registration_complete: true }],
    ["registration already complete", snap(), "RegistrationRejected", {}],
    ["cancelled", open({ reservation_status: "cancelled" }), "ReservationCancelled", {}]
  ])("EnterGuest: %s", (_name, row, outcome, fields) => {
    const result = decide(row, enter(), registered(row.guests_registered))
    expect(tagOf(result)).toBe(outcome)
    if (outcome === "ok") expect(right(result).set).toEqual({ motivo: "Trabajo", ...fields })
  })

  test.each<[string, ReservationRow, string]>([
    ["registration complete", snap({ contract_required: true }), "ok"],
    ["signed again: unchanged", snap({ contract_required: true, contract_signed_at: SIGNED }), "ok"],
    ["registration open", open({ contract_required: true }), "RegistrationOpen"],
    ["cancelled", snap({ contract_required: true, reservation_status: "cancelled" }), "ReservationCancelled"]
  ])("SignContract: %s", (_name, row, outcome) => {
    const result = decide(row, Command.SignContract({ signer: "Ana" }))
    expect(tagOf(result)).toBe(outcome)
    if (outcome === "ok") expect({ ...row, ...right(result).set }.contract_signed_at).toEqual(row.contract_signed_at ?? AT)
  })

  test.each<[string, ReservationRow, boolean, { tra: boolean; sire: boolean }, { tra: boolean; sire: boolean }, ReportState, ReportState]>([
    ["open, nothing reported", open(), false, { tra: false, sire: false }, { tra: false, sire: false }, NA, NA],
    ["reports waiting: withdrawn", snap({ tra: PENDING, sire: PENDING }), false, { tra: false, sire: false }, { tra: true, sire: true }, NA, NA],
    ["TRA accepted, SIRE waiting", snap({ tra: SUCCESS, sire: PENDING }), false, { tra: true, sire: false }, { tra: false, sire: true }, SUCCESS, NA],
    ["TRA in flight, SIRE rejected", snap({ tra: IN_FLIGHT, sire: ERROR }), false, { tra: true, sire: false }, { tra: false, sire: false }, IN_FLIGHT, ERROR],
    ["both accepted", snap({ tra: SUCCESS, sire: SUCCESS }), false, { tra: true, sire: true }, { tra: false, sire: false }, SUCCESS, SUCCESS],
    ["already cancelled", snap({ reservation_status: "cancelled", tra: SUCCESS }), true, { tra: true, sire: false }, { tra: false, sire: false }, SUCCESS, NA]
  ])("Cancel: %s", (_name, row, already_cancelled, already_reported, withdrawn, tra, sire) => {
    const decided = right(decide(row, Command.Cancel({ reason: undefined })))
    expect(decided.result).toEqual({ already_cancelled, already_reported, withdrawn })
    const { after, events } = commit(row, decided)
    expect(after.reservation_status).toBe("cancelled")
    expect(stateOf(after, "tra")).toEqual(tra)
    expect(stateOf(after, "sire")).toEqual(sire)
    if (withdrawn.tra) expect(after.tra.warning).toBe(Reports.Warnings.cancelledBeforeSending)
    if (withdrawn.sire) expect(after.sire.warning).toBe(Reports.Warnings.cancelledBeforeSending)
    expect(deriveStatus(after)).toBe("cancelled")
    expect(events).toEqual(already_cancelled ? [] : ["reservation.cancelled"])
  })
})

describe("Cancel (endpoint 5)", () => {
  test("a waiting report is withdrawn with a warning; a reported one is kept and said", () => {
    const row = dueRow({ sire_reported: true })
    const decided = right(decide(row, Command.Cancel({ reason: "no show" })))
    expect(decided.set.tra).toEqual({ ...row.tra, status: "not_applicable", warning: Reports.Warnings.cancelledBeforeSending })
    expect(decided.set.sire).toEqual(row.sire)
    expect([decided.set.cancel_reason, decided.set.cancelled_at]).toEqual(["no show", AT])
    expect(decided.result.already_reported).toEqual({ tra: false, sire: true })
    const { after, events } = commit(row, decided)
    expect(after.status).toBe("cancelled")
    expect(events).toEqual(["reservation.cancelled"])
  })

  test("without a reason: cancel_reason null", () => {
    expect(right(decide(dueRow(), Command.Cancel({ reason: undefined }))).set.cancel_reason).toBeNull()
  })

  test("again: nothing written, already_cancelled", () => {
    const decided = right(decide(reservationRow({ reservation_status: "cancelled" }), Command.Cancel({ reason: undefined })))
    expect(decided.set).toEqual({})
    expect(decided.result.already_cancelled).toBe(true)
  })
})

describe("the check-in page (design §5)", () => {
  test("the first guest is the primary and must give the motivo", () => {
    const row = reservationRow()
    expect(tagOf(decide(row, enter(false, { motivo: undefined })))).toBe("InvalidRequest")
    const decided = right(decide(row, enter()))
    expect(decided.guests).toEqual([
      expect.objectContaining({ _tag: "AddGuest", guest: expect.objectContaining({ position: 0, is_primary: true, registered_at: AT }) })
    ])
    expect(decided.set).toEqual({ motivo: "Trabajo", guests_registered: 1, registration_complete: false })
    expect(decided.result).toEqual({ registered: true })
    expect(commit(row, decided).events).toEqual(["registration.updated"])
  })

  test("a later guest needs no motivo and keeps the trip's; it is not the primary", () => {
    const row = reservationRow({ motivo: "Compras", guests_registered: 1 })
    const decided = right(decide(row, enter(false, { motivo: undefined }), registered(1)))
    expect(decided.set).toEqual({ motivo: "Compras", guests_registered: 2, registration_complete: true })
    expect(decided.guests).toEqual([
      expect.objectContaining({ guest: expect.objectContaining({ position: 1, is_primary: false }) })
    ])
    expect(commit(row, decided).events).toEqual(["registration.completed"])
  })

  test("photos come as uploads on the page, never as URLs to fetch", () => {
    const decided = right(decide(reservationRow(), enter(false, { doc_photo_front_url: "https://example.com/f.jpg" })))
    const added = decided.guests[0]
    expect(added?._tag === "AddGuest" ? [added.guest.doc_photo_front_url, added.guest.doc_photo_back_url] : "missing")
      .toEqual([null, null])
  })

  test("where photos are required the guest waits unregistered; the motivo is kept at once", () => {
    const decided = right(decide(reservationRow(), enter(true)))
    expect(decided.set).toEqual({ motivo: "Trabajo" })
    expect(decided.result.registered).toBe(false)
    const added = decided.guests[0]
    expect(added?._tag === "AddGuest" ? added.guest.registered_at : "missing").toBeNull()
  })

  test("never more guests than the stay has; not on a cancelled stay", () => {
    const full = reservationRow({ guests_count: 1 })
    expect(tagOf(decide(full, enter(true), [guestRow({ registered_at: null })]))).toBe("RegistrationRejected")
    expect(tagOf(decide(reservationRow({ reservation_status: "cancelled" }), enter()))).toBe("ReservationCancelled")
  })

  test("a document photo registers a guest waiting for it; otherwise it only marks the upload", () => {
    const waiting = guestRow({ registered_at: null })
    const row = reservationRow({ guests_count: 1 })
    const attach = (requiresDocumentPhotos: boolean, guestId = waiting.id) =>
      decide(row, Command.AttachDocument({ guestId, requiresDocumentPhotos }), [waiting])
    const registers = right(attach(true))
    expect(registers.set).toEqual({ guests_registered: 1, registration_complete: true })
    expect(registers.guests).toEqual([{ _tag: "UpdateGuest", id: waiting.id, document_uploaded: true, registered_at: AT }])
    const marks = right(attach(false))
    expect(marks.set).toEqual({})
    expect(marks.guests).toEqual([{ _tag: "UpdateGuest", id: waiting.id, document_uploaded: true }])
    expect(tagOf(attach(true, "someone-else"))).toBe("RegistrationNotFound")
  })

  test("a second photo of a registered guest only marks the upload", () => {
    const done = guestRow()
    const decided = right(decide(reservationRow({ guests_registered: 1 }), Command.AttachDocument({ guestId: done.id, requiresDocumentPhotos: true }), [done]))
    expect(decided.set).toEqual({})
    expect(decided.guests).toEqual([{ _tag: "UpdateGuest", id: done.id, document_uploaded: true }])
  })

  test("the contract: only once everyone is registered; signing again answers the first signature", () => {
    expect(tagOf(decide(reservationRow(), Command.SignContract({ signer: "Ana" })))).toBe("RegistrationOpen")
    const complete = reservationRow({ registration_complete: true, guests_registered: 2, contract_required: true })
    const signed = right(decide(complete, Command.SignContract({ signer: "Ana" })))
    expect(signed.set).toEqual({ contract_signed_at: AT, contract_signer: "Ana" })
    expect(signed.result).toEqual({ signed_at: AT })
    expect(commit(complete, signed).events).toEqual(["contract.signed"])
    const earlier = new Date("2026-12-01T00:00:00Z")
    const again = right(decide({ ...complete, contract_signed_at: earlier }, Command.SignContract({ signer: "Other" })))
    expect(again.set).toEqual({})
    expect(again.result.signed_at).toEqual(earlier)
  })
})

describe("Depart (design §6.8)", () => {
  // dueRow: check_in 2026-12-10, check_out 2026-12-13; the SIRE entry went out, its exit waits for check_out.
  const entered = (overrides: Partial<ReservationRow> = {}) => exitDueRow("2026-12-10T17:00:00.000Z", overrides)
  const TODAY = "2026-12-12"
  const depart = (departedOn: string, exitInFile = false) => Command.Depart({ departedOn, today: TODAY, exitInFile })
  const fieldOf = <A, E>(result: Either.Either<A, E>) =>
    (leftOf(result) as { details: { fields?: Array<{ field: string; message: string }> } }).details.fields?.[0]

  test.each<[string, Partial<ReservationRow>, string, boolean, string]>([
    ["within the stay", {}, "2026-12-11", false, "ok"],
    ["on check_in", {}, "2026-12-10", false, "ok"],
    ["today (before check_out)", {}, TODAY, false, "ok"],
    ["before check_in", {}, "2026-12-09", false, "InvalidRequest"],
    ["after check_out", { check_out: "2026-12-11" }, TODAY, false, "InvalidRequest"],
    ["after today", {}, "2026-12-13", false, "InvalidRequest"],
    ["cancelled", { reservation_status: "cancelled", cancelled_at: AT }, "2026-12-11", false, "ReservationCancelled"],
    ["exit answered success: another date", { sire: { ...entered().sire, exit: { status: "success", sends_on: "2026-12-11", reported_at: "x" } } }, "2026-12-10", false, "AlreadyReported"],
    ["exit answered error: another date", { sire: { ...entered().sire, exit: { status: "error", sends_on: "2026-12-11", reported_at: "x" } } }, "2026-12-10", false, "AlreadyReported"],
    ["exit answered: its own date", { sire: { ...entered().sire, exit: { status: "success", sends_on: "2026-12-11", reported_at: "x" } } }, "2026-12-11", false, "ok"],
    ["exit answered: the recorded date wins over sends_on", { departed_on: "2026-12-12", sire: { ...entered().sire, exit: { status: "success", sends_on: "2026-12-11", reported_at: "x" } } }, "2026-12-11", false, "AlreadyReported"],
    ["exit pending but in a file: another date", {}, "2026-12-11", true, "AlreadyReported"],
    ["exit pending, not in a file: moves", {}, "2026-12-11", false, "ok"]
  ])("%s", (_name, overrides, departedOn, inFile, expected) => {
    expect(tagOf(decide(entered(overrides), depart(departedOn, inFile)))).toBe(expected)
  })

  test("400s name departed_on and say why; 409 says the date reported", () => {
    expect(fieldOf(decide(entered(), depart("2026-12-09")))).toEqual({ field: "departed_on", message: "must be on or after check_in (2026-12-10)" })
    expect(fieldOf(decide(entered({ check_out: "2026-12-11" }), depart(TODAY))))
      .toEqual({ field: "departed_on", message: "must be on or before check_out (2026-12-11)" })
    expect(fieldOf(decide(entered(), depart("2026-12-13")))).toEqual({ field: "departed_on", message: "must not be after today in Bogotá (2026-12-12)" })
    expect(leftOf(decide(entered(), depart("2026-12-11", true))).details)
      .toEqual({ field: "departed_on", departed_on: "2026-12-13", already_reported: { sire_exit: true } })
  })

  test("sets only departed_on; the same date again is no change; the exit follows it", () => {
    const before = entered()
    const decided = right(decide(before, depart("2026-12-11")))
    expect(decided.set).toEqual({ departed_on: "2026-12-11" })
    expect(decided.result).toEqual({ changed: true })
    const { after, events, changed } = commit(before, decided)
    expect([after.check_out, after.tra]).toEqual([before.check_out, before.tra])
    expect(events).toEqual(["reservation.updated"])
    expect(changed).toEqual(["departed_on"])
    // `follow` moves the pending exit to the new date (`Reports.withExit`).
    expect(after.sire.exit).toEqual({ status: "pending", sends_on: "2026-12-11", reported_at: null })

    const again = right(decide({ ...after, id: before.id, departed_on: "2026-12-11" }, depart("2026-12-11")))
    expect(again).toEqual({ set: {}, guests: [], result: { changed: false } })
  })

  test("exitSent: answered, or its movements in a file", () => {
    const exit = (status: ReportStatus) => entered({ sire: { ...entered().sire, exit: { status, sends_on: "2026-12-13", reported_at: null } } })
    expect(["pending", "success", "error", "not_applicable"].map((status) => Stay.exitSent(exit(status as ReportStatus), false)))
      .toEqual([false, true, true, false])
    expect(Stay.exitSent(exit("pending"), true)).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------------------------

const full: Reports.ReportingSettings = { reports_tra: true, reports_sire: true, has_tra_token: true, has_sire_hotel_code: true }
const ROW_ID = "00000000-0000-4000-8000-000000000001"

/** What endpoints 3 and 7 are given beside their body. */
const creation = <Body>(environment: Environment, body: Body) => ({
  key: { accountId: "00000000-0000-4000-8000-0000000000a1", environment },
  body,
  propertyId: "00000000-0000-4000-8000-0000000000b1",
  money: { cop: null, rate: null, date: null },
  fingerprint: "f",
  at: AT
})

describe("creation drafts (endpoints 3 and 7)", () => {
  test("endpoint 3: open, nothing registered, reports not_applicable; the property decides the contract", () => {
    const draft = Stay.linkDraft({
      ...creation("test", { external_id: "PMS-9", check_in: CHECK_IN, check_out: CHECK_OUT, guest_name: "Ana", guests_count: 2, notes: "n" }),
      contractRequired: true
    })
    expect(draft).toMatchObject({
      flow: "link",
      environment: "test",
      guests_registered: 0,
      registration_complete: false,
      contract_required: true,
      notes: "n",
      checkin_token: null,
      ...initialReports("test")
    })
    expect(Machine.needsCheckinToken(draft)).toBe(true)
  })

  test("endpoint 7: registration closed at once, the first guest the primary, no contract", () => {
    const guest = { ...guestInput(), motivo: undefined }
    const { draft, guests } = Stay.registrationDraft(creation("live", {
      external_id: "PMS-9",
      check_in: CHECK_IN,
      check_out: CHECK_OUT,
      guest_name: "Ana",
      guests_count: 2,
      motivo: "Trabajo" as CheckinGuestInput["motivo"] & string,
      tipo_acomodacion: "Hotel",
      guests: [guest, { ...guest, numero_documento: "2" }]
    }))
    expect(draft).toMatchObject({ flow: "registration", guests_registered: 2, registration_complete: true, contract_required: false, motivo: "Trabajo" })
    expect(guests.map((g) => [g.position, g.is_primary, g.registered_at])).toEqual([[0, true, AT], [1, false, AT]])
    expect(Machine.needsCheckinToken(draft)).toBe(false)
    expect(Machine.reportsBecomeDue(null, draft)).toBe(true)
  })
})

/**
 * Drives a reservation the way `Reservations` does: each command is decided on the current row (`Machine.decide`);
 * what it sets, with what follows from it — a check-in link, the reports when they become due
 * (`Reports.withDueReports`), a test key's simulated extension — goes through `Machine.follow`, whose events are
 * recorded. A decision that sets nothing writes nothing.
 */
class Journey {
  current: ReservationRow | null = null
  readonly guests: Array<GuestRow> = []
  readonly events: Array<ReservationEvent> = []
  readonly statuses: Array<Status> = []
  /** The reports each time they became due. */
  readonly due: Array<Pick<State, "tra" | "sire">> = []
  private codes = 4000

  constructor(
    readonly environment: Environment,
    readonly settings: Reports.ReportingSettings,
    /** The nationality of each guest, in registration order. */
    readonly nationalities: ReadonlyArray<string>,
    readonly sandbox_simulate: SandboxSimulate | null = null
  ) {}

  get now(): ReservationRow {
    if (this.current === null) throw new Error("no reservation yet")
    return this.current
  }

  private get stay() {
    return {
      external_id: "PMS-1",
      check_in: CHECK_IN,
      check_out: CHECK_OUT,
      guest_name: "Ana Gómez",
      ...(this.sandbox_simulate === null ? {} : { sandbox_simulate: this.sandbox_simulate })
    }
  }

  /** Endpoint 3. */
  link(guests_count: number, contractRequired: boolean): this {
    return this.go(Stay.linkDraft({ ...creation(this.environment, { ...this.stay, guests_count }), contractRequired }))
  }

  /** Endpoint 7 (design §6.5): every guest at once. */
  oneCall(guests_count: number): this {
    const { draft, guests } = Stay.registrationDraft(creation(this.environment, {
      ...this.stay,
      guests_count,
      motivo: "Trabajo" as const,
      tipo_acomodacion: "Hotel",
      guests: Array.from({ length: guests_count }, (_, i) => ({ ...this.guestInput(i), motivo: undefined }))
    }))
    guests.forEach((guest, i) => this.guests.push({ ...guest, id: `guest-${i}`, reservation_id: ROW_ID }))
    return this.go(draft)
  }

  private guestInput(position: number) {
    const nacionalidad = this.nationalities[position] ?? "CO"
    return guestInput({
      nacionalidad,
      tipo_documento: nacionalidad === "CO" ? "C.C" : "Pasaporte",
      numero_documento: `DOC${position}`
    })
  }

  private go(proposed: State): this {
    const before = this.current
    let next = proposed
    if (Machine.needsCheckinToken(next)) next = { ...next, checkin_token: "tok_journey" }
    if (Machine.reportsBecomeDue(before, next)) {
      const nationalities = this.guests.filter((guest) => guest.registered_at !== null).map((guest) => guest.nacionalidad ?? "CO")
      next = Reports.withDueReports(next, { settings: this.settings, nationalities, simulatedCode: ++this.codes }, AT)
      this.due.push({ tra: next.tra, sire: next.sire })
    }
    if (Reports.extensionToSimulate(next)) next = Reports.simulateExtension(next, ++this.codes, AT)
    const { after, events } = Machine.follow(before, next, AT)
    this.events.push(...events)
    this.statuses.push(after.status)
    this.current = { ...after, id: ROW_ID }
    return this
  }

  attempt<C extends Command>(command: C) {
    return Machine.decide({ row: this.now, guests: this.guests }, command, AT)
  }

  run<C extends Command>(command: C): Machine.ResultOf<C> {
    const decided = right(this.attempt(command))
    for (const write of decided.guests) {
      if (write._tag === "AddGuest") this.guests.push({ ...write.guest, id: `guest-${this.guests.length}`, reservation_id: ROW_ID })
    }
    if (Object.keys(decided.set).length === 0) this.statuses.push(this.now.status)
    else this.go({ ...this.now, ...decided.set })
    return decided.result
  }

  /** The next guest registers on the check-in page. */
  register(): this {
    this.run(Command.EnterGuest({ input: this.guestInput(this.guests.length), requiresDocumentPhotos: false }))
    return this
  }

  /** A live report run's verdict. */
  outcome(report: "tra" | "sire", status: "success" | "error"): this {
    const verdict: Verdict = status === "success" ? { status, code: 777 } : { status, warning: "guests[0] was rejected: x" }
    this.run(report === "tra" ? Command.SettleTra({ verdict }) : Command.SettleSireEntry({ verdict, movements: [] }))
    return this
  }
}

describe("whole lifecycles", () => {
  const nextGuest = (j: Journey) => j.attempt(Command.EnterGuest({ input: guestInput(), requiresDocumentPhotos: false }))
  const sign = (j: Journey) => j.attempt(Command.SignContract({ signer: "Ana" }))

  test("link flow, live, no contract: both reports accepted", () => {
    const j = new Journey("live", full, ["CO", "US"]).link(2, false)
    expect(j.now.checkin_token).toBe("tok_journey")
    expect(tagOf(sign(j))).toBe("RegistrationOpen")
    j.register().register()
    expect(tagOf(nextGuest(j))).toBe("RegistrationRejected")
    expect(j.due[0]?.tra).toEqual({ status: "pending", sends_on: CHECK_IN, reported_at: null, mincit_code: null })
    expect(j.due[0]?.sire).toEqual({ status: "pending", foreign_guests: 1, reported_at: null, exit: NO_EXIT })
    expect(checkinStatus(j.now)).toBe("completed")
    j.outcome("tra", "success").outcome("sire", "success")
    expect(j.statuses).toEqual(["pending_checkin", "pending_checkin", "pending_compliance", "pending_compliance", "compliant"])
    expect(j.events).toEqual(["reservation.created", "registration.updated", "registration.completed", "tra.reported", "sire.reported"])
    // The entry accepted, the exit is due on check_out.
    expect(j.now.sire.exit).toEqual({ status: "pending", sends_on: CHECK_OUT, reported_at: null })
  })

  test("link flow, live, with contract: reports wait for the signature; TRA rejected, SIRE accepted", () => {
    const j = new Journey("live", full, ["CO", "US"]).link(2, true)
    j.register().register()
    expect(stateOf(j.now, "tra")).toEqual(NA)
    expect(j.due).toHaveLength(0)
    j.run(Command.SignContract({ signer: "Ana" }))
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
    const j = new Journey("test", full, ["CO", "US"]).link(2, true)
    j.register().register().run(Command.SignContract({ signer: "Ana" }))
    expect(j.statuses).toEqual(["pending_checkin", "pending_checkin", "pending_signature", "compliant"])
    expect(j.events).toEqual([
      "reservation.created",
      "registration.updated",
      "registration.completed",
      "contract.signed",
      "tra.reported",
      "sire.reported"
    ])
    expect(j.now.tra).toMatchObject({ status: "success", mincit_code: 4001, simulated: true })
    // a simulated success counts as reported (design §6.12)
    expect(tagOf(j.attempt(Command.Modify({ body: { external_id: "PMS-1", check_in: "2026-12-11" } })))).toBe("AlreadyReported")
    const extension = right(j.attempt(Command.Modify({ body: { external_id: "PMS-1", check_out: "2026-12-14" } })))
    expect([extension.set.check_out, extension.set.tra_extension_from]).toEqual(["2026-12-14", CHECK_OUT])
  })

  test("link flow, test key: an extension is accepted again at once, with a new code and its event", () => {
    const j = new Journey("test", full, ["CO"]).link(1, false).register()
    j.run(Command.Modify({ body: { external_id: "PMS-1", check_out: "2026-12-14" } }))
    expect(j.now.tra).toMatchObject({ status: "success", mincit_code: 4002 })
    expect(j.now.tra_extension_from).toBeNull()
    expect(j.events).toEqual(["reservation.created", "registration.completed", "tra.reported", "reservation.updated", "tra.reported"])
  })

  test("link flow, test key, no contract, one guest", () => {
    const j = new Journey("test", full, ["CO"]).link(1, false).register()
    expect(j.statuses).toEqual(["pending_checkin", "compliant"])
    expect(j.events).toEqual(["reservation.created", "registration.completed", "tra.reported"])
  })

  test.each<[string, Environment, ReadonlyArray<string>, SandboxSimulate | null, Status, ReadonlyArray<ReservationEvent>]>([
    ["live", "live", ["CO", "US"], null, "pending_compliance", []],
    ["test", "test", ["CO", "US"], null, "compliant", ["tra.reported", "sire.reported"]],
    ["test, tra_failed", "test", ["CO", "US"], "tra_failed", "partial", ["tra.failed", "sire.reported"]],
    ["test, sire_failed", "test", ["CO", "US"], "sire_failed", "partial", ["tra.reported", "sire.failed"]],
    ["test, tra_failed, Colombians only", "test", ["CO", "CO"], "tra_failed", "failed", ["tra.failed"]],
    ["test, sire_failed, Colombians only (does nothing)", "test", ["CO", "CO"], "sire_failed", "compliant", ["tra.reported"]]
  ])("one-call flow (design §6.5), %s", (_name, environment, nationalities, simulate, status, reportEvents) => {
    const j = new Journey(environment, full, nationalities, simulate).oneCall(2)
    expect(j.statuses).toEqual([status])
    expect(checkinStatus(j.now)).toBe("completed")
    expect(j.now.checkin_token).toBeNull()
    expect(j.events).toEqual(["reservation.created", "registration.completed", ...reportEvents])
  })

  test("one-call flow, live, then the authorities answer", () => {
    const j = new Journey("live", full, ["US", "FR"]).oneCall(2)
    expect(j.due[0]?.sire).toEqual({ status: "pending", foreign_guests: 2, reported_at: null, exit: NO_EXIT })
    j.outcome("sire", "success").outcome("tra", "success")
    expect(j.statuses).toEqual(["pending_compliance", "pending_compliance", "compliant"])
    expect(j.events).toEqual(["reservation.created", "registration.completed", "sire.reported", "tra.reported"])
  })

  test("reopen: raising guests_count before any report, then the new guest completes it again", () => {
    const j = new Journey("live", full, ["CO", "US"]).oneCall(2)
    const changed = j.run(Command.Modify({ body: { external_id: "PMS-1", guests_count: 3 } }))
    expect(changed).toEqual({ changed: ["guests_count"] })
    expect(j.now.registration_complete).toBe(false)
    expect(stateOf(j.now, "tra")).toEqual(NA)
    // An endpoint-7 reservation gets a check-in link for the new guest.
    expect(j.now.checkin_token).toBe("tok_journey")
    j.register()
    expect(j.due).toHaveLength(2)
    expect(j.statuses).toEqual(["pending_compliance", "pending_checkin", "pending_compliance"])
    expect(j.events).toEqual(["reservation.created", "registration.completed", "reservation.updated", "registration.completed"])
  })

  test("lowering guests_count to the registered guests completes registration (test key)", () => {
    const j = new Journey("test", full, ["CO", "US"]).link(3, false)
    j.register().register()
    const before = j.now
    const decided = right(j.attempt(Command.Modify({ body: { external_id: "PMS-1", guests_count: 2 } })))
    expect(decided.set.registration_complete).toBe(true)
    expect(Machine.reportsBecomeDue(before, { ...before, ...decided.set })).toBe(true)
    j.run(Command.Modify({ body: { external_id: "PMS-1", guests_count: 2 } }))
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
    const j = new Journey("live", full, ["CO", "US"]).link(2, false)
    j.register().register()
    const first = j.run(Command.Cancel({ reason: undefined }))
    expect(first.withdrawn).toEqual({ tra: true, sire: true })
    expect(first.already_reported).toEqual({ tra: false, sire: false })
    expect(tagOf(nextGuest(j))).toBe("ReservationCancelled")
    expect(tagOf(sign(j))).toBe("ReservationCancelled")
    expect(tagOf(j.attempt(Command.Modify({ body: { external_id: "PMS-1", check_out: "2026-12-20" } })))).toBe("ReservationCancelled")
    const second = j.run(Command.Cancel({ reason: undefined }))
    expect(second.already_cancelled).toBe(true)
    expect(j.statuses).toEqual(["pending_checkin", "pending_checkin", "pending_compliance", "cancelled", "cancelled"])
    expect(j.events).toEqual(["reservation.created", "registration.updated", "registration.completed", "reservation.cancelled"])
  })

  test("cancel after the TRA was accepted: already_reported, and a late SIRE outcome is silent", () => {
    const j = new Journey("live", full, ["CO", "US"]).oneCall(2).outcome("tra", "success")
    j.run(Command.MarkSent({ authority: "sire" }))
    expect(stateOf(j.now, "sire")).toEqual(IN_FLIGHT)
    const cancellation = j.run(Command.Cancel({ reason: undefined }))
    expect(cancellation.already_reported).toEqual({ tra: true, sire: true })
    expect(cancellation.withdrawn).toEqual({ tra: false, sire: false })
    j.outcome("sire", "success")
    expect(j.now.sire.status).toBe("success")
    expect(j.statuses.at(-1)).toBe("cancelled")
    expect(j.events).toEqual(["reservation.created", "registration.completed", "tra.reported", "reservation.cancelled"])
  })
})
