import { afterAll, beforeAll, expect, test } from "bun:test"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Logger, ManagedRuntime, Redacted } from "effect"
import { JobLeases, make } from "../../src/jobs/JobLeases.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"

/**
 * The registry of job leases a stopping process gives back (design §9): only what it still holds, only while
 * the lease is still the one it set, once. On real PostgreSQL, with a queue table of its own.
 */

let db: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>

beforeAll(async () => {
  db = await freshDatabase()
  await db.query("CREATE TABLE jobs (id text PRIMARY KEY, lease_until timestamptz)")
  runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 2 }).pipe(Layer.orDie))
})

afterAll(async () => {
  await runtime?.dispose()
  await db?.drop()
})

const releaseJobs = (ids: ReadonlyArray<string>, until: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`UPDATE jobs SET lease_until = NULL WHERE id IN ${sql.in(ids)} AND lease_until = ${until} RETURNING id`)
    .pipe(Effect.map((rows) => rows.length), Effect.orDie)

const leases = async () =>
  Object.fromEntries((await db.query<{ id: string; lease_until: Date | null }>("SELECT id, lease_until FROM jobs ORDER BY id"))
    .map((row) => [row.id, row.lease_until?.toISOString() ?? null]))

test("gives back what is still held at the time it set; leaves settled rows and rows another instance took since", async () => {
  const first = new Date("2026-11-27T12:00:00.123Z")
  const renewed = new Date("2026-11-27T12:00:40.456Z")
  const theirs = new Date("2026-11-27T12:05:00.000Z")
  await db.query(
    "INSERT INTO jobs VALUES ('a', $1), ('b', $1), ('c', $1), ('d', $2), ('e', NULL)",
    [first, renewed]
  )

  const released = await runtime.runPromise(Effect.gen(function*() {
    const registry = yield* make
    const sql = yield* SqlClient.SqlClient
    const jobs = yield* registry.register("job", (ids, until) => releaseJobs(ids, until).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
    yield* jobs.held(["a", "b", "c"], first)
    yield* jobs.held(["d"], first)
    yield* jobs.held(["d"], renewed) // a renewal: the newer time replaces the older
    yield* jobs.settled(["b"]) // recorded: its own statement cleared the lease (here it did not, to see it left alone)
    // c's lease lapsed and another instance claimed it meanwhile.
    yield* sql`UPDATE jobs SET lease_until = ${theirs} WHERE id = 'c'`
    const once = yield* registry.releaseAll
    const twice = yield* registry.releaseAll
    return { once, twice }
  }))

  expect(released).toEqual({ once: 2, twice: 0 })
  expect(await leases()).toEqual({
    a: null,
    b: first.toISOString(),
    c: theirs.toISOString(),
    d: null,
    e: null
  })
})

test("a release that fails is logged and counted as nothing; the other kinds are still given back", async () => {
  const until = new Date("2026-11-27T13:00:00.000Z")
  await db.query("DELETE FROM jobs")
  await db.query("INSERT INTO jobs VALUES ('x', $1)", [until])
  const logged: Array<string> = []
  const released = await runtime.runPromise(Effect.gen(function*() {
    const registry = yield* make
    const sql = yield* SqlClient.SqlClient
    const broken = yield* registry.register("broken", () => Effect.dieMessage("database gone"))
    const jobs = yield* registry.register("job", (ids, at) => releaseJobs(ids, at).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
    yield* broken.held(["y"], until)
    yield* jobs.held(["x"], until)
    return yield* registry.releaseAll
  }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(String(message)))))))
  expect(released).toBe(1)
  expect(logged).toEqual(["could not release the broken leases; they lapse on their own"])
  expect(await leases()).toEqual({ x: null })
})

test("without a registry provided (a service built alone), nothing is tracked", async () => {
  const released = await Effect.runPromise(Effect.gen(function*() {
    const registry = yield* JobLeases
    const jobs = yield* registry.register("job", () => Effect.dieMessage("never called"))
    yield* jobs.held(["a"], new Date())
    return yield* registry.releaseAll
  }))
  expect(released).toBe(0)
})

test("claimed: the rows a claim statement returns are noted as held until the time it set", async () => {
  const until = new Date("2026-11-27T14:00:00.000Z")
  await db.query("DELETE FROM jobs")
  await db.query("INSERT INTO jobs VALUES ('p', NULL), ('q', NULL), ('r', NULL)")
  const released = await runtime.runPromise(Effect.gen(function*() {
    const registry = yield* make
    const sql = yield* SqlClient.SqlClient
    const jobs = yield* registry.register("job", (ids, at) => releaseJobs(ids, at).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
    const rows = yield* jobs.claimed(
      sql<{ id: string }>`UPDATE jobs SET lease_until = ${until} WHERE id IN ('p', 'q') RETURNING id`,
      until,
      (row) => row.id
    )
    expect(rows.map((row) => row.id).sort()).toEqual(["p", "q"])
    return yield* registry.releaseAll
  }).pipe(Effect.orDie))
  expect(released).toBe(2)
  expect(await leases()).toEqual({ p: null, q: null, r: null })
})
