import * as RateLimiter from "@effect/experimental/RateLimiter"
import { Context, Duration, Effect, Exit, Layer, Metric, Option, Redacted, Scope } from "effect"
import type { KeyLimits } from "../accounts/KeyLimits.ts"
import { AppConfig } from "../config/AppConfig.ts"
import * as FiberClock from "../shared/FiberClock.ts"
import { RateLimited } from "../shared/errors.ts"
import * as Metrics from "../shared/Metrics.ts"

/** The spec's three per-key budgets ("Limits"); design §6.15 says which request counts where. */
export type Bucket = "reads" | "writes" | "tests"

/** Design §8b: a POST only for its body; it stores nothing. */
const READ_POSTS = /^\/api\/partners\/registrations\/validate\/?$/

/** Reads are GETs and the validate POST; the webhook test event has its own bucket; everything else is a write. */
export const bucketFor = (method: string, path: string): Bucket =>
  method === "GET" || method === "HEAD" || (method === "POST" && READ_POSTS.test(path))
    ? "reads"
    : method === "POST" && /^\/api\/partners\/webhooks\/[^/]+\/test\/?$/.test(path)
    ? "tests"
    : "writes"

export type RateLimitHeaders = Readonly<Record<string, string>>

/** The outcome of counting one request: the headers to send either way, and the error when refused. */
export type Decision =
  | { readonly allowed: true; readonly headers: RateLimitHeaders }
  | { readonly allowed: false; readonly headers: RateLimitHeaders; readonly error: RateLimited }

export interface RateLimitsShape {
  /** Counts one request of `keyId` in `bucket`. A refused request does not count (design §6.15). */
  readonly consume: (keyId: string, bucket: Bucket, limits: KeyLimits) => Effect.Effect<Decision>
  /**
   * Counts one use of any other budget — `limit` per `window` under `key` (the panel's code requests per e-mail
   * and per client IP, design §8); `what` names it in the refusal's message.
   */
  readonly consumeKey: (
    options: { readonly key: string; readonly limit: number; readonly window: Duration.Duration; readonly what: string }
  ) => Effect.Effect<Decision>
}

export class RateLimits extends Context.Tag("ratelimit/RateLimits")<RateLimits, RateLimitsShape>() {}

const headers = (limit: number, remaining: number, resetAt: number): RateLimitHeaders => ({
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(Math.max(0, remaining)),
  "x-ratelimit-reset": String(resetAt)
})

const WINDOW = Duration.minutes(1)

/** "minute", "hour", else the duration as effect writes it. */
const per = (window: Duration.Duration) =>
  Duration.equals(window, Duration.minutes(1))
    ? "minute"
    : Duration.equals(window, Duration.hours(1))
    ? "hour"
    : Duration.format(window)

/** While the shared store is away, at most one warning per this long (docs/reliability.md). */
export const STORE_WARNING_EVERY = Duration.minutes(1)

/** The first line of a store failure's cause: ioredis's errors carry a stack and a command dump (~900 bytes). */
const reasonOf = (cause: unknown): string =>
  (cause instanceof Error ? cause.message : String(cause)).split("\n", 1)[0]!.slice(0, 200)

/**
 * The rule for a shared store that does not answer (docs/reliability.md): fail open — the request is allowed
 * without being counted, since refusing every partner request because a cache is down would turn a Redis
 * outage into an API outage — and say so once per {@link STORE_WARNING_EVERY}, with how many requests went
 * uncounted, instead of once per request; one line again when the store answers.
 */
const makeOutageLog = () => {
  let outage: { since: number; warnedAt: number; uncounted: number } | undefined
  return {
    failed: (now: number, cause: unknown): Effect.Effect<void> => {
      if (outage !== undefined && now - outage.warnedAt < Duration.toMillis(STORE_WARNING_EVERY)) {
        outage.uncounted++
        return Effect.void
      }
      const uncounted = (outage?.uncounted ?? 0) + 1
      const since = outage?.since ?? now
      outage = { since, warnedAt: now, uncounted }
      return Effect.logWarning(
        "rate-limit store unavailable; requests are allowed without counting (fail open)"
      ).pipe(Effect.annotateLogs({
        reason: reasonOf(cause),
        since: new Date(since).toISOString(),
        uncounted_requests: uncounted
      }))
    },
    /** `decision`, after the one line that says the store answers again when it was away (one step otherwise). */
    answered: (now: number, decision: Decision): Effect.Effect<Decision> => {
      if (outage === undefined) return Effect.succeed(decision)
      const { since, uncounted } = outage
      outage = undefined
      return Effect.logInfo("rate-limit store answers again; requests are counted").pipe(
        Effect.annotateLogs({ down_ms: now - since, uncounted_requests: uncounted }),
        Effect.as(decision)
      )
    }
  }
}

/** Who a budget belongs to, for the refusals metric: a partner key, a check-in link or the panel's sign-in. */
const ownerOf = (key: string) => key.startsWith("checkin:") ? "checkin" : key.startsWith("panel:") ? "panel" : "api_key"

/** A refusal counted by owner and bucket (`what` is one of a few fixed phrases, never a key or an address). */
const countRefusal = (key: string, what: string) =>
  Metric.increment(Metric.tagged(Metric.tagged(Metrics.rateLimitRefusals, "owner", ownerOf(key)), "bucket", what))

const make = Effect.gen(function*() {
  const limiter = yield* RateLimiter.RateLimiter
  const outage = makeOutageLog()
  const consumeKey: RateLimitsShape["consumeKey"] = ({ key, limit, window, what }) =>
    // Runs on every partner request: a flat pipeline, no generator, the clock read from the fiber in the same
    // step (docs/performance.md, "Effect steps per request").
    Effect.withFiberRuntime((fiber) => {
      const now = FiberClock.currentTimeMillis(fiber)
      return Effect.matchEffect(limiter.consume({ key, limit, window }), {
        // resetAfter is when the full budget is back (design §6.15).
        onSuccess: (result): Effect.Effect<Decision> =>
          outage.answered(now, {
            allowed: true,
            headers: headers(limit, result.remaining, Math.ceil((now + Duration.toMillis(result.resetAfter)) / 1000))
          }),
        onFailure: (error): Effect.Effect<Decision> => {
          if (error.reason === "StoreError") {
            return Effect.as(
              outage.failed(now, error.cause),
              { allowed: true, headers: headers(limit, limit, Math.ceil((now + Duration.toMillis(window)) / 1000)) }
            )
          }
          const retryAfterMillis = Math.max(1000, Duration.toMillis(error.retryAfter))
          const retryAfter = Math.ceil(retryAfterMillis / 1000)
          return Effect.as(countRefusal(key, what), {
            allowed: false,
            headers: {
              ...headers(limit, 0, Math.ceil((now + retryAfterMillis) / 1000)),
              "retry-after": String(retryAfter)
            },
            error: new RateLimited({
              message: `rate limit of ${limit} ${what} per ${per(window)} exceeded; retry in ${retryAfter} s`,
              details: { bucket: what, limit, retry_after: retryAfter }
            })
          })
        }
      })
    })
  const consume: RateLimitsShape["consume"] = (keyId, bucket, limits) =>
    consumeKey({ key: `${keyId}:${bucket}`, limit: limits[bucket], window: WINDOW, what: bucket })
  return RateLimits.of({ consume, consumeKey })
})

const redisOptions = (url: string) => {
  const parsed = new URL(url)
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.pathname.length > 1 ? { db: Number(parsed.pathname.slice(1)) } : {}),
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {}),
    // Not the old store's prefix: its keys were strings, ours are hashes (those expire within a window).
    prefix: "partner-registration:ratelimits:",
    // While Redis is down, fail each command at once (and fail open) instead of queueing it: ioredis's default
    // queue-and-retry held every partner request for seconds.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000
  }
}

/**
 * Our Redis store (`RedisStore.ts`: `@effect/experimental`'s own fails on fractional windows), whose connection
 * is closed in a scope of our own: its `quit()` rejects
 * when Redis is already gone, and a shutdown must not fail (or hang) because the rate-limit cache is down.
 */
const redisStore = (options: ReturnType<typeof redisOptions>) =>
  Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.gen(function*() {
      // Once we close, ioredis must stop reconnecting: a failed quit() would otherwise leave it retrying forever.
      let closing = false
      const retryStrategy = (attempt: number) => closing ? null : Math.min(attempt * 200, 2_000)
      const scope = yield* Scope.make()
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          closing = true
        }).pipe(
          Effect.zipRight(Scope.close(scope, Exit.void)),
          Effect.timeout("2 seconds"),
          Effect.catchAllCause(() => Effect.void)
        )
      )
      // Loaded only with REDIS_URL: ioredis is the largest module of a start without it (docs/performance.md).
      const RedisStore = yield* Effect.promise(() => import("./RedisStore.ts"))
      return yield* RedisStore.make({ ...options, retryStrategy }).pipe(Scope.extend(scope))
    })
  )

/** Counters in memory, or in Redis when `REDIS_URL` is set so every instance shares them. */
export const layer = Layer.effect(RateLimits, make).pipe(
  Layer.provide(RateLimiter.layer),
  Layer.provide(Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
    Option.match(config.redisUrl, {
      onNone: () => RateLimiter.layerStoreMemory,
      onSome: (url) => redisStore(redisOptions(Redacted.value(url)))
    }))))
)
