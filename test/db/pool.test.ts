import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, expect, test } from "bun:test"
import { Effect } from "effect"
import * as Database from "../../src/db/Database.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { serviceDatabase } from "../support/services.ts"

/**
 * The service's PostgreSQL pool keeps the connections it opened (docs/performance.md, "Issue 28, fifth session"):
 * `pg`'s default closed every connection idle for 10 s — the whole pool at once, 10 s after a burst, stalling the
 * requests of that moment — and a quiet connection keeps its NAT mapping with TCP keep-alive. Real PostgreSQL.
 */

let db: TestDatabase

beforeAll(async () => {
  db = await freshDatabase()
})

afterAll(async () => {
  await db.drop()
})

/** The pool's backends as PostgreSQL sees them, from a connection of its own. */
const poolBackends = async () =>
  Number((await db.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'partner-registration'"
  ))[0]!.n)

test("connections stay open when idle (not closed after 10 s), with TCP keep-alive", async () => {
  const seen = await Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Three at once: the pool opens three connections.
    yield* Effect.all(Array.from({ length: 3 }, () => Database.query(sql`SELECT pg_sleep(0.2)`)), { concurrency: "unbounded" })
    const pool = yield* Database.PgPool
    const opened = yield* Effect.promise(poolBackends)
    yield* Effect.promise(() => Bun.sleep(10_500))
    return {
      opened,
      afterIdle: yield* Effect.promise(poolBackends),
      idleInPool: pool.idleCount,
      keepAlive: { on: pool.options.keepAlive, after: pool.options.keepAliveInitialDelayMillis }
    }
  }).pipe(Effect.provide(serviceDatabase(db.url, [["DB_POOL_SIZE", "3"]])), Effect.scoped, Effect.runPromise)
  expect(seen).toEqual({ opened: 3, afterIdle: 3, idleInPool: 3, keepAlive: { on: true, after: 60_000 } })
  // The layer's scope closes the pool: nothing is left open (a backend leaves pg_stat_activity a moment after its
  // client has ended, so this waits for it, 2 s at most).
  let left = await poolBackends()
  for (let i = 0; i < 40 && left > 0; i++) {
    await Bun.sleep(50)
    left = await poolBackends()
  }
  expect(left).toBe(0)
}, 30_000)
