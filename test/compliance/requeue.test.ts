import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import { listings } from "../../src/compliance/ReportOps.ts"
import * as Settlement from "../../src/compliance/Settlement.ts"
import type { ReservationRow } from "../../src/reservations/ReservationRow.ts"
import * as Transitions from "../../src/reservations/Transitions.ts"
import { NothingToRetry } from "../../src/shared/errors.ts"
import { dueRow } from "../support/rows.ts"

/** `cli reports retry`'s plan and `cli reports list`'s rows (design §9), as pure rules. */

const AT = new Date("2026-12-12T15:00:00Z")
const REJECTED = "guests[1] (John Smith) was rejected: bad number"

/** Runs the plan and commits it the way `Reservations.apply` does, minus the I/O. */
const requeue = (row: ReservationRow, traExtensionFrom: string | null = null) =>
  Either.map(Settlement.requeue({ traExtensionFrom }).decide({ row, guests: [] }, AT), (decided) => ({
    requeued: decided.result,
    set: decided.set,
    ...Transitions.finalize(row, { ...row, ...decided.set }, AT)
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

describe("Settlement.requeue", () => {
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
    expect(after.sire).toMatchObject({
      status: "pending",
      reported_at: null,
      warning: expect.stringContaining("(it had failed: guests[0] was rejected: a)"),
      exit: { status: "pending", sends_on: "2026-12-13", reported_at: null, warning: expect.stringContaining("b)") }
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
    expect(cancelled!.message).toContain("is cancelled: its TRA and SIRE entry are not sent any more")
    expect(refusal({ ...traFailed, environment: "test" })!.message).toContain("simulated")
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
})

describe("listings (reports list)", () => {
  test("one row per report; overdue: past sends_on and not success; a cancelled stay lists every report", () => {
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
