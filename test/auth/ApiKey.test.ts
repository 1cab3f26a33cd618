import { describe, expect, test } from "bun:test"
import { Effect, Option } from "effect"
import * as ApiKey from "../../src/auth/ApiKey.ts"

describe("ApiKey", () => {
  test("a generated key carries its environment, 32 random bytes, and is stored only as its SHA-256", async () => {
    const live = await Effect.runPromise(ApiKey.generate("live"))
    expect(live.key).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(live.key.slice("svc_live_".length), "base64url")).toHaveLength(32)
    expect(live.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(live.hash).toBe(new Bun.CryptoHasher("sha256").update(live.key).digest("hex"))
    expect(live.displayPrefix).toBe(live.key.slice(0, 15))
    const test = await Effect.runPromise(ApiKey.generate("test"))
    expect(test.key.startsWith("svc_test_")).toBe(true)
    expect(test.key).not.toBe(live.key)
  })

  test("parse reads the environment of well-formed keys and rejects everything else", async () => {
    const { key } = await Effect.runPromise(ApiKey.generate("test"))
    expect(ApiKey.parse(key)).toEqual(Option.some("test"))
    for (const bad of ["", "svc_test_", "svc_prod_" + key.slice(9), key + "x", key.slice(0, -1), `Bearer ${key}`]) {
      expect(ApiKey.parse(bad)).toEqual(Option.none())
    }
  })
})
