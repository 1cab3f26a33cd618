import { describe, expect, test } from "bun:test"
import { simulatedMincitCode, simulatedOutcome } from "../../src/compliance/Simulated.ts"

describe("simulated authorities of test keys (design §6.12)", () => {
  test.each([
    ["tra", undefined, "success"],
    ["tra", null, "success"],
    ["tra", "tra_failed", "error"],
    ["tra", "sire_failed", "success"],
    ["sire", "sire_failed", "error"],
    ["sire", "tra_failed", "success"]
  ] as const)("%s with sandbox_simulate %p → %s", (report, simulate, expected) => {
    expect(simulatedOutcome(report, simulate)).toBe(expected)
  })

  test("a simulated mincit_code is a positive integer like the ministry's", () => {
    for (let i = 0; i < 100; i++) {
      const code = simulatedMincitCode()
      expect(Number.isInteger(code) && code >= 100_000).toBe(true)
    }
  })
})
