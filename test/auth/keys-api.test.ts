import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { admin, call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"

const f = appFixture()

const list = (key: string | undefined, headers: Record<string, string> = {}) =>
  call(f.app, "GET", "/api/partners/properties", { ...(key === undefined ? {} : { key }), headers })

const expectUnauthorized = (res: Awaited<ReturnType<typeof list>>) => {
  expect(res.status).toBe(401)
  expect(res.body).toEqual({ error: expect.any(String), code: "unauthorized", details: {} })
}

describe("authentication", () => {
  test("401 unauthorized for a missing, malformed or unknown key", async () => {
    expectUnauthorized(await list(undefined))
    expectUnauthorized(await list(undefined, { authorization: "Basic dXNlcjpwYXNz" }))
    expectUnauthorized(await list("not-a-key"))
    expectUnauthorized(await list(f.account.testKey.slice(0, -1)))
    expectUnauthorized(await list(`svc_live_${"A".repeat(43)}`))
    // a test key with its prefix swapped is a different (unknown) key
    expectUnauthorized(await list(f.account.testKey.replace("svc_test_", "svc_live_")))
    expect((await list(f.account.testKey)).status).toBe(200)
  })

  test("the key decides the environment", async () => {
    const test = await list(f.account.testKey)
    const live = await list(f.account.liveKey)
    expect(test.body.properties).toHaveLength(2)
    expect(live.body.properties).toHaveLength(0)
  })

  test("a revoked key answers 401 at once; the account's other keys keep working", async () => {
    const extra = await admin(f.app, (c) => c.CreateKey({ account_id: f.account.accountId, environment: "test" }))
    expect((await list(extra.api_key)).status).toBe(200)
    const revoked = await admin(f.app, (c) => c.RevokeKey({ key_id: extra.key_id }))
    expect(revoked.key_id).toBe(extra.key_id)
    expect(Number.isNaN(Date.parse(revoked.revoked_at))).toBe(false)
    expectUnauthorized(await list(extra.api_key))
    expect((await list(f.account.testKey)).status).toBe(200)
  })
})

describe("key limits (spec Authentication rule 7)", () => {
  const create = (environment: "test" | "live") =>
    admin(f.app, (c) => c.CreateKey({ account_id: f.account.accountId, environment }).pipe(Effect.either))

  test("at most 3 active keys per type; a 4th is refused with key_limit_reached; revoking frees a slot", async () => {
    const { keys } = await admin(f.app, (c) => c.ListKeys({ account_id: f.account.accountId }))
    const activeTest = keys.filter((k) => k.environment === "test" && k.revoked_at === null).length
    for (let i = activeTest; i < 3; i++) expect((await create("test"))._tag).toBe("Right")
    const fourth = await create("test")
    expect(fourth._tag).toBe("Left")
    if (fourth._tag === "Left") {
      expect(fourth.left).toMatchObject({ _tag: "AdminError", code: "key_limit_reached" })
      expect(fourth.left.message).toContain("at most 3")
    }
    // the live type has its own 3
    expect((await create("live"))._tag).toBe("Right")
    expect((await create("live"))._tag).toBe("Right")
    expect((await create("live"))._tag).toBe("Left")
    const after = await admin(f.app, (c) => c.ListKeys({ account_id: f.account.accountId }))
    const victim = after.keys.find((k) => k.environment === "test" && k.revoked_at === null)!
    await admin(f.app, (c) => c.RevokeKey({ key_id: victim.key_id }))
    expect((await create("test"))._tag).toBe("Right")
  })

  test("concurrent creations cannot exceed the limit", async () => {
    const other = await admin(f.app, (c) => c.CreateAccount({ name: "Concurrent", email: "c@example.co" }))
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        admin(f.app, (c) => c.CreateKey({ account_id: other.account_id, environment: "live" }).pipe(Effect.either)))
    )
    expect(results.filter((r) => r._tag === "Right")).toHaveLength(3)
    const stored = await f.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL",
      [other.account_id]
    )
    expect(stored[0]!.n).toBe(3)
  })

  test("keys are stored only as a hash", async () => {
    const rows = await f.db.query<{ key_hash: string; prefix: string }>("SELECT key_hash, prefix FROM api_keys")
    const text = JSON.stringify(rows)
    expect(text).not.toContain(f.account.testKey)
    expect(text).not.toContain(f.account.liveKey.slice(15))
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.key_hash))).toBe(true)
  })
})
