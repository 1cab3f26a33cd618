import { afterAll, beforeAll, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { admin, call, type RunningApp, startApp, tempDir } from "../support/app.ts"

/**
 * The embedded database (design §3): no DATABASE_URL → PGlite in DATA_DIR/pg, reached through the same
 * `pg` client; data survives a restart on the same DATA_DIR.
 */

const BOOT = 60_000
let dataDir: string
let app: RunningApp | undefined
let seeded: {
  accountId: string
  testKey: string
  liveKey: string
  properties: ReadonlyArray<{ readonly property_id: string }>
  liveProperty: { readonly environment: string }
}

beforeAll(async () => {
  dataDir = await tempDir("embedded")
  app = await startApp({ DATA_DIR: dataDir })
}, BOOT)

afterAll(async () => {
  await app?.stop()
  await NodeFs.rm(dataDir, { recursive: true, force: true })
}, BOOT)

test("first start: migrated, ready on the embedded database, and serving partner data", async () => {
  const ready = await call(app!, "GET", "/readyz")
  expect(ready.status).toBe(200)
  expect(ready.body).toEqual({ status: "ready", database: "embedded", role: "all" })
  expect((await NodeFs.stat(NodePath.join(dataDir, "pg"))).isDirectory()).toBe(true)

  const account = await admin(app!, (c) => c.CreateAccount({ name: "Embebida", email: "dev@embebida.co" }))
  const sandbox = await admin(app!, (c) => c.CreateSandbox({ account_id: account.account_id }))
  const live = await admin(app!, (c) => c.CreateKey({ account_id: account.account_id, environment: "live" }))
  const liveProperty = await admin(app!, (c) =>
    c.CreateProperty({ account_id: account.account_id, name: "Casa Embebida", external_id: "EMB-1", rnt_id: "RNT-1" }))
  seeded = {
    accountId: account.account_id,
    testKey: sandbox.api_key,
    liveKey: live.api_key,
    properties: sandbox.properties,
    liveProperty
  }

  const listed = await call(app!, "GET", "/api/partners/properties", { key: seeded.testKey })
  expect(listed.status).toBe(200)
  expect(listed.body).toEqual({ properties: seeded.properties })
  expect(listed.body.properties.map((p: { name: string }) => p.name)).toEqual(["Hotel Sandbox Centro", "Hotel Sandbox Playa"])

  // a write through the partner API, to see it survive the restart too
  const mapped = await call(app!, "PATCH", "/api/partners/properties", {
    key: seeded.testKey,
    json: { mappings: [{ property_id: seeded.properties[0]!.property_id, external_id: "PMS-EMB" }] }
  })
  expect(mapped.status).toBe(200)
}, BOOT)

test("after a restart on the same DATA_DIR the same keys list the same properties", async () => {
  await app!.stop()
  app = undefined
  app = await startApp({ DATA_DIR: dataDir })

  const ready = await call(app, "GET", "/readyz")
  expect(ready.body).toEqual({ status: "ready", database: "embedded", role: "all" })

  const test = await call(app, "GET", "/api/partners/properties", { key: seeded.testKey })
  expect(test.status).toBe(200)
  expect(test.body).toEqual({
    properties: [{ ...seeded.properties[0], external_id: "PMS-EMB" }, seeded.properties[1]]
  })

  const { environment: _environment, ...liveSpec } = seeded.liveProperty
  const live = await call(app, "GET", "/api/partners/properties", { key: seeded.liveKey })
  expect(live.status).toBe(200)
  expect(live.body).toEqual({ properties: [liveSpec] })

  // the account's key count survived too: the 3-key limit still counts the sandbox key
  const keys = await admin(app, (c) => c.ListKeys({ account_id: seeded.accountId }))
  expect(keys.keys.map((k) => k.environment)).toEqual(["test", "live"])
}, BOOT)

test("an unknown key is still refused after the restart (no state invented)", async () => {
  const res = await call(app!, "GET", "/api/partners/properties", { key: `svc_test_${"A".repeat(43)}` })
  expect(res.status).toBe(401)
  expect(res.body).toEqual({ error: expect.any(String), code: "unauthorized", details: {} })
}, BOOT)
