import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import type { Verdict } from "../../src/compliance/Outcomes.ts"
import * as Settlement from "../../src/compliance/Settlement.ts"
import type { ReservationRow } from "../../src/reservations/ReservationRow.ts"
import * as Transitions from "../../src/reservations/Transitions.ts"
import { NO_EXIT } from "../../src/reservations/Transitions.ts"
import { dueRow } from "../support/rows.ts"

const AT = new Date("2026-12-10T15:00:00Z")

/** Runs a settlement plan and commits it the way `Reservations.apply` does, minus the I/O. */
const settle = (row: ReservationRow, plan: Transitions.Plan<void, never>) => {
  const decided = Either.getOrThrow(plan.decide({ row, guests: [] }, AT))
  return { set: decided.set, ...Transitions.finalize(row, { ...row, ...decided.set }, AT) }
}

const accepted: Verdict = { status: "success", code: 777 }

describe("settle (design §6.9): one report's verdict after a run", () => {
  test("accepted: success with the code and the time, its warning gone, tra.reported, backoff reset", () => {
    const row = dueRow({ tra: { status: "pending", reported_at: null, sends_on: "2026-12-10", mincit_code: null, warning: "old" }, report_failures: 2 })
    const { after, events } = settle(row, Settlement.settle("tra", accepted))
    expect(after.tra).toEqual({ status: "success", reported_at: AT.toISOString(), sends_on: "2026-12-10", mincit_code: 777 })
    expect(after.tra_reported).toBe(true)
    expect([after.report_failures, after.report_retry_at]).toEqual([0, null])
    expect(events).toEqual(["tra.reported"])
    expect(after.status).toBe("pending_compliance") // SIRE still pending
  })

  test("a notice (the room number sent blank, design §6.10) stays in warning whatever the verdict", () => {
    const notice = "numero_habitacion was sent blank"
    const accept = settle(dueRow(), Settlement.settle("tra", accepted, { notice }))
    expect(accept.after.tra).toMatchObject({ status: "success", mincit_code: 777, warning: notice })
    expect(accept.events).toEqual(["tra.reported"])
    const rejected: Verdict = { status: "error", warning: "guests[0] was rejected: x" }
    expect(settle(dueRow(), Settlement.settle("tra", rejected, { notice })).after.tra.warning)
      .toBe(`guests[0] was rejected: x; ${notice}`)
    const waiting: Verdict = { status: "pending", warning: null, transient: true }
    expect(settle(dueRow(), Settlement.settle("tra", waiting, { notice })).after.tra).toMatchObject({
      status: "pending",
      warning: notice
    })
    expect(settle(dueRow(), Settlement.settle("tra", accepted, { notice: null })).after.tra).not.toHaveProperty("warning")
  })

  test("rejected: error with the reason; not counted as reported; failed or partial by the other report", () => {
    const rejected: Verdict = { status: "error", warning: "guests[1] was rejected: bad number" }
    const { after, events } = settle(dueRow({ tra_reported: true }), Settlement.settle("tra", rejected))
    expect(after.tra).toMatchObject({ status: "error", warning: rejected.warning, reported_at: AT.toISOString() })
    expect(after.tra_reported).toBe(false)
    expect(events).toEqual(["tra.failed"])
    expect(after.status).toBe("failed")
    const sireAccepted = dueRow({ sire: { status: "success", reported_at: "x", foreign_guests: 1, exit: NO_EXIT } })
    expect(settle(sireAccepted, Settlement.settle("tra", rejected)).after.status).toBe("partial")
  })

  test("a transient failure counts towards the backoff: 5 min after the first, 15 after the second", () => {
    const transient: Verdict = { status: "pending", warning: null, transient: true }
    const first = settle(dueRow(), Settlement.settle("sire", transient))
    expect(first.after.report_failures).toBe(1)
    expect(first.after.report_retry_at).toEqual(new Date(AT.getTime() + 5 * 60_000))
    expect(first.events).toEqual([])
    const second = settle(dueRow({ report_failures: 1 }), Settlement.settle("sire", transient))
    expect(second.after.report_retry_at).toEqual(new Date(AT.getTime() + 15 * 60_000))
    const fourth = settle(dueRow({ report_failures: 3 }), Settlement.settle("sire", transient))
    expect(fourth.after.report_retry_at).toBeNull() // then at every run
  })

  test("a configuration hold: pending with its warning, no backoff; sent-and-unknown stays reported", () => {
    const held: Verdict = { status: "pending", warning: "configure the token", transient: false }
    const { after } = settle(dueRow({ tra_reported: true, report_failures: 2 }), Settlement.settle("tra", held))
    expect(after.tra).toMatchObject({ status: "pending", warning: "configure the token" })
    expect([after.tra_reported, after.report_failures, after.report_retry_at]).toEqual([true, 0, null])
  })

  test("a report that is no longer pending (cancelled, settled elsewhere) is left alone", () => {
    const withdrawn = dueRow({ tra: { status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null } })
    expect(settle(withdrawn, Settlement.settle("tra", accepted)).set).toEqual({})
  })

  test("after a cancellation the outcome is recorded but emits nothing (design §6.9)", () => {
    const cancelled = dueRow({ reservation_status: "cancelled", sire_reported: true })
    const { after, events } = settle(cancelled, Settlement.settle("sire", { status: "success", code: null }))
    expect(after.sire.status).toBe("success")
    expect(events).toEqual([])
  })

  test("72 h past due a transient wait becomes an error; before that it waits", () => {
    const waiting: Verdict = { status: "pending", warning: null, transient: true }
    expect(Settlement.giveUpIfLate(waiting, "2026-12-10", new Date("2026-12-13T05:00:00Z"), "503")).toEqual(waiting)
    expect(Settlement.giveUpIfLate(waiting, "2026-12-10", new Date("2026-12-13T05:00:01Z"), "503")).toEqual({
      status: "error",
      warning: "no answer for 72 hours past the due date (503)"
    })
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
    const { after, events } = settle(reported, Settlement.settle("tra", accepted, { extensionUpTo: "2026-12-15" }))
    expect(after.tra.mincit_code).toBe(777)
    expect(after.tra_extension_from).toBeNull()
    expect(events).toEqual(["tra.reported"])
  })

  test("accepted while check_out moved on meanwhile: the later nights are still owed", () => {
    const { after } = settle(reported, Settlement.settle("tra", accepted, { extensionUpTo: "2026-12-14" }))
    expect(after.tra_extension_from).toBe("2026-12-14")
  })

  test("waiting: the TRA stays success; only a warning is kept", () => {
    const held: Verdict = { status: "pending", warning: "check the token", transient: false }
    const { after, events } = settle(reported, Settlement.settle("tra", held, { extensionUpTo: "2026-12-15" }))
    expect(after.tra).toMatchObject({ status: "success", mincit_code: 11, warning: "check the token" })
    expect(after.tra_extension_from).toBe("2026-12-13")
    expect(events).toEqual([])
  })

  test("rejected: tra.failed", () => {
    const { after, events } = settle(
      reported,
      Settlement.settle("tra", { status: "error", warning: "no" }, { extensionUpTo: "2026-12-15" })
    )
    expect(after.tra.status).toBe("error")
    expect(events).toEqual(["tra.failed"])
  })
})

test("markSent: the authority may hold the report from now on", () => {
  const plan = Settlement.markSent("sire")
  expect(Either.getOrThrow(plan.decide({ row: dueRow(), guests: [] }, AT)).set).toEqual({ sire_reported: true })
})
