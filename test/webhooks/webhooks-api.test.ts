import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { randomBytes } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { colombian, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { verifyWebhook } from "../../docs/examples/verify-webhook.ts"
import { bodyOf, type Receiver, type ReceivedRequest, startReceiver, verifyReceived } from "../support/receiver.ts"

/**
 * Endpoints 9–16 and the delivery of events, end to end: the real app (its own delivery loop, ROLE=all) on
 * real PostgreSQL, delivering to a real local receiver. Private URLs are allowed here because the receiver
 * is on 127.0.0.1; `url-policy-api.test.ts` runs the default policy.
 */
let receiver: Receiver
let db: TestDatabase
let app: RunningApp
let a: Awaited<ReturnType<typeof seedAccount>>
let b: Awaited<ReturnType<typeof seedAccount>>

beforeAll(async () => {
  receiver = startReceiver()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
  a = await seedAccount(app, "Hotelera A")
  b = await seedAccount(app, "Hotelera B")
  // The suite makes more writes per minute than the spec's default budget; the ping test uses its own account.
  for (const account of [a, b]) {
    await admin(app, (c) => c.SetLimits({ account_id: account.accountId, writes: 10_000, reads: 10_000, tests: 10_000 }))
  }
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  receiver?.stop()
})

const hooks = (key: string) => ({
  list: () => call(app, "GET", "/api/partners/webhooks", { key }),
  create: (json: unknown) => call(app, "POST", "/api/partners/webhooks", { key, json }),
  update: (id: string, json: unknown) => call(app, "PATCH", `/api/partners/webhooks/${id}`, { key, json }),
  remove: (id: string) => call(app, "DELETE", `/api/partners/webhooks/${id}`, { key }),
  rotate: (id: string) => call(app, "POST", `/api/partners/webhooks/${id}/rotate-secret`, { key }),
  test: (id: string) => call(app, "POST", `/api/partners/webhooks/${id}/test`, { key }),
  deliveries: (query = "") => call(app, "GET", `/api/partners/webhooks/deliveries${query}`, { key }),
  redeliver: (id: string) => call(app, "POST", `/api/partners/webhooks/deliveries/${id}/redeliver`, { key })
})

let pathCounter = 0
/** A fresh receiver path per endpoint, so each test reads only its own requests. */
const freshPath = () => `/hooks/${++pathCounter}`

/** Creates an endpoint (201 expected) on a fresh receiver path. */
const endpoint = async (key: string, json: Record<string, unknown> = {}) => {
  const path = freshPath()
  const res = await hooks(key).create({ url: `${receiver.url}${path}`, ...json })
  expect(res.status).toBe(201)
  return { ...res.body, path } as { id: string; secret: string; path: string; events: Array<string> }
}

/** Deactivates every active endpoint of the key (tests share accounts; the limit is 5). */
const clearEndpoints = async (key: string) => {
  const list = await hooks(key).list()
  for (const e of list.body.endpoints) await hooks(key).remove(e.id)
}

const createReservation = (key: string, property: string) =>
  call(app, "POST", "/api/partners/reservations", { key, json: reservationBody(property) })

const storedEvents = (reservationId: string) =>
  db.query<{ id: string; type: string; body: string }>(
    "SELECT id, type, body::text AS body FROM events WHERE reservation_id = $1 ORDER BY seq",
    [reservationId]
  )

describe("endpoints 9–10: create and list", () => {
  test("201 with a whsec_ secret shown once; events default to [\"*\"]; the list never shows the secret", async () => {
    await clearEndpoints(a.testKey)
    const res = await hooks(a.testKey).create({ url: `${receiver.url}/hooks/created` })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: `${receiver.url}/hooks/created`,
      events: ["*"],
      include_guests: false,
      is_active: true,
      created_at: expect.any(String),
      secret_rotated_at: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) // 32 random bytes
    })
    expect(Buffer.from(res.body.secret.slice(6), "base64url")).toHaveLength(32)
    const list = await hooks(a.testKey).list()
    expect(list.status).toBe(200)
    const { secret: _, ...shown } = res.body
    expect(list.body).toEqual({ endpoints: [shown] })
    expect(JSON.stringify(list.body)).not.toContain("whsec_")
  })

  test("events and include_guests as sent", async () => {
    const res = await hooks(a.testKey).create({
      url: `${receiver.url}/hooks/x`,
      events: ["tra.reported", "tra.failed"],
      include_guests: true
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ events: ["tra.reported", "tra.failed"], include_guests: true })
  })

  test.each([
    [{}, ["url"]],
    [{ url: 42 }, ["url"]],
    [{ url: "https://example.com/h", events: [] }, ["events"]],
    [{ url: "https://example.com/h", events: ["reservation.deleted"] }, ["events[0]"]],
    [{ url: "https://example.com/h", events: "*" }, ["events"]],
    [{ url: "https://example.com/h", include_guests: "yes" }, ["include_guests"]],
    [{ url: 1, events: [1], include_guests: null }, ["url", "events[0]", "include_guests"]]
  ])("%j → 400 invalid_request naming %j", async (json, fields) => {
    const res = await hooks(a.testKey).create(json)
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_request")
    expect(res.body.details.fields.map((f: { field: string }) => f.field)).toEqual(fields)
  })

  test("a URL that is not a URL → 400 invalid_webhook_url; nothing is created", async () => {
    const before = (await hooks(a.testKey).list()).body.endpoints.length
    for (const url of ["not a url", "", "mailto:ops@example.com"]) {
      const res = await hooks(a.testKey).create({ url })
      expect(res.status).toBe(400)
      expect(["invalid_webhook_url", "invalid_request"]).toContain(res.body.code)
      if (url !== "") expect(res.body.code).toBe("invalid_webhook_url")
    }
    expect((await hooks(a.testKey).list()).body.endpoints).toHaveLength(before)
  })

  test("at most 5 active endpoints per account and environment → 409 webhook_limit_reached; test and live apart", async () => {
    await clearEndpoints(a.testKey)
    await clearEndpoints(a.liveKey)
    for (let i = 0; i < 5; i++) await endpoint(a.testKey)
    const sixth = await hooks(a.testKey).create({ url: `${receiver.url}/hooks/6` })
    expect(sixth.status).toBe(409)
    expect(sixth.body).toMatchObject({ code: "webhook_limit_reached", details: { limit: 5 } })
    // The live environment counts on its own, and sees none of the test endpoints.
    expect((await hooks(a.liveKey).list()).body.endpoints).toEqual([])
    await endpoint(a.liveKey)
    // Another account is not affected either.
    await endpoint(b.testKey)
    // Deactivating one frees a place.
    const first = (await hooks(a.testKey).list()).body.endpoints[0]
    await hooks(a.testKey).remove(first.id)
    await endpoint(a.testKey)
    await clearEndpoints(a.testKey)
    await clearEndpoints(a.liveKey)
    await clearEndpoints(b.testKey)
  })

  test("the limit holds under concurrent creation: 10 at once → exactly 5 created", async () => {
    await clearEndpoints(a.testKey)
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => hooks(a.testKey).create({ url: `${receiver.url}/hooks/c${i}` }))
    )
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 409, 409, 409, 409, 409])
    expect((await hooks(a.testKey).list()).body.endpoints).toHaveLength(5)
    await clearEndpoints(a.testKey)
  })
})

describe("endpoints 11–13: update, deactivate, rotate", () => {
  test("PATCH changes only what is sent; 404 for unknown, foreign, malformed or deactivated ids", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    const res = await hooks(a.testKey).update(e.id, { events: ["contract.signed"], include_guests: true })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: e.id, url: `${receiver.url}${e.path}`, events: ["contract.signed"], include_guests: true })
    expect(res.body.secret).toBeUndefined()
    const moved = await hooks(a.testKey).update(e.id, { url: `${receiver.url}/hooks/moved` })
    expect(moved.body).toMatchObject({ url: `${receiver.url}/hooks/moved`, events: ["contract.signed"] })
    expect((await hooks(a.testKey).update(e.id, {})).body).toEqual(moved.body)
    const bad = await hooks(a.testKey).update(e.id, { events: [] })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe("invalid_request")
    const notUrl = await hooks(a.testKey).update(e.id, { url: "not a url" })
    expect(notUrl.body.code).toBe("invalid_webhook_url")

    for (const [key, id] of [
      [a.testKey, "0b7c3a0e-1d2f-4c3b-9a8e-000000000000"],
      [a.testKey, "not-a-uuid"],
      [b.testKey, e.id], // another account
      [a.liveKey, e.id] // the other environment
    ] as const) {
      for (const res of [await hooks(key).update(id, { include_guests: false }), await hooks(key).rotate(id), await hooks(key).test(id)]) {
        expect(res.status).toBe(404)
        expect(res.body.code).toBe("webhook_not_found")
      }
    }
    await clearEndpoints(a.testKey)
  })

  test("DELETE deactivates: {ok, id, is_active:false}; then the endpoint is gone from the API", async () => {
    const e = await endpoint(a.testKey)
    const res = await hooks(a.testKey).remove(e.id)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, id: e.id, is_active: false })
    expect((await hooks(a.testKey).list()).body.endpoints.map((x: { id: string }) => x.id)).not.toContain(e.id)
    for (const again of [
      await hooks(a.testKey).remove(e.id),
      await hooks(a.testKey).update(e.id, { include_guests: true }),
      await hooks(a.testKey).rotate(e.id),
      await hooks(a.testKey).test(e.id)
    ]) {
      expect(again.status).toBe(404)
      expect(again.body.code).toBe("webhook_not_found")
    }
    expect((await hooks(b.testKey).remove(e.id)).body.code).toBe("webhook_not_found")
  })

  test("rotation: a new secret, shown once; deliveries from then on verify with it and not with the old one", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    const rotated = await hooks(a.testKey).rotate(e.id)
    expect(rotated.status).toBe(200)
    expect(rotated.body).toEqual({ id: e.id, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) })
    expect(rotated.body.secret).not.toBe(e.secret)
    const listed = (await hooks(a.testKey).list()).body.endpoints[0]
    expect(listed.secret_rotated_at).toEqual(expect.any(String))
    const ping = await hooks(a.testKey).test(e.id)
    expect(ping.body.delivered).toBe(true)
    const [request] = receiver.matching((r) => r.path === e.path)
    expect(verifyReceived(request!, rotated.body.secret)).toBe(true)
    expect(verifyReceived(request!, e.secret)).toBe(false)
    await clearEndpoints(a.testKey)
  })
})

describe("endpoint 14: test ping", () => {
  test("sent at once, signed, delivered whatever the subscription, and recorded in the history", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey, { events: ["tra.failed"] })
    const res = await hooks(a.testKey).test(e.id)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      event_id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      delivered: true,
      http_status: 200,
      duration_ms: expect.any(Number),
      error: ""
    })
    const [request] = receiver.matching((r) => r.path === e.path)
    expect(verifyReceived(request!, e.secret)).toBe(true)
    expect(request!.method).toBe("POST")
    // A copy: bun's toMatchObject writes its asymmetric matchers into the object it inspects.
    expect({ ...request!.headers }).toMatchObject({
      "content-type": "application/json",
      "user-agent": "Service-Webhooks/1.0",
      "x-service-event-id": res.body.event_id,
      "x-service-event": "ping",
      "x-service-signature": expect.stringMatching(/^sha256=[0-9a-f]{64}$/)
    })
    expect(bodyOf(request!)).toEqual({
      id: res.body.event_id,
      type: "ping",
      created_at: expect.any(String),
      api_version: "2026-10-01",
      sandbox: true,
      data: { endpoint_id: e.id, message: expect.any(String) }
    })
    const history = await hooks(a.testKey).deliveries("?event=ping&limit=1")
    expect(history.body.deliveries[0]).toMatchObject({
      endpoint_id: e.id,
      event_id: res.body.event_id,
      event: "ping",
      status: "delivered",
      attempts: 1,
      last_http_status: 200,
      last_error: null,
      next_attempt_at: null,
      delivered_at: expect.any(String),
      attempt_log: [{ attempted_at: expect.any(String), http_status: 200, duration_ms: expect.any(Number), error: null }]
    })
    await clearEndpoints(a.testKey)
  })

  test("a failing receiver: delivered false with the status and the reason; a ping is never retried", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    receiver.on(e.path, 503)
    const res = await hooks(a.testKey).test(e.id)
    expect(res.body).toMatchObject({ delivered: false, http_status: 503, error: "HTTP 503" })
    const [row] = await db.query<{ status: string; attempts: number; next_attempt_at: Date | null }>(
      "SELECT status, attempts, next_attempt_at FROM webhook_deliveries WHERE event_id = $1",
      [res.body.event_id]
    )
    expect(row).toEqual({ status: "failed", attempts: 1, next_attempt_at: null })
    await clearEndpoints(a.testKey)
  })

  test("a receiver that redirects: a failure, and the Location is never followed", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    receiver.on(e.path, { status: 302, headers: { location: `${receiver.url}/hooks/redirect-target` } })
    const res = await hooks(a.testKey).test(e.id)
    expect(res.body).toMatchObject({ delivered: false, http_status: 302 })
    expect(res.body.error).toContain("redirect")
    expect(receiver.matching((r) => r.path === "/hooks/redirect-target")).toEqual([])
    await clearEndpoints(a.testKey)
  })

  test("10 per minute per key, in their own bucket: the 11th is 429 while writes still pass", async () => {
    const c = await seedAccount(app, "Hotelera Ping")
    const e = await endpoint(c.testKey)
    const statuses: Array<number> = []
    for (let i = 0; i < 11; i++) statuses.push((await hooks(c.testKey).test(e.id)).status)
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429])
    expect((await hooks(c.testKey).update(e.id, { include_guests: true })).status).toBe(200)
  })

  test("buckets (design §6.15): listings are reads, management is writes, the test event its own", async () => {
    const d = await seedAccount(app, "Hotelera Buckets")
    const e = await endpoint(d.testKey)
    const limitOf = async (res: Promise<{ status: number; headers: Headers }>) => (await res).headers.get("x-ratelimit-limit")
    expect(await limitOf(hooks(d.testKey).list())).toBe("120")
    expect(await limitOf(hooks(d.testKey).deliveries())).toBe("120")
    expect(await limitOf(hooks(d.testKey).update(e.id, {}))).toBe("60")
    expect(await limitOf(hooks(d.testKey).rotate(e.id))).toBe("60")
    expect(await limitOf(hooks(d.testKey).test(e.id))).toBe("10")
    const history = await hooks(d.testKey).deliveries()
    expect(await limitOf(hooks(d.testKey).redeliver(history.body.deliveries[0].id))).toBe("60")
    expect(await limitOf(hooks(d.testKey).remove(e.id))).toBe("60")
  })
})

describe("event delivery", () => {
  test("each event goes to every subscribed active endpoint, signed; guests only where include_guests", async () => {
    await clearEndpoints(a.testKey)
    await clearEndpoints(a.liveKey)
    const all = await endpoint(a.testKey) // ["*"], no guests
    const completedOnly = await endpoint(a.testKey, { events: ["registration.completed"], include_guests: true })
    const traOnly = await endpoint(a.testKey, { events: ["tra.reported"] })
    const live = await endpoint(a.liveKey) // the other environment: gets nothing
    const submitted = await call(app, "POST", "/api/partners/registrations", {
      key: a.testKey,
      json: registrationBody(a.testProperties[0]!.property_id, [colombian(), foreigner()])
    })
    expect(submitted.status).toBe(201)
    const events = await storedEvents(submitted.body.reservation_id)
    expect(events.map((e) => e.type)).toEqual(["reservation.created", "registration.completed", "tra.reported", "sire.reported"])

    const toAll = await receiver.waitForCount(4, (r) => r.path === all.path)
    const toCompleted = await receiver.waitForCount(1, (r) => r.path === completedOnly.path)
    const toTra = await receiver.waitForCount(1, (r) => r.path === traOnly.path)
    expect(toAll.map((r) => r.headers["x-service-event"]).sort()).toEqual(events.map((e) => e.type).sort())
    for (const request of [...toAll, ...toCompleted, ...toTra]) {
      const secret = [all, completedOnly, traOnly].find((e) => e.path === request.path)!.secret
      expect(verifyReceived(request, secret)).toBe(true)
      // The receiver guide's example (docs/webhooks.md) accepts real deliveries, and only with the right secret.
      expect(verifyWebhook(request.headers, request.body, secret)).toMatchObject({ ok: true })
      expect(verifyWebhook(request.headers, request.body, live.secret)).toMatchObject({ ok: false })
      expect(verifyWebhook(request.headers, `${request.body} `, secret)).toMatchObject({ ok: false })
      const body = bodyOf<{ id: string; type: string }>(request)
      expect(request.headers["x-service-event-id"]).toBe(body.id)
      expect(request.headers["x-service-event"]).toBe(body.type)
      expect(Math.abs(Number(request.headers["x-service-timestamp"]) - Date.now() / 1000)).toBeLessThan(30)
    }
    // With include_guests the body is the stored event byte for byte; without, the same minus data.guests.
    const completed = events.find((e) => e.type === "registration.completed")!
    expect(toCompleted[0]!.body).toBe(completed.body)
    expect(JSON.parse(completed.body).data.guests).toHaveLength(2)
    const withoutGuests = toAll.find((r) => r.headers["x-service-event"] === "registration.completed")!
    const expected = JSON.parse(completed.body)
    delete expected.data.guests
    expect(withoutGuests.body).toBe(JSON.stringify(expected))
    expect(withoutGuests.body).not.toContain("numero_documento")
    const reported = toAll.find((r) => r.headers["x-service-event"] === "tra.reported")!
    expect(reported.body).toBe(events.find((e) => e.type === "tra.reported")!.body)
    expect(toTra[0]!.body).toBe(reported.body)
    await Bun.sleep(300)
    expect(receiver.matching((r) => r.path === live.path)).toEqual([])
    await clearEndpoints(a.testKey)
    await clearEndpoints(a.liveKey)
  })

  test("endpoints created after an event, or deactivated, do not get it; no endpoint, no delivery", async () => {
    await clearEndpoints(b.testKey)
    const created = await createReservation(b.testKey, b.testProperties[0]!.property_id)
    expect(created.status).toBe(201)
    const later = await endpoint(b.testKey)
    const rows = await db.query("SELECT 1 FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq WHERE e.reservation_id = $1", [
      created.body.reservation_id
    ])
    expect(rows).toEqual([])
    await Bun.sleep(300)
    expect(receiver.matching((r) => r.path === later.path)).toEqual([])
    await clearEndpoints(b.testKey)
  })

  test("a failing receiver: the delivery waits for its retry about a minute later, with the attempt logged", async () => {
    await clearEndpoints(b.testKey)
    const e = await endpoint(b.testKey, { events: ["reservation.created"] })
    receiver.on(e.path, { status: 500, body: "boom" })
    const created = await createReservation(b.testKey, b.testProperties[0]!.property_id)
    await receiver.waitForCount(1, (r) => r.path === e.path)
    let delivery: any
    for (let i = 0; i < 50; i++) {
      delivery = (await hooks(b.testKey).deliveries(`?external_id=${created.body.external_id}`)).body.deliveries[0]
      if (delivery?.attempts === 1) break
      await Bun.sleep(100)
    }
    expect(delivery).toMatchObject({ status: "pending", attempts: 1, last_http_status: 500, last_error: "HTTP 500" })
    const wait = Date.parse(delivery.next_attempt_at) - Date.parse(delivery.attempt_log[0].attempted_at)
    expect(wait).toBeGreaterThanOrEqual(48_000)
    expect(wait).toBeLessThanOrEqual(72_000)
    // DELETE ends it: pending deliveries of a deactivated endpoint are failed, with the reason.
    await hooks(b.testKey).remove(e.id)
    const after = (await hooks(b.testKey).deliveries(`?external_id=${created.body.external_id}`)).body.deliveries[0]
    expect(after).toMatchObject({ status: "failed", next_attempt_at: null, last_error: "the webhook endpoint was deactivated" })
    // Redelivering it answers 404 webhook_not_found: the endpoint is gone.
    const redeliver = await hooks(b.testKey).redeliver(after.id)
    expect(redeliver.status).toBe(404)
    expect(redeliver.body.code).toBe("webhook_not_found")
  })
})

describe("endpoints 15–16: history and redelivery", () => {
  test("filters by status, event and external_id; most recent first; limit 1..200; only the key's own", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey, { events: ["reservation.created", "reservation.cancelled"] })
    const first = await createReservation(a.testKey, a.testProperties[0]!.property_id)
    const second = await createReservation(a.testKey, a.testProperties[0]!.property_id)
    await call(app, "POST", "/api/partners/reservations/cancel", { key: a.testKey, json: { external_id: first.body.external_id } })
    await receiver.waitForCount(3, (r) => r.path === e.path)
    const ofFirst = await hooks(a.testKey).deliveries(`?external_id=${first.body.external_id}`)
    expect(ofFirst.status).toBe(200)
    expect(ofFirst.body.deliveries.map((d: { event: string }) => d.event)).toEqual(["reservation.cancelled", "reservation.created"])
    const created = await hooks(a.testKey).deliveries(`?event=reservation.created&limit=2`)
    const [firstEvent] = await storedEvents(first.body.reservation_id)
    const [secondEvent] = await storedEvents(second.body.reservation_id)
    expect(created.body.deliveries.map((d: { event_id: string }) => d.event_id)).toEqual([secondEvent!.id, firstEvent!.id])
    for (let i = 0; i < 50; i++) {
      if ((await hooks(a.testKey).deliveries("?status=pending")).body.deliveries.length === 0) break
      await Bun.sleep(100)
    }
    const delivered = await hooks(a.testKey).deliveries("?status=delivered&limit=200")
    expect(delivered.body.deliveries.length).toBeGreaterThanOrEqual(3)
    expect(delivered.body.deliveries.every((d: { status: string }) => d.status === "delivered")).toBe(true)
    expect((await hooks(a.testKey).deliveries("?limit=1")).body.deliveries).toHaveLength(1)
    // Another account and the other environment see none of them.
    expect((await hooks(b.testKey).deliveries(`?external_id=${first.body.external_id}`)).body.deliveries).toEqual([])
    expect((await hooks(a.liveKey).deliveries(`?external_id=${first.body.external_id}`)).body.deliveries).toEqual([])
    await clearEndpoints(a.testKey)
  })

  test.each([
    ["?limit=0", ["limit"]],
    ["?limit=201", ["limit"]],
    ["?limit=abc", ["limit"]],
    ["?limit=1.5", ["limit"]],
    ["?status=lost", ["status"]],
    ["?status=lost&limit=0", ["status", "limit"]]
  ])("%s → 400 invalid_request naming %j", async (query, fields) => {
    const res = await hooks(a.testKey).deliveries(query)
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_request")
    expect(res.body.details.fields.map((f: { field: string }) => f.field)).toEqual(fields)
  })

  test("redeliver: same event id, sent again at once with a fresh cycle; the attempt log keeps the history", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey, { events: ["reservation.created"] })
    const created = await createReservation(a.testKey, a.testProperties[0]!.property_id)
    const [first] = await receiver.waitForCount(1, (r) => r.path === e.path)
    let delivery: any
    for (let i = 0; i < 50; i++) {
      delivery = (await hooks(a.testKey).deliveries(`?external_id=${created.body.external_id}`)).body.deliveries[0]
      if (delivery?.status === "delivered") break
      await Bun.sleep(100)
    }
    const res = await hooks(a.testKey).redeliver(delivery.id)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, id: delivery.id, event_id: delivery.event_id, status: "pending" })
    const both = await receiver.waitForCount(2, (r) => r.path === e.path)
    expect(both[1]!.headers["x-service-event-id"]).toBe(first!.headers["x-service-event-id"])
    expect(both[1]!.body).toBe(first!.body)
    expect(verifyReceived(both[1]!, e.secret)).toBe(true)
    for (let i = 0; i < 50; i++) {
      delivery = (await hooks(a.testKey).deliveries(`?external_id=${created.body.external_id}`)).body.deliveries[0]
      if (delivery.attempts === 2 && delivery.status === "delivered") break
      await Bun.sleep(100)
    }
    expect(delivery).toMatchObject({ status: "delivered", attempts: 2 })
    expect(delivery.attempt_log).toHaveLength(2)
    for (const [key, id] of [
      [a.testKey, "0b7c3a0e-1d2f-4c3b-9a8e-000000000000"],
      [a.testKey, "nope"],
      [b.testKey, delivery.id],
      [a.liveKey, delivery.id]
    ] as const) {
      const missing = await hooks(key).redeliver(id)
      expect(missing.status).toBe(404)
      expect(missing.body.code).toBe("delivery_not_found")
    }
    await clearEndpoints(a.testKey)
  })
})

describe("Standard Webhooks (design §6.14): every delivery verified with the standardwebhooks package", () => {
  /** What a receiver hands the library: the three standard headers of a recorded request. */
  const standardHeaders = (request: ReceivedRequest) => ({
    "webhook-id": request.headers["webhook-id"]!,
    "webhook-timestamp": request.headers["webhook-timestamp"]!,
    "webhook-signature": request.headers["webhook-signature"]!
  })
  const verifiesWith = (secret: string, request: ReceivedRequest, body = request.body): boolean => {
    try {
      new Webhook(secret).verify(body, standardHeaders(request))
      return true
    } catch {
      return false
    }
  }

  test("a ping: both signatures verify; webhook-id is the event id, webhook-timestamp the spec's timestamp", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    expect(e.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const res = await hooks(a.testKey).test(e.id)
    expect(res.body.delivered).toBe(true)
    const [request] = receiver.matching((r) => r.path === e.path)
    expect(verifiesWith(e.secret, request!)).toBe(true)
    expect(verifyReceived(request!, e.secret)).toBe(true)
    expect(request!.headers["webhook-id"]).toBe(res.body.event_id)
    expect(request!.headers["webhook-id"]).toBe(request!.headers["x-service-event-id"])
    expect(request!.headers["webhook-timestamp"]).toBe(request!.headers["x-service-timestamp"])
    expect(request!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
  })

  test("an event delivery verifies; a changed body, id or timestamp does not", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    expect((await createReservation(a.testKey, a.testProperties[0]!.property_id)).status).toBe(201)
    const request = (await receiver.waitFor((r) => r.path === e.path))[0]!
    expect(JSON.parse(request.body).type).toBe("reservation.created")
    expect(verifiesWith(e.secret, request)).toBe(true)
    expect(verifiesWith(e.secret, request, request.body.replace("reservation.created", "reservation.cancelled")))
      .toBe(false)
    const headers = standardHeaders(request)
    for (const changed of [
      { "webhook-id": "evt_00000000000000000000000000000000" },
      { "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 1) }
    ]) {
      expect(() => new Webhook(e.secret).verify(request.body, { ...headers, ...changed })).toThrow()
    }
  })

  test("an endpoint still holding a secret issued before (base64url) is signed with the bytes it encodes", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    const bytes = randomBytes(32)
    const legacy = `whsec_${bytes.toString("base64url")}`
    // As an endpoint created before 2026-11-28 holds it (plain text is still read: docs/security.md).
    await db.query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2", [legacy, e.id])
    expect((await hooks(a.testKey).test(e.id)).body.delivered).toBe(true)
    const [request] = receiver.matching((r) => r.path === e.path)
    expect(verifyReceived(request!, legacy)).toBe(true)
    expect(verifiesWith(`whsec_${bytes.toString("base64")}`, request!)).toBe(true)
    await clearEndpoints(a.testKey)
  })

  test("rotation: the new secret verifies, the old one no longer does", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    const rotated = await hooks(a.testKey).rotate(e.id)
    expect((await hooks(a.testKey).test(e.id)).body.delivered).toBe(true)
    const [request] = receiver.matching((r) => r.path === e.path)
    expect(verifiesWith(rotated.body.secret, request!)).toBe(true)
    expect(verifiesWith(e.secret, request!)).toBe(false)
    await clearEndpoints(a.testKey)
  })
})

describe("recover (design §6.14): failed deliveries of a window queued again", () => {
  const recover = (key: string, id: string, json: unknown) =>
    call(app, "POST", `/api/partners/webhooks/${id}/recover`, { key, json })
  const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString()
  const failedPing = async (e: { id: string }) => {
    const res = await hooks(a.testKey).test(e.id)
    expect(res.body.delivered).toBe(false)
    return res.body.event_id as string
  }
  const row = async (eventId: string) =>
    (await db.query<{ status: string; attempts: number; cycle_attempts: number; attempt_log: Array<unknown> }>(
      "SELECT status, attempts, cycle_attempts, attempt_log FROM webhook_deliveries WHERE event_id = $1",
      [eventId]
    ))[0]!

  test("202 with the count; each is sent again (same event id, the log kept); pending and older ones untouched", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    receiver.on(e.path, 503)
    const recent = [await failedPing(e), await failedPing(e)]
    const old = await failedPing(e)
    await db.query("UPDATE webhook_deliveries SET created_at = now() - interval '2 days' WHERE event_id = $1", [old])
    expect((await createReservation(a.testKey, a.testProperties[0]!.property_id)).status).toBe(201)
    const [pending] = await db.query<{ event_id: string; status: string }>(
      "SELECT event_id, status FROM webhook_deliveries WHERE endpoint_id = $1 AND event_type = 'reservation.created'",
      [e.id]
    )
    expect(pending!.status).toBe("pending")
    receiver.on(e.path, 204)
    receiver.clear()

    const res = await recover(a.testKey, e.id, { since: hourAgo() })
    expect(res.status).toBe(202)
    expect(res.body).toEqual({ recovered: 2 })
    const resent = await receiver.waitForCount(2, (r) => r.path === e.path && recent.includes(r.headers["x-service-event-id"]!))
    expect(resent.map((r) => r.headers["x-service-event-id"]).sort()).toEqual([...recent].sort())
    for (const eventId of recent) {
      for (let i = 0; i < 50 && (await row(eventId)).status !== "delivered"; i++) await Bun.sleep(100)
      expect(await row(eventId)).toMatchObject({ status: "delivered", attempts: 2, cycle_attempts: 1 })
      expect((await row(eventId)).attempt_log).toHaveLength(2)
    }
    expect((await row(old)).status).toBe("failed")
    expect(receiver.matching((r) => r.headers["x-service-event-id"] === old)).toEqual([])

    const wider = await recover(a.testKey, e.id, { since: new Date(Date.now() - 3 * 86_400_000).toISOString() })
    expect(wider.body).toEqual({ recovered: 1 })
    await clearEndpoints(a.testKey)
  })

  test("400 invalid_request for a window over 7 days back or reversed; 404 for another key's, deactivated or unknown endpoints", async () => {
    await clearEndpoints(a.testKey)
    const e = await endpoint(a.testKey)
    const eightDays = new Date(Date.now() - 8 * 86_400_000).toISOString()
    const tooOld = await recover(a.testKey, e.id, { since: eightDays })
    expect(tooOld.status).toBe(400)
    expect(tooOld.body).toMatchObject({
      code: "invalid_request",
      details: { fields: [{ field: "since", message: "must be at most 7 days ago" }] }
    })
    const reversed = await recover(a.testKey, e.id, { since: hourAgo(), until: new Date(Date.now() - 7_200_000).toISOString() })
    expect(reversed.body).toMatchObject({ details: { fields: [{ field: "until", message: "must not be before since" }] } })
    for (const body of [{}, { since: "yesterday" }]) {
      const refused = await recover(a.testKey, e.id, body)
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: "invalid_request" })
    }

    const theirs = await endpoint(b.testKey)
    expect((await recover(a.testKey, theirs.id, { since: hourAgo() })).body.code).toBe("webhook_not_found")
    expect((await recover(a.liveKey, e.id, { since: hourAgo() })).body.code).toBe("webhook_not_found")
    expect((await recover(a.testKey, "not-a-uuid", { since: hourAgo() })).status).toBe(404)
    await hooks(a.testKey).remove(e.id)
    const gone = await recover(a.testKey, e.id, { since: hourAgo() })
    expect({ status: gone.status, code: gone.body.code }).toEqual({ status: 404, code: "webhook_not_found" })
    await clearEndpoints(b.testKey)
  })
})
