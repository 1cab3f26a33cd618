import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import { listings } from "../../../src/compliance/ReportOps.ts"
import type { ReservationRow } from "../../../src/reservations/ReservationRow.ts"
import * as Machine from "../../../src/reservations/machine/Machine.ts"
import { Command } from "../../../src/reservations/machine/Machine.ts"
import { lateWarning, type MovementFacts, type Verdict, waitingWarning } from "../../../src/reservations/machine/Outcomes.ts"
import * as Reports from "../../../src/reservations/machine/Reports.ts"
import { NO_EXIT } from "../../../src/reservations/machine/State.ts"
import { NothingToRetry } from "../../../src/shared/errors.ts"
import { dueRow, exitDueRow } from "../../support/rows.ts"

/** The arrival day (check_in 2026-12-10), in the afternoon in Bogotá. */
const AT = new Date("2026-12-10T15:00:00Z")

/** Decides a command on the row and commits it the way `Reservations.apply` does, minus the I/O. */
const run = <C extends Command>(row: ReservationRow, command: C, at: Date = AT) => {
  const decided = Either.getOrThrow(Machine.decide({ row, guests: [] }, command, at))
  return { set: decided.set, result: decided.result, ...Machine.follow(row, { ...row, ...decided.set }, at) }
}
const settleTra = (row: ReservationRow, verdict: Verdict, options: Omit<Parameters<typeof Command.SettleTra>[0], "verdict"> = {}) =>
  run(row, Command.SettleTra({ verdict, ...options }))

const accepted: Verdict = { status: "success", code: 777 }
const entry = (guest_id: string, state: MovementFacts["state"], possible_duplicate = false): MovementFacts => ({
  guest_id,
  movement: "E",
  state,
  possible_duplicate
})
const exit = (guest_id: string, state: MovementFacts["state"]): MovementFacts => ({
  guest_id,
  movement: "S",
  state,
  possible_duplicate: false
})

describe("settle (design §6.9): one report's verdict after a run", () => {
  test("accepted: success with the code and the time, its warning gone, tra.reported, backoff reset", () => {
    const row = dueRow({ tra: { status: "pending", reported_at: null, sends_on: "2026-12-10", mincit_code: null, warning: "old" }, report_failures: 2 })
    const { after, events } = settleTra(row, accepted)
    expect(after.tra).toEqual({ status: "success", reported_at: AT.toISOString(), sends_on: "2026-12-10", mincit_code: 777 })
    expect(after.tra_reported).toBe(true)
    expect([after.report_failures, after.report_retry_at]).toEqual([0, null])
    expect(events).toEqual(["tra.reported"])
    expect(after.status).toBe("pending_compliance") // SIRE still pending
  })

  test("a notice (the room number sent blank, design §6.10) stays in warning whatever the verdict", () => {
    const notice = "numero_habitacion was sent blank"
    const accept = settleTra(dueRow(), accepted, { notice })
    expect(accept.after.tra).toMatchObject({ status: "success", mincit_code: 777, warning: notice })
    expect(accept.events).toEqual(["tra.reported"])
    const rejected: Verdict = { status: "error", warning: "guests[0] was rejected: x" }
    expect(settleTra(dueRow(), rejected, { notice }).after.tra.warning).toBe(`guests[0] was rejected: x; ${notice}`)
    const waiting: Verdict = { status: "pending", warning: null, transient: true }
    expect(settleTra(dueRow(), waiting, { notice }).after.tra).toMatchObject({ status: "pending", warning: notice })
    expect(settleTra(dueRow(), accepted, { notice: null }).after.tra).not.toHaveProperty("warning")
  })

  test("rejected: error with the reason; not counted as reported; failed or partial by the other report", () => {
    const rejected: Verdict = { status: "error", warning: "guests[1] was rejected: bad number" }
    const { after, events } = settleTra(dueRow({ tra_reported: true }), rejected)
    expect(after.tra).toMatchObject({ status: "error", warning: rejected.warning, reported_at: AT.toISOString() })
    expect(after.tra_reported).toBe(false)
    expect(events).toEqual(["tra.failed"])
    expect(after.status).toBe("failed")
    const sireAccepted = dueRow({ sire: { status: "success", reported_at: "x", foreign_guests: 1, exit: NO_EXIT } })
    expect(settleTra(sireAccepted, rejected).after.status).toBe("partial")
  })

  test("rejected while something was accepted (mayHold): still counted as reported", () => {
    const rejected: Verdict = { status: "error", warning: "guests[1] was rejected: bad number" }
    expect(settleTra(dueRow(), rejected, { mayHold: true }).after.tra_reported).toBe(true)
  })

  test("a transient failure counts towards the backoff: 5 min after the first, 15 after the second", () => {
    const transient: Verdict = { status: "pending", warning: null, transient: true }
    const settle = (row: ReservationRow) => run(row, Command.SettleSireEntry({ verdict: transient, movements: [] }))
    const first = settle(dueRow())
    expect(first.after.report_failures).toBe(1)
    expect(first.after.report_retry_at).toEqual(new Date(AT.getTime() + 5 * 60_000))
    expect(first.events).toEqual([])
    const second = settle(dueRow({ report_failures: 1 }))
    expect(second.after.report_retry_at).toEqual(new Date(AT.getTime() + 15 * 60_000))
    const fourth = settle(dueRow({ report_failures: 3 }))
    expect(fourth.after.report_retry_at).toBeNull() // then at every run
  })

  test("a configuration hold: pending with its warning, no backoff; sent-and-unknown stays reported", () => {
    const held: Verdict = { status: "pending", warning: "configure the token", transient: false }
    const { after } = settleTra(dueRow({ tra_reported: true, report_failures: 2 }), held)
    expect(after.tra).toMatchObject({ status: "pending", warning: "configure the token" })
    expect([after.tra_reported, after.report_failures, after.report_retry_at]).toEqual([true, 0, null])
  })

  test("a report that is no longer pending (cancelled, settled elsewhere) is left alone", () => {
    const withdrawn = dueRow({ tra: { status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null } })
    expect(settleTra(withdrawn, accepted).set).toEqual({})
    const rejected = dueRow({ tra: { status: "error", reported_at: "x", sends_on: "2026-12-10", mincit_code: null, warning: "no" } })
    expect(settleTra(rejected, accepted).set).toEqual({})
  })

  test("after a cancellation the outcome is recorded but emits nothing (design §6.9)", () => {
    const cancelled = dueRow({ reservation_status: "cancelled", sire_reported: true })
    const { after, events } = run(cancelled, Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements: [] }))
    expect(after.sire.status).toBe("success")
    expect(events).toEqual([])
  })

  test("72 h past due a transient wait becomes an error; before that it waits", () => {
    const waiting: Verdict = { status: "pending", warning: null, transient: true }
    expect(Reports.giveUpIfLate(waiting, "2026-12-10", new Date("2026-12-13T05:00:00Z"), "503")).toEqual(waiting)
    expect(Reports.giveUpIfLate(waiting, "2026-12-10", new Date("2026-12-13T05:00:01Z"), "503")).toEqual({
      status: "error",
      warning: "no answer for 72 hours past the due date (503)"
    })
    const held: Verdict = { status: "pending", warning: "configure", transient: false }
    expect(Reports.giveUpIfLate(held, "2026-12-10", new Date("2026-12-20T00:00:00Z"), "")).toEqual(held)
  })
})

describe("settle after a cancellation in flight (design §6.8): the authority may confirm it after all", () => {
  const CANCELLED_AT = new Date("2026-12-11T15:00:00Z")
  const endedByCancellation = (overrides: Partial<ReservationRow> = {}) =>
    dueRow({
      reservation_status: "cancelled",
      cancelled_at: CANCELLED_AT,
      status: "cancelled",
      tra: {
        status: "error",
        reported_at: "2026-12-11T16:00:00.000Z",
        sends_on: "2026-12-10",
        mincit_code: null,
        warning: Reports.cancelledInFlightWarning("tra")
      },
      tra_reported: true,
      sire: {
        status: "error",
        reported_at: "2026-12-11T16:00:00.000Z",
        foreign_guests: 1,
        warning: Reports.cancelledInFlightWarning("sire"),
        exit: NO_EXIT
      },
      sire_reported: true,
      ...overrides
    })
  const LATER = new Date("2026-12-11T18:00:00Z")

  test("SIRE: an error ended by the cancellation, then a success → success; the exit owed goes on the cancellation's date", () => {
    const row = endedByCancellation()
    const { after, events } = run(
      row,
      Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements: [entry("g1", "accepted")] }),
      LATER
    )
    expect(after.sire).toEqual({
      status: "success",
      reported_at: LATER.toISOString(),
      foreign_guests: 1,
      exit: { status: "pending", sends_on: "2026-12-11", reported_at: null }
    })
    expect(after.sire_reported).toBe(true)
    expect(after.status).toBe("cancelled")
    expect(events).toEqual([])
  })

  test("TRA: the same, with the code", () => {
    const { after } = run(endedByCancellation(), Command.SettleTra({ verdict: accepted }), LATER)
    expect(after.tra).toEqual({ status: "success", reported_at: LATER.toISOString(), sends_on: "2026-12-10", mincit_code: 777 })
    expect(after.tra_reported).toBe(true)
  })

  test("an error on a reservation still confirmed receiving a success stays as it is", () => {
    const row = endedByCancellation({ reservation_status: "confirmed", cancelled_at: null })
    expect(run(row, Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements: [] }), LATER).set).toEqual({})
    expect(run(row, Command.SettleTra({ verdict: accepted }), LATER).set).toEqual({})
  })

  test("a cancelled reservation's error that nobody may hold (rejected, *_reported false) stays as it is", () => {
    const row = endedByCancellation({ sire_reported: false, tra_reported: false })
    expect(run(row, Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements: [] }), LATER).set).toEqual({})
    expect(run(row, Command.SettleTra({ verdict: accepted }), LATER).set).toEqual({})
  })

  test("an error verdict on it changes nothing", () => {
    const row = endedByCancellation()
    expect(run(row, Command.SettleTra({ verdict: { status: "error", warning: "no" } }), LATER).set).toEqual({})
  })
})

describe("settle an extension (design §6.8)", () => {
  const reported = dueRow({
    check_out: "2026-12-15",
    tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 11 },
    tra_reported: true,
    tra_extension_from: "2026-12-13"
  })

  test("accepted: the new code, tra.reported again, nothing more owed", () => {
    const { after, events } = settleTra(reported, accepted, { extensionUpTo: "2026-12-15" })
    expect(after.tra.mincit_code).toBe(777)
    expect(after.tra_extension_from).toBeNull()
    expect(events).toEqual(["tra.reported"])
  })

  test("accepted while check_out moved on meanwhile: the later nights are still owed", () => {
    const { after } = settleTra(reported, accepted, { extensionUpTo: "2026-12-14" })
    expect(after.tra_extension_from).toBe("2026-12-14")
  })

  test("waiting: the TRA stays success; only a warning is kept", () => {
    const held: Verdict = { status: "pending", warning: "check the token", transient: false }
    const { after, events } = settleTra(reported, held, { extensionUpTo: "2026-12-15" })
    expect(after.tra).toMatchObject({ status: "success", mincit_code: 11, warning: "check the token" })
    expect(after.tra_extension_from).toBe("2026-12-13")
    expect(events).toEqual([])
    expect(settleTra(reported, { status: "pending", warning: null, transient: true }, { extensionUpTo: "2026-12-15" }).set)
      .toEqual({})
  })

  test("rejected: tra.failed", () => {
    const { after, events } = settleTra(reported, { status: "error", warning: "no" }, { extensionUpTo: "2026-12-15" })
    expect(after.tra.status).toBe("error")
    expect(events).toEqual(["tra.failed"])
  })
})

describe("MarkSent and withdrawn", () => {
  test("the authority may hold the report from now on", () => {
    expect(run(dueRow(), Command.MarkSent({ authority: "sire" })).set).toEqual({ sire_reported: true })
    expect(run(dueRow(), Command.MarkSent({ authority: "tra" })).set).toEqual({ tra_reported: true })
  })

  test("a report a cancellation withdrew while the run built it is not marked (the run must not send it)", () => {
    const withdrawn = dueRow({
      reservation_status: "cancelled",
      tra: { status: "not_applicable", reported_at: null, sends_on: "2026-12-10", mincit_code: null, warning: Reports.Warnings.cancelledBeforeSending }
    })
    expect(Reports.withdrawn(withdrawn, "tra")).toBe(true)
    expect(Reports.withdrawn(withdrawn, "sire")).toBe(false) // still pending: it was in flight
    expect(Reports.withdrawn(dueRow(), "tra")).toBe(false)
    expect(run(withdrawn, Command.MarkSent({ authority: "tra" })).set).toEqual({})
    expect(run(withdrawn, Command.MarkSent({ authority: "sire" })).set).toEqual({ sire_reported: true })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Exits (design §6.8)

describe("exits follow entries (design §6.8)", () => {
  test("exitDate: departed_on first, then the cancellation's Bogotá date when before check_out, else check_out", () => {
    const row = { check_out: "2026-12-13", cancelled_at: null, departed_on: null }
    expect(Reports.exitDate(row)).toBe("2026-12-13")
    const cancelled = { ...row, cancelled_at: new Date("2026-12-11T15:00:00Z") }
    expect(Reports.exitDate(cancelled)).toBe("2026-12-11")
    // 2026-12-12T03:00Z is still the 11th in Bogotá (UTC−5).
    expect(Reports.exitDate({ ...row, cancelled_at: new Date("2026-12-12T03:00:00Z") })).toBe("2026-12-11")
    expect(Reports.exitDate({ ...row, cancelled_at: new Date("2026-12-20T15:00:00Z") })).toBe("2026-12-13")
    expect(Reports.exitDate({ ...cancelled, departed_on: "2026-12-12" })).toBe("2026-12-12")
    expect(Reports.exitDate({ ...row, departed_on: "2026-12-10" })).toBe("2026-12-10")
  })

  test("withExit: an exit armed after the departure was recorded is dated it (a late entry)", () => {
    const late = dueRow({ sire: { ...dueRow().sire, status: "success" }, sire_reported: true, departed_on: "2026-12-11" })
    expect(Reports.withExit(late, AT).sire.exit).toEqual({ status: "pending", sends_on: "2026-12-11", reported_at: null })
  })

  test("withExit: an exit that ended, or was withdrawn without a date, is left alone", () => {
    const ended = dueRow({ sire_reported: true, sire: { ...dueRow().sire, status: "success", exit: { status: "success", sends_on: "2026-12-13", reported_at: "x" } } })
    expect(Reports.withExit({ ...ended, check_out: "2026-12-15" }, AT)).toEqual({ ...ended, check_out: "2026-12-15" })
    const unsent = dueRow()
    expect(Reports.withExit(unsent, AT)).toBe(unsent)
  })

  test("SettleSireEntry with an exit owed arms it on its date", () => {
    const { after } = run(dueRow({ sire_reported: true }), Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements: [entry("g1", "accepted")] }))
    expect(after.sire.exit).toEqual({ status: "pending", sends_on: "2026-12-13", reported_at: null })
  })

  test("a late entry's exit is due at once and says so", () => {
    const LATE = new Date("2026-12-15T15:00:00Z")
    const settled = run(
      dueRow({ sire_reported: true }),
      Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements: [entry("g1", "accepted")] }),
      LATE
    )
    expect(settled.set.sire?.exit).toEqual({ status: "pending", sends_on: "2026-12-13", reported_at: null, warning: lateWarning("2026-12-13") })
  })

  test("an entry accepted after the exit of the others ended arms the exit again, for the guest still owed one", () => {
    const row = dueRow({
      sire: { status: "success", reported_at: "x", foreign_guests: 2, exit: { status: "success", sends_on: "2026-12-13", reported_at: "y" } },
      sire_reported: true
    })
    const movements = [entry("g1", "accepted"), exit("g1", "accepted"), entry("g2", "accepted")]
    const { set } = run(row, Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements }))
    expect(set).toEqual({ sire: { ...row.sire, exit: { status: "pending", sends_on: "2026-12-13", reported_at: null } } })
    // Every guest's exit done: nothing to arm.
    const done = [entry("g1", "accepted"), exit("g1", "accepted")]
    expect(run(row, Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements: done })).set).toEqual({})
  })

  describe("an exit given up (no answer 72 h past its date) stays an operator's", () => {
    const gaveUp = { status: "error" as const, sends_on: "2026-12-13", reported_at: "y", warning: "no answer for 72 hours past the due date (timeout)" }
    const row = dueRow({
      sire: { status: "pending", reported_at: null, foreign_guests: 2, exit: gaveUp },
      sire_reported: true
    })
    // g1's exit went out without an answer and was given up: its movement stays pending, a possible duplicate.
    const givenUp = [entry("g1", "accepted"), { ...exit("g1", "pending"), possible_duplicate: true }]
    const unmapped: Verdict = { status: "pending", warning: "SIRE cannot map guests[1].nacionalidad", transient: false }

    test("another guest's entry still waiting (1744cc7, model finding 7): the exit is not re-armed", () => {
      const { after } = run(row, Command.SettleSireEntry({ verdict: unmapped, movements: [...givenUp, entry("g2", "pending")] }))
      expect(after.sire.exit).toEqual(gaveUp)
    })

    test("a cancellation settled afterwards leaves it in error too", () => {
      const cancelled = { ...row, reservation_status: "cancelled" as const, cancelled_at: new Date("2026-12-11T15:00:00Z") }
      const { after } = run(cancelled, Command.SettleCancelled({ movements: givenUp }))
      expect(after.sire.exit).toEqual(gaveUp)
    })

    test("another guest's entry accepted since: the exit is armed again, for that guest", () => {
      const movements = [...givenUp, entry("g2", "accepted")]
      const { after } = run(row, Command.SettleSireEntry({ verdict: { status: "success", code: null }, movements }))
      expect(after.sire.exit).toEqual({ status: "pending", sends_on: "2026-12-13", reported_at: null })
    })
  })

  test("an entry that may be held but is still being sent again arms no exit yet", () => {
    const waiting: Verdict = { status: "pending", warning: null, transient: true }
    const { set } = run(dueRow(), Command.SettleSireEntry({ verdict: waiting, mayHold: true, movements: [entry("g1", "pending", true)] }))
    expect(set.sire?.exit).toEqual(NO_EXIT)
    expect(set.sire_reported).toBe(true)
  })

  describe("SettleSireExit", () => {
    const pendingExit = dueRow({
      sire: {
        status: "success",
        reported_at: "x",
        foreign_guests: 1,
        exit: { status: "pending", sends_on: "2026-12-13", reported_at: null, warning: "old" }
      },
      sire_reported: true,
      tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 1 },
      tra_reported: true
    })
    const EXIT_DAY = new Date("2026-12-13T20:00:00Z")

    test.each<[string, Verdict, ReservationRow["sire"]["exit"]]>([
      ["accepted", { status: "success", code: null }, { status: "success", sends_on: "2026-12-13", reported_at: EXIT_DAY.toISOString() }],
      ["rejected", { status: "error", warning: "refused" }, { status: "error", sends_on: "2026-12-13", reported_at: EXIT_DAY.toISOString(), warning: "refused" }],
      ["waiting with a reason", { status: "pending", warning: "503", transient: true }, { status: "pending", sends_on: "2026-12-13", reported_at: null, warning: "503" }],
      ["waiting without one: the old warning goes", { status: "pending", warning: null, transient: true }, { status: "pending", sends_on: "2026-12-13", reported_at: null }]
    ])("%s", (_name, verdict, expected) => {
      const { after, events } = run(pendingExit, Command.SettleSireExit({ verdict }), EXIT_DAY)
      expect(after.sire.exit).toEqual(expected)
      // No event, no status change of its own.
      expect([events, after.status]).toEqual([[], "compliant"])
    })

    test("an exit no longer pending is left alone", () => {
      const done = { ...pendingExit, sire: { ...pendingExit.sire, exit: { status: "success" as const, sends_on: "2026-12-13", reported_at: "y" } } }
      expect(run(done, Command.SettleSireExit({ verdict: { status: "error", warning: "x" } })).set).toEqual({})
    })
  })

  describe("SireExitUnbuilt: a run built no exit line for an exit due", () => {
    /** The entry went out; the exit, due on check_out (2026-12-13), waits. */
    const due = (overrides: Partial<ReservationRow> = {}) => exitDueRow("x", overrides)

    test("owed (the entry accepted in this very run): stays due, for the next run", () => {
      const movements = [entry("g1", "accepted")]
      expect(run(due(), Command.SireExitUnbuilt({ movements }), new Date("2026-12-13T15:00:00Z")).set).toEqual({})
    })

    test("owed past its date: stays due and says it is late", () => {
      const row = due()
      const { set, after } = run(row, Command.SireExitUnbuilt({ movements: [entry("g1", "in_file")] }), new Date("2026-12-14T15:00:00Z"))
      expect(set).toEqual({ sire: { ...row.sire, exit: { status: "pending", sends_on: "2026-12-13", reported_at: null, warning: lateWarning("2026-12-13") } } })
      expect(after.sire.exit.status).toBe("pending")
    })

    test("waiting (an entry of unknown outcome being sent again): pending, saying it waits for the entry", () => {
      const row = due({ sire: { status: "pending", reported_at: null, foreign_guests: 1, exit: { status: "pending", sends_on: "2026-12-13", reported_at: null, warning: "old" } } })
      const { set } = run(row, Command.SireExitUnbuilt({ movements: [entry("g1", "pending", true)] }))
      expect(set.sire?.exit).toEqual({
        status: "pending",
        sends_on: "2026-12-13",
        reported_at: null,
        warning: waitingWarning(Reports.Warnings.entryUnconfirmed)
      })
    })

    test("neither (no guest's entry held or possibly held): no exit, without a date", () => {
      // The entry was rejected after it had gone out: nobody holds it.
      const row = due({
        sire: { status: "error", reported_at: "x", foreign_guests: 1, warning: "rejected", exit: { status: "pending", sends_on: "2026-12-13", reported_at: null } },
        sire_reported: false
      })
      const { set, after, events } = run(row, Command.SireExitUnbuilt({ movements: [entry("g1", "rejected")] }))
      const withdrawn: ReservationRow["sire"]["exit"] = { status: "not_applicable", sends_on: null, reported_at: null, warning: Reports.Warnings.noEntrySent }
      expect(set.sire?.exit).toEqual(withdrawn)
      expect(after.sire.exit).toEqual(withdrawn)
      expect(events).toEqual([])
      expect(run(row, Command.SireExitUnbuilt({ movements: [] })).set.sire?.exit).toEqual(withdrawn)
    })

    test("an exit not pending is left alone", () => {
      expect(run(dueRow(), Command.SireExitUnbuilt({ movements: [] })).set).toEqual({})
    })
  })
})

describe("SettleCancelled (design §6.8, nothing stays pending for ever)", () => {
  const CANCELLED_AT = new Date("2026-12-11T15:00:00Z")
  const LATER = new Date("2026-12-11T18:00:00Z")
  const inFlight = (overrides: Partial<ReservationRow> = {}) =>
    dueRow({
      reservation_status: "cancelled",
      cancelled_at: CANCELLED_AT,
      tra_reported: true,
      sire_reported: true,
      report_failures: 2,
      report_retry_at: new Date("2026-12-11T16:00:00Z"),
      ...overrides
    })

  test("reports in flight end in error saying the authority may hold them; the exit owed goes on the cancellation's date", () => {
    const row = inFlight()
    const { set, after, events } = run(row, Command.SettleCancelled({ movements: [entry("g1", "pending", true)] }), LATER)
    expect(set.sire?.exit).toEqual({ status: "pending", sends_on: "2026-12-11", reported_at: null })
    expect(after.tra).toEqual({ ...row.tra, status: "error", reported_at: LATER.toISOString(), warning: Reports.cancelledInFlightWarning("tra") })
    expect(after.sire).toEqual({
      ...row.sire,
      status: "error",
      reported_at: LATER.toISOString(),
      warning: Reports.cancelledInFlightWarning("sire"),
      exit: { status: "pending", sends_on: "2026-12-11", reported_at: null }
    })
    expect([after.tra_reported, after.sire_reported]).toEqual([true, true])
    expect([after.report_failures, after.report_retry_at]).toEqual([0, null])
    expect(events).toEqual([])
    expect(Reports.cancelledInFlightWarning("sire")).toContain("Migración (SIRE) may hold it")
  })

  test("settled days after the cancellation: the exit owed is due at once and says it is late", () => {
    const { set } = run(inFlight(), Command.SettleCancelled({ movements: [entry("g1", "accepted")] }), new Date("2026-12-13T15:00:00Z"))
    expect(set.sire?.exit).toEqual({ status: "pending", sends_on: "2026-12-11", reported_at: null, warning: lateWarning("2026-12-11") })
  })

  test("reports that were not pending keep their state; nothing owed, no exit", () => {
    const row = inFlight({ sire: { status: "not_applicable", reported_at: null, foreign_guests: 0, exit: NO_EXIT }, sire_reported: false })
    const { set } = run(row, Command.SettleCancelled({ movements: [] }), LATER)
    expect(set.sire).toEqual(row.sire)
    expect(set.tra?.status).toBe("error")
  })

  test("a reservation not cancelled is left alone", () => {
    expect(run(dueRow({ tra_reported: true }), Command.SettleCancelled({ movements: [] })).set).toEqual({})
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Reports becoming due (design §6.9, §6.12)

describe("reports becoming due", () => {
  const settings = { reports_tra: true, reports_sire: true, has_tra_token: true, has_sire_hotel_code: true }
  const input = { settings, nationalities: ["CO", "US"], simulatedCode: 4242 }
  const BEFORE_ARRIVAL = new Date("2026-12-05T15:00:00Z")

  test("live ones wait for a run; a test key's are answered at once with the given code", () => {
    const live = Reports.withDueReports(dueRow(), input, BEFORE_ARRIVAL)
    expect(live.tra).toEqual({ status: "pending", sends_on: "2026-12-10", reported_at: null, mincit_code: null })
    expect(live.sire).toEqual({ status: "pending", foreign_guests: 1, reported_at: null, exit: NO_EXIT })
    expect([live.tra_reported, live.sire_reported]).toEqual([false, false])

    const test = Reports.withDueReports(dueRow({ environment: "test", sandbox_simulate: "sire_failed" }), input, BEFORE_ARRIVAL)
    expect(test.tra).toMatchObject({ status: "success", mincit_code: 4242, reported_at: BEFORE_ARRIVAL.toISOString(), simulated: true })
    expect(test.sire).toMatchObject({ status: "error", reported_at: BEFORE_ARRIVAL.toISOString(), simulated: true })
    expect([test.tra_reported, test.sire_reported]).toEqual([true, false])
  })

  test("due after check_in (a late registration): a pending report says it is late", () => {
    const late = Reports.withDueReports(dueRow(), input, new Date("2026-12-11T15:00:00Z"))
    expect(late.tra.warning).toBe(lateWarning("2026-12-10"))
    expect(late.sire.warning).toBe(lateWarning("2026-12-10"))
    const configured = Reports.withDueReports(dueRow(), { ...input, settings: { ...settings, has_tra_token: false } }, new Date("2026-12-11T15:00:00Z"))
    expect(configured.tra.warning).toBe(Reports.Warnings.traTokenMissing)
  })

  test("a test key's simulated answer carries what a live run would say", () => {
    const test = Reports.withDueReports(
      dueRow({ environment: "test" }),
      { ...input, simulatedWarnings: { tra: "room number blank", sire: null } },
      BEFORE_ARRIVAL
    )
    expect([test.tra.warning, test.sire.warning]).toEqual(["room number blank", undefined])
  })

  test("simulatedOutcome: success, except the report sandbox_simulate names", () => {
    expect([Reports.simulatedOutcome("tra", null), Reports.simulatedOutcome("tra", "tra_failed"), Reports.simulatedOutcome("sire", "tra_failed")])
      .toEqual(["success", "error", "success"])
  })

  test("a test key's extension is accepted again at once: a new code, the extension cleared", () => {
    const extended = dueRow({
      environment: "test",
      tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 1, simulated: true },
      tra_extension_from: "2026-12-13"
    })
    expect(Reports.extensionToSimulate(extended)).toBe(true)
    expect(Reports.extensionToSimulate({ ...extended, environment: "live" })).toBe(false)
    expect(Reports.extensionToSimulate({ ...extended, tra_extension_from: null })).toBe(false)
    const simulated = Reports.simulateExtension(extended, 2, AT)
    expect(simulated.tra).toEqual({ ...extended.tra, mincit_code: 2, reported_at: AT.toISOString() })
    expect(simulated.tra_extension_from).toBeNull()
  })
})

// ---------------------------------------------------------------------------------------------------------------
// An operator's retry (design §9)

describe("Requeue (cli reports retry)", () => {
  const RETRY_AT = new Date("2026-12-12T15:00:00Z")
  const REJECTED = "guests[1] (John Smith) was rejected: bad number"
  const requeue = (row: ReservationRow, traExtensionFrom: string | null = null) =>
    Either.map(Machine.decide({ row, guests: [] }, Command.Requeue({ traExtensionFrom }), RETRY_AT), (decided) => ({
      requeued: decided.result,
      set: decided.set,
      ...Machine.follow(row, { ...row, ...decided.set }, RETRY_AT)
    }))

  const traFailed = dueRow({
    tra: { status: "error", reported_at: "2026-12-10T15:00:00.000Z", sends_on: "2026-12-10", mincit_code: 4001, warning: REJECTED },
    sire: { status: "success", reported_at: "2026-12-10T15:00:00.000Z", foreign_guests: 1, exit: { status: "pending", sends_on: "2026-12-13", reported_at: null } },
    tra_reported: true,
    sire_reported: true,
    status: "partial",
    report_failures: 2,
    report_retry_at: new Date("2026-12-10T16:00:00Z")
  })

  test("a TRA in error: pending again, its reason kept in the warning, backoff reset, no event", () => {
    const { after, events, requeued } = Either.getOrThrow(requeue(traFailed))
    expect(requeued).toEqual({ tra: true, sire_entry: false, sire_exit: false })
    expect(after.tra).toEqual({
      status: "pending",
      reported_at: null,
      sends_on: "2026-12-10",
      mincit_code: 4001,
      warning: `re-queued by an operator; sent again at the next report run (it had failed: ${REJECTED})`
    })
    expect([after.report_failures, after.report_retry_at, after.tra_extension_from]).toEqual([0, null, null])
    expect(after.tra_reported).toBe(true) // the accepted main guest is still registered
    expect(after.sire).toEqual(traFailed.sire)
    expect(after.status).toBe("pending_compliance")
    expect(events).toEqual([])
  })

  test("an extension's round: the TRA waits for that round again (tra_extension_from)", () => {
    const { after } = Either.getOrThrow(requeue(traFailed, "2026-12-13"))
    expect([after.tra.status, after.tra_extension_from]).toEqual(["pending", "2026-12-13"])
  })

  test("SIRE entry and exit in error: both re-queued, the TRA untouched", () => {
    const row = dueRow({
      tra: { status: "success", reported_at: "x", sends_on: "2026-12-10", mincit_code: 1 },
      sire: {
        status: "error",
        reported_at: "x",
        foreign_guests: 2,
        warning: "guests[0] was rejected: a",
        exit: { status: "error", sends_on: "2026-12-13", reported_at: "y", warning: "guests[1] was rejected: b" }
      }
    })
    const { after, requeued } = Either.getOrThrow(requeue(row))
    expect(requeued).toEqual({ tra: false, sire_entry: true, sire_exit: true })
    expect(after.tra).toEqual(row.tra)
    expect(after.sire).toEqual({
      status: "pending",
      reported_at: null,
      foreign_guests: 2,
      warning: Reports.requeuedWarning("guests[0] was rejected: a"),
      exit: { status: "pending", sends_on: "2026-12-13", reported_at: null, warning: Reports.requeuedWarning("guests[1] was rejected: b") }
    })
  })

  test("refused: nothing in error, a cancelled stay's TRA, a test reservation", () => {
    const refusal = (row: ReservationRow) => Either.match(requeue(row), { onLeft: (error) => error, onRight: () => null })
    const nothing = refusal(dueRow())
    expect(nothing).toBeInstanceOf(NothingToRetry)
    expect(nothing!.message).toBe(
      `no report of reservation ${traFailed.id} is in error (tra pending, sire pending, sire exit not_applicable); nothing to retry`
    )
    const cancelled = refusal({ ...traFailed, reservation_status: "cancelled", sire: { ...traFailed.sire, exit: { status: "success", sends_on: "2026-12-11", reported_at: "z" } } })
    expect(cancelled!.message).toBe(
      `reservation ${traFailed.id} is cancelled: its TRA and SIRE entry are not sent any more (tra error, sire success, sire exit success); nothing to retry`
    )
    expect(refusal({ ...traFailed, environment: "test" })!.message)
      .toBe("a test reservation's reports are simulated, never sent: nothing to retry")
  })

  test("a cancelled stay's exit in error is still re-queued (exits go out after a cancellation)", () => {
    const row: ReservationRow = {
      ...traFailed,
      reservation_status: "cancelled",
      cancelled_at: new Date("2026-12-11T15:00:00Z"),
      sire: { ...traFailed.sire, exit: { status: "error", sends_on: "2026-12-11", reported_at: "z", warning: "refused" } }
    }
    const { after, requeued } = Either.getOrThrow(requeue(row))
    expect(requeued).toEqual({ tra: false, sire_entry: false, sire_exit: true })
    expect(after.tra).toEqual(row.tra)
    expect(after.sire.exit).toMatchObject({ status: "pending", sends_on: "2026-12-11" })
  })

  test("the re-queued warning: what happened and the failure it had; it holds nothing", () => {
    expect(Reports.requeuedWarning(undefined)).toBe("re-queued by an operator; sent again at the next report run")
    expect(Reports.isRequeued(Reports.requeuedWarning("x"))).toBe(true)
    expect(Reports.isRequeued(REJECTED)).toBe(false)
  })

  // `cli reports list`'s rows (compliance/ReportOps), read from the same reservation.
  test("listings: one row per report; overdue: past sends_on and not success; a cancelled stay lists every report", () => {
    const rows = listings(traFailed, "2026-12-11")
    expect(rows.map((row) => [row.authority, row.status, row.sends_on, row.overdue])).toEqual([
      ["tra", "error", "2026-12-10", true],
      ["sire_entry", "success", "2026-12-10", false],
      ["sire_exit", "pending", "2026-12-13", false]
    ])
    expect(rows[0]).toMatchObject({ reservation_id: traFailed.id, external_id: "PMS-1", warning: REJECTED })
    // Due today is not overdue yet.
    expect(listings(traFailed, "2026-12-10")[0]!.overdue).toBe(false)
    const cancelled = listings({ ...traFailed, reservation_status: "cancelled" }, "2026-12-20")
    // design §6.8: a report in flight at the cancellation ends in error, and the hotel must see it.
    expect(cancelled.map((row) => [row.authority, row.overdue])).toEqual([["tra", true], ["sire_entry", false], ["sire_exit", true]])
  })
})
