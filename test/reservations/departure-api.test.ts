import { describe, expect, test } from "bun:test"
import { Schema } from "effect"
import { EventBody } from "../../src/webhooks/Event.ts"
import { call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"
import { colombian, externalId, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * `POST /api/partners/reservations/departure` (design §6.8): the day the guests actually left. Dates are counted
 * from the real Bogotá date, since the API runs on the real clock ("not after today in Bogotá").
 */

const f = appFixture()

/** The Bogotá date `days` after today's. */
const day = (days: number) => new Date(Date.parse(`${bogotaToday()}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

const depart = (json: Record<string, unknown>, key = f.account.testKey) =>
  call(f.app, "POST", "/api/partners/reservations/departure", { key, json })
const detail = async (external: string) =>
  (await call(f.app, "GET", `/api/partners/registrations?external_id=${encodeURIComponent(external)}`, { key: f.account.testKey }))
    .body
/** The reservation's events as stored (the webhook bodies), checked against the published schema. */
const eventsOf = async (reservationId: string) => {
  const rows = await f.db.query<{ type: string; body: unknown }>(
    "SELECT type, body FROM events WHERE reservation_id = $1 ORDER BY seq",
    [reservationId]
  )
  return rows.map((row) => {
    const body = typeof row.body === "string" ? JSON.parse(row.body) : row.body
    Schema.decodeUnknownSync(EventBody)(body)
    return body as { type: string; data: Record<string, any> }
  })
}

/** An endpoint-3 stay from two days ago to two days ahead: open registration, nothing reported. */
const openStay = async () => {
  const body = reservationBody(f.account.testProperties[0]!.property_id, { check_in: day(-2), check_out: day(2) })
  const res = await call(f.app, "POST", "/api/partners/reservations", { key: f.account.testKey, json: body })
  expect(res.status).toBe(201)
  return res.body as { reservation_id: string; external_id: string }
}

describe("POST /api/partners/reservations/departure", () => {
  test("records departed_on: 200 RegistrationStatus, check_out and the TRA untouched, reservation.updated names it", async () => {
    const stay = await openStay()
    expect(stay).toMatchObject({ departed_on: null })
    expect((await detail(stay.external_id)).departed_on).toBeNull()

    const res = await depart({ external_id: stay.external_id, departed_on: day(-1) })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      ok: true,
      reservation_id: stay.reservation_id,
      external_id: stay.external_id,
      status: "pending_checkin",
      reservation_status: "confirmed",
      departed_on: day(-1)
    })
    // RegistrationStatus exactly: the fields of endpoint 7's answer, no more.
    expect(Object.keys(res.body).sort()).toEqual([
      "checkin_status",
      "checkin_token",
      "departed_on",
      "external_id",
      "guests_registered",
      "ok",
      "reservation_id",
      "reservation_status",
      "sandbox",
      "sire",
      "status",
      "tra"
    ])
    // Write bucket.
    expect(res.headers.get("x-ratelimit-limit")).toBe("60")

    const after = await detail(stay.external_id)
    expect(after).toMatchObject({ check_in: day(-2), check_out: day(2), departed_on: day(-1) })
    expect(after.tra.status).toBe("not_applicable")

    const events = await eventsOf(stay.reservation_id)
    expect(events.map((event) => event.type)).toEqual(["reservation.created", "reservation.updated"])
    expect(events[0]!.data.departed_on).toBeNull()
    expect(events[1]!.data).toMatchObject({ departed_on: day(-1), check_out: day(2), changed: ["departed_on"] })
  })

  test("the same date again answers 200 and changes nothing (no event); another date is a new change", async () => {
    const stay = await openStay()
    expect((await depart({ external_id: stay.external_id, departed_on: day(0) })).status).toBe(200)
    const [row] = await f.db.query<{ updated_at: Date }>("SELECT updated_at FROM reservations WHERE id = $1", [stay.reservation_id])

    const again = await depart({ external_id: stay.external_id, departed_on: day(0) })
    expect(again.status).toBe(200)
    expect(again.body.departed_on).toBe(day(0))
    const [same] = await f.db.query<{ updated_at: Date }>("SELECT updated_at FROM reservations WHERE id = $1", [stay.reservation_id])
    expect(same!.updated_at.getTime()).toBe(row!.updated_at.getTime())
    expect((await eventsOf(stay.reservation_id)).map((event) => event.type)).toEqual(["reservation.created", "reservation.updated"])

    const moved = await depart({ external_id: stay.external_id, departed_on: day(-2) })
    expect(moved.status).toBe(200)
    expect(moved.body.departed_on).toBe(day(-2))
    const events = await eventsOf(stay.reservation_id)
    expect(events.map((event) => event.type)).toEqual(["reservation.created", "reservation.updated", "reservation.updated"])
    expect(events[2]!.data).toMatchObject({ departed_on: day(-2), changed: ["departed_on"] })
  })

  test.each([
    ["before check_in", () => day(-3), "check_in"],
    ["after check_out", () => day(3), "check_out"],
    ["after today in Bogotá (within the stay)", () => day(1), "today"]
  ] as const)("400 invalid_request naming departed_on: %s", async (_name, date, words) => {
    const stay = await openStay()
    const res = await depart({ external_id: stay.external_id, departed_on: date() })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ code: "invalid_request", details: { fields: [{ field: "departed_on" }] } })
    expect(res.body.details.fields[0].message).toContain(words)
    expect((await detail(stay.external_id)).departed_on).toBeNull()
    expect((await eventsOf(stay.reservation_id)).map((event) => event.type)).toEqual(["reservation.created"])
  })

  test.each([
    ["not a date", { departed_on: "yesterday" }, ["departed_on"]],
    ["no such day", { departed_on: "2026-02-30" }, ["departed_on"]],
    ["missing departed_on", {}, ["departed_on"]],
    ["missing external_id", { external_id: undefined, departed_on: "2026-12-20" }, ["external_id"]],
    ["external_id over 120", { external_id: "x".repeat(121), departed_on: "2026-12-20" }, ["external_id"]]
  ] as const)("400 invalid_request for the body: %s", async (_name, overrides, fields) => {
    const res = await depart({ external_id: "DEP-ANY", ...overrides })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_request")
    expect(res.body.details.fields.map((field: { field: string }) => field.field)).toEqual(fields)
  })

  test("404 registration_not_found for an unknown external_id, and for another environment's", async () => {
    const missing = await depart({ external_id: "DEP-NOPE", departed_on: day(0) })
    expect(missing.status).toBe(404)
    expect(missing.body).toMatchObject({ code: "registration_not_found", details: { external_id: "DEP-NOPE" } })
    const stay = await openStay()
    const live = await depart({ external_id: stay.external_id, departed_on: day(0) }, f.account.liveKey)
    expect(live.status).toBe(404)
  })

  test("409 reservation_cancelled", async () => {
    const stay = await openStay()
    await call(f.app, "POST", "/api/partners/reservations/cancel", { key: f.account.testKey, json: { external_id: stay.external_id } })
    const res = await depart({ external_id: stay.external_id, departed_on: day(0) })
    expect(res.status).toBe(409)
    expect(res.body.code).toBe("reservation_cancelled")
    expect((await detail(stay.external_id)).departed_on).toBeNull()
  })

  test("once the exit went out, only its date: another is 409 already_reported (a test key's exit is simulated at once)", async () => {
    const body = registrationBody(
      f.account.testProperties[0]!.property_id,
      [colombian({ numero_documento: "5550001" }), foreigner({ numero_documento: "DEP0001" })],
      { external_id: externalId("DEP"), check_in: day(-2), check_out: day(0) }
    )
    const created = await call(f.app, "POST", "/api/partners/registrations", { key: f.account.testKey, json: body })
    expect(created.status).toBe(201)
    expect(created.body.sire.exit).toMatchObject({ status: "success", sends_on: day(0), simulated: true })

    const refused = await depart({ external_id: body.external_id, departed_on: day(-1) })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ code: "already_reported", details: { field: "departed_on", departed_on: day(0) } })

    // The date the exit carries is the departure: recorded, the exit unchanged.
    const same = await depart({ external_id: body.external_id, departed_on: day(0) })
    expect(same.status).toBe(200)
    expect(same.body.departed_on).toBe(day(0))
    expect(same.body.sire.exit).toEqual(created.body.sire.exit)
    expect((await depart({ external_id: body.external_id, departed_on: day(-2) })).status).toBe(409)
  })

  test("a PATCH cannot leave the recorded departure outside the stay (400 naming the date sent)", async () => {
    const stay = await openStay()
    expect((await depart({ external_id: stay.external_id, departed_on: day(0) })).status).toBe(200)
    const patch = (json: Record<string, unknown>) =>
      call(f.app, "PATCH", "/api/partners/reservations", { key: f.account.testKey, json: { external_id: stay.external_id, ...json } })
    const shortened = await patch({ check_out: day(0) })
    expect(shortened.status).toBe(200)
    expect(shortened.body.departed_on).toBe(day(0))
    const tooShort = await patch({ check_out: day(-1) })
    expect(tooShort.status).toBe(400)
    expect(tooShort.body.details.fields).toEqual([{ field: "check_out", message: expect.stringContaining(day(0)) }])
    const moved = await patch({ check_in: day(1), check_out: day(2) })
    expect(moved.status).toBe(400)
    expect(moved.body.details.fields[0].field).toBe("check_in")
  })
})
