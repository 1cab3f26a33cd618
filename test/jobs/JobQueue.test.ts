import { afterAll, beforeAll, expect, test } from "bun:test"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, ManagedRuntime, Option, Redacted, Schedule, TestClock, TestContext } from "effect"
import * as JobLeases from "../../src/jobs/JobLeases.ts"
import * as JobQueue from "../../src/jobs/JobQueue.ts"
import Pg from "pg"
import { freshDatabase, type TestDatabase } from "../support/database.ts"

/**
 * The one job queue (issue 24 item 2) on real PostgreSQL, with a table of its own shaped like the queues that use
 * it: the claim leases due rows once and counts the attempt, a second claimer skips what is leased, renewals
 * respect a lease taken since, settling and releasing give the lease back, and the registry gives back only
 * what is still held.
 */

let db: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>

beforeAll(async () => {
  db = await freshDatabase()
  await db.query(`CREATE TABLE jobs (
    id uuid PRIMARY KEY, state text NOT NULL, attempts int NOT NULL DEFAULT 0, next_attempt_at timestamptz NOT NULL,
    lease_until timestamptz, last_error text, payload text)`)
  runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 3 }).pipe(Layer.orDie))
})

afterAll(async () => {
  await runtime?.dispose()
  await db?.drop()
})

const ids = ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000003"] as const

const rows = async () =>
  Object.fromEntries(
    (await db.query<{ id: string; state: string; attempts: number; lease_until: Date | null; last_error: string | null }>(
      "SELECT id, state, attempts, lease_until, last_error FROM jobs ORDER BY id"
    )).map((row) => [row.id.slice(-1), { state: row.state, attempts: row.attempts, leased: row.lease_until !== null, last_error: row.last_error }])
  )

test("claims due rows once, oldest due first, counting the attempt; a second claimer skips what is leased", async () => {
  await db.query("DELETE FROM jobs")
  await db.query(
    `INSERT INTO jobs (id, state, next_attempt_at, payload) VALUES
      ($1, 'pending', now() - interval '1 minute', 'second'),
      ($2, 'pending', now() - interval '2 minutes', 'first'),
      ($3, 'pending', now() + interval '1 hour', 'later')`,
    [...ids]
  )
  const claimed = await runtime.runPromise(Effect.gen(function*() {
    const queue = yield* JobQueue.make({ kind: "job", table: "jobs", lease: "1 minute" })
    const first = yield* queue.claimDue<{ id: string; payload: string; attempts: number }>(1, "id, payload, attempts")
    const second = yield* queue.claimDue<{ id: string; payload: string }>(5, "id, payload")
    const third = yield* queue.claimDue<{ id: string }>(5, "id")
    return { first, second, third }
  }))
  expect(claimed.first).toEqual([{ id: ids[1], payload: "first", attempts: 1 }])
  expect(claimed.second).toEqual([{ id: ids[0], payload: "second" }])
  expect(claimed.third).toEqual([])
  expect(await rows()).toEqual({
    "1": { state: "pending", attempts: 1, leased: true, last_error: null },
    "2": { state: "pending", attempts: 1, leased: true, last_error: null },
    "3": { state: "pending", attempts: 0, leased: false, last_error: null }
  })
})

// Rows are made due a second ago: PostgreSQL's now() has microseconds, the service's clock milliseconds, so a row
// made "now" can still be a fraction of a millisecond in the future at a claim in the same millisecond.
const DUE = "now() - interval '1 second'"

test("settle writes the outcome and gives the lease back; release gives leases back; renew keeps only what is still ours", async () => {
  await db.query("DELETE FROM jobs")
  await db.query(
    `INSERT INTO jobs (id, state, next_attempt_at) VALUES ($1, 'pending', ${DUE}), ($2, 'pending', ${DUE}), ($3, 'pending', ${DUE})`,
    [...ids]
  )
  const result = await runtime.runPromise(Effect.gen(function*() {
    const queue = yield* JobQueue.make({ kind: "job", table: "jobs", lease: "1 minute" })
    const claimed = yield* queue.claimDue<{ id: string; lease_until: Date }>(3, "id, lease_until")
    const [a, b, c] = [...claimed].sort((x, y) => x.id.localeCompare(y.id))
    yield* queue.settle(a!.id, { state: "failed", last_error: "HTTP 404" })
    yield* queue.release([b!.id])
    // Another instance took c after its lease lapsed: a renewal under the old lease leaves it alone.
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE jobs SET lease_until = now() + interval '5 minutes' WHERE id = ${c!.id}`
    const stale = yield* queue.renew([c!.id], { heldUntil: c!.lease_until })
    const any = yield* queue.renew([c!.id, b!.id])
    return { stale, any }
  }))
  expect(result.stale).toEqual([])
  // b's lease was given back: a renewal of whatever is leased renews c only.
  expect(result.any).toEqual([ids[2]])
  expect(await rows()).toEqual({
    "1": { state: "failed", attempts: 1, leased: false, last_error: "HTTP 404" },
    "2": { state: "pending", attempts: 1, leased: false, last_error: null },
    "3": { state: "pending", attempts: 1, leased: true, last_error: null }
  })
})

test("a renewal of many rows goes a statement of RENEW_CHUNK rows at a time: a worker's lock holds up only its own", async () => {
  await db.query("DELETE FROM jobs")
  const all = Array.from({ length: 2 * JobQueue.RENEW_CHUNK + 50 }, (_, i) =>
    `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`)
  await db.query(
    "INSERT INTO jobs (id, state, next_attempt_at, lease_until) SELECT unnest($1::uuid[]), 'pending', now(), now() + interval '30 seconds'",
    [all]
  )
  // A worker's transaction holds the last row (as a report run's reservation in progress holds its own).
  const worker = new Pg.Client({ connectionString: db.url })
  await worker.connect()
  try {
    await worker.query("BEGIN")
    await worker.query("SELECT id FROM jobs WHERE id = $1 FOR UPDATE", [all[all.length - 1]])
    const renewal = runtime.runPromise(Effect.flatMap(
      JobQueue.make({ kind: "job", table: "jobs", lease: "1 minute" }),
      (queue) => queue.renew([...all].reverse())
    ))
    const renewedNow = async () =>
      Number((await db.query<{ n: string }>("SELECT count(*)::text AS n FROM jobs WHERE lease_until > now() + interval '45 seconds'"))[0]!.n)
    // The statements before the held row's commit while it waits; its own statement waits for the worker.
    let renewed = 0
    for (let i = 0; i < 100 && renewed < 2 * JobQueue.RENEW_CHUNK; i++) {
      await Bun.sleep(20)
      renewed = await renewedNow()
    }
    expect(renewed).toBe(2 * JobQueue.RENEW_CHUNK)
    // And their rows are free: another transaction locks one of them at once.
    expect(await db.query("SELECT id FROM jobs WHERE id = $1 FOR UPDATE NOWAIT", [all[0]])).toHaveLength(1)
    await worker.query("COMMIT")
    expect([...(await renewal)].sort()).toEqual(all)
    expect(await renewedNow()).toBe(all.length)
  } finally {
    await worker.end()
  }
})

test("a stopping process gives back, through the registry, what its queue still holds", async () => {
  await db.query("DELETE FROM jobs")
  await db.query(`INSERT INTO jobs (id, state, next_attempt_at) VALUES ($1, 'pending', ${DUE}), ($2, 'pending', ${DUE})`, [ids[0], ids[1]])
  const released = await runtime.runPromise(Effect.gen(function*() {
    const registry = yield* JobLeases.make
    return yield* Effect.gen(function*() {
      const queue = yield* JobQueue.make({ kind: "job", table: "jobs", lease: "1 minute" })
      const claimed = yield* queue.claimDue<{ id: string }>(2, "id")
      yield* queue.settle(claimed[0]!.id, { state: "done" })
      return yield* registry.releaseAll
    }).pipe(Effect.provideService(JobLeases.JobLeases, registry))
  }))
  expect(released).toBe(1)
  expect(Object.values(await rows()).map((row) => row.leased)).toEqual([false, false])
})

test("nextAttemptAt: the schedule's delay from now, None once it is exhausted", async () => {
  const schedule = Schedule.exponential("1 minute", 3).pipe(Schedule.intersect(Schedule.recurs(2)))
  const at = await Effect.runPromise(Effect.gen(function*() {
    yield* TestClock.adjust(Duration.hours(1))
    return yield* Effect.forEach([1, 2, 3], (retry) => JobQueue.nextAttemptAt(schedule, retry, undefined))
  }).pipe(Effect.provide(TestContext.TestContext)))
  expect(at.map(Option.map((date) => date.getTime()))).toEqual([
    Option.some(Duration.toMillis("61 minutes")),
    Option.some(Duration.toMillis("63 minutes")),
    Option.none()
  ])
})

test("poll: a worker goes on at once while it finds work and waits for the next poll when there is none", async () => {
  const rounds = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    let left = 3
    let rounds = 0
    const round = Effect.sync(() => {
      rounds++
      if (left === 0) return 0
      left--
      return 1
    })
    yield* JobQueue.poll("job", round, { every: "10 seconds" })
    yield* TestClock.adjust(Duration.millis(1))
    const first = rounds // three rounds with work, one that found none
    yield* TestClock.adjust(Duration.seconds(10))
    return [first, rounds]
  })).pipe(Effect.provide(TestContext.TestContext)))
  expect(rounds).toEqual([4, 5])
})
