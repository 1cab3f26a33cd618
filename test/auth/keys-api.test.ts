import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"

let db: TestDatabase
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>

beforeAll(async () => {
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url })
  account = await seedAccount(app)
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
})

const list = (key: string | undefined, headers: Record<string, string> = {}) =>
  call(app, "GET", "/api/partners/properties", { ...(key === undefined ? {} : { key }), headers })

const expectUnauthorized = (res: Awaited<ReturnType<typeof list>>) => {
  expect(res.status).toBe(401)
  expect(res.body).toEqual({ error: expect.any(String), code: "unauthorized", details: {} })
}

describe("authentication", () => {
  test("401 unauthorized for a missing, malformed or unknown key", async () => {
    expectUnauthorized(await list(undefined))
    expectUnauthorized(await list(undefined, { authorization: "Basic dXNlcjpwYXNz" }))
    expectUnauthorized(await list("not-a-key"))
    expectUnauthorized(await list(account.testKey.slice(0, -1)))
    expectUnauthorized(await list(`svc_live_${"A".repeat(43)}`))
    // a test key with its prefix swapped is a different (unknown) key
    expectUnauthorized(await list(account.testKey.replace("svc_test_", "svc_live_")))
    expect((await list(account.testKey)).status).toBe(200)
  })

  test("the key decides the environment", async () => {
    const test = await list(account.testKey)
    const live = await list(account.liveKey)
    expect(test.body.properties).toHaveLength(2)
    expect(live.body.properties).toHaveLength(0)
  })

  test("a revoked key answers 401 at once; the account's other keys keep working", async () => {
    const extra = await admin(app, (c) => c.CreateKey({ account_id: account.accountId, environment: "test" }))
    expect((await list(extra.api_key)).status).toBe(200)
    const revoked = await admin(app, (c) => c.RevokeKey({ key_id: extra.key_id }))
    expect(revoked.key_id).toBe(extra.key_id)
    expect(Number.isNaN(Date.parse(revoked.revoked_at))).toBe(false)
    expectUnauthorized(await list(extra.api_key))
    expect((await list(account.testKey)).status).toBe(200)
  })
})

describe("key limits (spec Authentication rule 7)", () => {
  const create = (environment: "test" | "live") =>
    admin(app, (c) => c.CreateKey({ account_id: account.accountId, environment }).pipe(Effect.either))

  test("at most 3 active keys per type; a 4th is refused with key_limit_reached; revoking frees a slot", async () => {
    const { keys } = await admin(app, (c) => c.ListKeys({ account_id: account.accountId }))
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
    const after = await admin(app, (c) => c.ListKeys({ account_id: account.accountId }))
    const victim = after.keys.find((k) => k.environment === "test" && k.revoked_at === null)!
    await admin(app, (c) => c.RevokeKey({ key_id: victim.key_id }))
    expect((await create("test"))._tag).toBe("Right")
  })

  test("concurrent creations cannot exceed the limit", async () => {
    const other = await admin(app, (c) => c.CreateAccount({ name: "Concurrent", email: "c@example.co" }))
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        admin(app, (c) => c.CreateKey({ account_id: other.account_id, environment: "live" }).pipe(Effect.either)))
    )
    expect(results.filter((r) => r._tag === "Right")).toHaveLength(3)
    const stored = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL",
      [other.account_id]
    )
    expect(stored[0]!.n).toBe(3)
  })

  test("keys are stored only as a hash", async () => {
    const rows = await db.query<{ key_hash: string; prefix: string }>("SELECT key_hash, prefix FROM api_keys")
    const text = JSON.stringify(rows)
    expect(text).not.toContain(account.testKey)
    expect(text).not.toContain(account.liveKey.slice(15))
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.key_hash))).toBe(true)
  })
})
