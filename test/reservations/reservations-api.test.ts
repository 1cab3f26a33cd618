import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, Redacted, Schema } from "effect"
import { RegistrationDetail } from "../../src/reservations/Reservation.ts"
import { Outbox } from "../../src/webhooks/Outbox.ts"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { bogotaToday, startFakeTrm } from "../support/trm.ts"

const trm = startFakeTrm()

let db: TestDatabase
let app: RunningApp
let a: Awaited<ReturnType<typeof seedAccount>>
let b: Awaited<ReturnType<typeof seedAccount>>
let liveProperty: { property_id: string }
let disabledProperty: { property_id: string }

beforeAll(async () => {
  db = await freshDatabase()
  app = await startApp({
    DATABASE_URL: db.url,
    TRM_URL: trm.url,
    PUBLIC_BASE_URL: "https://checkin.example.co"
  })
  a = await seedAccount(app, "Hotelera A")
  b = await seedAccount(app, "Hotelera B")
  liveProperty = await admin(app, (c) => c.CreateProperty({ account_id: a.accountId, name: "Live", rnt_id: "RNT-9" }))
  disabledProperty = await admin(app, (c) =>
    c.CreateProperty({ account_id: a.accountId, name: "Closed", environment: "test", checkin_enabled: false }))
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  trm.stop()
})

const create = (key: string, body: Record<string, unknown>) => call(app, "POST", "/api/partners/reservations", { key, json: body })
const base = (overrides: Record<string, unknown> = {}) => ({
  external_id: `R-${Math.random().toString(36).slice(2, 10)}`,
  property_id: a.testProperties[0]!.property_id,
  check_in: "2026-12-20",
  check_out: "2026-12-23",
  guest_name: "Ana Pérez",
  guests_count: 2,
  ...overrides
})
const eventsOf = (reservationId: string) =>
  db.query<{ type: string; body: Record<string, any> }>(
    "SELECT type, body FROM events WHERE reservation_id = $1 ORDER BY seq",
    [reservationId]
  )

describe("POST /api/partners/reservations (endpoint 3)", () => {
  test("201 with the ReservationResponse, a checkin_url, and reservation.created in the outbox", async () => {
    const metadata = { roomType: "DBL", nested: { zKey: 1, aKey: [3, 2, 1] }, "ñandú": "sí" }
    const body = base({ source: "pms-x", metadata, total_amount: 1250000, currency: "COP" })
    const res = await create(a.testKey, body)
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      ok: true,
      reservation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      external_id: body.external_id,
      status: "pending_checkin",
      reservation_status: "confirmed",
      sandbox: true,
      checkin_token: expect.any(String),
      checkin_status: "pending",
      guests_registered: 0,
      tra: { status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null, simulated: true },
      sire: { status: "not_applicable", reported_at: null, foreign_guests: 0, simulated: true, exit: { status: "not_applicable", sends_on: null, reported_at: null } },
      departed_on: null,
      source: "pms-x",
      metadata,
      checkin_url: `https://checkin.example.co/checkin/${res.body.checkin_token}`,
      created_at: expect.any(String),
      idempotent_replay: false
    })
    // metadata comes back unchanged, key order included
    expect(JSON.stringify(res.body.metadata)).toBe(JSON.stringify(metadata))
    expect(Buffer.from(res.body.checkin_token, "base64url").length).toBeGreaterThanOrEqual(16)
    expect(res.headers.get("x-ratelimit-limit")).toBe("60")

    const events = await eventsOf(res.body.reservation_id)
    expect(events.map((e) => e.type)).toEqual(["reservation.created"])
    const event = events[0]!.body
    expect(event).toMatchObject({ type: "reservation.created", api_version: "2026-10-01", sandbox: true })
    expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/)
    expect(event.data).toMatchObject({
      reservation_id: res.body.reservation_id,
      external_id: body.external_id,
      source: "pms-x",
      property_id: body.property_id,
      status: "pending_checkin",
      check_in: "2026-12-20",
      check_out: "2026-12-23",
      guests_count: 2,
      checkin_url: res.body.checkin_url,
      contract_signed: false,
      guests_registered: 0
    })
    expect(JSON.stringify(event.data.metadata)).toBe(JSON.stringify(metadata))
    expect(event.data.guests).toBeUndefined()
  })

  test("an identical retry replays: 200, same reservation and checkin_url, nothing created", async () => {
    const body = base()
    const first = await create(a.testKey, body)
    const again = await create(a.testKey, { ...body, unknown_field: "ignored" })
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ ...first.body, idempotent_replay: true })
    const rows = await db.query("SELECT id FROM reservations WHERE external_id = $1", [body.external_id])
    expect(rows).toHaveLength(1)
    expect((await eventsOf(first.body.reservation_id)).length).toBe(1)
  })

  test("the same external_id with a different body is 409 reservation_conflict", async () => {
    const body = base()
    await create(a.testKey, body)
    const res = await create(a.testKey, { ...body, guests_count: 3 })
    expect(res.status).toBe(409)
    expect(res.body.code).toBe("reservation_conflict")
  })

  test("concurrent creations of one external_id: exactly one reservation; losers answer at once", async () => {
    const body = base()
    const results = await Promise.all(Array.from({ length: 8 }, () => create(a.testKey, body)))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses.filter((s) => s === 201)).toHaveLength(1)
    for (const r of results.filter((r) => r.status !== 201)) {
      expect([200, 409]).toContain(r.status)
      if (r.status === 409) expect(r.body.code).toBe("creation_in_progress")
      if (r.status === 200) expect(r.body.idempotent_replay).toBe(true)
    }
    const rows = await db.query("SELECT id FROM reservations WHERE external_id = $1", [body.external_id])
    expect(rows).toHaveLength(1)
  })

  test("property by property_external_id or rnt_id; the rule-12 errors", async () => {
    await call(app, "PATCH", "/api/partners/properties", {
      key: a.testKey,
      json: { mappings: [{ property_id: a.testProperties[1]!.property_id, external_id: "PMS-PLAYA" }] }
    })
    const byExternal = await create(a.testKey, base({ property_id: undefined, property_external_id: "PMS-PLAYA" }))
    expect(byExternal.status).toBe(201)
    const byRnt = await create(a.testKey, base({ property_id: undefined, rnt_id: "SBX-00001" }))
    expect(byRnt.status).toBe(201)

    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ["another account's property", { property_id: b.testProperties[0]!.property_id }, 403, "property_out_of_scope"],
      ["a live property with a test key", { property_id: liveProperty.property_id }, 403, "sandbox_property_required"],
      ["an unknown property", { property_id: "00000000-0000-4000-8000-000000000000" }, 404, "property_not_found"],
      ["check-in disabled", { property_id: disabledProperty.property_id }, 404, "property_not_found"],
      ["an unknown PMS id", { property_id: undefined, property_external_id: "NOPE" }, 404, "property_not_found"]
    ]
    for (const [, overrides, status, code] of cases) {
      const res = await create(a.testKey, base(overrides))
      expect([res.status, res.body.code]).toEqual([status, code])
    }
    const liveOnTest = await create(a.liveKey, base({ property_id: a.testProperties[0]!.property_id }))
    expect([liveOnTest.status, liveOnTest.body.code]).toEqual([403, "live_property_required"])
  })

  test("400 invalid_request: no property identifier, and sandbox_simulate with a live key", async () => {
    const none = await create(a.testKey, base({ property_id: undefined }))
    expect(none.status).toBe(400)
    expect(none.body.details.fields.map((f: { field: string }) => f.field)).toEqual(["property_id"])
    const simulated = await create(a.liveKey, base({ property_id: liveProperty.property_id, sandbox_simulate: "tra_failed" }))
    expect(simulated.status).toBe(400)
    expect(simulated.body.details.fields).toEqual([{ field: "sandbox_simulate", message: "is only accepted with a test key" }])
    const live = await create(a.liveKey, base({ property_id: liveProperty.property_id }))
    expect(live.status).toBe(201)
    expect(live.body.sandbox).toBe(false)
    expect(live.body.tra).toEqual({ status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null })
  })

  test("USD is converted with today's TRM and stored; without a rate: 503 trm_unavailable, nothing created", async () => {
    trm.state.failing = false
    const res = await create(a.testKey, base({ total_amount: 100.25, currency: "USD" }))
    expect(res.status).toBe(201)
    const [row] = await db.query<{ total_amount: string; total_amount_cop: string; trm_rate: string; trm_date: string }>(
      "SELECT total_amount, total_amount_cop, trm_rate, trm_date::text FROM reservations WHERE id = $1",
      [res.body.reservation_id]
    )
    // 100.25 × 4000.50 = 401050.125 → 401050
    expect(row).toEqual({ total_amount: "100.25", total_amount_cop: "401050", trm_rate: "4000.50", trm_date: bogotaToday() })
    expect(trm.state.requests.some((q) => decodeURIComponent(q).includes("vigenciadesde"))).toBe(true)

    // A fresh process has no cached rate: with the source failing, creation answers 503 and creates nothing.
    trm.state.failing = true
    const cold = await startApp({ DATABASE_URL: db.url, TRM_URL: trm.url })
    try {
      const body = base({ total_amount: 80, currency: "USD" })
      const failed = await call(cold, "POST", "/api/partners/reservations", { key: a.testKey, json: body })
      expect([failed.status, failed.body.code]).toEqual([503, "trm_unavailable"])
      expect(await db.query("SELECT 1 FROM reservations WHERE external_id = $1", [body.external_id])).toHaveLength(0)
      // COP amounts never need the rate
      const cop = await call(cold, "POST", "/api/partners/reservations", {
        key: a.testKey,
        json: base({ total_amount: 80, currency: "COP" })
      })
      expect(cop.status).toBe(201)
    } finally {
      trm.state.failing = false
      await cold.stop()
    }
  })
})

describe("GET /api/partners/registrations (endpoints 6 and 8)", () => {
  test("the detail, by query and by path; include=guests adds guests; no personal data without it", async () => {
    const body = base({ external_id: "PMS/2026/0042", guest_email: "ana@example.co", guest_phone: "+57 300", notes: "VIP" })
    const created = await create(a.testKey, body)
    const byQuery = await call(app, "GET", `/api/partners/registrations?external_id=${encodeURIComponent(body.external_id)}`, {
      key: a.testKey
    })
    expect(byQuery.status).toBe(200)
    expect(byQuery.body).toEqual({
      ...created.body,
      property_id: body.property_id,
      check_in: "2026-12-20",
      check_out: "2026-12-23",
      guests_count: 2,
      completed_at: null
    })
    const text = JSON.stringify(byQuery.body)
    for (const pii of ["ana@example.co", "+57 300", "VIP", "Ana Pérez"]) expect(text.includes(pii)).toBe(false)

    const withGuests = await call(
      app,
      "GET",
      `/api/partners/registrations?external_id=${encodeURIComponent(body.external_id)}&include=guests`,
      { key: a.testKey }
    )
    expect(withGuests.body.guests).toEqual([])

    const plain = base({ external_id: "PMS-42" })
    await create(a.testKey, plain)
    const byPath = await call(app, "GET", "/api/partners/registrations/PMS-42", { key: a.testKey })
    expect(byPath.status).toBe(200)
    expect(byPath.body.external_id).toBe("PMS-42")
    expect(byPath.body.guests).toBeUndefined()

    // Sent without re-encoding (a hot read): byte for byte what RegistrationDetail's encoding gives — the same
    // keys in the schema's order, nothing more — by path and by query, with guests too.
    for (const path of ["/api/partners/registrations/PMS-42", "/api/partners/registrations?external_id=PMS-42", "/api/partners/registrations/PMS-42?include=guests"]) {
      const raw = await (await fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${a.testKey}` } })).text()
      const encoded = Schema.encodeSync(RegistrationDetail)(Schema.decodeUnknownSync(RegistrationDetail)(JSON.parse(raw)))
      expect(raw).toBe(JSON.stringify(encoded))
    }
  })

  test("404 registration_not_found for unknown ids, other accounts and the other environment", async () => {
    const body = base()
    await create(a.testKey, body)
    for (const key of [b.testKey, a.liveKey]) {
      const res = await call(app, "GET", `/api/partners/registrations/${body.external_id}`, { key })
      expect([res.status, res.body.code]).toEqual([404, "registration_not_found"])
    }
    const unknown = await call(app, "GET", "/api/partners/registrations?external_id=nope", { key: a.testKey })
    expect([unknown.status, unknown.body.code]).toEqual([404, "registration_not_found"])
    const missing = await call(app, "GET", "/api/partners/registrations", { key: a.testKey })
    expect(missing.status).toBe(400)
    expect(missing.body.details.fields[0].field).toBe("external_id")
  })
})

describe("POST /api/partners/reservations/cancel (endpoint 5)", () => {
  const cancel = (key: string, body: Record<string, unknown>) =>
    call(app, "POST", "/api/partners/reservations/cancel", { key, json: body })

  test("cancels once, emits reservation.cancelled once; a second cancel is 200 already_cancelled", async () => {
    const created = await create(a.testKey, base())
    const first = await cancel(a.testKey, { external_id: created.body.external_id, reason: "guest cancelled" })
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({
      ok: true,
      reservation_id: created.body.reservation_id,
      status: "cancelled",
      reservation_status: "cancelled",
      already_cancelled: false,
      already_reported: { tra: false, sire: false }
    })
    expect(first.body.warning).toBeUndefined()
    const second = await cancel(a.testKey, { external_id: created.body.external_id })
    expect(second.status).toBe(200)
    expect(second.body.already_cancelled).toBe(true)
    const events = await eventsOf(created.body.reservation_id)
    expect(events.map((e) => e.type)).toEqual(["reservation.created", "reservation.cancelled"])
    expect(events[1]!.body.data.status).toBe("cancelled")
    const detail = await call(app, "GET", `/api/partners/registrations/${created.body.external_id}`, { key: a.testKey })
    expect(detail.body.status).toBe("cancelled")
  })

  test("404 registration_not_found; 400 for a missing external_id", async () => {
    const res = await cancel(a.testKey, { external_id: "never-created" })
    expect([res.status, res.body.code]).toEqual([404, "registration_not_found"])
    const bad = await cancel(a.testKey, { reason: "x".repeat(501) })
    expect(bad.status).toBe(400)
    expect(bad.body.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(["external_id", "reason"])
  })
})

describe("the outbox", () => {
  const withDb = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | Outbox>) =>
    Effect.runPromise(
      effect.pipe(
        Effect.provide(Outbox.Default),
        Effect.provide(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 2 }))
      )
    )

  test("events commit with their change, and a rolled-back change leaves no event", async () => {
    const created = await create(a.testKey, base())
    const reservationId = created.body.reservation_id as string
    const entry = {
      accountId: a.accountId,
      environment: "test" as const,
      reservationId,
      types: ["reservation.updated", "registration.completed"] as const,
      data: { reservation_id: reservationId },
      guests: [{ nombre: "Ana" }]
    }
    const failed = await withDb(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const outbox = yield* Outbox
        yield* sql`UPDATE reservations SET guests_count = 5 WHERE id = ${reservationId}`
        yield* outbox.enqueue(entry)
        return yield* Effect.fail("crash after writing" as const)
      }).pipe((effect) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect)), Effect.either)
    )
    expect(failed._tag).toBe("Left")
    expect((await eventsOf(reservationId)).map((e) => e.type)).toEqual(["reservation.created"])
    const [unchanged] = await db.query<{ guests_count: number }>("SELECT guests_count FROM reservations WHERE id = $1", [
      reservationId
    ])
    expect(unchanged!.guests_count).toBe(2)

    await withDb(
      Effect.gen(function*() {
        const outbox = yield* Outbox
        yield* outbox.enqueue(entry)
      }).pipe((effect) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect)))
    )
    const events = await eventsOf(reservationId)
    expect(events.map((e) => e.type)).toEqual(["reservation.created", "reservation.updated", "registration.completed"])
    // guests travel only in registration.* events
    expect(events[1]!.body.data.guests).toBeUndefined()
    expect(events[2]!.body.data.guests).toEqual([{ nombre: "Ana" }])
  })
})
