import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, expect, test } from "bun:test"
import { Effect } from "effect"
import Pg from "pg"
import * as Database from "../../src/db/Database.ts"
import { PREPARE_AFTER, PreparingClient } from "../../src/db/PreparedStatements.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { serviceDatabase } from "../support/services.ts"

/**
 * Named statements (issue 28, db/PreparedStatements.ts) on real PostgreSQL: a text run often goes as a named
 * statement with the same text, a one-off never does, the answers are the same, and a statement the server no
 * longer matches (a column added by a migration, `DISCARD ALL`) heals itself: at once outside a transaction, on the
 * next try inside one.
 */

let db: TestDatabase
let pool: Pg.Pool

beforeAll(async () => {
  db = await freshDatabase()
  await db.query("CREATE TABLE items (id int PRIMARY KEY, note text)")
  await db.query("INSERT INTO items VALUES (1, 'one'), (2, 'two')")
  // One connection: every statement below runs on the backend whose prepared statements are read.
  pool = new Pg.Pool({ connectionString: db.url, max: 1, Client: PreparingClient })
})

afterAll(async () => {
  await pool.end()
  await db.drop()
})

const prepared = async () =>
  (await pool.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements ORDER BY name"))
    .rows

const BY_ID = "SELECT * FROM items WHERE id = $1"

test(`a parameterised text is named from its ${PREPARE_AFTER}th execution, with the same text and the same answers`, async () => {
  const answers: Array<unknown> = []
  for (let i = 1; i < PREPARE_AFTER; i++) answers.push((await pool.query(BY_ID, [1])).rows)
  expect((await prepared()).map((p) => p.statement)).not.toContain(BY_ID)
  for (let i = 0; i < 3; i++) answers.push((await pool.query(BY_ID, [1])).rows)
  const named = (await prepared()).filter((p) => p.statement === BY_ID)
  expect(named).toHaveLength(1)
  expect(answers).toEqual(Array(answers.length).fill([{ id: 1, note: "one" }]))
  // The callback form `@effect/sql-pg` uses answers the same.
  const viaCallback = await new Promise((resolve, reject) =>
    pool.query(BY_ID, [2], (error, result) => (error ? reject(error) : resolve(result.rows)))
  )
  expect(viaCallback).toEqual([{ id: 2, note: "two" }])
})

test("a statement without parameters, and one run fewer times, is never named", async () => {
  for (let i = 0; i < PREPARE_AFTER + 2; i++) await pool.query("SELECT count(*)::int AS n FROM items")
  for (let i = 1; i < PREPARE_AFTER; i++) await pool.query("SELECT note FROM items WHERE id = $1", [2])
  const statements = (await prepared()).map((p) => p.statement)
  expect(statements).not.toContain("SELECT count(*)::int AS n FROM items")
  expect(statements).not.toContain("SELECT note FROM items WHERE id = $1")
})

test("a failing named statement fails as the unnamed one does, and the connection stays usable", async () => {
  const text = "SELECT 10 / $1::int AS q"
  for (let i = 0; i < PREPARE_AFTER; i++) expect((await pool.query(text, [2])).rows).toEqual([{ q: 5 }])
  const error = await pool.query(text, [0]).catch((e: unknown) => e)
  expect((error as { code?: string }).code).toBe("22012")
  expect((await pool.query(text, [5])).rows).toEqual([{ q: 2 }])
})

test("after a column is added, a prepared SELECT * answers the new shape at once outside a transaction", async () => {
  const text = "SELECT * FROM items WHERE id = $1 AND note IS NOT NULL"
  for (let i = 0; i < PREPARE_AFTER + 1; i++) await pool.query(text, [1])
  expect((await prepared()).map((p) => p.statement)).toContain(text)
  await db.query("ALTER TABLE items ADD COLUMN extra text DEFAULT 'x'")
  expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, note: "one", extra: "x" }])
})

test("inside a transaction the stale statement fails the transaction once; its retry works", async () => {
  const text = "SELECT * FROM items WHERE id = $1 AND id > 0"
  for (let i = 0; i < PREPARE_AFTER + 1; i++) await pool.query(text, [2])
  await db.query("ALTER TABLE items ADD COLUMN later int DEFAULT 7")
  const inTransaction = async () => {
    const client = await pool.connect()
    try {
      await client.query("BEGIN")
      const rows = (await client.query(text, [2])).rows
      await client.query("COMMIT")
      return rows
    } catch (error) {
      await client.query("ROLLBACK")
      throw error
    } finally {
      client.release()
    }
  }
  const first = await inTransaction().catch((e: unknown) => e)
  expect((first as { code?: string }).code).toBe("0A000")
  expect(await inTransaction()).toEqual([{ id: 2, note: "two", extra: "x", later: 7 }])
})

test("after DISCARD ALL (a pooler's reset) the next execution prepares again", async () => {
  const text = "SELECT note FROM items WHERE id = $1 OR id = $2 ORDER BY id"
  for (let i = 0; i < PREPARE_AFTER + 1; i++) await pool.query(text, [1, 2])
  await pool.query("DISCARD ALL")
  expect(await prepared()).toEqual([])
  expect((await pool.query(text, [1, 2])).rows).toEqual([{ note: "one" }, { note: "two" }])
  expect((await prepared()).map((p) => p.statement)).toContain(text)
})

test("the embedded database (PGlite through pglite-socket, as db/Database.ts reaches it) runs them too", async () => {
  const { PGlite } = await import("@electric-sql/pglite")
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket")
  const pglite = await PGlite.create()
  const server = new PGLiteSocketServer({ db: pglite, host: "127.0.0.1", port: 0, maxConnections: 1 })
  await server.start()
  const port = Number(server.getServerConn().split(":").pop())
  const embedded = new Pg.Pool({ host: "127.0.0.1", port, user: "postgres", database: "postgres", max: 1, Client: PreparingClient })
  try {
    await embedded.query("CREATE TABLE rooms (id int PRIMARY KEY, name text)")
    await embedded.query("INSERT INTO rooms VALUES (1, 'norte')")
    const text = "SELECT * FROM rooms WHERE id = $1"
    for (let i = 0; i < PREPARE_AFTER + 2; i++) expect((await embedded.query(text, [1])).rows).toEqual([{ id: 1, name: "norte" }])
    const statements = (await embedded.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements")).rows
    expect(statements.map((s) => s.statement)).toContain(text)
    await embedded.query("ALTER TABLE rooms ADD COLUMN floor int DEFAULT 2")
    expect((await embedded.query(text, [1])).rows).toEqual([{ id: 1, name: "norte", floor: 2 }])
  } finally {
    await embedded.end()
    await server.stop()
    await pglite.close()
  }
}, 60_000)

test("DB_PREPARED_STATEMENTS decides it for the service's own pool: on by default, off with false", async () => {
  // The service's database layer as App builds it, with one connection so that pg_prepared_statements is its own.
  const databaseWith = (setting: ReadonlyArray<[string, string]>) => serviceDatabase(db.url, [["DB_POOL_SIZE", "1"], ...setting])
  const statementsOf = (setting: ReadonlyArray<[string, string]>) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < PREPARE_AFTER + 1; i++) {
        expect(yield* Database.query(sql<{ note: string }>`SELECT note FROM items WHERE id = ${1}`)).toEqual([{ note: "one" }])
      }
      const pool = yield* Database.PgPool
      const rows = yield* Effect.promise(() => pool.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements"))
      return rows.rows.map((row) => row.statement)
    }).pipe(Effect.provide(databaseWith(setting)), Effect.scoped, Effect.runPromise)
  const text = "SELECT note FROM items WHERE id = $1"
  expect({ unset: await statementsOf([]) }).toEqual({ unset: [text] })
  expect({ on: await statementsOf([["DB_PREPARED_STATEMENTS", "true"]]) }).toEqual({ on: [text] })
  expect({ off: await statementsOf([["DB_PREPARED_STATEMENTS", "false"]]) }).toEqual({ off: [] })
})
