import * as RateLimiter from "@effect/experimental/RateLimiter"
import { Duration, Effect } from "effect"
import type { RedisOptions } from "ioredis"
import { Redis } from "ioredis"

/**
 * `@effect/experimental`'s `RateLimiterStore` over Redis, in place of its own `RateLimiter/Redis` store, whose
 * fixed window is wrong for any limit that does not divide the window: it adds `window / limit` milliseconds to
 * the key's `PX` per request, and Redis refuses a fractional `PX` ("ERR value is not an integer") — with a
 * limit of 7, 70 or 100,000 per minute every request failed, so the limiter failed open (issue 16).
 *
 * Here the window's end is kept exactly (a double, in the key's hash) and only the key's expiry is rounded up
 * to a whole millisecond: the refill is `window / limit` per request for every limit, a full budget of N
 * requests ends exactly one window after they were taken, and Redis is always given integers. The time is
 * Redis's own (`TIME`), so every instance counts against one clock.
 */

/** Same semantics as `RateLimiter.layerStoreMemory`'s fixed window: refused requests do not count. */
const FIXED_WINDOW = `
redis.replicate_commands()
-- N refills of window / N add up to the window give or take a few ulps (of a time near 1.8e12 ms: ~0.0002), so
-- below a microsecond (the resolution of TIME) does not make another millisecond.
local function whole(ms) return math.ceil(ms - 0.001) end
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refill = tonumber(ARGV[2]) / tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local state = redis.call("HMGET", key, "count", "ends")
local count = tonumber(state[1]) or 0
local ends = tonumber(state[2]) or now
if ends <= now then
  count = 0
  ends = now
end
local next = count + tokens
if limit and next > limit then
  return { next, whole(ends - now) }
end
ends = ends + refill * tokens
redis.call("HSET", key, "count", next, "ends", string.format("%.17g", ends))
redis.call("PEXPIREAT", key, math.ceil(ends))
return { next, whole(ends - now) }
`

/** The token bucket, which the partner API does not use; kept whole so the store is a complete one. */
const TOKEN_BUCKET = `
redis.replicate_commands()
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refill = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local overflow = ARGV[4] == "1"
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local state = redis.call("HMGET", key, "tokens", "refilled")
local current = tonumber(state[1]) or limit
local refilled = tonumber(state[2]) or now
local amount = math.floor((now - refilled) / refill)
if amount > 0 then
  current = math.min(current + amount, limit)
  refilled = refilled + amount * refill
end
local next = current - tokens
if next >= 0 or overflow then
  current = next
end
redis.call("HSET", key, "tokens", current, "refilled", string.format("%.17g", refilled))
-- A missing key is a full bucket: keep it only until it would be full again.
redis.call("PEXPIRE", key, math.ceil(refill * (limit - current)) + 1)
return next
`

/**
 * The connection with the two scripts `defineCommand` adds as methods at run time: ioredis types that call as
 * `void`, so the one cast in `make` says what it added (its README's other way, augmenting `RedisCommander`,
 * would give every connection these methods).
 */
interface RedisWithScripts extends Redis {
  fixedWindow(key: string, tokens: number, windowMillis: string, per: number, limit: string): Promise<[number, number]>
  tokenBucket(key: string, tokens: number, refillMillis: string, limit: number, overflow: "0" | "1"): Promise<number>
}

/** `%.17g`'s JavaScript twin: every digit of a duration in milliseconds. */
const exact = (duration: Duration.Duration) => Duration.toMillis(duration).toPrecision(17)

/**
 * The refill per request as `window / limit`. The limiter hands the store `window / limit` already divided, as a
 * `Duration`, which keeps whole nanoseconds: 60 s / 937,491 is 64,001 ns, and 937,491 of them make 60.0009 s.
 * Windows are whole milliseconds and limits at most 1,000,000, so `refill × limit` is within 0.5 ms of the
 * window and rounds back to it exactly; Lua divides again in doubles.
 */
const refillOf = (refillRate: Duration.Duration, limit: number | undefined) =>
  limit === undefined
    ? { window: exact(refillRate), per: 1 }
    : { window: String(Math.round(Duration.toMillis(refillRate) * limit)), per: limit }

/** The store; the connection is closed with the scope. */
export const make = (options: RedisOptions & { readonly prefix: string }) =>
  Effect.gen(function*() {
    const redis = yield* Effect.acquireRelease(
      Effect.sync(() => new Redis(options) as RedisWithScripts),
      (redis) => Effect.promise(() => redis.quit())
    )
    // Failures reach the caller through each command (RateLimits logs them, once a minute); without a listener
    // ioredis would also print every connection error to the console.
    redis.on("error", () => {})
    // Commands fail at once while disconnected (no offline queue): wait for the first connection, briefly, so
    // the first requests after a start are counted too. Redis being away does not stop the start.
    yield* Effect.async<void>((resume) => {
      if (redis.status === "ready") return resume(Effect.void)
      const ready = () => resume(Effect.void)
      redis.once("ready", ready)
      return Effect.sync(() => redis.off("ready", ready))
    }).pipe(Effect.timeoutOption(Duration.seconds(2)))
    redis.defineCommand("fixedWindow", { lua: FIXED_WINDOW, numberOfKeys: 1 })
    redis.defineCommand("tokenBucket", { lua: TOKEN_BUCKET, numberOfKeys: 1 })
    const storeError = (what: string) => (cause: unknown) =>
      new RateLimiter.RateLimitStoreError({ message: `Redis ${what} failed`, cause })
    return RateLimiter.RateLimiterStore.of({
      fixedWindow: (request) =>
        Effect.tryPromise({
          try: () => {
            const { per, window } = refillOf(request.refillRate, request.limit)
            return redis.fixedWindow(
              `${options.prefix}${request.key}`,
              request.tokens,
              window,
              per,
              request.limit === undefined ? "" : String(request.limit)
            )
          },
          catch: storeError("fixed window")
        }),
      tokenBucket: (request) =>
        Effect.tryPromise({
          try: () =>
            redis.tokenBucket(
              `${options.prefix}${request.key}`,
              request.tokens,
              exact(request.refillRate),
              request.limit,
              request.allowOverflow ? "1" : "0"
            ),
          catch: storeError("token bucket")
        })
    })
  })
