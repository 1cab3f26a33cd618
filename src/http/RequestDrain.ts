import type { HttpServerRequest } from "@effect/platform"
import { Context, Duration, Effect, Predicate, Schedule } from "effect"

/**
 * Draining on SIGTERM (design §9): the listener closes at once — new connections are refused, so a load
 * balancer moves on — while requests already being handled get up to `SHUTDOWN_DRAIN_SECONDS` to finish.
 * Whatever is still running after that is cut off when the HTTP layer closes.
 */

/** What a drain came to, for the shutdown line. */
export interface DrainOutcome {
  /** Requests that finished while draining. */
  readonly drained: number
  /** Requests still running when the drain ended: they are cut off. */
  readonly cut: number
}

/** What platform-bun's request keeps of Bun's server (its `remoteAddress` reads it); only `stop` is used. */
interface BunListener {
  readonly stop: (closeActiveConnections?: boolean) => Promise<void>
}

export interface RequestDrainShape {
  /**
   * Counts a request in flight, until its `leave`. Plain calls, not effects: the error middleware, which every
   * request of the router passes through, makes them in the step it already takes per request
   * (docs/performance.md, "Effect steps per request").
   */
  readonly enter: (request: HttpServerRequest.HttpServerRequest) => void
  readonly leave: () => void
  /** Stops listening and waits up to `within` for the requests in flight. */
  readonly drain: (within: Duration.Duration) => Effect.Effect<DrainOutcome>
  /** The last drain's outcome (none yet: nothing drained). */
  readonly outcome: Effect.Effect<DrainOutcome>
}

export class RequestDrain extends Context.Tag("http/RequestDrain")<RequestDrain, RequestDrainShape>() {}

/**
 * Bun's server is not part of Effect's `HttpServer`; the request platform-bun hands over carries it. Until a
 * first request there is nothing in flight to wait for, and the HTTP layer's own finalizer stops the listener.
 */
const listenerOf = (request: HttpServerRequest.HttpServerRequest): BunListener | undefined => {
  const server = Predicate.hasProperty(request, "bunServer") ? request.bunServer : undefined
  return isBunListener(server) ? server : undefined
}

/** The request's field is platform-bun's own (its type is not exported): what it holds is checked here. */
const isBunListener = (server: unknown): server is BunListener =>
  Predicate.hasProperty(server, "stop") && typeof server.stop === "function"

export const make: Effect.Effect<RequestDrainShape> = Effect.sync(() => {
  const state: {
    inFlight: number
    draining: boolean
    finishedWhileDraining: number
    listener: BunListener | undefined
    outcome: DrainOutcome
  } = { inFlight: 0, draining: false, finishedWhileDraining: 0, listener: undefined, outcome: { drained: 0, cut: 0 } }
  const enter = (request: HttpServerRequest.HttpServerRequest) => {
    state.inFlight++
    state.listener ??= listenerOf(request)
  }
  const leave = () => {
    state.inFlight--
    if (state.draining) state.finishedWhileDraining++
  }

  const idle = Effect.sync(() => state.inFlight).pipe(
    Effect.repeat({ until: (n) => n === 0, schedule: Schedule.spaced("10 millis") })
  )

  const drain = (within: Duration.Duration) =>
    Effect.gen(function*() {
      state.draining = true
      // Resolves once the connections with a request in flight are done (idle keep-alive ones are closed).
      const stopped = state.listener?.stop(false)
      // A finalizer runs uninterruptibly; the wait must be interruptible for the timeout to end it.
      const settled = Effect.all([idle, stopped === undefined ? Effect.void : Effect.promise(() => stopped)], {
        concurrency: "unbounded",
        discard: true
      })
      yield* Effect.interruptible(settled).pipe(Effect.timeout(within), Effect.ignore)
      state.outcome = { drained: state.finishedWhileDraining, cut: state.inFlight }
      return state.outcome
    })

  return { enter, leave, drain, outcome: Effect.sync(() => state.outcome) }
})
