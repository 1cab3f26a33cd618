import { SqlClient, SqlError } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import Pg from "pg"
import { AppConfig } from "../config/AppConfig.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import * as DataDirLock from "./DataDirLock.ts"
import * as EmbeddedTemplate from "./EmbeddedTemplate.ts"
import * as EmbeddedWarmup from "./EmbeddedWarmup.ts"
import { runMigrations } from "./migrations.ts"
import { PreparingClient } from "./PreparedStatements.ts"

/** Which database the process talks to; readiness and the polling-vs-LISTEN choice depend on it. */
export interface DatabaseInfo {
  readonly mode: "postgres" | "embedded"
  /** A description safe to log (no password). */
  readonly target: string
}

export class Database extends Context.Tag("db/Database")<Database, DatabaseInfo>() {}

/** The `pg` pool behind the `SqlClient`, for the few hot paths measured in docs/performance.md. */
export class PgPool extends Context.Tag("db/PgPool")<PgPool, Pg.Pool>() {}

/** A statement on the pool itself, outside any transaction: `pg`'s own call, failing as @effect/sql fails. */
const onPool = <A extends object>(pool: Pg.Pool, text: string, params: ReadonlyArray<unknown>) =>
  Effect.async<ReadonlyArray<A>, SqlError.SqlError>((resume) => {
    pool.query(text, [...params], (error: Error | undefined, result: Pg.QueryResult) => {
      resume(
        error
          ? Effect.fail(new SqlError.SqlError({ cause: error, message: "Failed to execute statement" }))
          : Effect.succeed(result.rows)
      )
    })
  })

/**
 * The one way to run SQL fast (docs/performance.md, "One way to run SQL: `query`"). Every statement is built
 * with `sql`; `query` runs it without @effect/sql's per-statement pipeline (a scope, the connection lookup, a
 * span: ~30 % of a short statement's CPU): inside a transaction on that transaction's connection (through the
 * library's typed `Connection`), so it belongs to the transaction; outside, on the `PgPool` directly (the hot
 * reads: the key lookup, endpoint 1, a reservation by external_id). Same text, same parameters, same rows (no
 * name transforms are configured), the same `SqlError` on failure, and the `sql.execute` span with its
 * `db.query.text` when traces are exported. Without a `PgPool` (a service built alone in a test) it runs the
 * statement as usual.
 */
export const query = <A extends object>(
  statement: Statement.Statement<A>
): Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> =>
  // One step for the context and the tracer, read from the fiber (docs/performance.md, "Effect steps per request").
  Effect.withFiberRuntime((fiber) => {
    const transaction = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
    const pool = Context.getOption(fiber.currentContext, PgPool)
    if (Option.isNone(transaction) && Option.isNone(pool)) return statement
    const [text, params] = statement.compile()
    const run: Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> = Option.isSome(transaction)
      ? transaction.value[0].execute(text, params, undefined)
      : onPool<A>(Option.getOrThrow(pool), text, params)
    return !TraceContext.isTracing(fiber) ? run : Effect.withSpan(run, "sql.execute", {
      kind: "client",
      captureStackTrace: false,
      attributes: { "db.system.name": "postgresql", "db.query.text": text }
    })
  })

/**
 * `effect` in the caller's transaction when there is one, else in a transaction of its own. @effect/sql's
 * `withTransaction` nests with a SAVEPOINT, which only helps a caller that recovers from the inner part's failure
 * and goes on in the same transaction; none of ours does (a failure inside ends the whole transaction), so joining
 * spares the SAVEPOINT's round trip and the nested transaction's bookkeeping (docs/performance.md, "Issue 28, fifth
 * session").
 */
export const joiningTransaction = (sql: SqlClient.SqlClient) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.withFiberRuntime((fiber) =>
    Option.isSome(Context.getOption(fiber.currentContext, SqlClient.TransactionConnection))
      ? effect
      : sql.withTransaction(effect)
  )

/** The failure that stops start-up when the database cannot be reached, with a message for the operator. */
export class DatabaseUnavailable extends Error {
  readonly _tag = "DatabaseUnavailable"
}

// `date` columns stay "YYYY-MM-DD" strings: pg's default parser would turn them into a local-midnight Date.
const DATE_OID = 1082
const types = new Pg.TypeOverrides()
types.setTypeParser(DATE_OID, "text", (value) => value)

const redactUrl = (url: string) => {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = "***"
    return parsed.toString()
  } catch {
    return "(unparseable DATABASE_URL)"
  }
}

const connectPool = (pool: Pg.Pool, target: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => pool.query("SELECT 1"),
      catch: (cause) =>
        new DatabaseUnavailable(
          `cannot reach the database at ${target}: ${cause instanceof Error ? cause.message : String(cause)}`
        )
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.seconds(10),
        onTimeout: () => new DatabaseUnavailable(`cannot reach the database at ${target}: timed out after 10 s`)
      }),
      Effect.as(pool)
    ),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(2000))
  )

const sqlLayer = (pool: Pg.Pool, info: DatabaseInfo) =>
  Layer.mergeAll(
    Layer.succeed(Database, info),
    Layer.succeed(PgPool, pool),
    // No name transforms: they would rewrite keys inside partner metadata (stack-notes "data-corruption trap").
    PgClient.layerFromPool({ acquire: Effect.succeed(pool), applicationName: "partner-registration", types })
  )

/** PostgreSQL at `DATABASE_URL`. */
const postgres = (url: Redacted.Redacted, poolSize: number, prepared: boolean) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const target = redactUrl(Redacted.value(url))
    const pool = new Pg.Pool({
      connectionString: Redacted.value(url),
      max: poolSize,
      // A request waiting for a connection while the database is away gets its 503 within 5 s, not later
      // (docs/reliability.md); start-up still waits 10 s in all (`connectPool`).
      connectionTimeoutMillis: 5_000,
      // The pool keeps the connections it opened (docs/performance.md, "Issue 28, fifth session"): `pg`'s default
      // closes every connection idle for 10 s, so 10 s after a burst the whole pool closed at once and the
      // requests of that moment stalled 30–70 ms (create's p99 at 200 req/s 15–21 ms, 8–10 ms without), and the
      // next burst paid for new connections and their prepared statements again. TCP keep-alive from 60 s of
      // idleness keeps a NAT's or load balancer's mapping of a quiet connection, and finds a dead peer.
      idleTimeoutMillis: 0,
      keepAlive: true,
      keepAliveInitialDelayMillis: 60_000,
      application_name: "partner-registration",
      types,
      ...(prepared ? { Client: PreparingClient } : {})
    })
    pool.on("error", () => {}) // idle-client errors surface on the next query instead of crashing the process
    yield* connectPool(pool, target)
    return sqlLayer(pool, { mode: "postgres", target })
  }))

/**
 * A `pg` pool on the PGlite cluster in `dir`, for as long as the scope lasts: PGlite served by pglite-socket on
 * a free local port, one connection (pglite-socket serves one session: a larger pool fails, stack-notes §7).
 */
const embeddedPool = (dir: string, prepared = false) =>
  Effect.gen(function*() {
    const { PGlite } = yield* Effect.promise(() => import("@electric-sql/pglite"))
    const { PGLiteSocketServer } = yield* Effect.promise(() => import("@electric-sql/pglite-socket"))
    const startParams = yield* Effect.promise(() => EmbeddedTemplate.startParams())
    const pgliteWasmModule = yield* Effect.promise(() => EmbeddedWarmup.pgliteModule())
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create(dir, { startParams, ...(pgliteWasmModule === undefined ? {} : { pgliteWasmModule }) }),
        catch: (cause) => new DatabaseUnavailable(`cannot open the embedded database in ${dir}: ${String(cause)}`)
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
    yield* Effect.acquireRelease(
      Effect.promise(() => server.start()),
      () => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    const port = Number(server.getServerConn().split(":").pop())
    const pool = new Pg.Pool({
      host: "127.0.0.1",
      port,
      user: "postgres",
      database: "postgres",
      max: 1,
      // Its one session stays open (as the PostgreSQL pool's, above): not closed after 10 s idle, then reopened.
      idleTimeoutMillis: 0,
      types,
      ...(prepared ? { Client: PreparingClient } : {})
    })
    pool.on("error", () => {})
    const target = `embedded PGlite in ${dir}`
    yield* connectPool(pool, target)
    return { pool, target }
  })

/** The template's last step (EmbeddedTemplate.ts): this checkout's migrations on the fresh cluster in `dir`. */
const migrateCluster = (dir: string): Promise<void> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const { pool } = yield* embeddedPool(dir)
    yield* runMigrations.pipe(Effect.provide(PgClient.layerFromPool({ acquire: Effect.succeed(pool), types })))
  })))

/** The embedded database's template, made now if missing (the postinstall step: scripts/embedded-template.ts). */
export const ensureEmbeddedTemplate = () => EmbeddedTemplate.ensureTemplate(migrateCluster)

/**
 * Embedded PostgreSQL: PGlite keeps its data in `DATA_DIR/pg` and is reached through pglite-socket with the
 * same `pg` client as production. Loaded by dynamic import so production images never initialise it. The
 * directory's lock is taken first and given back last: a second process stops before it opens any file. A
 * fresh DATA_DIR gets a copy of the template, already migrated (EmbeddedTemplate.ts).
 */
const embedded = (dataDir: string, servicePort: number, prepared: boolean) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const lock = yield* DataDirLock.acquire(dataDir, servicePort)
    const dir = NodePath.resolve(dataDir, "pg")
    yield* Effect.promise(() => NodeFs.mkdir(dir, { recursive: true }))
    if (!(yield* Effect.promise(() => EmbeddedTemplate.isInitialised(dir)))) {
      // Without a template (node_modules read-only, …) PGlite creates the cluster in place, as it always could:
      // slower, never a failed start. The migrations then run at start as on PostgreSQL.
      yield* Effect.tryPromise(() => EmbeddedTemplate.copyTemplateTo(dir, migrateCluster)).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(`embedded database template unavailable; creating the cluster in ${dir} instead`, error)
        )
      )
    }
    const { pool, target } = yield* embeddedPool(dir, prepared)
    return Layer.merge(sqlLayer(pool, { mode: "embedded", target }), Layer.succeed(DataDirLock.Held, lock))
  }))

/** `SqlClient` + `PgClient` + `Database` + `PgPool` for the configured database (and its lock when embedded). */
export const layer: Layer.Layer<
  Database | PgPool | PgClient.PgClient | SqlClient.SqlClient | DataDirLock.Held,
  DatabaseUnavailable | DataDirLock.DataDirInUse | DataDirLock.DataDirLockUnreadable | SqlError.SqlError,
  AppConfig
> = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Option.match(config.databaseUrl, {
    onNone: () => embedded(config.dataDir, config.port, config.dbPreparedStatements),
    onSome: (url) =>
      Layer.merge(postgres(url, config.dbPoolSize, config.dbPreparedStatements), Layer.succeed(DataDirLock.Held, DataDirLock.Held.defaultValue()))
  })))
