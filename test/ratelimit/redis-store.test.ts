import * as RateLimiter from "@effect/experimental/RateLimiter"
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { ConfigProvider, Duration, Effect, Layer, Logger, ManagedRuntime, TestClock, TestContext } from "effect"
import fc from "fast-check"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { RateLimits, layer as rateLimitsLayer } from "../../src/ratelimit/RateLimits.ts"
import * as RedisStore from "../../src/ratelimit/RedisStore.ts"
import { startRedis, type TestRedis } from "../support/redis.ts"

let redis: TestRedis

beforeAll(async () => {
  redis = await startRedis()
})

afterAll(async () => {
  await redis?.stop()
})

const storeRuntime = () =>
  ManagedRuntime.make(
    RateLimiter.layer.pipe(
      Layer.provide(Layer.scoped(
        RateLimiter.RateLimiterStore,
        RedisStore.make({ host: "127.0.0.1", port: redis.port, prefix: `prop-${Date.now()}:` })
      ))
    )
  )

const rateLimitsRuntime = () =>
  ManagedRuntime.make(
    rateLimitsLayer.pipe(
      Layer.provide(AppConfig.layer),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["REDIS_URL", redis.url]]))))
    )
  )

/**
 * A limit, split into up to four takes (token counts) that add up to it: a burst of N requests. The first take
 * is at least half the budget: the window is `@effect/experimental`'s fixed window, each request buying
 * `window / limit` of it, so a lone first request of a 1,000,000-a-minute budget has expired 60 µs later —
 * what the refill means, not a miss.
 */
const anyLimit = fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 1_000_000 }))
const limitAndTakes = anyLimit.chain((limit) =>
  fc.array(fc.integer({ min: Math.ceil(limit / 2), max: limit }), { minLength: 0, maxLength: 3 }).map((cuts) => {
    const points = [...new Set(cuts.filter((cut) => cut < limit))].sort((a, b) => a - b)
    const takes = [...points, limit].map((point, i) => point - (i === 0 ? 0 : points[i - 1]!))
    return { limit, takes }
  })
)

let keys = 0

describe("the Redis rate-limit store (a real redis-server)", () => {
  test("any limit 1–1,000,000 per minute: exactly N requests pass, the next is refused, none fails", async () => {
    const runtime = storeRuntime()
    try {
      await fc.assert(
        fc.asyncProperty(limitAndTakes, async ({ limit, takes }) => {
          const key = `k${keys++}`
          const limiter = await runtime.runPromise(RateLimiter.RateLimiter)
          let taken = 0
          for (const tokens of takes) {
            const result = await runtime.runPromise(limiter.consume({ key, limit, window: "1 minute", tokens }))
            taken += tokens
            expect(result.remaining).toBe(limit - taken)
            // The budget is back at most one window after it was taken (a whole millisecond, rounded up).
            const resetAfter = Duration.toMillis(result.resetAfter)
            expect(Number.isInteger(resetAfter)).toBe(true)
            expect(resetAfter).toBeGreaterThan(0)
            expect(resetAfter).toBeLessThanOrEqual(60_000)
          }
          const refused = await runtime.runPromise(Effect.flip(limiter.consume({ key, limit, window: "1 minute" })))
          expect(refused.reason).toBe("Exceeded")
          if (refused.reason === "Exceeded") {
            const retryAfter = Duration.toMillis(refused.retryAfter)
            expect(retryAfter).toBeGreaterThan(55_000) // every take was a moment ago
            expect(retryAfter).toBeLessThanOrEqual(60_000)
          }
        }),
        { numRuns: 60 }
      )
    } finally {
      await runtime.dispose()
    }
  })

  test("the refill: a full budget is whole again one window later, not sooner (short windows)", async () => {
    const runtime = storeRuntime()
    try {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 1_000_000 }), async (limit) => {
          const key = `r${keys++}`
          const limiter = await runtime.runPromise(RateLimiter.RateLimiter)
          const window = Duration.millis(400)
          await runtime.runPromise(limiter.consume({ key, limit, window, tokens: limit }))
          const early = await runtime.runPromise(Effect.either(limiter.consume({ key, limit, window })))
          expect(early._tag).toBe("Left")
          await Bun.sleep(420)
          const again = await runtime.runPromise(limiter.consume({ key, limit, window, tokens: limit }))
          expect(again.remaining).toBe(0)
        }),
        { numRuns: 6 }
      )
    } finally {
      await runtime.dispose()
    }
  })

  test("through RateLimits (what PartnerAuth calls): limits 7 and 70 count every request, no warning", async () => {
    const runtime = rateLimitsRuntime()
    const logged: Array<string> = []
    const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(String(message))))
    try {
      for (const writes of [7, 70]) {
        const key = `api-${keys++}`
        const decisions = await runtime.runPromise(
          Effect.gen(function*() {
            const rateLimits = yield* RateLimits
            return yield* Effect.forEach(
              Array.from({ length: writes + 1 }),
              () => rateLimits.consume(key, "writes", { reads: 120, writes, tests: 10 })
            )
          }).pipe(Effect.provide(logger))
        )
        expect(decisions.filter((d) => d.allowed).length).toBe(writes)
        expect(decisions[writes]!.allowed).toBe(false)
        expect(decisions[writes - 1]!.headers["x-ratelimit-remaining"]).toBe("0")
      }
      expect(logged).toEqual([])
    } finally {
      await runtime.dispose()
    }
  })

  test("Redis away: fail open with one short warning per minute, one line when it is back", async () => {
    const runtime = rateLimitsRuntime()
    const logged: Array<{ level: string; message: string; annotations: Record<string, unknown>; bytes: number }> = []
    const logger = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ annotations, logLevel, message }) => {
        const fields = Object.fromEntries(annotations)
        logged.push({
          level: logLevel.label,
          message: String(message),
          annotations: fields,
          bytes: JSON.stringify({ message: String(message), ...fields }).length
        })
      })
    )
    const limits = { reads: 5, writes: 5, tests: 5 }
    const key = `away-${keys++}`
    try {
      await runtime.runPromise(
        Effect.gen(function*() {
          const rateLimits = yield* RateLimits
          for (let i = 0; i < 5; i++) expect((yield* rateLimits.consume(key, "reads", limits)).allowed).toBe(true)
          expect((yield* rateLimits.consume(key, "reads", limits)).allowed).toBe(false)

          yield* Effect.promise(() => redis.kill())
          // 100 requests over 59 s of the TestClock: all allowed, one warning.
          for (let i = 0; i < 100; i++) {
            expect((yield* rateLimits.consume(key, "reads", limits)).allowed).toBe(true)
            if (i % 10 === 9) yield* TestClock.adjust("5900 millis")
          }
          expect(logged.filter((l) => l.level === "WARN").length).toBe(1)
          yield* TestClock.adjust("2 seconds")
          expect((yield* rateLimits.consume(key, "reads", limits)).allowed).toBe(true)
          const warnings = logged.filter((l) => l.level === "WARN")
          expect(warnings.length).toBe(2)
          expect(warnings[1]!.annotations.uncounted_requests).toBe(101)
          expect(warnings.every((w) => w.bytes < 400)).toBe(true)

          yield* Effect.promise(() => redis.start())
          // ioredis reconnects on its own (at most 2 s between tries); then requests are counted again.
          let back = false
          for (let i = 0; i < 100 && !back; i++) {
            yield* Effect.promise(() => Bun.sleep(100))
            yield* rateLimits.consume(`probe-${i}`, "reads", limits)
            back = logged.some((l) => l.message.includes("answers again"))
          }
          expect(back).toBe(true)
          const fresh = `fresh-${keys++}`
          for (let i = 0; i < 5; i++) expect((yield* rateLimits.consume(fresh, "reads", limits)).allowed).toBe(true)
          expect((yield* rateLimits.consume(fresh, "reads", limits)).allowed).toBe(false)
          expect(logged.filter((l) => l.level === "WARN").length).toBe(2)
        }).pipe(Effect.provide(TestContext.TestContext), Effect.provide(logger))
      )
    } finally {
      await runtime.dispose()
    }
  })
})
