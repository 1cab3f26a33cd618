import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"

/** Redis on the dev and CI machines (design §4: REDIS_URL makes every instance share the counters). */
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"

let db: TestDatabase
let memory: RunningApp
let redisA: RunningApp
let redisB: RunningApp

beforeAll(async () => {
  db = await freshDatabase()
  memory = await startApp({ DATABASE_URL: db.url })
  redisA = await startApp({ DATABASE_URL: db.url, REDIS_URL, ROLE: "api" })
  redisB = await startApp({ DATABASE_URL: db.url, REDIS_URL, ROLE: "api" })
})

afterAll(async () => {
  await Promise.all([memory?.stop(), redisA?.stop(), redisB?.stop()])
  await db?.drop()
})

const list = (app: RunningApp, key: string) => call(app, "GET", "/api/partners/properties", { key })
const headersOf = (res: Awaited<ReturnType<typeof list>>) => ({
  limit: res.headers.get("x-ratelimit-limit"),
  remaining: res.headers.get("x-ratelimit-remaining"),
  reset: Number(res.headers.get("x-ratelimit-reset"))
})

describe("rate limits with the memory store", () => {
  test("headers on every response, 429 rate_limited with Retry-After past the limit, per key and bucket", async () => {
    const account = await seedAccount(memory, "Limited")
    const limits = await admin(memory, (c) => c.SetLimits({ account_id: account.accountId, reads: 3, writes: 2 }))
    expect(limits).toEqual({ account_id: account.accountId, limits: { reads: 3, writes: 2, tests: 10 } })

    const now = Date.now() / 1000
    const responses = [await list(memory, account.testKey), await list(memory, account.testKey), await list(memory, account.testKey)]
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200])
    expect(responses.map((r) => headersOf(r).remaining)).toEqual(["2", "1", "0"])
    expect(responses.every((r) => headersOf(r).limit === "3")).toBe(true)
    const reset = headersOf(responses[2]!).reset
    expect(reset).toBeGreaterThan(now)
    expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 61)

    const refused = await list(memory, account.testKey)
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({
      error: expect.any(String),
      code: "rate_limited",
      details: { bucket: "reads", limit: 3, retry_after: expect.any(Number) }
    })
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(headersOf(refused).remaining).toBe("0")

    // writes are a separate budget with their own limit
    const write = await call(memory, "PATCH", "/api/partners/properties", {
      key: account.testKey,
      json: { mappings: [{ property_id: account.testProperties[0]!.property_id, external_id: null }] }
    })
    expect(write.status).toBe(200)
    expect(headersOf(write)).toMatchObject({ limit: "2", remaining: "1" })
    // an error response of a counted request carries the headers too
    const badWrite = await call(memory, "PATCH", "/api/partners/properties", { key: account.testKey, json: { mappings: [] } })
    expect(badWrite.status).toBe(400)
    expect(headersOf(badWrite)).toMatchObject({ limit: "2", remaining: "0" })
    expect((await call(memory, "PATCH", "/api/partners/properties", { key: account.testKey, json: { mappings: [] } })).status).toBe(429)

    // limits are per key: the account's live key has its own budget
    expect((await list(memory, account.liveKey)).status).toBe(200)

    const reset2 = await admin(memory, (c) => c.SetLimits({ account_id: account.accountId, reset: true }))
    expect(reset2.limits).toEqual({ reads: 120, writes: 60, tests: 10 })
  })
})

describe("rate limits with the Redis store", () => {
  test("two instances share one key's counters", async () => {
    const account = await seedAccount(redisA, "Shared")
    await admin(redisA, (c) => c.SetLimits({ account_id: account.accountId, reads: 4 }))
    const sequence = [
      await list(redisA, account.testKey),
      await list(redisB, account.testKey),
      await list(redisA, account.testKey),
      await list(redisB, account.testKey)
    ]
    expect(sequence.map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect(sequence.map((r) => headersOf(r).remaining)).toEqual(["3", "2", "1", "0"])
    const refusedA = await list(redisA, account.testKey)
    const refusedB = await list(redisB, account.testKey)
    expect([refusedA.status, refusedB.status]).toEqual([429, 429])
    expect(refusedB.body.code).toBe("rate_limited")
    expect(Number(refusedB.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    // another key of the same account is not affected
    expect((await list(redisB, account.liveKey)).status).toBe(200)
  })
})

describe("when Redis is down", () => {
  test("requests are served at once without counting (fail open), not held until Redis answers", async () => {
    const db2 = await freshDatabase()
    const app = await startApp({ DATABASE_URL: db2.url, REDIS_URL: "redis://127.0.0.1:1" })
    try {
      const account = await seedAccount(app, "No Redis")
      for (let i = 0; i < 3; i++) {
        const started = performance.now()
        const res = await list(app, account.testKey)
        expect(res.status).toBe(200)
        expect(performance.now() - started).toBeLessThan(1_000)
        expect(headersOf(res)).toMatchObject({ limit: "120", remaining: "120" })
      }
    } finally {
      await app.stop()
      await db2.drop()
    }
  })
})
