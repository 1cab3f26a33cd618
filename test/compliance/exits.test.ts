import { describe, expect, test } from "bun:test"
import { admin, call } from "../support/app.ts"
import { colombian, foreigner } from "../support/guests.ts"
import {
  day,
  detail,
  eventsOf,
  registerGuests,
  type ReportWorld,
  runOn,
  scanAlerts,
  sireDate,
  sireLinesOf,
  reportWorlds
} from "../support/reportWorld.ts"

/**
 * SIRE exit movements (design §6.8), driven over several Bogotá days on a `TestClock`: every foreign guest whose
 * entry (E) went out gets an exit (S) due on `check_out` — moved by an extension or a shortening, brought forward
 * by an early cancellation —, sent in the same files, transports and manual confirmation as entries, reported as
 * `sire.exit` without an event of its own and without touching the reservation's `status`.
 *
 * Each test has its own database, app (ROLE=api: no loop of its own) and fakes; its runs go through a
 * `ReportRuns` runtime whose clock the test sets to noon in Bogotá of the day it plays. Dates are counted from
 * the real Bogotá date, since the API (creating, changing, cancelling) runs on the real clock.
 */
const start = reportWorlds()

let documents = 60_000_000
/** A Colombian main guest and a foreign companion; answers the external id and the foreigner's document. */
const register = async (world: ReportWorld, stay: { check_in: string; check_out: string }) => {
  const document = `S${documents++}`
  const externalId = await registerGuests(
    world,
    [colombian({ numero_documento: String(documents++) }), foreigner({ numero_documento: document })],
    stay
  )
  return { externalId, document }
}
const change = async (world: ReportWorld, externalId: string, json: Record<string, unknown>) => {
  const res = await call(world.app, "PATCH", "/api/partners/reservations", { key: world.liveKey, json: { external_id: externalId, ...json } })
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 })
  return res.body
}
const linesOf = sireLinesOf

describe("SIRE exit movements over several Bogotá days (TestClock)", () => {
  test("gateway: the entry goes out on the arrival day, the exit on the check-out day; no event, no status change", async () => {
    const world = await start("gateway")
    const { externalId, document } = await register(world, { check_in: day(1), check_out: day(3) })

    await runOn(world, day(0))
    expect(linesOf(world, document)).toEqual([])
    expect((await detail(world, externalId)).sire.exit).toEqual({ status: "not_applicable", sends_on: null, reported_at: null })

    await runOn(world, day(1))
    expect(linesOf(world, document)).toEqual([["E", sireDate(day(1))]])
    const entered = await detail(world, externalId)
    expect(entered.status).toBe("compliant")
    expect(entered.sire.status).toBe("success")
    expect(entered.sire.exit).toEqual({ status: "pending", sends_on: day(3), reported_at: null })
    const eventsAfterEntry = await eventsOf(world, externalId)

    await runOn(world, day(2))
    expect(linesOf(world, document)).toHaveLength(1)
    expect((await detail(world, externalId)).sire.exit.status).toBe("pending")

    await runOn(world, day(3))
    expect(linesOf(world, document)).toEqual([["E", sireDate(day(1))], ["S", sireDate(day(3))]])
    const left = await detail(world, externalId)
    expect(left.sire.exit).toEqual({ status: "success", sends_on: day(3), reported_at: expect.any(String) })
    expect(left.sire.status).toBe("success")
    expect(left.status).toBe("compliant")
    expect(await eventsOf(world, externalId)).toEqual(eventsAfterEntry)

    // Nothing more, ever.
    await runOn(world, day(4))
    expect(linesOf(world, document)).toHaveLength(2)
  })

  test("an extension moves the exit later, a shortening earlier; it goes out on the last date set", async () => {
    // Shortening a stay is refused once the TRA went out (design §6.6), so this property reports SIRE only.
    const world = await start("gateway", { reportsTra: false })
    const { externalId, document } = await register(world, { check_in: day(0), check_out: day(3) })
    await runOn(world, day(0))
    expect((await detail(world, externalId)).sire.exit.sends_on).toBe(day(3))

    await change(world, externalId, { check_out: day(5) })
    expect((await detail(world, externalId)).sire.exit).toEqual({ status: "pending", sends_on: day(5), reported_at: null })
    await runOn(world, day(3))
    expect(linesOf(world, document).filter(([movement]) => movement === "S")).toEqual([])

    await change(world, externalId, { check_out: day(4) })
    expect((await detail(world, externalId)).sire.exit.sends_on).toBe(day(4))
    await runOn(world, day(4))
    expect(linesOf(world, document)).toEqual([["E", sireDate(day(0))], ["S", sireDate(day(4))]])
    expect((await detail(world, externalId)).sire.exit).toMatchObject({ status: "success", sends_on: day(4) })
  })

  test("cancelled after the entry went out: the exit is due on the cancellation's date; before: no exit", async () => {
    const world = await start("gateway")
    const early = await register(world, { check_in: day(0), check_out: day(4) })
    const never = await register(world, { check_in: day(0), check_out: day(4) })
    const cancel = (externalId: string) =>
      call(world.app, "POST", "/api/partners/reservations/cancel", { key: world.liveKey, json: { external_id: externalId } })

    expect((await cancel(never.externalId)).body.already_reported).toEqual({ tra: false, sire: false })
    await runOn(world, day(0))
    expect(linesOf(world, never.document)).toEqual([])
    expect((await detail(world, never.externalId)).sire.exit.status).toBe("not_applicable")

    expect(linesOf(world, early.document)).toEqual([["E", sireDate(day(0))]])
    const cancelled = await cancel(early.externalId)
    expect(cancelled.body.already_reported).toEqual({ tra: true, sire: true })
    const waiting = await detail(world, early.externalId)
    expect(waiting.sire.exit).toEqual({ status: "pending", sends_on: day(0), reported_at: null })
    const eventsAtCancel = await eventsOf(world, early.externalId)
    expect(eventsAtCancel.at(-1)).toBe("reservation.cancelled")

    await runOn(world, day(0))
    expect(linesOf(world, early.document)).toEqual([["E", sireDate(day(0))], ["S", sireDate(day(0))]])
    const after = await detail(world, early.externalId)
    expect(after.sire.exit).toMatchObject({ status: "success", sends_on: day(0) })
    expect(after.status).toBe(waiting.status)
    expect(await eventsOf(world, early.externalId)).toEqual(eventsAtCancel)
  })

  test("an early departure dates the S line on departed_on; check_out and the TRA keep the booked stay", async () => {
    const world = await start("gateway")
    const { externalId, document } = await register(world, { check_in: day(-1), check_out: day(3) })
    const depart = (departed_on: string) =>
      call(world.app, "POST", "/api/partners/reservations/departure", {
        key: world.liveKey,
        json: { external_id: externalId, departed_on }
      })
    await runOn(world, day(-1))
    expect(linesOf(world, document)).toEqual([["E", sireDate(day(-1))]])
    const entered = await detail(world, externalId)
    expect(entered.sire.exit).toEqual({ status: "pending", sends_on: day(3), reported_at: null })
    expect(entered.departed_on).toBeNull()
    const traRequests = world.tra.requests.length

    // The guests leave today, three days early: the pending exit follows the departure.
    const departed = await depart(day(0))
    expect(departed.status).toBe(200)
    expect(departed.body).toMatchObject({ departed_on: day(0), sire: { exit: { status: "pending", sends_on: day(0) } } })
    const events = await eventsOf(world, externalId)
    expect(events.at(-1)).toBe("reservation.updated")
    const [updated] = await world.db.query<{ body: any }>(
      "SELECT e.body FROM events e JOIN reservations r ON r.id = e.reservation_id WHERE r.external_id = $1 ORDER BY e.seq DESC LIMIT 1",
      [externalId]
    )
    const body = typeof updated!.body === "string" ? JSON.parse(updated!.body) : updated!.body
    expect(body.data).toMatchObject({ changed: ["departed_on"], departed_on: day(0), check_out: day(3) })

    await runOn(world, day(0))
    expect(linesOf(world, document)).toEqual([["E", sireDate(day(-1))], ["S", sireDate(day(0))]])
    const left = await detail(world, externalId)
    expect(left).toMatchObject({ check_out: day(3), departed_on: day(0), status: "compliant" })
    expect(left.sire.exit).toMatchObject({ status: "success", sends_on: day(0) })
    expect(left.tra).toEqual(entered.tra)
    // The departure never touches the TRA: no request after the arrival's.
    expect(world.tra.requests.length).toBe(traRequests)

    // The exit went out: the same date is still 200 and changes nothing, another one is 409 already_reported.
    expect((await depart(day(0))).status).toBe(200)
    expect(await eventsOf(world, externalId)).toEqual(events)
    const another = await depart(day(-1))
    expect(another.status).toBe(409)
    expect(another.body).toMatchObject({ code: "already_reported", details: { departed_on: day(0) } })
    // Nothing more on the booked check-out day.
    await runOn(world, day(3))
    expect(linesOf(world, document)).toHaveLength(2)
  })

  test("manual: an exit in a generated file counts as sent — another departure date is 409 already_reported", async () => {
    const world = await start("manual")
    const { externalId } = await register(world, { check_in: day(-1), check_out: day(0) })
    await runOn(world, day(-1))
    const [entryFile] = (await admin(world.app, (c) => c.SireFiles({}))).files
    await admin(world.app, (c) => c.ConfirmSireFile({ file_id: entryFile!.file_id }))
    await runOn(world, day(0))
    const waiting = await detail(world, externalId)
    expect(waiting.sire.exit).toMatchObject({ status: "pending", sends_on: day(0) })
    const refused = await call(world.app, "POST", "/api/partners/reservations/departure", {
      key: world.liveKey,
      json: { external_id: externalId, departed_on: day(-1) }
    })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ code: "already_reported", details: { departed_on: day(0) } })
    expect((await detail(world, externalId)).departed_on).toBeNull()
  })

  test("a refused exit line: exit error with the gateway's message; the entry and the status stay as they were", async () => {
    const world = await start("gateway")
    const { externalId, document } = await register(world, { check_in: day(0), check_out: day(1) })
    await runOn(world, day(0))
    world.sire.rejectLine(1, "Fecha de salida inválida")
    await runOn(world, day(1))
    expect(linesOf(world, document).at(-1)).toEqual(["S", sireDate(day(1))])
    const after = await detail(world, externalId)
    expect(after.sire.exit).toEqual({
      status: "error",
      sends_on: day(1),
      reported_at: expect.any(String),
      warning: expect.stringContaining("Fecha de salida inválida")
    })
    expect(after.sire.status).toBe("success")
    expect(after.status).toBe("compliant")
    // A failed exit is an alert to the account holder (design §9).
    await scanAlerts(world)
    expect(await world.db.query("SELECT kind, authority, message FROM alerts")).toEqual([
      { kind: "exit_error", authority: "sire", message: expect.stringContaining("Fecha de salida inválida") }
    ])
    // An error is final: no run sends it again on its own (an operator re-queues it, design §9).
    await runOn(world, day(2))
    expect(linesOf(world, document)).toHaveLength(2)
  })

  test("a gateway that does not answer on the exit's day: the exit stays pending and goes out on the next run", async () => {
    const world = await start("gateway")
    const { externalId, document } = await register(world, { check_in: day(0), check_out: day(1) })
    await runOn(world, day(0))
    world.sire.fail("500")
    await runOn(world, day(1))
    expect((await detail(world, externalId)).sire.exit.status).toBe("pending")
    await runOn(world, day(2))
    expect(linesOf(world, document).map(([movement]) => movement)).toEqual(["E", "S", "S"])
    expect((await detail(world, externalId)).sire.exit).toMatchObject({ status: "success", sends_on: day(1) })
  })

  test("manual: entry and exit each wait in a kept file until the operator confirms it", async () => {
    const world = await start("manual")
    const { externalId, document } = await register(world, { check_in: day(0), check_out: day(2) })
    const files = async () => (await admin(world.app, (c) => c.SireFiles({}))).files
    const confirm = (fileId: string) => admin(world.app, (c) => c.ConfirmSireFile({ file_id: fileId }))
    const movementsIn = (content: string) =>
      content.split("\r\n").filter((line) => line.includes(document)).map((line) => line.split("\t")[8])

    await runOn(world, day(0))
    const [entryFile] = await files()
    expect(movementsIn(entryFile!.content)).toEqual(["E"])
    // In a generated file the entry counts as sent (design §6.8): its exit is due, the entry waits for confirmation.
    const generated = await detail(world, externalId)
    expect(generated.sire.status).toBe("pending")
    expect(generated.sire.exit).toEqual({ status: "pending", sends_on: day(2), reported_at: null })
    await confirm(entryFile!.file_id)
    const confirmed = await detail(world, externalId)
    expect(confirmed.sire.status).toBe("success")
    expect(confirmed.sire.exit.status).toBe("pending")
    expect(confirmed.status).toBe("compliant")

    await runOn(world, day(1))
    expect(await files()).toHaveLength(1)
    await runOn(world, day(2))
    const [exitFile] = await files()
    expect(exitFile!.file_id).not.toBe(entryFile!.file_id)
    expect(movementsIn(exitFile!.content)).toEqual(["S"])
    expect(exitFile!.content).toContain(sireDate(day(2)))
    expect((await detail(world, externalId)).sire.exit.status).toBe("pending")
    // Waiting for the operator is not a failure: later runs neither resend nor give up.
    await runOn(world, day(6))
    expect(await files()).toHaveLength(2)
    expect((await detail(world, externalId)).sire.exit.status).toBe("pending")

    await confirm(exitFile!.file_id)
    const done = await detail(world, externalId)
    expect(done.sire.exit).toMatchObject({ status: "success", sends_on: day(2), reported_at: expect.any(String) })
    expect(done.sire.status).toBe("success")
    expect(done.status).toBe("compliant")
    expect(world.sire.uploads).toHaveLength(0)
  })
})
