import { SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, expect, test } from "bun:test"
import { Cause, Effect, Exit, Layer, Option, Tracer } from "effect"
import Pg from "pg"
import { joiningTransaction, PgPool, query } from "../../src/db/Database.ts"
import { isUniqueViolation } from "../../src/db/SqlErrors.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"

/**
 * `query`, the one way to run SQL fast (docs/performance.md): an `@effect/sql` statement on the transaction's own
 * connection inside one, on the `PgPool` outside. It must answer what the statement answers, fail as it fails,
 * belong to the transaction (rolled back with it), and keep the `sql.execute` span when traces are exported.
 * Real PostgreSQL.
 */

let db: TestDatabase
let pool: Pg.Pool

beforeAll(async () => {
  db = await freshDatabase()
  await db.query("CREATE TABLE items (id int PRIMARY KEY, note text)")
  pool = new Pg.Pool({ connectionString: db.url, max: 4 })
})

afterAll(async () => {
  await pool.end()
  await db.drop()
})

const run = <A, E>(program: Effect.Effect<A, E, SqlClient.SqlClient>, layer = PgClient.layerFromPool({ acquire: Effect.succeed(pool) })) =>
  Effect.runPromise(Effect.exit(Effect.provide(program, layer)))

/** A tracer that records every span it makes (the spans a trace exporter would receive). */
const recordingTracer = () => {
  const spans: Array<{ name: string; attributes: ReadonlyMap<string, unknown> }> = []
  const native = Effect.runSync(Effect.tracer)
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = native.span(name, parent, context, links, startTime, kind, options)
      spans.push({ name, attributes: span.attributes })
      return span
    },
    context: (f) => f()
  })
  return { spans, tracer }
}

const ROW = "SELECT 7::int AS n, '2026-01-02'::date AS d, '2026-01-02T03:04:05Z'::timestamptz AS t, '{\"a\":[1]}'::jsonb AS j, 1.25::numeric AS x, NULL::text AS z"

test("inside a transaction: the rows the statement answers, on the transaction's connection", async () => {
  const exit = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const house = yield* sql.unsafe(ROW)
    const fast = yield* sql.withTransaction(query(sql.unsafe(ROW)))
    // Same backend as the transaction's own statements: it sees the transaction's uncommitted row.
    const seen = yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO items ${sql.insert({ id: 1, note: "draft" })}`
      const [mine] = yield* query(sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`)
      const [theirs] = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
      const rows = yield* query(sql<{ note: string }>`SELECT note FROM items WHERE id = ${1}`)
      return { same: mine?.pid === theirs?.pid, rows }
    }))
    return { house, fast, seen }
  }))
  if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
  expect(exit.value.fast).toEqual(exit.value.house)
  expect(exit.value.fast[0]).toMatchObject({ n: 7, j: { a: [1] }, x: "1.25", z: null })
  expect(exit.value.seen).toEqual({ same: true, rows: [{ note: "draft" }] })
})

test("a failure is the statement's SqlError, and the transaction rolls back with it", async () => {
  await db.query("DELETE FROM items")
  await db.query("INSERT INTO items VALUES (2, 'kept')")
  const exit = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* query(sql`INSERT INTO items ${sql.insert({ id: 3, note: "rolled back" })}`)
      yield* query(sql`INSERT INTO items ${sql.insert({ id: 2, note: "duplicate" })}`)
    }))
  }))
  const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
  const sqlError = Option.getOrUndefined(failure)
  expect(sqlError).toBeInstanceOf(SqlError.SqlError)
  expect(isUniqueViolation(sqlError!)).toBe(true)
  expect(await db.query("SELECT id, note FROM items ORDER BY id")).toEqual([{ id: 2, note: "kept" }])
})

test("joiningTransaction: inside a transaction it is that transaction (no savepoint); outside, one of its own", async () => {
  await db.query("DELETE FROM items")
  const txid = (sql: SqlClient.SqlClient) => Effect.map(sql<{ id: string }>`SELECT txid_current()::text AS id`, ([row]) => row?.id)
  const exit = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const joined = yield* sql.withTransaction(Effect.gen(function*() {
      const outer = yield* txid(sql)
      const inner = yield* joiningTransaction(sql)(txid(sql))
      return outer === inner
    }))
    // Alone, it commits as a transaction of its own: the row is there afterwards.
    yield* joiningTransaction(sql)(sql`INSERT INTO items ${sql.insert({ id: 10, note: "own" })}`)
    // Joined, a failure inside is the caller's: with a SAVEPOINT (what withTransaction nests with) the caller could
    // go on after catching it; joined, the caller's transaction is aborted and its next statement fails (25P02).
    const next = yield* sql.withTransaction(Effect.gen(function*() {
      yield* joiningTransaction(sql)(sql`INSERT INTO items ${sql.insert({ id: 10, note: "duplicate" })}`).pipe(
        Effect.catchAll(() => Effect.void)
      )
      return yield* Effect.either(sql`SELECT 1`)
    })).pipe(Effect.either)
    return { joined, next }
  }))
  if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
  expect(exit.value.joined).toBe(true)
  const next = exit.value.next
  const inner = next._tag === "Right" ? next.right : undefined
  expect(inner?._tag).toBe("Left")
  expect(String((inner as { left?: SqlError.SqlError } | undefined)?.left?.cause)).toContain("current transaction is aborted")
  expect(await db.query("SELECT id, note FROM items ORDER BY id")).toEqual([{ id: 10, note: "own" }])
})

test("outside a transaction, without a PgPool (a service built alone), it is the statement itself", async () => {
  const exit = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return { fast: yield* query(sql.unsafe(ROW)), house: yield* sql.unsafe(ROW) }
  }))
  if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
  expect(exit.value.fast).toEqual(exit.value.house)
})

test("outside a transaction, with the PgPool: on the pool, the same rows, and a failure is the statement's SqlError", async () => {
  await db.query("DELETE FROM items")
  await db.query("INSERT INTO items VALUES (4, 'four')")
  const exit = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const house = yield* sql.unsafe(ROW)
    const fast = yield* query(sql.unsafe(ROW))
    const failed = yield* Effect.flip(query(sql`INSERT INTO items ${sql.insert({ id: 4, note: "again" })}`))
    return { house, fast, failed }
  }).pipe(Effect.provideService(PgPool, pool)))
  if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
  expect(exit.value.fast).toEqual(exit.value.house)
  expect(exit.value.failed).toBeInstanceOf(SqlError.SqlError)
  expect(isUniqueViolation(exit.value.failed)).toBe(true)
})

test("with a one-connection pool (the embedded database), inside a transaction it joins it instead of waiting for the pool", async () => {
  const single = new Pg.Pool({ connectionString: db.url, max: 1 })
  try {
    const exit = await run(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql.withTransaction(query(sql<{ n: number }>`SELECT ${5}::int AS n`))
      }).pipe(Effect.provideService(PgPool, single), Effect.timeout("5 seconds")),
      PgClient.layerFromPool({ acquire: Effect.succeed(single) })
    )
    if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
    expect(exit.value).toEqual([{ n: 5 }])
  } finally {
    await single.end()
  }
})

test("traces exported: the statement keeps its sql.execute span with the query text; the house path is not taken", async () => {
  const { spans, tracer } = recordingTracer()
  const layer = Layer.merge(PgClient.layerFromPool({ acquire: Effect.succeed(pool) }), Layer.setTracer(tracer))
  const exit = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(query(sql`SELECT ${1}::int AS inside`))
    yield* query(sql`SELECT ${2}::int AS outside`)
  }), layer)
  if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
  const statements = spans.filter((span) => span.name === "sql.execute")
  const inside = statements.find((span) => String(span.attributes.get("db.query.text")).includes("AS inside"))
  const outside = statements.find((span) => String(span.attributes.get("db.query.text")).includes("AS outside"))
  expect(inside?.attributes.get("db.system.name")).toBe("postgresql")
  expect(outside?.attributes.get("db.system.name")).toBe("postgresql")
  // The house path's span carries the client's connection attributes; the transaction's statement went around it.
  expect(outside?.attributes.has("server.address")).toBe(true)
  expect(inside?.attributes.has("server.address")).toBe(false)
  expect(spans.some((span) => span.name === "sql.transaction")).toBe(true)
})
