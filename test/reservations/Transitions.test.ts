import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import type { CheckinGuestInput } from "../../src/reservations/Reservation.ts"
import type { ReservationRow } from "../../src/reservations/ReservationRow.ts"
import * as Transitions from "../../src/reservations/Transitions.ts"
import { dueRow, guestRow, reservationRow } from "../support/rows.ts"

const AT = new Date("2026-12-05T15:00:00Z")

const decide = <A, E>(plan: Transitions.Plan<A, E>, row: ReservationRow, guests = [guestRow()]) =>
  plan.decide({ row, guests: plan.needsGuests ? guests : [] }, AT)

const right = <A, E>(result: Either.Either<A, E>): A => {
  if (Either.isLeft(result)) throw new Error(`expected Right, got ${JSON.stringify(result.left)}`)
  return result.right
}
const leftTag = <A, E extends { readonly _tag: string }>(result: Either.Either<A, E>) =>
  Either.match(result, { onLeft: (error) => error._tag, onRight: () => "ok" })

/** Commits a decision the way `Reservations.apply` does, minus the I/O (no reports becoming due here). */
const commit = <A>(before: ReservationRow, decided: Transitions.Decision<A>) =>
  Transitions.finalize(before, { ...before, ...decided.set }, AT)

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

describe("finalize: what every change implies", () => {
  test("status is derived, never taken from the decision; updated_at is the change's instant", () => {
    const before = reservationRow({ status: "compliant" })
    const { after } = Transitions.finalize(before, before, AT)
    expect(after.status).toBe("pending_checkin")
    expect(after.updated_at).toEqual(AT)
  })

  test("completed_at: set when registration closes, kept while it stays closed, cleared when it reopens", () => {
    const open = reservationRow({ guests_registered: 1 })
    const closed = Transitions.finalize(open, { ...open, guests_registered: 2, registration_complete: true }, AT)
    expect(closed.after.completed_at).toEqual(AT)
    expect(closed.events).toEqual(["registration.completed"])

    const earlier = new Date("2026-12-01T00:00:00Z")
    const stays = dueRow({ completed_at: earlier })
    expect(Transitions.finalize(stays, { ...stays, notes: "x" }, AT).after.completed_at).toEqual(earlier)

    const reopened = Transitions.finalize(stays, { ...stays, registration_complete: false, guests_count: 3 }, AT)
    expect(reopened.after.completed_at).toBeNull()
  })

  test("a creation emits reservation.created first; nothing follows a cancellation", () => {
    const draft = reservationRow()
    expect(Transitions.finalize(null, draft, AT).events).toEqual(["reservation.created"])
    const cancelled = reservationRow({ reservation_status: "cancelled" })
    expect(Transitions.finalize(cancelled, { ...cancelled, tra: { ...cancelled.tra, status: "success" } }, AT).events)
      .toEqual([])
  })

  test("a TRA accepted again with a new code emits tra.reported again (an extension, design §6.8)", () => {
    const reported = dueRow({ tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 11 } })
    const again = Transitions.finalize(reported, { ...reported, tra: { ...reported.tra, mincit_code: 12 } }, AT)
    expect(again.events).toEqual(["tra.reported"])
    expect(Transitions.finalize(reported, { ...reported, notes: "n" }, AT).events).toEqual([])
  })
})

describe("rules applied by the transition path", () => {
  test("an open registration gets a check-in link; a closed or cancelled one does not", () => {
    expect(Transitions.needsCheckinToken(reservationRow({ checkin_token: null }))).toBe(true)
    expect(Transitions.needsCheckinToken(reservationRow())).toBe(false)
    expect(Transitions.needsCheckinToken(dueRow({ checkin_token: null }))).toBe(false)
    expect(Transitions.needsCheckinToken(reservationRow({ checkin_token: null, reservation_status: "cancelled" })))
      .toBe(false)
  })

  test("reports become due once: registration complete (and signed where required), not before, not again", () => {
    const open = reservationRow()
    const complete = reservationRow({ registration_complete: true, guests_registered: 2 })
    expect(Transitions.reportsBecomeDue(open, complete)).toBe(true)
    expect(Transitions.reportsBecomeDue(null, complete)).toBe(true)
    expect(Transitions.reportsBecomeDue(complete, complete)).toBe(false)
    const unsigned = { ...complete, contract_required: true }
    expect(Transitions.reportsBecomeDue(open, unsigned)).toBe(false)
    expect(Transitions.reportsBecomeDue(unsigned, { ...unsigned, contract_signed_at: AT })).toBe(true)
  })

  test("due reports: live ones wait for a run; a test key's are answered at once with the given code", () => {
    const settings = { reports_tra: true, reports_sire: true, has_tra_token: true, has_sire_hotel_code: true }
    const input = { settings, nationalities: ["CO", "US"], simulatedCode: 4242 }
    const live = Transitions.withDueReports(dueRow(), input, AT)
    expect(live.tra).toEqual({ status: "pending", sends_on: "2026-12-10", reported_at: null, mincit_code: null })
    expect(live.sire).toEqual({ status: "pending", foreign_guests: 1, reported_at: null, exit: Transitions.NO_EXIT })
    expect([live.tra_reported, live.sire_reported]).toEqual([false, false])

    const test = Transitions.withDueReports(dueRow({ environment: "test", sandbox_simulate: "sire_failed" }), input, AT)
    expect(test.tra).toMatchObject({ status: "success", mincit_code: 4242, reported_at: AT.toISOString(), simulated: true })
    expect(test.sire).toMatchObject({ status: "error", reported_at: AT.toISOString(), simulated: true })
    expect([test.tra_reported, test.sire_reported]).toEqual([true, false])
  })

  test("a test key's extension is accepted again at once: a new code, the extension cleared", () => {
    const extended = dueRow({
      environment: "test",
      tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 1, simulated: true },
      tra_extension_from: "2026-12-13"
    })
    expect(Transitions.extensionToSimulate(extended)).toBe(true)
    expect(Transitions.extensionToSimulate({ ...extended, environment: "live" })).toBe(false)
    const simulated = Transitions.simulateExtension(extended, 2, AT)
    expect(simulated.tra.mincit_code).toBe(2)
    expect(simulated.tra_extension_from).toBeNull()
  })

  test("changedColumns: only what differs, dates compared by instant and JSON by value", () => {
    const before = dueRow()
    const after = { ...before, completed_at: new Date(before.completed_at?.getTime() ?? 0), notes: "hi", metadata: {} }
    expect(Transitions.changedColumns(before, after)).toEqual({ notes: "hi" })
  })
})

describe("modify (endpoint 4)", () => {
  test("nothing changed: no write, changed []", () => {
    const row = reservationRow({ guest_name: "Ana" })
    const decided = right(decide(Transitions.modify({ external_id: "PMS-1", guest_name: "Ana" }), row))
    expect(decided.set).toEqual({})
    expect(decided.result.changed).toEqual([])
  })

  test("dates and plain fields: changed in the spec's order, a pending TRA follows the arrival date", () => {
    const row = dueRow()
    const decided = right(decide(Transitions.modify({ external_id: "PMS-1", check_in: "2026-12-11", notes: "late" }), row))
    expect(decided.result.changed).toEqual(["check_in", "notes"])
    expect(decided.set.tra?.sends_on).toBe("2026-12-11")
    expect(commit(row, decided).events).toEqual(["reservation.updated"])
  })

  test("an extension after the TRA was accepted is owed from the old check_out; before acceptance it is not", () => {
    const reported = dueRow({
      tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 5 },
      tra_reported: true
    })
    const extend = Transitions.modify({ external_id: "PMS-1", check_out: "2026-12-15" })
    expect(right(decide(extend, reported)).set.tra_extension_from).toBe("2026-12-13")
    // A second extension before the first was registered keeps the first night owed.
    expect(right(decide(extend, { ...reported, tra_extension_from: "2026-12-13", check_out: "2026-12-14" })).set
      .tra_extension_from).toBe("2026-12-13")
    expect(right(decide(extend, dueRow())).set.tra_extension_from).toBeNull()
  })

  test("raising guests_count after completion (nothing reported) reopens: reports back to not_applicable", () => {
    const row = dueRow({ tra: { status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null } })
    const decided = right(decide(Transitions.modify({ external_id: "PMS-1", guests_count: 3 }), row))
    expect(decided.set.registration_complete).toBe(false)
    expect(decided.set.sire?.status).toBe("not_applicable")
    const { after, events } = commit(row, decided)
    expect(after.status).toBe("pending_checkin")
    expect(after.completed_at).toBeNull()
    expect(events).toEqual(["reservation.updated"])
  })

  test("the lifecycle's refusals come through as its errors", () => {
    const cancelled = reservationRow({ reservation_status: "cancelled" })
    expect(leftTag(decide(Transitions.modify({ external_id: "PMS-1", notes: "x" }), cancelled))).toBe("ReservationCancelled")
    const reported = dueRow({ tra_reported: true, tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 1 } })
    expect(leftTag(decide(Transitions.modify({ external_id: "PMS-1", check_in: "2026-12-09" }), reported)))
      .toBe("AlreadyReported")
  })
})

describe("cancel (endpoint 5)", () => {
  test("a waiting report is withdrawn with a warning; a reported one is kept and said", () => {
    const row = dueRow({ sire_reported: true })
    const decided = right(decide(Transitions.cancel("no show"), row))
    expect(decided.set.tra).toMatchObject({ status: "not_applicable" })
    expect(decided.set.tra?.warning).toContain("cancelled")
    expect(decided.set.sire).toEqual(row.sire)
    expect(decided.set.cancel_reason).toBe("no show")
    expect(decided.result.already_reported).toEqual({ tra: false, sire: true })
    const { after, events } = commit(row, decided)
    expect(after.status).toBe("cancelled")
    expect(events).toEqual(["reservation.cancelled"])
  })

  test("again: nothing written, already_cancelled", () => {
    const decided = right(decide(Transitions.cancel(undefined), reservationRow({ reservation_status: "cancelled" })))
    expect(decided.set).toEqual({})
    expect(decided.result.already_cancelled).toBe(true)
  })
})

describe("the check-in page's plans (design §5)", () => {
  test("the first guest is the primary and must give the motivo", () => {
    const row = reservationRow()
    expect(leftTag(decide(Transitions.enterGuest(guestInput({ motivo: undefined }), false), row, []))).toBe("InvalidRequest")
    const decided = right(decide(Transitions.enterGuest(guestInput(), false), row, []))
    expect(decided.guests).toEqual([
      expect.objectContaining({ _tag: "AddGuest", guest: expect.objectContaining({ position: 0, is_primary: true }) })
    ])
    expect(decided.set).toEqual({ motivo: "Trabajo", guests_registered: 1, registration_complete: false })
    expect(commit(row, decided).events).toEqual(["registration.updated"])
  })

  test("where photos are required the guest waits unregistered; the motivo is kept at once", () => {
    const decided = right(decide(Transitions.enterGuest(guestInput(), true), reservationRow(), []))
    expect(decided.set).toEqual({ motivo: "Trabajo" })
    expect(decided.result.registered).toBe(false)
    const added = decided.guests[0]
    expect(added?._tag === "AddGuest" ? added.guest.registered_at : "missing").toBeNull()
  })

  test("never more guests than the stay has; not on a cancelled stay", () => {
    const full = reservationRow({ guests_count: 1 })
    expect(leftTag(decide(Transitions.enterGuest(guestInput(), true), full, [guestRow({ registered_at: null })])))
      .toBe("RegistrationRejected")
    expect(leftTag(decide(Transitions.enterGuest(guestInput(), false), reservationRow({ reservation_status: "cancelled" }), [])))
      .toBe("ReservationCancelled")
  })

  test("a document photo registers a guest waiting for it; otherwise it only marks the upload", () => {
    const waiting = guestRow({ registered_at: null })
    const row = reservationRow({ guests_count: 1 })
    const registers = right(decide(Transitions.attachDocument(waiting.id, true), row, [waiting]))
    expect(registers.set).toEqual({ guests_registered: 1, registration_complete: true })
    expect(registers.guests).toEqual([{ _tag: "UpdateGuest", id: waiting.id, document_uploaded: true, registered_at: AT }])
    const marks = right(decide(Transitions.attachDocument(waiting.id, false), row, [waiting]))
    expect(marks.set).toEqual({})
    expect(leftTag(decide(Transitions.attachDocument("someone-else", true), row, [waiting]))).toBe("RegistrationNotFound")
  })

  test("the contract: only once everyone is registered; signing again answers the first signature", () => {
    expect(leftTag(decide(Transitions.signContract("Ana"), reservationRow()))).toBe("RegistrationOpen")
    const complete = reservationRow({ registration_complete: true, guests_registered: 2, contract_required: true })
    const signed = right(decide(Transitions.signContract("Ana"), complete))
    expect(signed.set).toEqual({ contract_signed_at: AT, contract_signer: "Ana" })
    expect(commit(complete, signed).events).toEqual(["contract.signed"])
    const earlier = new Date("2026-12-01T00:00:00Z")
    const again = right(decide(Transitions.signContract("Other"), { ...complete, contract_signed_at: earlier }))
    expect(again.set).toEqual({})
    expect(again.result.signed_at).toEqual(earlier)
  })
})

describe("depart (design §6.8)", () => {
  // dueRow: check_in 2026-12-10, check_out 2026-12-13; the SIRE entry went out, its exit waits for check_out.
  const entered = (overrides: Partial<ReservationRow> = {}) =>
    dueRow({
      sire: {
        status: "success",
        reported_at: "2026-12-10T17:00:00.000Z",
        foreign_guests: 1,
        exit: { status: "pending", sends_on: "2026-12-13", reported_at: null }
      },
      sire_reported: true,
      ...overrides
    })
  const TODAY = "2026-12-12"
  const depart = (departedOn: string, exitInFile = false) =>
    Transitions.depart({ departedOn, today: TODAY, exitInFile })
  const fieldOf = <A, E>(result: Either.Either<A, E>) =>
    Either.match(result, {
      onLeft: (error) => (error as { details: { fields?: Array<{ field: string; message: string }> } }).details.fields?.[0],
      onRight: () => undefined
    })

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
    ["exit pending but in a file: another date", {}, "2026-12-11", true, "AlreadyReported"],
    ["exit pending, not in a file: moves", {}, "2026-12-11", false, "ok"]
  ])("%s", (_name, overrides, departedOn, inFile, expected) => {
    expect(leftTag(decide(depart(departedOn, inFile), entered(overrides)))).toBe(expected)
  })

  test("400s name departed_on and say why", () => {
    expect(fieldOf(decide(depart("2026-12-09"), entered()))).toEqual({ field: "departed_on", message: "must be on or after check_in (2026-12-10)" })
    expect(fieldOf(decide(depart("2026-12-13"), entered()))).toEqual({ field: "departed_on", message: "must not be after today in Bogotá (2026-12-12)" })
  })

  test("sets only departed_on; the same date again is no change; the exit follows through exitDate", () => {
    const before = entered()
    const decided = right(decide(depart("2026-12-11"), before))
    expect(decided.set).toEqual({ departed_on: "2026-12-11" })
    expect(decided.result).toEqual({ changed: true })
    const { after, events, changed } = commit(before, decided)
    expect([after.check_out, after.tra]).toEqual([before.check_out, before.tra])
    expect(events).toEqual(["reservation.updated"])
    expect(changed).toEqual(["departed_on"])
    expect(Transitions.withExit(after, AT).sire.exit).toEqual({ status: "pending", sends_on: "2026-12-11", reported_at: null })

    const again = right(decide(depart("2026-12-11"), { ...after, departed_on: "2026-12-11" }))
    expect(again).toEqual({ set: {}, guests: [], result: { changed: false } })
  })

  test("exitDate: departed_on first, then the cancellation's Bogotá date when before check_out, else check_out", () => {
    const row = { check_out: "2026-12-13", cancelled_at: null, departed_on: null }
    expect(Transitions.exitDate(row)).toBe("2026-12-13")
    const cancelled = { ...row, cancelled_at: new Date("2026-12-11T15:00:00Z") }
    expect(Transitions.exitDate(cancelled)).toBe("2026-12-11")
    expect(Transitions.exitDate({ ...cancelled, departed_on: "2026-12-12" })).toBe("2026-12-12")
    expect(Transitions.exitDate({ ...row, departed_on: "2026-12-10" })).toBe("2026-12-10")
  })

  test("an exit armed after the departure was recorded is dated it (a late entry)", () => {
    const late = dueRow({ sire: { ...dueRow().sire, status: "success" }, sire_reported: true, departed_on: "2026-12-11" })
    expect(Transitions.withExit(late, AT).sire.exit).toEqual({ status: "pending", sends_on: "2026-12-11", reported_at: null })
  })

  test("modify keeps departed_on within the stay", () => {
    const departed = reservationRow({ departed_on: "2026-12-12" })
    expect(leftTag(decide(Transitions.modify({ external_id: "PMS-1", check_out: "2026-12-12" }), departed))).toBe("ok")
    expect(fieldOf(decide(Transitions.modify({ external_id: "PMS-1", check_out: "2026-12-11" }), departed)))
      .toEqual({ field: "check_out", message: "must keep the recorded departed_on (2026-12-12) within the stay" })
    expect(fieldOf(decide(Transitions.modify({ external_id: "PMS-1", check_in: "2026-12-13", check_out: "2026-12-14" }), departed)))
      .toMatchObject({ field: "check_in" })
  })
})
