import { describe, expect, test } from "bun:test"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted, TestClock, TestContext } from "effect"
import { KEY_USAGE_EVERY, KeyUsage } from "../../src/auth/KeyUsage.ts"
import { admin, call, seedAccount } from "../support/app.ts"
import { appOnFreshDatabase } from "../support/fixture.ts"

/**
 * When a key was last used (the panel's key list): verified requests are noted in memory and written every
 * minute and when the service stops — on the real app and real PostgreSQL; the minute on a `TestClock`.
 */
const f = appOnFreshDatabase()

const lastUsed = async (keyId: string) =>
  (await f.db.query<{ last_used_at: Date | null }>("SELECT last_used_at FROM api_keys WHERE id = $1", [keyId]))[0]!.last_used_at

/** Polls the database (real time) while the write runs on its own fiber. */
const eventually = async (keyId: string) => {
  for (let i = 0; i < 50 && (await lastUsed(keyId)) === null; i++) await Bun.sleep(20)
  return lastUsed(keyId)
}

describe("the last use of an API key", () => {
  test("written every minute: nothing before the minute, the keys noted after it, each once", async () => {
    const account = await seedAccount(f.app, "Hotel Minuto")
    const listed = await admin(f.app, (c) => c.ListKeys({ account_id: account.accountId }))
    const [first, second] = listed.keys.map((key) => key.key_id)
    const database = PgClient.layer({ url: Redacted.make(f.db.url), maxConnections: 2 }).pipe(Layer.orDie)
    await Effect.runPromise(Effect.gen(function*() {
      const usage = yield* KeyUsage
      usage.note(first!)
      yield* TestClock.adjust(Duration.subtract(KEY_USAGE_EVERY, Duration.seconds(1)))
      yield* Effect.promise(() => Bun.sleep(100))
      expect(yield* Effect.promise(() => lastUsed(first!))).toBeNull()
      yield* TestClock.adjust(Duration.seconds(1))
      const written = yield* Effect.promise(() => eventually(first!))
      expect(written).toBeInstanceOf(Date)
      expect(yield* Effect.promise(() => lastUsed(second!))).toBeNull()
      // Noted again later: written again at the next minute, not before.
      usage.note(first!)
      usage.note(second!)
      yield* TestClock.adjust(KEY_USAGE_EVERY)
      expect(yield* Effect.promise(() => eventually(second!))).toBeInstanceOf(Date)
      expect((yield* Effect.promise(() => lastUsed(first!)))!.getTime()).toBeGreaterThanOrEqual(written!.getTime())
    }).pipe(Effect.provide(KeyUsage.Default), Effect.provide(database), Effect.provide(TestContext.TestContext), Effect.scoped))
  })

  test("a partner request notes its key; the app writes it at the latest when it stops; unknown keys note nothing", async () => {
    const account = await seedAccount(f.app, "Hotel Parada")
    const keys = await admin(f.app, (c) => c.ListKeys({ account_id: account.accountId }))
    const testKey = keys.keys.find((key) => key.environment === "test")!
    const liveKey = keys.keys.find((key) => key.environment === "live")!
    expect([testKey.last_used_at, liveKey.last_used_at]).toEqual([null, null])
    const before = Date.now()
    expect((await call(f.app, "GET", "/api/partners/properties", { key: account.testKey })).status).toBe(200)
    expect((await call(f.app, "GET", "/api/partners/properties", { key: `${account.testKey.slice(0, -1)}x` })).status).toBe(401)
    await f.app.stop()
    const used = await lastUsed(testKey.key_id)
    expect(used).toBeInstanceOf(Date)
    expect(used!.getTime()).toBeGreaterThanOrEqual(before - 5_000)
    expect(await lastUsed(liveKey.key_id)).toBeNull()
  })
})
