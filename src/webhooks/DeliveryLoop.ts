import { Headers } from "@effect/platform"
import { Cause, DateTime, Duration, Effect, Exit, FiberRef, Layer, Option, Queue, Ref, Runtime, Schedule, Stream } from "effect"
import { Database, PgPool } from "../db/Database.ts"
import * as Listen from "../db/Listen.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { Deliveries } from "./Deliveries.ts"
import type { ClaimedDelivery } from "./DeliveryStore.ts"
import { DELIVERY_TIMEOUT } from "./RetryPolicy.ts"

/**
 * Requests in flight to one endpoint from one instance (as many as there were to any endpoint before the bound
 * was per endpoint: what a receiver sees is unchanged). One slow receiver holds at most these requests, and
 * `ENDPOINT_CLAIMED` of the instance's `DELIVERY_CONCURRENCY`.
 */
export const ENDPOINT_CONCURRENCY = 32

/** Attempts per instance, in flight or being recorded, to all endpoints together. */
export const DELIVERY_CONCURRENCY = 512

/**
 * Deliveries claimed per endpoint at most: its requests in flight and three times as many waiting for a lane, so
 * that the next request to a fast receiver starts when one ends rather than a claim later, and one claim feeds its
 * lanes for several round trips (with twice, the claims' round trips held a backlog at ~4,500/s; docs/
 * performance.md). A slow receiver's waiting rows renew their lease (`RENEW_AFTER`).
 */
const ENDPOINT_CLAIMED = 4 * ENDPOINT_CONCURRENCY

/** A delivery that waited this long for a lane of its endpoint renews its lease before its request. */
const RENEW_AFTER = Duration.seconds(3)

/**
 * While an endpoint has all its claims busy, the loop relies on finished attempts to wake it; this bounds how late
 * a retry of another endpoint, due meanwhile, can be seen (the `nextDueAt` aggregate is not asked then: over a
 * long backlog it is the costliest statement; docs/performance.md).
 */
const AT_ENDPOINT_CAP = Duration.seconds(1)

/**
 * How long an idle loop sleeps at most before looking again. On PostgreSQL, `NOTIFY` wakes it as soon as a
 * delivery commits, so this only covers a lost listen connection; the embedded database has no second
 * connection to listen on (design §3), so there it polls.
 */
const BACKSTOP = { postgres: Duration.seconds(30), embedded: Duration.seconds(1) } as const

/** How long a woken loop gathers finished attempts before claiming, in a backlog. */
const CLAIM_GATHER = Duration.millis(2)

/** After a failed round (the database away), the next one comes this soon. */
const RETRY_AFTER_FAILURE = Duration.seconds(1)

/** A claimed delivery waiting for a lane of its endpoint. */
interface Claimed {
  readonly job: ClaimedDelivery
  readonly claimedAt: number
}

/**
 * The delivery loop (ROLE=worker|all; design §1, §7): claims due deliveries up to the free capacity, hands each
 * to its endpoint's lanes (at most `ENDPOINT_CONCURRENCY` per endpoint, each sending one request after the
 * other), and sleeps until woken — by `NOTIFY webhook_deliveries` (a new or redelivered row), by an answered
 * request or a recorded attempt, or by the time the next retry falls due. The outcomes are recorded in batches
 * by `DeliveryRecorder`.
 */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const deliveries = yield* Deliveries
  const database = yield* Database
  const wake = yield* Queue.sliding<void>(1)
  /** Attempts claimed and not yet recorded (waiting for a lane, sent, or being recorded). */
  let inFlight = 0
  /** Per endpoint: deliveries claimed whose request has not been answered yet (waiting for a lane or sent). */
  const claimed = new Map<string, number>()
  /** Per endpoint with claimed deliveries: what waits for a lane, and how many lanes run (≤ ENDPOINT_CONCURRENCY). */
  const endpoints = new Map<string, { readonly waiting: Array<Claimed>; lanes: number }>()
  const endpointFull = () => {
    for (const n of claimed.values()) if (n >= ENDPOINT_CLAIMED) return true
    return false
  }
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

  // The attempts run as plain promises, not a fiber each (docs/performance.md, "Deliveries without a fiber
  // each"): what they need of this fiber is taken once here.
  const runtime = yield* Effect.runtime<never>()
  const clock = yield* Effect.clock
  const trace = (yield* FiberRef.get(TraceContext.Exported))
    ? { tracer: yield* Effect.tracer, clock, redactedNames: yield* FiberRef.get(Headers.currentRedactedNames) }
    : undefined
  const stop = new AbortController()
  const run = <A, E>(effect: Effect.Effect<A, E>) => Runtime.runPromiseExit(runtime)(effect)
  const wakeUp = () => {
    wake.unsafeOffer(undefined)
  }

  /** The receiver answered (or the request failed, or never started): the endpoint's claim is free. */
  const answered = (endpoint: string) => {
    const left = (claimed.get(endpoint) ?? 1) - 1
    if (left > 0) claimed.set(endpoint, left)
    else claimed.delete(endpoint)
    wakeUp()
  }
  const finished = () => {
    inFlight--
    wakeUp()
  }

  /**
   * One attempt in a lane. A delivery that waited long for a lane (a slow receiver) renews its lease before its
   * request, so that the lease still outlives the attempt. Whatever fails here is logged; the lease then lapses
   * and the delivery is attempted again.
   */
  const attemptOne = async ({ job, claimedAt }: Claimed) => {
    let sent = false
    const onSent = () => {
      if (!sent) answered(job.endpoint_id)
      sent = true
    }
    try {
      if (clock.unsafeCurrentTimeMillis() - claimedAt > Duration.toMillis(RENEW_AFTER)) {
        const renewed = await run(deliveries.renew(job))
        if (Exit.isFailure(renewed)) throw Cause.squash(renewed.cause)
      }
      await deliveries.deliver(job, { clock, trace, signal: stop.signal, onSent, onRecorded: finished })
    } catch (cause) {
      onSent()
      finished()
      if (!stop.signal.aborted) await run(Effect.logError("webhook delivery attempt failed", Cause.die(cause)))
    }
  }

  /** Set when the loop stops: no lane starts another request. */
  let stopping = false

  /** Claimed deliveries not sent yet are given up: their leases are given back by the shutdown. */
  const giveUpWaiting = (state: { readonly waiting: Array<Claimed> }) => {
    for (const left of state.waiting.splice(0)) {
      answered(left.job.endpoint_id)
      finished()
    }
  }

  /** A lane: requests to one endpoint one after the other, while its claimed deliveries wait. */
  const lane = async (endpoint: string, state: { readonly waiting: Array<Claimed>; lanes: number }) => {
    for (let next = state.waiting.shift(); next !== undefined; next = stopping ? undefined : state.waiting.shift()) {
      await attemptOne(next)
    }
    state.lanes--
    if (state.lanes === 0) {
      endpoints.delete(endpoint)
      giveUpWaiting(state)
    }
  }

  // On shutdown the loop stops first (its fiber is forked after this finalizer, so it is interrupted before it
  // runs) and the deliveries claimed but not sent are given up (their leases are given back, so another instance
  // takes them at once); then requests in flight get up to one delivery timeout to finish and be recorded, so a
  // restart does not send them again; whatever is still in flight then is aborted and its lease given back.
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      stopping = true
      for (const state of endpoints.values()) giveUpWaiting(state)
    }).pipe(
      Effect.zipRight(Effect.sync(() => inFlight).pipe(
        Effect.repeat({ until: (n) => n === 0, schedule: Schedule.spaced("50 millis") }),
        // A finalizer is uninterruptible: the wait must not be, for the timeout to end it.
        Effect.interruptible,
        Effect.timeout(Duration.sum(DELIVERY_TIMEOUT, Duration.seconds(1))),
        Effect.ignore
      )),
      Effect.zipRight(Effect.sync(() => stop.abort()))
    )
  )

  /** How many rows the last claim took. */
  let lastClaim = 0

  /** One round: claims what fits and starts it; answers whether more may be waiting right now. */
  const round = Effect.gen(function*() {
    const free = DELIVERY_CONCURRENCY - inFlight
    if (free <= 0) return false
    const jobs = yield* deliveries.claim(free, { perEndpoint: ENDPOINT_CLAIMED, busy: claimed })
    const claimedAt = clock.unsafeCurrentTimeMillis()
    inFlight += jobs.length
    for (const job of jobs) {
      const endpoint = job.endpoint_id
      claimed.set(endpoint, (claimed.get(endpoint) ?? 0) + 1)
      let state = endpoints.get(endpoint)
      if (state === undefined) {
        state = { waiting: [], lanes: 0 }
        endpoints.set(endpoint, state)
      }
      state.waiting.push({ job, claimedAt })
      if (state.lanes < ENDPOINT_CONCURRENCY) {
        state.lanes++
        void lane(endpoint, state)
      }
    }
    lastClaim = jobs.length
    // An endpoint at its bound hides no other's rows (the claim bounds each endpoint on its own); only the
    // total limit can have left due rows behind.
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
    const full = inFlight >= DELIVERY_CONCURRENCY
    const sleep = full ? backstop : endpointFull() ? AT_ENDPOINT_CAP : yield* idleFor
    const backlog = lastClaim > 1 && inFlight > 0
    yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(sleep))
    // In a backlog (the last claim took several rows, attempts are in flight) they finish one by one and each
    // wakes the loop: gathering them for a moment lets one claim take several rows (a claim per delivery is
    // what a backlog cost most; docs/performance.md). A lone new delivery is claimed at once.
    if (backlog) yield* Effect.sleep(CLAIM_GATHER)
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
