import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, type ManagedRuntime } from "effect"
import Pg from "pg"
import { Deliveries } from "../../src/webhooks/Deliveries.ts"
import { ENDPOINT_CONCURRENCY } from "../../src/webhooks/DeliveryLoop.ts"
import { call, type RunningApp, type seedAccount } from "../support/app.ts"
import type { TestDatabase } from "../support/database.ts"
import { reservationBody } from "../support/guests.ts"
import { type Receiver, type ReceiverAnswer } from "../support/receiver.ts"
import { startWebhookApp, stopWebhookApp } from "../support/webhookApp.ts"
import { serviceRuntime } from "../support/services.ts"

/**
 * Issue 17, item 2 (docs/performance.md, "Batched deliveries"): outcomes recorded in batches must be recorded as
 * one statement per attempt recorded them, whatever else is in the batch; and one slow receiver must not hold
 * back deliveries to another endpoint. Real local HTTP servers throughout.
 */

let counter = 0
type Row = {
  status: string
  attempts: number
  cycle_attempts: number
  last_http_status: number | null
  last_error: string | null
  next_attempt_at: Date | null
  delivered_at: Date | null
  lease_until: Date | null
  attempt_log: Array<{ attempted_at: string; http_status: number | null; duration_ms: number; error: string | null }>
  xmin: string
}

describe("mixed outcomes recorded together (one Deliveries round, ROLE=api)", () => {
  let receiver: Receiver
  let db: TestDatabase
  let app: RunningApp
  let account: Awaited<ReturnType<typeof seedAccount>>
  let runtime: ManagedRuntime.ManagedRuntime<Deliveries, unknown>

  beforeAll(async () => {
    ;({ receiver, db, app, account } = await startWebhookApp({ env: { ROLE: "api" } }))
    runtime = serviceRuntime(app, Deliveries.Default)
  })

  afterAll(async () => {
    await runtime?.dispose()
    await stopWebhookApp({ app, db, receiver })
  })

  const endpoint = async (answer: ReceiverAnswer) => {
    const path = `/batched/${++counter}`
    receiver.on(path, answer)
    const res = await call(app, "POST", "/api/partners/webhooks", {
      key: account.testKey,
      json: { url: `${receiver.url}${path}`, events: ["reservation.created"] }
    })
    expect(res.status).toBe(201)
    return { id: res.body.id as string, path }
  }
  /** A copy of endpoint `of` made in SQL, for more endpoints than the five active ones the API allows. */
  const copyOf = async (of: { id: string }, answer: ReceiverAnswer) => {
    const path = `/batched/${++counter}`
    receiver.on(path, answer)
    const [row] = await db.query<{ id: string }>(
      `INSERT INTO webhook_endpoints
       SELECT (jsonb_populate_record(NULL::webhook_endpoints,
         to_jsonb(e) || jsonb_build_object('id', gen_random_uuid(), 'url', $2::text))).*
       FROM webhook_endpoints e WHERE e.id = $1 RETURNING id`,
      [of.id, `${receiver.url}${path}`]
    )
    return { id: row!.id, path }
  }

  test("delivered, 500, Retry-After, inactive endpoint, deactivated and redelivered meanwhile", async () => {
    const slow = 1_500 // every receiver answers this late, so that the changes below happen while in flight
    const ok = await endpoint({ status: 200, delayMs: slow })
    const error = await endpoint({ status: 500, delayMs: slow })
    const later = await endpoint({ status: 503, headers: { "retry-after": "20" }, delayMs: slow })
    const inactive = await endpoint(200) // switched off under the claim: never requested
    const deactivatedMeanwhile = await endpoint({ status: 500, delayMs: slow })
    const redeliveredFailing = await copyOf(ok, { status: 500, delayMs: slow })
    const redeliveredOk = await copyOf(ok, { status: 200, delayMs: slow })
    const all = [ok, error, later, inactive, deactivatedMeanwhile, redeliveredFailing, redeliveredOk]
    const created = await call(app, "POST", "/api/partners/reservations", {
      key: account.testKey,
      json: reservationBody(account.testProperties[0]!.property_id)
    })
    expect(created.status).toBe(201)
    const rows = await db.query<{ id: string; endpoint_id: string }>("SELECT id, endpoint_id FROM webhook_deliveries")
    const idOf = (e: { id: string }) => rows.find((row) => row.endpoint_id === e.id)!.id
    expect(rows).toHaveLength(all.length)
    // Deactivated between the event and the claim, as a concurrent deactivation would leave it for the claim.
    await db.query("UPDATE webhook_endpoints SET is_active = false WHERE id = $1", [inactive.id])

    const round = runtime.runPromise(Effect.flatMap(Deliveries, (d) => d.runDue(50)))
    const sentTo = [ok, error, later, deactivatedMeanwhile, redeliveredFailing, redeliveredOk]
    await receiver.waitForCount(sentTo.length, (r) => sentTo.some((e) => e.path === r.path), 10_000)
    // While the requests are in flight: one endpoint deactivated (its pending rows end failed), two rows
    // redelivered (pending again, a fresh cycle).
    expect((await call(app, "DELETE", `/api/partners/webhooks/${deactivatedMeanwhile.id}`, { key: account.testKey }))
      .status).toBe(200)
    for (const e of [redeliveredFailing, redeliveredOk]) {
      const res = await call(app, "POST", `/api/partners/webhooks/deliveries/${idOf(e)}/redeliver`, {
        key: account.testKey
      })
      expect(res.status).toBe(200)
    }
    // Hold the rows until every answer is in, so that the outcomes queue up behind one statement: at most the
    // recorder's first take can go alone.
    const lock = new Pg.Client({ connectionString: db.url })
    await lock.connect()
    try {
      await lock.query("BEGIN")
      await lock.query("SELECT 1 FROM webhook_deliveries FOR UPDATE")
      await Bun.sleep(slow + 600)
      await lock.query("COMMIT")
    } finally {
      await lock.end()
    }
    expect(await round).toBe(all.length)

    const rowOf = async (e: { id: string }) =>
      (await db.query<Row>(
        `SELECT status, attempts, cycle_attempts, last_http_status, last_error, next_attempt_at, delivered_at,
           lease_until, attempt_log, xmin::text FROM webhook_deliveries WHERE endpoint_id = $1`,
        [e.id]
      ))[0]!
    const attemptedAt = (row: Row) => Date.parse(row.attempt_log.at(-1)!.attempted_at)
    const retryIn = (row: Row) => row.next_attempt_at!.getTime() - attemptedAt(row)
    const recorded = await Promise.all(all.map(rowOf))
    for (const row of recorded) {
      expect(row.attempts).toBe(1)
      expect(row.lease_until).toBeNull()
      expect(row.attempt_log).toHaveLength(1)
    }
    // Recorded together: the inactive endpoint's row went at once (nothing to send); of the answers, at most the
    // recorder's first take went alone, the rest queued behind the lock and were written by one statement.
    const batches = new Map<string, number>()
    for (const row of recorded) batches.set(row.xmin, (batches.get(row.xmin) ?? 0) + 1)
    expect(batches.size).toBeLessThanOrEqual(3)
    expect(Math.max(...batches.values())).toBeGreaterThanOrEqual(4)

    const [delivered, failedOnce, askedLater, wasInactive, deactivated, redeliveredFailed, redeliveredDelivered] =
      recorded
    expect(delivered).toMatchObject({
      status: "delivered",
      cycle_attempts: 1,
      last_http_status: 200,
      last_error: null,
      next_attempt_at: null
    })
    expect(delivered!.delivered_at!.getTime()).toBe(attemptedAt(delivered!))
    expect(delivered!.attempt_log[0]).toMatchObject({ http_status: 200, error: null })

    expect(failedOnce).toMatchObject({ status: "pending", last_http_status: 500, last_error: "HTTP 500" })
    expect(retryIn(failedOnce!)).toBeGreaterThanOrEqual(48_000) // the first gap, 1 min ± 20 %
    expect(retryIn(failedOnce!)).toBeLessThanOrEqual(72_000)

    expect(askedLater).toMatchObject({ status: "pending", last_http_status: 503, last_error: "HTTP 503" })
    expect(retryIn(askedLater!)).toBe(20_000) // Retry-After, sooner than the gap

    expect(wasInactive).toMatchObject({
      status: "failed",
      last_http_status: null,
      last_error: "the webhook endpoint was deactivated",
      next_attempt_at: null,
      delivered_at: null
    })
    expect(receiver.matching((r) => r.path === inactive.path)).toHaveLength(0)

    // Not pending any more when the failure came back: the attempt is logged, the status and time stay.
    expect(deactivated).toMatchObject({ status: "failed", last_http_status: 500, last_error: "HTTP 500" })
    expect(deactivated!.next_attempt_at).toBeNull()

    // Pending again (a fresh cycle) when the failure came back: it counts as the new cycle's first attempt.
    expect(redeliveredFailed).toMatchObject({ status: "pending", cycle_attempts: 1, last_http_status: 500 })
    expect(retryIn(redeliveredFailed!)).toBeGreaterThanOrEqual(48_000)
    // A success is a success, whatever happened meanwhile.
    expect(redeliveredDelivered).toMatchObject({ status: "delivered", cycle_attempts: 1, last_http_status: 200 })
  })
})

describe("a slow receiver does not hold back another endpoint (the delivery loop, ROLE=worker)", () => {
  let receiver: Receiver
  let db: TestDatabase
  let app: RunningApp
  let account: Awaited<ReturnType<typeof seedAccount>>

  // One process: its delivery loop sends everything.
  beforeAll(async () => {
    ;({ receiver, db, app, account } = await startWebhookApp({ env: { ROLE: "all" } }))
  })

  afterAll(() => stopWebhookApp({ app, db, receiver }))

  test("with a receiver answering in 5 s, the other endpoint gets every event at once", async () => {
    receiver.on("/slow", { status: 200, delayMs: 5_000 })
    receiver.on("/fast", 200)
    for (const path of ["/slow", "/fast"]) {
      const res = await call(app, "POST", "/api/partners/webhooks", {
        key: account.testKey,
        json: { url: `${receiver.url}${path}`, events: ["reservation.created"] }
      })
      expect(res.status).toBe(201)
    }
    // More events than one endpoint's requests in flight: with one bound for all endpoints together, the slow
    // receiver's requests would take every slot and the fast endpoint would wait 5 s for the rest.
    const events = ENDPOINT_CONCURRENCY + 8
    const started = Date.now()
    for (let i = 0; i < events; i++) {
      const res = await call(app, "POST", "/api/partners/reservations", {
        key: account.testKey,
        json: reservationBody(account.testProperties[0]!.property_id)
      })
      expect(res.status).toBe(201)
    }
    const fast = await receiver.waitForCount(events, (r) => r.path === "/fast", 20_000)
    expect(new Set(fast.map((r) => r.headers["x-service-event-id"])).size).toBe(events)
    // Each event reached the fast endpoint soon after it was committed, none held until a slow answer (5 s).
    const committed = new Map(
      (await db.query<{ id: string; created_at: Date }>("SELECT id, created_at FROM events")).map((e) =>
        [e.id, e.created_at.getTime()] as const
      )
    )
    const lags = fast.map((r) => r.receivedAt - committed.get(r.headers["x-service-event-id"]!)!)
    expect(Math.max(...lags)).toBeLessThan(2_500)
    // The slow receiver gets everything too, never more than the bound at once: a request is in flight from its
    // arrival until the answer 5 s later.
    const slow = await receiver.waitForCount(events, (r) => r.path === "/slow", 30_000)
    const arrivals = slow.map((r) => r.receivedAt)
    const mostAtOnce = Math.max(...arrivals.map((t) => arrivals.filter((u) => u <= t && t < u + 5_000).length))
    expect(mostAtOnce).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY)
    expect(mostAtOnce).toBeGreaterThan(1) // several at once: a bound, not one at a time
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000)
  })
})
