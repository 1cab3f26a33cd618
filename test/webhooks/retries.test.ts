import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, type ManagedRuntime, TestClock, TestContext } from "effect"
import { Deliveries } from "../../src/webhooks/Deliveries.ts"
import { call, type RunningApp, type seedAccount } from "../support/app.ts"
import type { TestDatabase } from "../support/database.ts"
import { type Receiver, verifyReceived } from "../support/receiver.ts"
import { startWebhookApp, stopWebhookApp } from "../support/webhookApp.ts"
import { reservationBody } from "../support/guests.ts"
import { serviceRuntime } from "../support/services.ts"

/**
 * The retry cycle of design §6.14 on a `TestClock`: the app runs with ROLE=api (no delivery loop), so only
 * the `Deliveries` service built here attempts deliveries, one explicit round at a time, at test time.
 */
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

let counter = 0
/** An endpoint on a fresh receiver path, subscribed to reservation.created, answering `answer`. */
const endpointAnswering = async (answer: Parameters<Receiver["on"]>[1]) => {
  // One endpoint at a time: each test's events go to its own endpoint only.
  const active = await call(app, "GET", "/api/partners/webhooks", { key: account.testKey })
  for (const old of active.body.endpoints) {
    await call(app, "DELETE", `/api/partners/webhooks/${old.id}`, { key: account.testKey })
  }
  const path = `/retry/${++counter}`
  receiver.on(path, answer)
  const res = await call(app, "POST", "/api/partners/webhooks", {
    key: account.testKey,
    json: { url: `${receiver.url}${path}`, events: ["reservation.created"] }
  })
  expect(res.status).toBe(201)
  return { id: res.body.id as string, secret: res.body.secret as string, path }
}

/** One reservation → one reservation.created event → one delivery per subscribed endpoint; answers its id. */
const oneEvent = async (endpointId: string) => {
  const res = await call(app, "POST", "/api/partners/reservations", {
    key: account.testKey,
    json: reservationBody(account.testProperties[0]!.property_id)
  })
  expect(res.status).toBe(201)
  const [row] = await db.query<{ id: string }>("SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq DESC LIMIT 1", [
    endpointId
  ])
  return row!.id
}

type Row = {
  status: string
  attempts: number
  next_attempt_at: Date | null
  attempt_log: Array<{ attempted_at: string; http_status: number | null; error: string | null }>
}
const rowOf = async (id: string) =>
  (await db.query<Row>("SELECT status, attempts, next_attempt_at, attempt_log FROM webhook_deliveries WHERE id = $1", [id]))[0]!

const round = Effect.flatMap(Deliveries, (d) => d.runDue(50))

/** Runs `program` with a TestClock starting just after the wall clock's now (rows were made on real time). */
const onTestClock = <A>(program: Effect.Effect<A, unknown, Deliveries>) =>
  runtime.runPromise(Effect.zipRight(TestClock.setTime(Date.now() + 1_000), program).pipe(Effect.provide(TestContext.TestContext)))

/** Moves the TestClock to `at` (never backwards). */
const moveTo = (at: Date) => Effect.flatMap(TestClock.currentTimeMillis, (now) => TestClock.adjust(Math.max(0, at.getTime() - now)))

const GAPS_MINUTES = [1, 5, 30, 120, 300, 600, 840, 1200, 1440]

describe("delivery retries (design §6.14, TestClock)", () => {
  test("10 attempts with gaps of 1 min … 24 h (±20 %), nothing before each is due, then failed for good", async () => {
    const e = await endpointAnswering({ status: 500 })
    const id = await oneEvent(e.id)
    await onTestClock(Effect.gen(function*() {
      expect(yield* round).toBe(1)
      for (let attempt = 2; attempt <= 10; attempt++) {
        const { next_attempt_at } = yield* Effect.promise(() => rowOf(id))
        yield* moveTo(new Date(next_attempt_at!.getTime() - 1_000))
        expect(yield* round).toBe(0) // a second early: not due
        yield* TestClock.adjust("1 second")
        expect(yield* round).toBe(1)
      }
      yield* TestClock.adjust("48 hours")
      expect(yield* round).toBe(0)
    }))
    const row = await rowOf(id)
    expect(row).toMatchObject({ status: "failed", attempts: 10, next_attempt_at: null })
    expect(row.attempt_log.map((entry) => [entry.http_status, entry.error])).toEqual(Array(10).fill([500, "HTTP 500"]))
    const times = row.attempt_log.map((entry) => Date.parse(entry.attempted_at))
    GAPS_MINUTES.forEach((gap, i) => {
      const actual = (times[i + 1]! - times[i]!) / 60_000
      expect(actual).toBeGreaterThanOrEqual(gap * 0.8)
      expect(actual).toBeLessThanOrEqual(gap * 1.2)
    })
    expect(receiver.matching((r) => r.path === e.path)).toHaveLength(10)
  })

  test("Retry-After is honoured when sooner than the gap, and capped at the gap when later", async () => {
    // An HTTP date 10 minutes ahead: by the third attempt (~6 min in) it is sooner than the 30 min gap.
    const retryDate = new Date(Math.ceil((Date.now() + 600_000) / 1000) * 1000)
    const e = await endpointAnswering([
      { status: 429, headers: { "retry-after": "20" } },
      { status: 503, headers: { "retry-after": "7200" } },
      { status: 503, headers: { "retry-after": retryDate.toUTCString() } },
      200
    ])
    const id = await oneEvent(e.id)
    const waits = await onTestClock(Effect.gen(function*() {
      const gaps: Array<number> = []
      for (let attempt = 1; attempt <= 4; attempt++) {
        expect(yield* round).toBe(1)
        const row = yield* Effect.promise(() => rowOf(id))
        if (row.next_attempt_at === null) break
        gaps.push((row.next_attempt_at.getTime() - Date.parse(row.attempt_log.at(-1)!.attempted_at)) / 1000)
        yield* moveTo(row.next_attempt_at)
      }
      return gaps
    }))
    expect(waits[0]).toBe(20) // asked for 20 s, sooner than the 1 min gap
    expect(waits[1]).toBeGreaterThanOrEqual(5 * 60 * 0.8) // asked for 2 h: capped at the 5 min gap
    expect(waits[1]).toBeLessThanOrEqual(5 * 60 * 1.2)
    const row = await rowOf(id)
    expect(waits[2]).toBe((retryDate.getTime() - Date.parse(row.attempt_log[2]!.attempted_at)) / 1000)
    expect(waits[2]).toBeLessThan(30 * 60 * 0.8)
    expect(row).toMatchObject({ status: "delivered", attempts: 4 })
  })

  test("after a rotation every attempt, retries of earlier events included, is signed with the new secret", async () => {
    const e = await endpointAnswering([500, 200])
    const id = await oneEvent(e.id)
    await onTestClock(round)
    const rotated = await call(app, "POST", `/api/partners/webhooks/${e.id}/rotate-secret`, { key: account.testKey })
    await onTestClock(Effect.gen(function*() {
      yield* TestClock.adjust("2 minutes")
      expect(yield* round).toBe(1)
    }))
    const [before, after] = receiver.matching((r) => r.path === e.path)
    expect(before!.headers["x-service-event-id"]).toBe(after!.headers["x-service-event-id"])
    expect(verifyReceived(before!, e.secret)).toBe(true)
    expect(verifyReceived(after!, rotated.body.secret)).toBe(true)
    expect(verifyReceived(after!, e.secret)).toBe(false)
    expect(await rowOf(id)).toMatchObject({ status: "delivered", attempts: 2 })
  })

  test("redelivery of a failed delivery starts a fresh cycle (first gap 1 min again), the log keeps all attempts", async () => {
    const e = await endpointAnswering({ status: 500 })
    const id = await oneEvent(e.id)
    await onTestClock(Effect.gen(function*() {
      for (let attempt = 1; attempt <= 10; attempt++) {
        expect(yield* round).toBe(1)
        yield* TestClock.adjust("30 hours")
      }
    }))
    expect((await rowOf(id)).status).toBe("failed")
    receiver.on(e.path, [500, 200])
    const res = await call(app, "POST", `/api/partners/webhooks/deliveries/${id}/redeliver`, { key: account.testKey })
    expect(res.body).toMatchObject({ ok: true, id, status: "pending" })
    await onTestClock(Effect.gen(function*() {
      expect(yield* round).toBe(1) // attempt 11: 500
      const row = yield* Effect.promise(() => rowOf(id))
      const gap = (row.next_attempt_at!.getTime() - Date.parse(row.attempt_log.at(-1)!.attempted_at)) / 60_000
      expect(gap).toBeGreaterThanOrEqual(0.8)
      expect(gap).toBeLessThanOrEqual(1.2)
      yield* moveTo(row.next_attempt_at!)
      expect(yield* round).toBe(1) // attempt 12: delivered
    }))
    const row = await rowOf(id)
    expect(row).toMatchObject({ status: "delivered", attempts: 12, next_attempt_at: null })
    expect(row.attempt_log).toHaveLength(12)
  })

  test("a delivery claimed by a worker that died is taken over when its lease (15 s) ends, same event id", async () => {
    const e = await endpointAnswering(200)
    const id = await oneEvent(e.id)
    await db.query("UPDATE webhook_deliveries SET lease_until = $2 WHERE id = $1", [id, new Date(Date.now() + 15_000)])
    await onTestClock(Effect.gen(function*() {
      expect(yield* round).toBe(0)
      yield* TestClock.adjust("15 seconds")
      expect(yield* round).toBe(1)
    }))
    expect(await rowOf(id)).toMatchObject({ status: "delivered", attempts: 1 })
  })

  test("several workers at once attempt each due delivery once (FOR UPDATE SKIP LOCKED)", async () => {
    const e = await endpointAnswering(200)
    const ids = [await oneEvent(e.id), await oneEvent(e.id), await oneEvent(e.id), await oneEvent(e.id)]
    const claimed = await onTestClock(
      Effect.all(Array.from({ length: 6 }, () => Effect.flatMap(Deliveries, (d) => d.runDue(1))), { concurrency: "unbounded" })
    )
    expect(claimed.reduce((a, b) => a + b, 0)).toBe(4)
    expect(receiver.matching((r) => r.path === e.path)).toHaveLength(4)
    for (const id of ids) expect(await rowOf(id)).toMatchObject({ status: "delivered", attempts: 1 })
  })
})
