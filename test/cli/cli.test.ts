import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { call, type RunningApp, startApp, tempDir } from "../support/app.ts"
import { APPLIED_MIGRATIONS, freshDatabase, type TestDatabase } from "../support/database.ts"
import { runCli, spawnService } from "../support/process.ts"
import { openStored } from "../support/secrets.ts"

/** The ops CLI (design §4) as a real process against the real service on a fresh database. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"

let db: TestDatabase
let app: RunningApp
let cli: (...args: Array<string>) => ReturnType<typeof runCli>

beforeAll(async () => {
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url })
  cli = (...args) => runCli(["--url", app.baseUrl, "--token", app.adminToken, ...args])
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
})

/** A successful command: exit 0, nothing on stderr, one JSON document on stdout. */
const ok = async (...args: Array<string>) => {
  const result = await cli(...args)
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
  expect(result.json).toBeDefined()
  return result.json
}

/** A failed command: exit ≠ 0, nothing on stdout, `{error, code}` on stderr. */
const failure = (result: Awaited<ReturnType<typeof runCli>>, code: string) => {
  expect(result.code).not.toBe(0)
  expect(result.stdout).toBe("")
  expect(result.error).toEqual({ error: expect.any(String), code })
  expect(result.error.error.length).toBeGreaterThan(0)
}

let accountId: string
let sandboxKey: string
const liveKeys: Array<{ key_id: string; api_key: string }> = []
let revoked: { key_id: string; revoked_at: string }

describe("accounts and sandbox", () => {
  test("accounts create → {account_id, name, email}", async () => {
    const out = await ok("accounts", "create", "--name", "Hotelera Caribe", "--email", "ops@caribe.co")
    expect(out).toEqual({ account_id: expect.stringMatching(UUID), name: "Hotelera Caribe", email: "ops@caribe.co" })
    accountId = out.account_id
    const rows = await db.query("SELECT name, email FROM accounts WHERE id = $1", [accountId])
    expect(rows).toEqual([{ name: "Hotelera Caribe", email: "ops@caribe.co" }])
  })

  test("sandbox create → a test key and the two sandbox properties", async () => {
    const out = await ok("sandbox", "create", "--account", accountId)
    expect(Object.keys(out).sort()).toEqual(["api_key", "key_id", "properties"])
    expect(out.api_key).toMatch(/^svc_test_[A-Za-z0-9_-]{43}$/)
    expect(out.key_id).toMatch(UUID)
    const property = (fields: object) => ({
      property_id: expect.stringMatching(UUID),
      external_id: null,
      checkin_enabled: true,
      compliance: { tra: true, sire: true },
      ...fields
    })
    expect(out.properties).toEqual([
      property({
        rnt_id: "SBX-00001",
        name: "Hotel Sandbox Centro",
        internal_name: "sandbox-1",
        requires_contract_signature: false,
        requires_document_photos: false
      }),
      property({
        rnt_id: "SBX-00002",
        name: "Hotel Sandbox Playa",
        internal_name: "sandbox-2",
        requires_contract_signature: true,
        requires_document_photos: true
      })
    ])
    sandboxKey = out.api_key
    const listed = await call(app, "GET", "/api/partners/properties", { key: sandboxKey })
    expect(listed.status).toBe(200)
    expect(listed.body).toEqual({ properties: out.properties })
  })

  test("accounts limits --reads 5 sets one limit; --reset restores 120/60/10; partner headers follow", async () => {
    const set = await ok("accounts", "limits", "--account", accountId, "--reads", "5")
    expect(set).toEqual({ account_id: accountId, limits: { reads: 5, writes: 60, tests: 10 } })
    const limited = await call(app, "GET", "/api/partners/properties", { key: sandboxKey })
    expect(limited.headers.get("x-ratelimit-limit")).toBe("5")

    const writes = await ok("accounts", "limits", "--account", accountId, "--writes", "7", "--tests", "3")
    expect(writes).toEqual({ account_id: accountId, limits: { reads: 5, writes: 7, tests: 3 } })

    const reset = await ok("accounts", "limits", "--account", accountId, "--reset")
    expect(reset).toEqual({ account_id: accountId, limits: { reads: 120, writes: 60, tests: 10 } })
    const after = await call(app, "GET", "/api/partners/properties", { key: sandboxKey })
    expect(after.status).toBe(200)
    expect(after.headers.get("x-ratelimit-limit")).toBe("120")
  })
})

describe("keys", () => {
  test("keys create --env live → {key_id, api_key, environment}, and the key works at once", async () => {
    const out = await ok("keys", "create", "--account", accountId, "--env", "live")
    expect(out).toEqual({
      key_id: expect.stringMatching(UUID),
      api_key: expect.stringMatching(/^svc_live_[A-Za-z0-9_-]{43}$/),
      environment: "live"
    })
    liveKeys.push(out)
    const listed = await call(app, "GET", "/api/partners/properties", { key: out.api_key })
    expect(listed.status).toBe(200)
    expect(listed.body).toEqual({ properties: [] })
  })

  test("a 4th active key of one type is refused with key_limit_reached; the other type is unaffected", async () => {
    liveKeys.push(await ok("keys", "create", "--account", accountId, "--env", "live"))
    liveKeys.push(await ok("keys", "create", "--account", accountId, "--env", "live"))
    failure(await cli("keys", "create", "--account", accountId, "--env", "live"), "key_limit_reached")
    const active = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND environment = 'live' AND revoked_at IS NULL",
      [accountId]
    )
    expect(active).toEqual([{ n: 3 }])
    // one test key (sandbox) exists; a second test key is still allowed
    const testKey = await ok("keys", "create", "--account", accountId, "--env", "test")
    expect(testKey.environment).toBe("test")
  })

  test("keys revoke → {key_id, revoked_at}; the key answers 401 at once; a new key can be created again", async () => {
    const victim = liveKeys[0]!
    expect((await call(app, "GET", "/api/partners/properties", { key: victim.api_key })).status).toBe(200)
    const before = Date.now()
    revoked = await ok("keys", "revoke", "--key", victim.key_id)
    expect(revoked).toEqual({ key_id: victim.key_id, revoked_at: expect.stringMatching(ISO) })
    expect(Math.abs(Date.parse(revoked.revoked_at) - before)).toBeLessThan(10_000)

    const refused = await call(app, "GET", "/api/partners/properties", { key: victim.api_key })
    expect(refused.status).toBe(401)
    expect(refused.body).toEqual({ error: expect.any(String), code: "unauthorized", details: {} })
    expect((await call(app, "GET", "/api/partners/properties", { key: liveKeys[1]!.api_key })).status).toBe(200)

    const again = await ok("keys", "create", "--account", accountId, "--env", "live")
    expect(again.environment).toBe("live")
    liveKeys.push(again)
    failure(await cli("keys", "create", "--account", accountId, "--env", "live"), "key_limit_reached")
  })

  test("revoking twice keeps the first revoked_at", async () => {
    const twice = await ok("keys", "revoke", "--key", revoked.key_id)
    expect(twice).toEqual(revoked)
  })

  test("keys list → every key with prefix, never the key itself or its hash", async () => {
    const out = await ok("keys", "list", "--account", accountId)
    expect(Object.keys(out)).toEqual(["keys"])
    const entry = (environment: string) => ({
      key_id: expect.stringMatching(UUID),
      environment,
      prefix: expect.any(String),
      // Keys made by the CLI have no name (the panel names them).
      name: null,
      created_at: expect.stringMatching(ISO),
      revoked_at: null
    })
    // When each was last used: none yet, or within a minute of a request (auth/KeyUsage.ts).
    for (const key of out.keys) expect(key.last_used_at === null || ISO.test(key.last_used_at)).toBe(true)
    const withoutLastUse = out.keys.map(({ last_used_at: _, ...key }: { last_used_at: unknown }) => key)
    // creation order: sandbox test key, 3 live, test, live
    expect(withoutLastUse).toEqual([
      entry("test"),
      { ...entry("live"), key_id: revoked.key_id, revoked_at: revoked.revoked_at },
      { ...entry("live"), key_id: liveKeys[1]!.key_id },
      { ...entry("live"), key_id: liveKeys[2]!.key_id },
      entry("test"),
      { ...entry("live"), key_id: liveKeys[3]!.key_id }
    ])
    for (const key of liveKeys) {
      const listed = out.keys.find((k: { key_id: string }) => k.key_id === key.key_id)
      expect(listed.prefix).toBe(key.api_key.slice(0, "svc_live_".length + 6))
    }
    expect(out.keys[0].prefix).toBe(sandboxKey.slice(0, "svc_test_".length + 6))
    const [hashRow] = await db.query<{ key_hash: string }>("SELECT key_hash FROM api_keys WHERE id = $1", [revoked.key_id])
    const text = JSON.stringify(out)
    for (const key of [...liveKeys.map((k) => k.api_key), sandboxKey]) expect(text).not.toContain(key)
    expect(text).not.toContain(hashRow!.key_hash)
    expect(text).not.toContain("hash")
  })
})

describe("properties", () => {
  let propertyId: string

  test("properties create with every flag → the spec Property plus environment, never the token", async () => {
    const out = await ok(
      "properties", "create", "--account", accountId, "--name", "Hotel Muralla", "--env", "live",
      "--rnt", "RNT-7788", "--external-id", "PMS-42", "--no-sire", "--contract", "--photos",
      "--tra-token", "tra-secret-token-xyz", "--sire-hotel-code", "H-123", "--sire-city-code", "13001",
      "--establishment-name", "Muralla SAS", "--tipo-acomodacion", "Hotel", "--default-room", "101"
    )
    expect(out).toEqual({
      property_id: expect.stringMatching(UUID),
      external_id: "PMS-42",
      rnt_id: "RNT-7788",
      name: "Hotel Muralla",
      internal_name: null,
      checkin_enabled: true,
      compliance: { tra: true, sire: false },
      requires_contract_signature: true,
      requires_document_photos: true,
      environment: "live"
    })
    propertyId = out.property_id
    const [stored] = await db.query(
      `SELECT tra_token, sire_hotel_code, sire_city_code, establishment_name, tipo_acomodacion, default_room, environment
       FROM properties WHERE id = $1`,
      [propertyId]
    )
    // The token is stored sealed under SECRETS_KEY (design §3)
    expect(await openStored(stored!.tra_token)).toBe("tra-secret-token-xyz")
    expect(stored).toEqual({
      tra_token: expect.stringMatching(/^v1:[0-9a-f]{8}:/),
      sire_hotel_code: "H-123",
      sire_city_code: "13001",
      establishment_name: "Muralla SAS",
      tipo_acomodacion: "Hotel",
      default_room: "101",
      environment: "live"
    })
    const { environment: _environment, ...spec } = out
    const listed = await call(app, "GET", "/api/partners/properties", { key: liveKeys[1]!.api_key })
    expect(listed.body).toEqual({ properties: [spec] })
  })

  test("properties create defaults: live, TRA and SIRE on, nothing required", async () => {
    const out = await ok("properties", "create", "--account", accountId, "--name", "Hostal Simple")
    expect(out).toEqual({
      property_id: expect.stringMatching(UUID),
      external_id: null,
      rnt_id: null,
      name: "Hostal Simple",
      internal_name: null,
      checkin_enabled: true,
      compliance: { tra: true, sire: true },
      requires_contract_signature: false,
      requires_document_photos: false,
      environment: "live"
    })
  })

  test("properties update --checkin-disabled --name → the updated Property, other settings unchanged", async () => {
    const out = await ok("properties", "update", "--property", propertyId, "--checkin-disabled", "--name", "Hotel Muralla Nueva")
    expect(out).toEqual({
      property_id: propertyId,
      external_id: "PMS-42",
      rnt_id: "RNT-7788",
      name: "Hotel Muralla Nueva",
      internal_name: null,
      checkin_enabled: false,
      compliance: { tra: true, sire: false },
      requires_contract_signature: true,
      requires_document_photos: true,
      environment: "live"
    })
    const [stored] = await db.query("SELECT tra_token, sire_hotel_code FROM properties WHERE id = $1", [propertyId])
    expect(await openStored(stored!.tra_token)).toBe("tra-secret-token-xyz")
    expect(stored!.sire_hotel_code).toBe("H-123")
    expect(out).not.toHaveProperty("tra_token")
  })

  test("properties update --default-room sets the TRA room used when a reservation has none (design §6.10)", async () => {
    await ok("properties", "update", "--property", propertyId, "--default-room", "Cabaña 2")
    const [stored] = await db.query("SELECT default_room, tipo_acomodacion FROM properties WHERE id = $1", [propertyId])
    expect(stored).toEqual({ default_room: "Cabaña 2", tipo_acomodacion: "Hotel" })
    failure(await cli("properties", "update", "--property", propertyId, "--default-room", ""), "invalid_request")
  })

  test("external_id already used in the (account, environment) → external_id_in_use", async () => {
    failure(
      await cli("properties", "create", "--account", accountId, "--name", "Dup", "--external-id", "PMS-42"),
      "external_id_in_use"
    )
  })
})

describe("failures", () => {
  test("wrong token → unauthorized; unreachable URL → admin_unreachable", async () => {
    const [wrong, unreachable] = await Promise.all([
      runCli(["--url", app.baseUrl, "--token", "not-the-token", "keys", "list", "--account", accountId]),
      runCli(["--url", "http://127.0.0.1:1", "--token", app.adminToken, "keys", "list", "--account", accountId])
    ])
    failure(wrong, "unauthorized")
    failure(unreachable, "admin_unreachable")
  })

  test("unknown ids → account_not_found, key_not_found, property_not_found", async () => {
    const results = await Promise.all([
      cli("accounts", "limits", "--account", UNKNOWN_ID, "--reads", "5"),
      cli("sandbox", "create", "--account", UNKNOWN_ID),
      cli("keys", "create", "--account", UNKNOWN_ID, "--env", "test"),
      cli("keys", "list", "--account", "not-a-uuid"),
      cli("properties", "create", "--account", UNKNOWN_ID, "--name", "X"),
      cli("keys", "revoke", "--key", UNKNOWN_ID),
      cli("keys", "revoke", "--key", "not-a-uuid"),
      cli("properties", "update", "--property", UNKNOWN_ID, "--name", "X")
    ])
    const codes = ["account_not_found", "account_not_found", "account_not_found", "account_not_found",
      "account_not_found", "key_not_found", "key_not_found", "property_not_found"]
    results.forEach((result, i) => failure(result, codes[i]!))
  })
})

describe("usage mistakes", () => {
  test("a value the admin RPC refuses (--reads 0) is invalid_request, not admin_unreachable", async () => {
    failure(await cli("accounts", "limits", "--account", accountId, "--reads", "0"), "invalid_request")
  })

  test("a flag and its inverse together are invalid_arguments; update has no --env", async () => {
    failure(await cli("properties", "create", "--account", accountId, "--name", "X", "--tra", "--no-tra"), "invalid_arguments")
    failure(await cli("properties", "update", "--property", accountId, "--env", "test"), "invalid_arguments")
  })
})

describe("admin token sources", () => {
  test("ADMIN_TOKEN and ADMIN_URL from the environment when --token/--url are absent", async () => {
    const result = await runCli(["keys", "list", "--account", accountId], { ADMIN_URL: app.baseUrl, ADMIN_TOKEN: app.adminToken })
    expect(result.code).toBe(0)
    expect(result.json.keys).toHaveLength(6)
    const wrong = await runCli(["keys", "list", "--account", accountId], { ADMIN_URL: app.baseUrl, ADMIN_TOKEN: "nope" })
    failure(wrong, "unauthorized")
  })

  test("without ADMIN_TOKEN the service writes DATA_DIR/admin-token (0600) and the CLI reads it", async () => {
    const dataDir = await tempDir("cli-token")
    const service = spawnService({ DATABASE_URL: db.url, DATA_DIR: dataDir, ROLE: "api" })
    try {
      const url = await service.ready()
      const file = NodePath.join(dataDir, "admin-token")
      const token = (await NodeFs.readFile(file, "utf8")).trim()
      expect(token).toMatch(/^[0-9a-f]{64}$/)
      expect((await NodeFs.stat(file)).mode & 0o777).toBe(0o600)

      const fromFile = await runCli(["--url", url, "keys", "list", "--account", accountId], { DATA_DIR: dataDir })
      expect(fromFile.code).toBe(0)
      expect(fromFile.json.keys).toHaveLength(6)

      // --token wins over the file
      failure(await runCli(["--url", url, "--token", "x", "keys", "list", "--account", accountId], { DATA_DIR: dataDir }), "unauthorized")
      // no flag, no env, no file
      const empty = await tempDir("cli-empty")
      failure(await runCli(["--url", url, "keys", "list", "--account", accountId], { DATA_DIR: empty }), "admin_token_missing")
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })
})

describe("migrate", () => {
  test("applies pending migrations on DATABASE_URL, then nothing", async () => {
    const target = await freshDatabase()
    try {
      const first = await runCli(["migrate"], { DATABASE_URL: target.url })
      expect({ code: first.code, stderr: first.stderr, json: first.json }).toEqual({
        code: 0,
        stderr: "",
        json: {
          applied: [
            "0001_foundation",
            "0002_reservations",
            "0003_documents",
            "0004_webhooks",
            "0005_compliance",
            "0006_checkin",
            "0007_mail",
            "0008_panel",
            "0009_event_order",
            "0010_report_safety",
            "0011_reference_overrides",
            "0015_alerts",
            "0016_trace_context",
            "0017_secrets_at_rest",
            "0018_delivery_endpoint_due",
            "0019_departure",
            "0020_report_run_indexes",
            "0021_key_names",
            "0022_delivery_history_retention"
          ]
        }
      })
      const tables = await target.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
      )
      expect(tables.map((t) => t.table_name)).toEqual([
        "account_members",
        "accounts",
        "alerts",
        "api_keys",
        "audit_log",
        "document_fetches",
        "events",
        "guest_documents",
        "guests",
        "mail_outbox",
        "panel_codes",
        "panel_sessions",
        "properties",
        "reference_overrides",
        "reservations",
        "schema_migrations",
        "sire_files",
        "sire_movements",
        "tra_submissions",
        "webhook_deliveries",
        "webhook_endpoints",
        "worker_heartbeats"
      ])
      const second = await runCli(["migrate"], { DATABASE_URL: target.url })
      expect({ code: second.code, json: second.json }).toEqual({ code: 0, json: { applied: [] } })
      expect(await target.query("SELECT migration_id, name FROM schema_migrations ORDER BY migration_id")).toEqual(APPLIED_MIGRATIONS)
    } finally {
      await target.drop()
    }
  })

  test("without DATABASE_URL (unset or empty) → database_url_required; unreachable → database_unavailable", async () => {
    const [unset, empty, unreachable] = await Promise.all([
      runCli(["migrate"]),
      runCli(["migrate"], { DATABASE_URL: "  " }),
      runCli(["migrate"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/x" })
    ])
    failure(unset, "database_url_required")
    failure(empty, "database_url_required")
    failure(unreachable, "database_unavailable")
  })
})
