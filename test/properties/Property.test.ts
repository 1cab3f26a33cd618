import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import { planMappings } from "../../src/properties/Properties.ts"
import { checkScope, checkUsable, type PropertyScope } from "../../src/properties/Property.ts"

const key = { accountId: "acc-1", environment: "test" as const }
const liveKey = { accountId: "acc-1", environment: "live" as const }
const own: PropertyScope = { account_id: "acc-1", environment: "test", checkin_enabled: true }
const ownLive: PropertyScope = { ...own, environment: "live" }
const foreign: PropertyScope = { ...own, account_id: "acc-2" }
const disabled: PropertyScope = { ...own, checkin_enabled: false }

const outcome = (result: Either.Either<void, { _tag: string }>) => Either.match(result, { onLeft: (e) => e._tag, onRight: () => "ok" })

describe("property access rules (design §6.1)", () => {
  test.each([
    ["own property", own, key, "ok", "ok"],
    ["unknown property", undefined, key, "PropertyOutOfScope", "PropertyNotFound"],
    ["another account's property", foreign, key, "PropertyOutOfScope", "PropertyOutOfScope"],
    ["test key on a live property", ownLive, key, "SandboxPropertyRequired", "SandboxPropertyRequired"],
    ["live key on a test property", own, liveKey, "LivePropertyRequired", "LivePropertyRequired"],
    ["check-in disabled", disabled, key, "ok", "PropertyNotFound"],
    ["another account's property with check-in disabled", { ...foreign, checkin_enabled: false }, key, "PropertyOutOfScope", "PropertyOutOfScope"]
  ] as const)("%s: mapping → %p, reservation → %p", (_name, property, who, forMapping, forReservation) => {
    expect(outcome(checkScope(property, who, "p"))).toBe(forMapping === "ok" ? "ok" : forMapping)
    expect(outcome(checkUsable(property, who, "p"))).toBe(forReservation)
  })
})

describe("planMappings (spec rule 4)", () => {
  const current = [
    { id: "p1", external_id: "A" },
    { id: "p2", external_id: "B" },
    { id: "p3", external_id: null }
  ]
  test.each([
    ["assigns a free id", [{ property_id: "p3", external_id: "C" }], { p1: "A", p2: "B", p3: "C" }],
    ["removes with null", [{ property_id: "p1", external_id: null }], { p1: null, p2: "B", p3: null }],
    ["swaps within one batch", [{ property_id: "p1", external_id: "B" }, { property_id: "p2", external_id: "A" }], { p1: "B", p2: "A", p3: null }],
    ["moves an id freed in the same batch", [{ property_id: "p1", external_id: null }, { property_id: "p3", external_id: "A" }], { p1: null, p2: "B", p3: "A" }]
  ])("%s", (_name, batch, expected) => {
    const result = planMappings(current, batch)
    expect(Either.isRight(result)).toBe(true)
    expect(Object.fromEntries(Either.getOrThrow(result))).toEqual(expected)
  })

  test.each([
    ["takes an id another property keeps", [{ property_id: "p3", external_id: "A" }], "A"],
    ["gives one id to two properties in one batch", [{ property_id: "p1", external_id: "Z" }, { property_id: "p3", external_id: "Z" }], "Z"]
  ])("refuses a batch that %s", (_name, batch, clash) => {
    const result = planMappings(current, batch)
    expect(Either.isLeft(result)).toBe(true)
    Either.mapLeft(result, (left) => expect(left.external_id).toBe(clash))
  })
})
