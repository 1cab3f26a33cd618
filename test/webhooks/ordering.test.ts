import { afterAll, beforeAll, expect, test } from "bun:test"
import { call, type RunningApp, type seedAccount } from "../support/app.ts"
import type { TestDatabase } from "../support/database.ts"
import { colombian, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { bodyOf, type Receiver } from "../support/receiver.ts"
import { startWebhookApp, stopWebhookApp } from "../support/webhookApp.ts"

/**
 * Design §6.14 "Order": to one endpoint, a reservation's events are first attempted in the order they were
 * emitted, and `created_at` is strictly increasing per reservation — so on a healthy endpoint
 * `reservation.cancelled` is the last event a receiver sees for a reservation. Many reservations change
 * quickly while the receiver answers each request after a random delay (it records the request on arrival,
 * before answering: arrival order is attempt order).
 */
let receiver: Receiver
let db: TestDatabase
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>

beforeAll(async () => {
  ;({ receiver, db, app, account } = await startWebhookApp({
    accountName: "Hotelera Orden",
    limits: { writes: 100_000, reads: 100_000 }
  }))
})

afterAll(() => stopWebhookApp({ app, db, receiver }))

test("every reservation's events arrive in emission order, reservation.cancelled last", async () => {
  // Random delays from 0 to 60 ms, so later requests often finish before earlier ones.
  receiver.on("/ordered", Array.from({ length: 400 }, () => ({ status: 200, delayMs: Math.floor(Math.random() * 60) })))
  const endpoint = await call(app, "POST", "/api/partners/webhooks", {
    key: account.testKey,
    json: { url: `${receiver.url}/ordered` }
  })
  expect(endpoint.status).toBe(201)
  const property = account.testProperties[0]!.property_id

  const changes = Array.from({ length: 16 }, (_, i) => async () => {
    const key = account.testKey
    if (i % 2 === 0) {
      // Link flow: created, then updated (dates), then cancelled.
      const body = reservationBody(property)
      const created = await call(app, "POST", "/api/partners/reservations", { key, json: body })
      expect(created.status).toBe(201)
      await call(app, "PATCH", "/api/partners/reservations", { key, json: { external_id: body.external_id, check_out: "2026-12-28" } })
      await call(app, "PATCH", "/api/partners/reservations", { key, json: { external_id: body.external_id, guests_count: 3 } })
      await call(app, "POST", "/api/partners/reservations/cancel", { key, json: { external_id: body.external_id } })
      return { id: created.body.reservation_id as string, count: 4 }
    }
    // Own-form flow: created, registration.completed, tra.reported, sire.reported in one change; then cancelled.
    const body = registrationBody(property, [colombian(), foreigner()])
    const created = await call(app, "POST", "/api/partners/registrations", { key, json: body })
    expect(created.status).toBe(201)
    await call(app, "POST", "/api/partners/reservations/cancel", { key, json: { external_id: body.external_id } })
    return { id: created.body.reservation_id as string, count: 5 }
  })
  const reservations = await Promise.all(changes.map((change) => change()))
  const expected = reservations.reduce((sum, r) => sum + r.count, 0)
  const arrived = await receiver.waitForCount(expected, (r) => r.path === "/ordered", 60_000)

  for (const reservation of reservations) {
    const events = (await db.query<{ id: string; type: string; created_at: Date }>(
      "SELECT id, type, created_at FROM events WHERE reservation_id = $1 ORDER BY seq",
      [reservation.id]
    ))
    expect(events).toHaveLength(reservation.count)
    // created_at strictly increasing per reservation.
    for (let i = 1; i < events.length; i++) {
      expect(events[i]!.created_at.getTime()).toBeGreaterThan(events[i - 1]!.created_at.getTime())
    }
    expect(events.at(-1)!.type).toBe("reservation.cancelled")
    // First attempts in emission order: the receiver saw this reservation's events exactly in seq order.
    const seen = arrived
      .map((request) => bodyOf(request))
      .filter((body) => body.data.reservation_id === reservation.id)
      .map((body) => body.id)
    expect(seen).toEqual(events.map((event) => event.id))
    // And the bodies' created_at says the same order.
    const stamps = arrived
      .map((request) => bodyOf(request))
      .filter((body) => body.data.reservation_id === reservation.id)
      .map((body) => Date.parse(body.created_at))
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps)
  }
}, 120_000)
