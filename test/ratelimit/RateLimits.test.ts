import { describe, expect, test } from "bun:test"
import { ConfigProvider, Effect, Layer, TestClock, TestContext } from "effect"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { RateLimits, layer } from "../../src/ratelimit/RateLimits.ts"

const limits = { reads: 3, writes: 2, tests: 1 }

const MemoryRateLimits = layer.pipe(
  Layer.provide(AppConfig.layer),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
)

const run = <A, E>(program: Effect.Effect<A, E, RateLimits>) =>
  Effect.runPromise(program.pipe(Effect.provide(MemoryRateLimits), Effect.provide(TestContext.TestContext)))

describe("RateLimits (memory store, TestClock)", () => {
  test("counts down, refuses with Retry-After, and the full budget is back at X-RateLimit-Reset", () =>
    run(Effect.gen(function*() {
      const rateLimits = yield* RateLimits
      const seen: Array<Record<string, string>> = []
      for (let i = 0; i < 3; i++) {
        const decision = yield* rateLimits.consume("key-1", "reads", limits)
        expect(decision.allowed).toBe(true)
        seen.push({ ...decision.headers })
      }
      expect(seen.map((h) => h["x-ratelimit-remaining"])).toEqual(["2", "1", "0"])
      expect(seen.every((h) => h["x-ratelimit-limit"] === "3")).toBe(true)
      const reset = Number(seen[2]!["x-ratelimit-reset"])
      expect(reset).toBe(60) // TestClock starts at 0: the budget is whole again one window later

      const refused = yield* rateLimits.consume("key-1", "reads", limits)
      expect(refused.allowed).toBe(false)
      if (!refused.allowed) {
        expect(refused.error.details).toEqual({ bucket: "reads", limit: 3, retry_after: 60 })
        expect(refused.headers["retry-after"]).toBe("60")
        expect(refused.headers["x-ratelimit-remaining"]).toBe("0")
      }

      // Refused requests do not count: hammering while limited does not push the reset further out.
      yield* TestClock.adjust("30 seconds")
      for (let i = 0; i < 5; i++) expect((yield* rateLimits.consume("key-1", "reads", limits)).allowed).toBe(false)
      const halfway = yield* rateLimits.consume("key-1", "reads", limits)
      if (!halfway.allowed) expect(halfway.headers["retry-after"]).toBe("30")

      yield* TestClock.adjust("30 seconds")
      for (let i = 0; i < 3; i++) expect((yield* rateLimits.consume("key-1", "reads", limits)).allowed).toBe(true)
      expect((yield* rateLimits.consume("key-1", "reads", limits)).allowed).toBe(false)
    })))

  test("buckets and keys are independent", () =>
    run(Effect.gen(function*() {
      const rateLimits = yield* RateLimits
      for (let i = 0; i < 3; i++) yield* rateLimits.consume("key-2", "reads", limits)
      expect((yield* rateLimits.consume("key-2", "reads", limits)).allowed).toBe(false)
      const write = yield* rateLimits.consume("key-2", "writes", limits)
      expect(write.allowed).toBe(true)
      expect(write.headers["x-ratelimit-limit"]).toBe("2")
      const test = yield* rateLimits.consume("key-2", "tests", limits)
      expect(test.headers["x-ratelimit-limit"]).toBe("1")
      expect((yield* rateLimits.consume("key-2", "tests", limits)).allowed).toBe(false)
      expect((yield* rateLimits.consume("key-3", "reads", limits)).allowed).toBe(true)
    })))
})
