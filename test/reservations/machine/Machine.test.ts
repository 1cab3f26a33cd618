import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import type { CheckinGuestInput } from "../../../src/reservations/Reservation.ts"
import type { ReservationRow } from "../../../src/reservations/ReservationRow.ts"
import type { Current } from "../../../src/reservations/machine/Decision.ts"
import * as Machine from "../../../src/reservations/machine/Machine.ts"
import { Command } from "../../../src/reservations/machine/Machine.ts"
import type { MovementFacts, Verdict } from "../../../src/reservations/machine/Outcomes.ts"
import * as Reports from "../../../src/reservations/machine/Reports.ts"
import { NO_EXIT } from "../../../src/reservations/machine/State.ts"
import * as Stay from "../../../src/reservations/machine/Stay.ts"
import { dueRow, guestRow, reservationRow } from "../../support/rows.ts"

const AT = new Date("2026-12-05T15:00:00Z")

/** The SIRE entry accepted: the exit is owed from now on (design §6.8). */
const accepted = (overrides: Partial<ReservationRow> = {}) =>
  dueRow({
    sire: { status: "success", reported_at: "2026-12-10T17:00:00.000Z", foreign_guests: 1, exit: NO_EXIT },
    sire_reported: true,
    ...overrides
  })

describe("follow: what every change implies", () => {
  test("status is derived, never taken from the decision; updated_at is the change's instant", () => {
    const before = reservationRow({ status: "compliant" })
    const { after } = Machine.follow(before, before, AT)
    expect(after.status).toBe("pending_checkin")
    expect(after.updated_at).toEqual(AT)
  })

  test("completed_at: set when registration closes, kept while it stays closed, cleared when it reopens", () => {
    const open = reservationRow({ guests_registered: 1 })
    const closed = Machine.follow(open, { ...open, guests_registered: 2, registration_complete: true }, AT)
    expect(closed.after.completed_at).toEqual(AT)
    expect(closed.events).toEqual(["registration.completed"])

    const earlier = new Date("2026-12-01T00:00:00Z")
    const stays = dueRow({ completed_at: earlier })
    expect(Machine.follow(stays, { ...stays, notes: "x" }, AT).after.completed_at).toEqual(earlier)

    const reopened = Machine.follow(stays, { ...stays, registration_complete: false, guests_count: 3 }, AT)
    expect(reopened.after.completed_at).toBeNull()
  })

  test("a creation emits reservation.created first (changed []); a complete one stamps completed_at", () => {
    const draft = reservationRow()
    expect(Machine.follow(null, draft, AT)).toMatchObject({ events: ["reservation.created"], changed: [] })
    const complete = Machine.follow(null, dueRow({ completed_at: null }), AT)
    expect(complete.events).toEqual(["reservation.created", "registration.completed"])
    expect(complete.after.completed_at).toEqual(AT)
  })

  test("nothing follows a cancellation", () => {
    const cancelled = reservationRow({ reservation_status: "cancelled" })
    expect(Machine.follow(cancelled, { ...cancelled, tra: { ...cancelled.tra, status: "success" } }, AT).events).toEqual([])
  })

  test("a TRA accepted again with a new code emits tra.reported again (an extension, design §6.8)", () => {
    const reported = dueRow({ tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 11 } })
    const again = Machine.follow(reported, { ...reported, tra: { ...reported.tra, mincit_code: 12 } }, AT)
    expect(again.events).toEqual(["tra.reported"])
    expect(Machine.follow(reported, { ...reported, notes: "n" }, AT).events).toEqual([])
  })

  test("changed names what reservation.updated carries, in its order", () => {
    const before = dueRow()
    const { events, changed } = Machine.follow(before, { ...before, guests_count: 3, check_out: "2026-12-14", notes: "n" }, AT)
    expect(events).toEqual(["reservation.updated"])
    expect(changed).toEqual(["check_out", "guests_count"])
  })

  test("an accepted entry arms its exit on check_out (live: pending; a test key's: simulated success at once)", () => {
    const before = dueRow()
    const live = Machine.follow(before, accepted(), AT).after
    expect(live.sire.exit).toEqual({ status: "pending", sends_on: "2026-12-13", reported_at: null })
    expect(live.status).toBe("pending_compliance") // the exit does not change status
    const test = Machine.follow(before, accepted({ environment: "test" }), AT).after
    expect(test.sire.exit).toEqual({ status: "success", sends_on: "2026-12-13", reported_at: AT.toISOString(), simulated: true })
  })

  test("no exit without a foreign guest, nor before the entry went out", () => {
    const before = dueRow()
    const colombians = accepted({ sire: { status: "not_applicable", reported_at: null, foreign_guests: 0, exit: NO_EXIT } })
    expect(Machine.follow(before, colombians, AT).after.sire.exit).toEqual(NO_EXIT)
    expect(Machine.follow(before, dueRow({ notes: "n" }), AT).after.sire.exit).toEqual(NO_EXIT)
  })

  test("a pending exit follows check_out and the cancellation's date", () => {
    const armed = Machine.follow(dueRow(), accepted(), AT).after
    const withId = { ...armed, id: "r1" }
    expect(Machine.follow(withId, { ...armed, check_out: "2026-12-15" }, AT).after.sire.exit.sends_on).toBe("2026-12-15")
    const cancelled = { ...armed, reservation_status: "cancelled" as const, cancelled_at: new Date("2026-12-11T15:00:00Z") }
    expect(Machine.follow(withId, cancelled, AT).after.sire.exit.sends_on).toBe("2026-12-11")
  })
})

describe("rules applied on the way", () => {
  test("an open registration gets a check-in link; a closed or cancelled one does not", () => {
    expect(Machine.needsCheckinToken(reservationRow({ checkin_token: null }))).toBe(true)
    expect(Machine.needsCheckinToken(reservationRow())).toBe(false)
    expect(Machine.needsCheckinToken(dueRow({ checkin_token: null }))).toBe(false)
    expect(Machine.needsCheckinToken(reservationRow({ checkin_token: null, reservation_status: "cancelled" }))).toBe(false)
  })

  test("reports become due once: registration complete (and signed where required), not before, not again", () => {
    const open = reservationRow()
    const complete = reservationRow({ registration_complete: true, guests_registered: 2 })
    expect(Machine.reportsBecomeDue(open, complete)).toBe(true)
    expect(Machine.reportsBecomeDue(null, complete)).toBe(true)
    expect(Machine.reportsBecomeDue(null, open)).toBe(false)
    expect(Machine.reportsBecomeDue(complete, complete)).toBe(false)
    const unsigned = { ...complete, contract_required: true }
    expect(Machine.reportsBecomeDue(open, unsigned)).toBe(false)
    expect(Machine.reportsBecomeDue(unsigned, { ...unsigned, contract_signed_at: AT })).toBe(true)
    expect(Machine.reportsBecomeDue(open, { ...complete, reservation_status: "cancelled" })).toBe(false)
  })

  test("changedColumns: only what differs, dates compared by instant and JSON by value", () => {
    const before = dueRow()
    const after = { ...before, completed_at: new Date(before.completed_at?.getTime() ?? 0), notes: "hi", metadata: {} }
    expect(Machine.changedColumns(before, after)).toEqual({ notes: "hi" })
    const { id: _, ...same } = before
    expect(Machine.changedColumns(before, same)).toEqual({})
    expect(Machine.changedColumns(before, { ...same, sire: { ...before.sire, exit: { ...NO_EXIT, sends_on: "2026-12-13" } } }))
      .toEqual({ sire: { ...before.sire, exit: { ...NO_EXIT, sends_on: "2026-12-13" } } })
  })

  test("changesReservation: bookkeeping alone (personal data removed, updated_at) keeps updated_at", () => {
    expect(Machine.changesReservation({ personal_data_removed_at: AT })).toBe(false)
    expect(Machine.changesReservation({ updated_at: AT })).toBe(false)
    expect(Machine.changesReservation({ personal_data_removed_at: AT, notes: "n" })).toBe(true)
    expect(Machine.changesReservation({})).toBe(false)
  })

  test("readsGuests: only the commands about a guest load them", () => {
    expect(Machine.readsGuests(Command.EnterGuest({ input: {} as CheckinGuestInput, requiresDocumentPhotos: false }))).toBe(true)
    expect(Machine.readsGuests(Command.AttachDocument({ guestId: "g", requiresDocumentPhotos: true }))).toBe(true)
    expect(Machine.readsGuests(Command.DocumentFetched({ guestId: "g" }))).toBe(true)
    expect(Machine.readsGuests(Command.Cancel({ reason: undefined }))).toBe(false)
    expect(Machine.readsGuests(Command.SettleTra({ verdict: { status: "success", code: 1 } }))).toBe(false)
  })
})

describe("decide: each command goes to its transition", () => {
  const guest = guestRow({ registered_at: null })
  const current: Current = { row: dueRow({ guests_registered: 1, registration_complete: false }), guests: [guest] }
  const { row } = current
  const success: Verdict = { status: "success", code: 9 }
  const movements: ReadonlyArray<MovementFacts> = [{ guest_id: guest.id, movement: "E", state: "accepted", possible_duplicate: false }]
  const input = { tipo_documento: "C.C", numero_documento: "1", nombre: "A", apellido: "B", nacionalidad: "CO", pais_procedencia: "CO", ciudad_procedencia: "Cali", pais_residencia: "CO", ciudad_residencia: "Cali" } as CheckinGuestInput

  test.each<[string, Command, Either.Either<unknown, unknown>]>([
    ["Modify", Command.Modify({ body: { external_id: "PMS-1", check_out: "2026-12-14" } }), Stay.modify(row, { external_id: "PMS-1", check_out: "2026-12-14" })],
    ["Cancel", Command.Cancel({ reason: "r" }), Stay.cancel(row, "r", AT)],
    ["Depart", Command.Depart({ departedOn: "2026-12-11", today: "2026-12-12", exitInFile: false }), Stay.depart(row, { departedOn: "2026-12-11", today: "2026-12-12", exitInFile: false })],
    ["EnterGuest", Command.EnterGuest({ input, requiresDocumentPhotos: false }), Stay.enterGuest(current, input, false, AT)],
    ["AttachDocument", Command.AttachDocument({ guestId: guest.id, requiresDocumentPhotos: true }), Stay.attachDocument(current, guest.id, true, AT)],
    ["SignContract", Command.SignContract({ signer: "Ana" }), Stay.signContract(row, "Ana", AT)],
    ["MarkSent", Command.MarkSent({ authority: "tra" }), Reports.markSent(row, "tra")],
    ["SettleTra", Command.SettleTra({ verdict: success }), Reports.settle(row, "tra", success, {}, AT)],
    ["SettleSireEntry", Command.SettleSireEntry({ verdict: success, movements }), Reports.settle(row, "sire", success, { movements }, AT)],
    ["SettleSireExit", Command.SettleSireExit({ verdict: success }), Reports.settleExit(row, success, AT)],
    ["SireExitUnbuilt", Command.SireExitUnbuilt({ movements }), Reports.exitUnbuilt(row, movements, AT)],
    ["SettleCancelled", Command.SettleCancelled({ movements }), Reports.settleCancelled(row, movements, AT)],
    ["Requeue", Command.Requeue({ traExtensionFrom: null }), Reports.requeue(row, null)]
  ])("%s", (_name, command, expected) => {
    const decided: Either.Either<unknown, unknown> = Machine.decide(current, command, AT)
    expect(decided).toEqual(expected)
  })

  test("MarkSent and SettleTra through decide: concrete decisions", () => {
    const tra = Either.getOrThrow(Machine.decide(current, Command.MarkSent({ authority: "tra" }), AT))
    const sire = Either.getOrThrow(Machine.decide(current, Command.MarkSent({ authority: "sire" }), AT))
    expect([tra.set, sire.set]).toEqual([{ tra_reported: true }, { sire_reported: true }])
    const accept = Either.getOrThrow(Machine.decide(current, Command.SettleTra({ verdict: success }), AT))
    expect(accept.set.tra).toMatchObject({ status: "success", mincit_code: 9 })
    expect(accept.set.sire).toBeUndefined()
  })

  test("DocumentFetched: the guest's photo marked; its registration unchanged", () => {
    const fetched = Machine.decide(current, Command.DocumentFetched({ guestId: guest.id }), AT)
    expect(fetched).toEqual(Either.right({ set: {}, guests: [{ _tag: "UpdateGuest", id: guest.id, document_uploaded: true }], result: undefined }))
    expect(Either.isLeft(Machine.decide(current, Command.DocumentFetched({ guestId: "nobody" }), AT))).toBe(true)
  })

  test("PersonalDataRemoved: marked once", () => {
    expect(Either.getOrThrow(Machine.decide(current, Command.PersonalDataRemoved(), AT)).set).toEqual({ personal_data_removed_at: AT })
    const earlier = new Date("2026-12-01T00:00:00Z")
    const removed = { ...current, row: { ...row, personal_data_removed_at: earlier } }
    expect(Either.getOrThrow(Machine.decide(removed, Command.PersonalDataRemoved(), AT)).set).toEqual({})
  })
})
