import { describe, expect, test } from "bun:test"
import { Duration, Option } from "effect"
import { exitsOwed, type GuestPart, type MovementFacts, pastGiveUp, retryAfter, verdictOf } from "../../../src/reservations/machine/Outcomes.ts"

const part = (guest: string, state: GuestPart["state"], code: number | null = null, reason: string | null = null): GuestPart => ({
  guest,
  state,
  code,
  reason
})
const none = { _tag: "None" } as const

describe("verdictOf (design §6.9)", () => {
  test("every guest accepted → success with the main guest's code", () => {
    expect(verdictOf([part("g0", "accepted", 11), part("g1", "accepted", 12)], none, "g0")).toEqual({ status: "success", code: 11 })
    expect(verdictOf([part("g0", "accepted")], none, null)).toEqual({ status: "success", code: null })
  })

  test("one rejected → error naming it, whatever else is pending or held", () => {
    const verdict = verdictOf(
      [part("g0", "accepted", 11), part("g1", "rejected", null, "bad number"), part("g2", "pending")],
      { _tag: "Transient", reason: "timeout" },
      "g0"
    )
    expect(verdict).toEqual({ status: "error", warning: "g1 was rejected: bad number" })
  })

  test("a configuration hold → pending with its warning, not transient (retried every run)", () => {
    expect(verdictOf([part("g0", "pending")], { _tag: "Configuration", warning: "fix the token" }, "g0")).toEqual({
      status: "pending",
      warning: "fix the token",
      transient: false
    })
  })

  test("someone still pending without a configuration problem → pending, transient, with a warning that says why", () => {
    expect(verdictOf([part("g0", "accepted", 1), part("g1", "pending")], { _tag: "Transient", reason: "503" }, "g0")).toEqual({
      status: "pending",
      warning: "waiting: 503; tried again at the next report run",
      transient: true
    })
    expect(verdictOf([], none, null)).toEqual({
      status: "pending",
      warning: "waiting: no answer yet; tried again at the next report run",
      transient: true
    })
  })
})

describe("retry timing (design §6.9)", () => {
  test("5 min, 15 min, 1 h, then every run", () => {
    expect([1, 2, 3, 4, 9].map((n) => Option.map(retryAfter(n), Duration.toMinutes).pipe(Option.getOrNull))).toEqual([5, 15, 60, null, null])
    expect(Option.isNone(retryAfter(0))).toBe(true)
  })

  test("72 h past the arrival date in Bogotá (00:00 UTC−5) → give up", () => {
    expect(pastGiveUp("2026-12-20", new Date("2026-12-23T05:00:00Z"))).toBe(false)
    expect(pastGiveUp("2026-12-20", new Date("2026-12-23T05:00:01Z"))).toBe(true)
  })
})

describe("exits follow entries (design §6.8)", () => {
  const move = (guest_id: string, movement: "E" | "S", state: MovementFacts["state"], possible_duplicate = false): MovementFacts => ({
    guest_id,
    movement,
    state,
    possible_duplicate
  })
  const cases: ReadonlyArray<
    readonly [string, ReadonlyArray<MovementFacts>, boolean, { readonly owed: ReadonlyArray<string>; readonly waiting: ReadonlyArray<string> }]
  > = [
    ["entry accepted, no exit yet: owed", [move("a", "E", "accepted")], false, { owed: ["a"], waiting: [] }],
    ["entry in a kept or uploading file: owed", [move("a", "E", "in_file")], false, { owed: ["a"], waiting: [] }],
    ["exit waiting for its run: still owed", [move("a", "E", "accepted"), move("a", "S", "pending")], false, { owed: ["a"], waiting: [] }],
    ["exit accepted: nothing more", [move("a", "E", "accepted"), move("a", "S", "accepted")], false, { owed: [], waiting: [] }],
    ["exit refused: an operator's, not owed again", [move("a", "E", "accepted"), move("a", "S", "rejected")], false, { owed: [], waiting: [] }],
    ["entry refused: no exit", [move("a", "E", "rejected")], false, { owed: [], waiting: [] }],
    ["entry never sent: no exit", [move("a", "E", "pending")], true, { owed: [], waiting: [] }],
    ["entry of unknown outcome, sent again: the exit waits", [move("a", "E", "pending", true)], false, { owed: [], waiting: ["a"] }],
    ["entry of unknown outcome, never sent again: owed", [move("a", "E", "pending", true)], true, { owed: ["a"], waiting: [] }],
    ["refused after an unknown outcome: may be held, owed once final", [move("a", "E", "rejected", true)], true, { owed: ["a"], waiting: [] }],
    [
      "one guest's entry late: only that guest is owed",
      [move("a", "E", "accepted"), move("a", "S", "accepted"), move("b", "E", "accepted")],
      false,
      { owed: ["b"], waiting: [] }
    ]
  ]
  for (const [name, movements, entryFinal, expected] of cases) {
    test(name, () => {
      expect(exitsOwed(movements, entryFinal)).toEqual(expected)
    })
  }
})
