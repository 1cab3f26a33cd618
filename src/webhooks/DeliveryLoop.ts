import {
  Cause,
  DateTime,
  Duration,
  Effect,
  ExecutionStrategy,
  Exit,
  Layer,
  Option,
  Queue,
  Ref,
  Schedule,
  Scope,
  Stream
} from "effect"
import { Database, PgPool } from "../db/Database.ts"
import * as Listen from "../db/Listen.ts"
import { Deliveries } from "./Deliveries.ts"
import { DELIVERY_TIMEOUT } from "./RetryPolicy.ts"

/** Deliveries in flight per instance. */
export const DELIVERY_CONCURRENCY = 32

/**
 * How long an idle loop sleeps at most before looking again. On PostgreSQL, `NOTIFY` wakes it as soon as a
 * delivery commits, so this only covers a lost listen connection; the embedded database has no second
 * connection to listen on (design §3), so there it polls.
 */
const BACKSTOP = { postgres: Duration.seconds(30), embedded: Duration.seconds(1) } as const

/** After a failed round (the database away), the next one comes this soon. */
const RETRY_AFTER_FAILURE = Duration.seconds(1)

/**
 * The delivery loop (ROLE=worker|all; design §1, §7): claims due deliveries up to the free capacity, attempts
 * each in its own fiber, and sleeps until woken — by `NOTIFY webhook_deliveries` (a new or redelivered row),
 * by a finished attempt when it was at capacity, or by the time the next retry falls due.
 */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const deliveries = yield* Deliveries
  const database = yield* Database
  const wake = yield* Queue.sliding<void>(1)
  const inFlight = yield* Ref.make(0)
  /** Rounds failed in a row. */
  const failures = yield* Ref.make(0)
  const backstop = BACKSTOP[database.mode === "embedded" ? "embedded" : "postgres"]

  if (database.mode !== "embedded") {
    const pool = yield* PgPool
    // Each (re)start of the listener wakes the loop too: a delivery may have committed while it was away. The
    // failure is logged when listening stops, not at every retry while the database stays away.
    const listening = yield* Ref.make(true)
    yield* Listen.listen(pool, "webhook_deliveries").pipe(
      Stream.runForEach(() => Ref.set(listening, true).pipe(Effect.zipRight(wake.offer(undefined)))),
      Effect.tapErrorCause((cause) =>
        Effect.flatMap(Ref.getAndSet(listening, false), (was) =>
          was ? Effect.logWarning("webhook LISTEN failed; retrying", Cause.squash(cause)) : Effect.void)
      ),
      Effect.retry(Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))),
      Effect.forkScoped
    )
  }

  const finished = Ref.update(inFlight, (n) => n - 1).pipe(Effect.zipRight(wake.offer(undefined)))

  // Attempts run in their own scope. On shutdown the loop stops first (its fiber is forked after this
  // finalizer, so it is interrupted before it runs); then attempts in flight get up to one delivery timeout
  // to finish and be recorded, so a restart does not send them again; whatever is left is interrupted and
  // its lease lets another instance take it over.
  const attempts = yield* Scope.make(ExecutionStrategy.parallel)
  yield* Effect.addFinalizer(() =>
    Ref.get(inFlight).pipe(
      Effect.repeat({ until: (n) => n === 0, schedule: Schedule.spaced("50 millis") }),
      // A finalizer is uninterruptible: the wait must not be, for the timeout to end it.
      Effect.interruptible,
      Effect.timeout(Duration.sum(DELIVERY_TIMEOUT, Duration.seconds(1))),
      Effect.ignore,
      Effect.zipRight(Scope.close(attempts, Exit.void))
    )
  )

  /** One round: claims what fits and starts it; answers whether more may be waiting right now. */
  const round = Effect.gen(function*() {
    const free = DELIVERY_CONCURRENCY - (yield* Ref.get(inFlight))
    if (free <= 0) return false
    const jobs = yield* deliveries.claim(free)
    yield* Ref.update(inFlight, (n) => n + jobs.length)
    for (const job of jobs) {
      yield* deliveries.attempt(job).pipe(
        Effect.catchAllCause((cause) => Effect.logError("webhook delivery attempt failed", cause)),
        Effect.ensuring(finished),
        Effect.forkIn(attempts)
      )
    }
    return jobs.length === free
  })

  /** How long to sleep: until the next delivery falls due, at most the backstop. */
  const idleFor = Effect.gen(function*() {
    const next = yield* deliveries.nextDueAt
    if (Option.isNone(next)) return backstop
    const wait = next.value.getTime() - (yield* DateTime.now).epochMillis
    return Duration.clamp(Duration.millis(Math.max(wait, 0)), { minimum: Duration.millis(5), maximum: backstop })
  })

  const loop = Effect.gen(function*() {
    const more = yield* round
    if (more) return
    // At capacity, the next finished attempt wakes the loop: no need to ask the table when the next row is due
    // (that aggregate is the costliest statement of a backlog; docs/performance.md).
    const full = (yield* Ref.get(inFlight)) >= DELIVERY_CONCURRENCY
    const sleep = full ? backstop : yield* idleFor
    yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(sleep))
  }).pipe(
    Effect.zipLeft(Ref.set(failures, 0)),
    // The database away (docs/reliability.md): try again every second, not after the backstop — deliveries
    // resume within a second of its return —, and say so once per outage, not once a second.
    Effect.catchAllCause((cause) =>
      Ref.getAndUpdate(failures, (n) => n + 1).pipe(
        Effect.flatMap((n) =>
          n === 0 ? Effect.logWarning("webhook delivery loop round failed; retrying every second", cause) : Effect.void
        ),
        Effect.zipRight(Effect.raceFirst(Queue.take(wake), Effect.sleep(RETRY_AFTER_FAILURE)))
      )
    ),
    Effect.forever
  )
  yield* Effect.forkScoped(loop)
}))
