import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as RedisRateLimiter from "@effect/experimental/RateLimiter/Redis"
import { Clock, Context, Duration, Effect, Exit, Layer, Metric, Option, Redacted, Scope } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import type { KeyLimits } from "../auth/CurrentKey.ts"
import { RateLimited } from "../shared/errors.ts"
import * as Metrics from "../shared/Metrics.ts"

/** The spec's three per-key budgets ("Limits"); design §6.15 says which request counts where. */
export type Bucket = "reads" | "writes" | "tests"

/** Reads are GETs; the webhook test event has its own bucket; everything else is a write. */
export const bucketFor = (method: string, path: string): Bucket =>
  method === "GET" || method === "HEAD"
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

/** Who a budget belongs to, for the refusals metric: a partner key, a check-in link or the panel's sign-in. */
const ownerOf = (key: string) => key.startsWith("checkin:") ? "checkin" : key.startsWith("panel:") ? "panel" : "api_key"

/** A refusal counted by owner and bucket (`what` is one of a few fixed phrases, never a key or an address). */
const countRefusal = (key: string, what: string) =>
  Metric.increment(Metric.tagged(Metric.tagged(Metrics.rateLimitRefusals, "owner", ownerOf(key)), "bucket", what))

const make = Effect.gen(function*() {
  const limiter = yield* RateLimiter.RateLimiter
  const consumeKey: RateLimitsShape["consumeKey"] = ({ key, limit, window, what }) =>
    // Runs on every partner request: a flat pipeline, no generator (docs/performance.md).
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.matchEffect(limiter.consume({ key, limit, window }), {
        // resetAfter is when the full budget is back (design §6.15).
        onSuccess: (result): Effect.Effect<Decision> =>
          Effect.succeed({
            allowed: true,
            headers: headers(limit, result.remaining, Math.ceil((now + Duration.toMillis(result.resetAfter)) / 1000))
          }),
        onFailure: (error): Effect.Effect<Decision> => {
          if (error.reason === "StoreError") {
            // A broken shared store must not take the API down: fail open, loudly.
            return Effect.as(
              Effect.logWarning("rate-limit store unavailable; request allowed without counting", error.cause),
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
      }))
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
    prefix: "partner-registration:ratelimit:",
    // While Redis is down, fail each command at once (and fail open) instead of queueing it: ioredis's default
    // queue-and-retry held every partner request for seconds.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000
  }
}

/**
 * `@effect/experimental`'s Redis store, whose connection is closed in a scope of our own: its `quit()` rejects
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
      return yield* RedisRateLimiter.make({ ...options, retryStrategy }).pipe(Scope.extend(scope))
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
