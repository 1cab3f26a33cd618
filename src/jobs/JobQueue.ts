import { SqlClient } from "@effect/sql"
import { Array as Arr, DateTime, Duration, Effect, Option, Order, Schedule, type Scope } from "effect"
import { delayBeforeRetry } from "../shared/DurableRetry.ts"
import { JobLeases } from "./JobLeases.ts"

/**
 * The one job queue (design §7, issue 24): webhook deliveries, document photo fetches, e-mails and report runs'
 * reservations are rows of their own tables, claimed under a lease with `FOR UPDATE SKIP LOCKED` so any number
 * of workers share them and a crashed worker's rows are taken over when its lease ends. This module is that
 * mechanism, written once: the claim (noted in this process's `JobLeases`, so a stopping process gives back
 * what it holds), the renewal and the release of leases (always in id order: two statements locking the same
 * rows in different orders deadlock), the settlement of a job, and the time of its next attempt on a
 * `Schedule` (`DurableRetry`). Each queue keeps only its own work: what it claims, what an attempt does, and
 * what an outcome writes.
 */

/** What a queue is made of. */
export interface QueueSpec {
  /** How logs name its jobs ("mail", "document photo", …). */
  readonly kind: string
  /** Its table; each row has a uuid `id` and a lease column. */
  readonly table: string
  /** The lease column (`lease_until` unless told). */
  readonly leaseColumn?: string
  /** How long a claim holds a row; an attempt must fit in it, or renew it. */
  readonly lease: Duration.DurationInput
}

/** The time of a claim and the lease it takes. */
export interface Lease {
  readonly at: Date
  readonly until: Date
}

export interface JobQueue {
  /** Runs a claim statement with a fresh lease and notes the rows it returns as held under it. */
  readonly claim: <A extends { readonly id: string }, E, R>(
    statement: (lease: Lease) => Effect.Effect<ReadonlyArray<A>, E, R>
  ) => Effect.Effect<ReadonlyArray<A>, E, R>
  /**
   * The usual claim: up to `limit` rows in `state = 'pending'` whose `next_attempt_at` has come and whose lease is
   * free, oldest due first; the attempt is counted (`attempts + 1`) and `returning` (a list of the table's
   * columns and expressions over them) is what the claim answers.
   */
  readonly claimDue: <A extends { readonly id: string }>(limit: number, returning: string) => Effect.Effect<ReadonlyArray<A>>
  /**
   * Extends the leases of `ids` by one lease from now, for work that runs longer; with `heldUntil`, only rows still
   * leased until then (a row redelivered meanwhile is left alone). Answers the ids renewed.
   */
  readonly renew: (
    ids: ReadonlyArray<string>,
    options?: { readonly heldUntil?: Date }
  ) => Effect.Effect<ReadonlyArray<string>>
  /** Writes what an attempt at `id` came to (`columns`) and gives its lease back, in one statement. */
  readonly settle: (id: string, columns: Readonly<Record<string, unknown>>) => Effect.Effect<void>
  /** Gives back the leases of `ids` (work recorded elsewhere, or given up). */
  readonly release: (ids: ReadonlyArray<string>) => Effect.Effect<void>
  /** `ids` were recorded by a statement of the queue's own that cleared their leases. */
  readonly settled: (ids: ReadonlyArray<string>) => Effect.Effect<void>
}

/**
 * When retry number `retry` (1 = the first) of a failed job falls due on `schedule`, counted from now; None once
 * the schedule is exhausted: the job has failed for good.
 */
export const nextAttemptAt = <Out, In, R>(
  schedule: Schedule.Schedule<Out, In, R>,
  retry: number,
  input: In
): Effect.Effect<Option.Option<Date>, never, R> =>
  Effect.gen(function*() {
    const delay = yield* delayBeforeRetry(schedule, retry, input)
    const now = yield* DateTime.now
    return Option.map(delay, (gap) => DateTime.toDateUtc(DateTime.addDuration(now, gap)))
  })

/**
 * Rows per renewal statement. A statement holds the locks of the rows it updates until it commits, and a worker's
 * transaction on one of them waits meanwhile: a report run renewing its 1,200 claimed reservations in one
 * statement stalled every reservation in progress 150–200 ms (docs/performance.md, "Issue 28, fifth session").
 * In statements of this many rows, each committing on its own, a worker waits one statement at most.
 */
export const RENEW_CHUNK = 100

/** A queue over `spec.table`, registered with this process's `JobLeases`. */
export const make = (spec: QueueSpec): Effect.Effect<JobQueue, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = sql(spec.table)
    const lease = sql(spec.leaseColumn ?? "lease_until")
    /** The rows of `ids`, locked in id order (a subquery for `WHERE id IN (…)`). */
    const inIdOrder = (ids: ReadonlyArray<string>) =>
      sql`SELECT id FROM ${table} WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`

    const leases = yield* (yield* JobLeases).register(spec.kind, (ids, until) =>
      ids.length === 0 ? Effect.succeed(0) : sql<{ id: string }>`
        UPDATE ${table} SET ${lease} = NULL
        WHERE id IN (${inIdOrder(ids)}) AND ${lease} = ${until} RETURNING id`
        .pipe(Effect.map((rows) => rows.length), Effect.orDie))

    const newLease = Effect.map(DateTime.now, (now): Lease => ({
      at: DateTime.toDateUtc(now),
      until: DateTime.toDateUtc(DateTime.addDuration(now, spec.lease))
    }))

    const claim: JobQueue["claim"] = (statement) =>
      Effect.flatMap(newLease, (taken) => leases.claimed(statement(taken), taken.until, (row) => row.id))

    const claimDue: JobQueue["claimDue"] = <A extends { readonly id: string }>(limit: number, returning: string) =>
      claim(({ at, until }) =>
        sql<A>`
          UPDATE ${table} SET ${lease} = ${until}, attempts = attempts + 1
          WHERE id IN (
            SELECT id FROM ${table}
            WHERE state = 'pending' AND next_attempt_at <= ${at} AND (${lease} IS NULL OR ${lease} <= ${at})
            ORDER BY next_attempt_at
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          RETURNING ${sql.literal(returning)}`.pipe(Effect.orDie)
      )

    const renew: JobQueue["renew"] = (ids, options) =>
      ids.length === 0 ? Effect.succeed([]) : Effect.flatMap(newLease, ({ until }) =>
        leases.claimed(
          // In id order across the statements too (uuids sort as their text), as every lock of the queue is taken.
          Effect.forEach(Arr.chunksOf(Arr.sort(ids, Order.string), RENEW_CHUNK), (chunk) =>
            sql<{ id: string }>`
              UPDATE ${table} SET ${lease} = ${until}
              WHERE id IN (${inIdOrder(chunk)})
                AND ${options?.heldUntil === undefined ? sql`${lease} IS NOT NULL` : sql`${lease} = ${options.heldUntil}`}
              RETURNING id`).pipe(Effect.map((renewed) => renewed.flat().map((row) => row.id)), Effect.orDie),
          until,
          (id) => id
        ))

    const settle: JobQueue["settle"] = (id, columns) =>
      sql`UPDATE ${table} SET ${sql.update({ ...columns, [spec.leaseColumn ?? "lease_until"]: null })} WHERE id = ${id}`
        .pipe(Effect.orDie, Effect.zipRight(leases.settled([id])))

    const release: JobQueue["release"] = (ids) =>
      ids.length === 0 ? Effect.void : sql`UPDATE ${table} SET ${lease} = NULL WHERE id IN (${inIdOrder(ids)})`.pipe(
        Effect.orDie,
        Effect.zipRight(leases.settled(ids))
      )

    return { claim, claimDue, renew, settle, release, settled: leases.settled }
  })

/**
 * The worker side of a queue: `workers` fibers (one unless told), each running `round` (it claims, works and
 * answers how many jobs it claimed) again at once while it finds work, and every `every` when none was due. A
 * round's failure is logged and the fiber goes on.
 */
export const poll = <E>(
  kind: string,
  round: Effect.Effect<number, E>,
  options: { readonly every: Duration.DurationInput; readonly workers?: number }
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const one = round.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning(`${kind} round failed`, cause).pipe(Effect.as(0)))
    )
    const drain: Effect.Effect<void> = Effect.flatMap(one, (claimed) => claimed > 0 ? drain : Effect.void)
    const worker = Effect.repeat(drain, Schedule.spaced(options.every))
    for (let i = 0; i < (options.workers ?? 1); i++) yield* Effect.forkScoped(worker)
  })
