import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import { keyIdOf } from "../../src/secrets/SecretBox.ts"
import { admin, call, type RunningApp, seedAccount, startApp, tempDir } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, registrationBody } from "../support/guests.ts"
import { refusedStart, runCli, spawnService } from "../support/process.ts"
import { type Receiver, startReceiver, verifyReceived } from "../support/receiver.ts"
import { openStored } from "../support/secrets.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * A key rotation end to end (design §9): secrets stored under key A; restart with SECRETS_KEY=B and
 * SECRETS_KEY_PREVIOUS=A; `cli secrets rotate` (the real binary) re-encrypts; restart with B alone and
 * everything still works — the webhook is signed with the secret the partner was given, the TRA post carries
 * the property's token. Plaintext left by an older version is sealed at start-up.
 */

const KEY_A = randomBytes(32).toString("base64")
const KEY_B = randomBytes(32).toString("base64")
const ID_A = keyIdOf(Buffer.from(KEY_A, "base64"))
const ID_B = keyIdOf(Buffer.from(KEY_B, "base64"))
const ADMIN_TOKEN = "rotation-admin-token"

let db: TestDatabase
let tra: FakeTra
let receiver: Receiver
let dataDir: string
let app: RunningApp | undefined

const start = async (keys: Record<string, string>) => {
  await app?.stop()
  app = await startApp({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    // No loop of its own: the tests run reports and pings themselves.
    ROLE: "api",
    TRA_BASE_URL: tra.url,
    SIRE_MODE: "manual",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    ...keys
  })
  return app
}

beforeAll(async () => {
  db = await freshDatabase()
  tra = startFakeTra()
  receiver = startReceiver()
  dataDir = await tempDir("rotation")
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  tra?.stop()
  receiver?.stop()
  await NodeFs.rm(dataDir, { recursive: true, force: true })
})

const stored = async () => ({
  tokens: (await db.query<{ name: string; tra_token: string | null }>(
    "SELECT name, tra_token FROM properties WHERE tra_token IS NOT NULL ORDER BY name"
  )),
  secrets: (await db.query<{ secret: string }>("SELECT secret FROM webhook_endpoints")).map((row) => row.secret)
})

/** A ping (endpoint 14) through the running app, and whether the receiver verifies it with `secret`. */
const pingVerifies = async (liveKey: string, endpointId: string, secret: string) => {
  receiver.clear()
  const res = await call(app!, "POST", `/api/partners/webhooks/${endpointId}/test`, { key: liveKey })
  expect(res.status).toBe(200)
  const [request] = await receiver.waitFor((r) => r.path === "/hooks/rotation")
  return verifyReceived(request!, secret)
}

describe("secrets rotate (design §9)", () => {
  test("key A → B with A as previous → rotate → B alone: webhook signatures and the TRA token survive", async () => {
    // 1. Under key A
    await start({ SECRETS_KEY: KEY_A })
    const account = await seedAccount(app!)
    const property = await admin(app!, (c) =>
      c.CreateProperty({
        account_id: account.accountId,
        name: "Hotel Rotación",
        rnt_id: "55555",
        establishment_name: "Hotel Rotación SAS",
        tra_token: Redacted.make(DEFAULT_TOKEN),
        sire_hotel_code: "4321",
        sire_city_code: "11001"
      }))
    const legacy = await admin(app!, (c) =>
      c.CreateProperty({ account_id: account.accountId, name: "Hotel Viejo", tra_token: Redacted.make("legacy-token") }))
    const created = await call(app!, "POST", "/api/partners/webhooks", {
      key: account.liveKey,
      json: { url: `${receiver.url}/hooks/rotation`, events: ["*"] }
    })
    expect(created.status).toBe(201)
    const { id: endpointId, secret } = created.body as { id: string; secret: string }
    expect(secret).toMatch(/^whsec_/)
    let now = await stored()
    expect(now.tokens.map((t) => t.tra_token!.slice(0, 12))).toEqual([`v1:${ID_A}:`, `v1:${ID_A}:`])
    expect(now.secrets.map((s) => s.slice(0, 12))).toEqual([`v1:${ID_A}:`])
    expect(await openStored(now.secrets[0], KEY_A)).toBe(secret)
    expect(await pingVerifies(account.liveKey, endpointId, secret)).toBe(true)

    // A row as a version before 0017 left it: plaintext (sealed at the next start).
    await db.query("UPDATE properties SET tra_token = 'legacy-token' WHERE id = $1", [legacy.property_id])

    // 2. B with A as the previous key: A's secrets still open; the plaintext one is sealed under B at start-up.
    await start({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A })
    now = await stored()
    expect(now.tokens).toEqual([
      { name: "Hotel Rotación", tra_token: expect.stringMatching(new RegExp(`^v1:${ID_A}:`)) },
      { name: "Hotel Viejo", tra_token: expect.stringMatching(new RegExp(`^v1:${ID_B}:`)) }
    ])
    expect(await openStored(now.tokens[1]!.tra_token, KEY_B)).toBe("legacy-token")
    expect(await pingVerifies(account.liveKey, endpointId, secret)).toBe(true)

    const cli = (...args: Array<string>) => runCli(["--url", app!.baseUrl, "--token", ADMIN_TOKEN, ...args])
    const rotated = await cli("secrets", "rotate")
    expect({ code: rotated.code, json: rotated.json, stderr: rotated.stderr }).toEqual({
      code: 0,
      json: { reencrypted: 2 },
      stderr: ""
    })
    // Nothing left under A: a second run has nothing to do.
    expect((await cli("secrets", "rotate")).json).toEqual({ reencrypted: 0 })
    now = await stored()
    expect([...now.tokens.map((t) => t.tra_token!), ...now.secrets].map((v) => v.slice(0, 12))).toEqual([
      `v1:${ID_B}:`,
      `v1:${ID_B}:`,
      `v1:${ID_B}:`
    ])
    expect(await openStored(now.secrets[0], KEY_B)).toBe(secret)
    expect(await openStored(now.tokens[0]!.tra_token, KEY_B)).toBe(DEFAULT_TOKEN)

    // 3. B alone
    await start({ SECRETS_KEY: KEY_B })
    expect(await pingVerifies(account.liveKey, endpointId, secret)).toBe(true)
    tra.clear()
    const body = registrationBody(property.property_id, [colombian({ numero_documento: "71234567" })], {
      check_in: bogotaToday(),
      check_out: "2099-01-03",
      room_number: "101",
      total_amount: 300000,
      currency: "COP"
    })
    const submitted = await call(app!, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })
    expect(submitted.status).toBe(201)
    const summary = await admin(app!, (c) => c.RunReports({}))
    expect(summary.tra).toEqual({ sent: 1, accepted: 1, rejected: 0 })
    const [main] = tra.mains()
    // The fake TRA knows only DEFAULT_TOKEN: "valid" means the post carried it.
    expect(main!.auth).toBe("valid")
    expect(main!.headers.authorization).toBe("token ***")
  }, 120_000)

  test("a secret under a key no setting holds: rotate fails with secret_unreadable naming it, after doing the rest", async () => {
    const orphan = `v1:0badc0de:${randomBytes(40).toString("base64url")}`
    const [row] = await db.query<{ id: string }>(
      "UPDATE properties SET tra_token = $1 WHERE name = 'Hotel Viejo' RETURNING id::text AS id",
      [orphan]
    )
    await db.query("UPDATE properties SET tra_token = 'plain-again' WHERE name = 'Hotel Rotación'")
    const result = await runCli(["--url", app!.baseUrl, "--token", ADMIN_TOKEN, "secrets", "rotate"])
    expect(result.code).toBe(1)
    expect(result.error.code).toBe("secret_unreadable")
    expect(result.error.error).toContain("re-encrypted 1;")
    expect(result.error.error).toContain(`properties.tra_token of ${row!.id} (key 0badc0de)`)
    const [again] = await db.query<{ tra_token: string }>("SELECT tra_token FROM properties WHERE name = 'Hotel Rotación'")
    expect(await openStored(again!.tra_token, KEY_B)).toBe("plain-again")
    const [kept] = await db.query<{ tra_token: string }>("SELECT tra_token FROM properties WHERE id = $1", [row!.id])
    expect(kept!.tra_token).toBe(orphan)
  }, 60_000)
})

describe("a TRA token no key opens", () => {
  test("holds that property's TRA report as a missing token would; the run goes on", async () => {
    const [property] = await db.query<{ id: string; account_id: string }>(
      "UPDATE properties SET tra_token = $1 WHERE name = 'Hotel Rotación' RETURNING id::text AS id, account_id::text AS account_id",
      [`v1:0badc0de:${randomBytes(40).toString("base64url")}`]
    )
    const live = await admin(app!, (c) => c.CreateKey({ account_id: property!.account_id, environment: "live" }))
    tra.clear()
    const body = registrationBody(property!.id, [colombian({ numero_documento: "71234568" })], {
      check_in: bogotaToday(),
      check_out: "2099-01-03",
      room_number: "102",
      total_amount: 300000,
      currency: "COP"
    })
    expect((await call(app!, "POST", "/api/partners/registrations", { key: live.api_key, json: body })).status).toBe(201)
    const summary = await admin(app!, (c) => c.RunReports({}))
    expect(summary.tra).toEqual({ sent: 0, accepted: 0, rejected: 0 })
    expect(tra.mains()).toEqual([])
    const detail = await call(app!, "GET", `/api/partners/registrations?external_id=${body.external_id}`, { key: live.api_key })
    expect(detail.body.tra).toMatchObject({ status: "pending", warning: expect.stringContaining("no TRA token") })
  }, 60_000)
})

describe("start-up without a key (design §9)", () => {
  test("DATABASE_URL without SECRETS_KEY: exits non-zero at once, saying what to set", async () => {
    const output = await refusedStart(
      spawnService({ DATABASE_URL: db.url, DATA_DIR: dataDir, ADMIN_TOKEN, SECRETS_KEY: "" }),
      "exit without SECRETS_KEY"
    )
    expect(output).toContain("start-up failed: SECRETS_KEY is required when DATABASE_URL is set")
    expect(output).toContain("openssl rand -base64 32")
    expect(output).not.toContain("listening on")
  }, 20_000)
})
