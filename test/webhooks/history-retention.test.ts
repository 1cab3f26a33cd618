import { describe, expect, test } from "bun:test"
import { Chunk, Duration, Effect, Layer, Metric, TestClock, TestContext } from "effect"
import * as Metrics from "../../src/shared/Metrics.ts"
import { HISTORY_EVERY, HistoryRetention, loop } from "../../src/webhooks/HistoryRetention.ts"
import { call, seedAccount } from "../support/app.ts"
import { appOnFreshDatabase } from "../support/fixture.ts"
import { reservationBody } from "../support/guests.ts"
import { serviceRuntime } from "../support/services.ts"

/**
 * The retention of the webhook delivery history (issue 27 item 4) on the real app (ROLE=api: no loop of its own)
 * and real PostgreSQL: events and deliveries made through the partner API, aged in SQL, and the worker's job run
 * on a `TestClock` set to today.
 */
const f = appOnFreshDatabase({ ROLE: "api", WEBHOOK_ALLOW_PRIVATE_URLS: "true" })

const DAY = 24 * 60 * 60 * 1000

/** A reservation made with the test key: one event (`reservation.created`) and one delivery to the endpoint. */
const reservation = async (key: string, propertyId: string) => {
  const res = await call(f.app, "POST", "/api/partners/reservations", { key, json: reservationBody(propertyId) })
  expect(res.status).toBe(201)
  const [row] = await f.db.query<{ id: string }>("SELECT id FROM reservations WHERE external_id = $1", [res.body.external_id])
  return row!.id
}

/** Dates a reservation's events `days` (a fraction for hours) back and sets its deliveries' status. */
const age = async (reservationId: string, days: number, status: "pending" | "delivered" | "failed") => {
  await f.db.query("UPDATE events SET created_at = now() - $2 * interval '1 day' WHERE reservation_id = $1", [reservationId, days])
  await f.db.query("UPDATE webhook_deliveries SET status = $2 WHERE reservation_id = $1", [reservationId, status])
}

const remaining = async (reservationId: string) => {
  const [events] = await f.db.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE reservation_id = $1", [reservationId])
  const [deliveries] = await f.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM webhook_deliveries WHERE reservation_id = $1",
    [reservationId]
  )
  return { events: events!.n, deliveries: deliveries!.n }
}

/** An account with its test environment and an endpoint subscribed to `reservation.created` (never delivered to). */
const subscribedAccount = async (name: string) => {
  const account = await seedAccount(f.app, name)
  const hook = await call(f.app, "POST", "/api/partners/webhooks", {
    key: account.testKey,
    json: { url: "http://127.0.0.1:9/history", events: ["reservation.created"] }
  })
  expect(hook.status).toBe(201)
  return { account, propertyId: account.testProperties[0]!.property_id }
}

const deletedCounter = (table: string) => Metric.value(Metric.tagged(Metrics.webhookHistoryDeleted, "table", table))

describe("webhook delivery history past EVENT_RETENTION_DAYS", () => {
  test("delivered events older than 90 days go with their deliveries; pending, failed, younger and still-reporting ones stay", async () => {
    const { account, propertyId } = await subscribedAccount("Hotel Historia")
    const [old, pending, failed, younger, reporting] = [
      await reservation(account.testKey, propertyId),
      await reservation(account.testKey, propertyId),
      await reservation(account.testKey, propertyId),
      await reservation(account.testKey, propertyId),
      await reservation(account.testKey, propertyId)
    ]
    for (const id of [old!, pending!, failed!, younger!, reporting!]) expect((await remaining(id)).deliveries).toBeGreaterThan(0)
    await age(old!, 100, "delivered")
    await age(pending!, 100, "pending")
    await age(failed!, 100, "failed")
    await age(younger!, 80, "delivered")
    await age(reporting!, 100, "delivered")
    // A report still pending keeps the reservation's events (its outcome's event follows them).
    await f.db.query(`UPDATE reservations SET tra = jsonb_set(tra, '{status}', '"pending"') WHERE id = $1`, [reporting])
    const before = { old: await remaining(old!), younger: await remaining(younger!) }

    const runtime = serviceRuntime(f.app, HistoryRetention.Default)
    try {
      const counted = { events: await Effect.runPromise(deletedCounter("events")) }
      const first = await runtime.runPromise(Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        return yield* (yield* HistoryRetention).run
      }).pipe(Effect.provide(TestContext.TestContext)))
      expect(first).toEqual(before.old)
      expect(await remaining(old!)).toEqual({ events: 0, deliveries: 0 })
      for (const id of [pending!, failed!, younger!, reporting!]) expect((await remaining(id)).events).toBeGreaterThan(0)
      expect((await Effect.runPromise(deletedCounter("events"))).count - counted.events.count).toBe(before.old.events)

      // Eleven days later the 80-day-old history is past 90 days too; the rest still stays.
      const later = await runtime.runPromise(Effect.gen(function*() {
        yield* TestClock.setTime(Date.now() + 11 * DAY)
        return yield* (yield* HistoryRetention).run
      }).pipe(Effect.provide(TestContext.TestContext)))
      expect(later).toEqual(before.younger)
      expect(await remaining(younger!)).toEqual({ events: 0, deliveries: 0 })
      for (const id of [pending!, failed!, reporting!]) expect((await remaining(id)).events).toBeGreaterThan(0)
    } finally {
      await runtime.dispose()
    }
  })

  test("the worker's loop runs at start and then every 6 hours; EVENT_RETENTION_DAYS sets the period", async () => {
    const { account, propertyId } = await subscribedAccount("Hotel Ciclo")
    const first = await reservation(account.testKey, propertyId)
    const second = await reservation(account.testKey, propertyId)
    await age(first, 31, "delivered")
    // Three hours short of the 30-day period: kept at start, past it by the next 6-hour turn.
    await age(second, 30 - 3 / 24, "delivered")
    const runtime = serviceRuntime(f.app, HistoryRetention.Default, { EVENT_RETENTION_DAYS: "30" })
    try {
      await runtime.runPromise(Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        yield* Layer.launch(loop).pipe(Effect.forkScoped)
        // At start: the 31-day-old event. The run is over once the loop sleeps until its next turn.
        yield* Effect.promise(() => until(async () => (await remaining(first)).events === 0))
        yield* untilAsleep
        expect((yield* Effect.promise(() => remaining(second))).events).toBe(1)
        // Nothing runs before the next 6-hour turn, though the second event is past 30 days by then.
        yield* TestClock.adjust(Duration.subtract(HISTORY_EVERY, Duration.minutes(1)))
        yield* Effect.promise(() => Bun.sleep(200))
        expect((yield* Effect.promise(() => remaining(second))).events).toBe(1)
        yield* TestClock.adjust(Duration.minutes(1))
        yield* Effect.promise(() => until(async () => (await remaining(second)).events === 0))
      }).pipe(Effect.scoped, Effect.provide(TestContext.TestContext)))
    } finally {
      await runtime.dispose()
    }
  })

  test("EVENT_RETENTION_DAYS below the 7-day recovery window is refused at start", async () => {
    const runtime = serviceRuntime(f.app, HistoryRetention.Default, { EVENT_RETENTION_DAYS: "3" })
    const failure = await runtime.runPromise(Effect.flip(Effect.flatMap(HistoryRetention, (r) => r.run))).catch((error) => error)
    expect(String(failure)).toContain("EVENT_RETENTION_DAYS must be a whole number of days between 7 and 3650")
    await runtime.dispose()
  })
})

/** Waits (real time) until the loop has registered its sleep on the `TestClock`: its run is over. */
const untilAsleep = Effect.gen(function*() {
  for (let i = 0; i < 100; i++) {
    if (Chunk.size(yield* TestClock.sleeps()) > 0) return
    yield* Effect.promise(() => Bun.sleep(50))
  }
  return yield* Effect.die(new Error("the loop never slept in 5 s"))
})

const until = async (condition: () => Promise<boolean>) => {
  for (let i = 0; i < 100; i++) {
    if (await condition()) return
    await Bun.sleep(50)
  }
  throw new Error("condition not reached in 5 s")
}
