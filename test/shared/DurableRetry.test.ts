import { describe, expect, test } from "bun:test"
import { Duration, Effect, Option, Schedule } from "effect"
import { delayBeforeRetry } from "../../src/shared/DurableRetry.ts"

const delays = (schedule: Schedule.Schedule<unknown, undefined>, retries: number) =>
  Array.from({ length: retries }, (_, i) =>
    Effect.runSync(delayBeforeRetry(schedule, i + 1, undefined)).pipe(
      Option.map(Duration.toMinutes),
      Option.getOrNull
    ))

describe("delayBeforeRetry", () => {
  test("reads the n-th gap of an exponential schedule and None once it is exhausted", () => {
    const schedule = Schedule.exponential("1 minute", 3).pipe(Schedule.intersect(Schedule.recurs(5)))
    expect(delays(schedule, 7)).toEqual([1, 3, 9, 27, 81, null, null])
  })

  test("reads a fixed table of gaps (Schedule.fromDelays)", () => {
    const schedule = Schedule.fromDelays("1 minute", "5 minutes", "30 minutes")
    expect(delays(schedule, 4)).toEqual([1, 5, 30, null])
  })

  test("a jittered schedule stays within 80-120 % of each gap", () => {
    const schedule = Schedule.exponential("1 minute", 3).pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(5)))
    for (let run = 0; run < 20; run++) {
      const gaps = delays(schedule, 6)
      ;[1, 3, 9, 27, 81].forEach((base, i) => {
        expect(gaps[i]!).toBeGreaterThanOrEqual(base * 0.8)
        expect(gaps[i]!).toBeLessThanOrEqual(base * 1.2)
      })
      expect(gaps[5]).toBeNull()
    }
  })

  test("retry 0 or below has no delay to read", () => {
    expect(Option.isNone(Effect.runSync(delayBeforeRetry(Schedule.spaced("1 minute"), 0, undefined)))).toBe(true)
  })
})
