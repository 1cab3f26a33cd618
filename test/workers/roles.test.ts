import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"

/**
 * ROLE=api, ROLE=worker and ROLE=all against one PostgreSQL (design §1): what each serves, and which
 * instances run background loops (a `worker_heartbeats` row per worker instance).
 */

let db: TestDatabase
let api: RunningApp
let worker: RunningApp | undefined
let all: RunningApp | undefined
const ADMIN_TOKEN = "roles-admin-token"

const heartbeats = () =>
  db.query<{ role: string }>("SELECT role FROM worker_heartbeats ORDER BY role").then((rows) => rows.map((r) => r.role))

beforeAll(async () => {
  db = await freshDatabase()
  // api first: it applies the migrations; the others find them applied
  api = await startApp({ DATABASE_URL: db.url, ROLE: "api", ADMIN_TOKEN })
  ;[worker, all] = await Promise.all([
    startApp({ DATABASE_URL: db.url, ROLE: "worker", ADMIN_TOKEN }),
    startApp({ DATABASE_URL: db.url, ROLE: "all", ADMIN_TOKEN })
  ])
})

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop(), all?.stop()])
  await db?.drop()
})

describe("ROLE=api", () => {
  test("serves the partner API, /openapi.json, the admin RPC and health", async () => {
    const seeded = await seedAccount(api)
    const listed = await call(api, "GET", "/api/partners/properties", { key: seeded.testKey })
    expect(listed.status).toBe(200)
    expect(listed.body).toEqual({ properties: seeded.testProperties })

    const openapi = await call(api, "GET", "/openapi.json")
    expect(openapi.status).toBe(200)
    expect(openapi.body.openapi).toMatch(/^3\./)
    expect(Object.keys(openapi.body.paths)).toContain("/api/partners/properties")

    const keys = await admin(api, (c) => c.ListKeys({ account_id: seeded.accountId }))
    expect(keys.keys.map((k) => k.environment)).toEqual(["test", "live"])

    expect((await call(api, "GET", "/healthz")).body).toEqual({ status: "ok" })
    const ready = await call(api, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: "ready", database: "postgres", role: "api" })
  })

  test("the admin RPC refuses a wrong token", async () => {
    const error = await admin({ baseUrl: api.baseUrl, adminToken: "wrong" }, (c) => Effect.flip(c.ListKeys({ account_id: "x" })))
    expect(error).toMatchObject({ _tag: "AdminError", code: "unauthorized" })
  })
})

describe("ROLE=worker", () => {
  test("answers /healthz and /readyz with role worker", async () => {
    const health = await call(worker!, "GET", "/healthz")
    expect(health.status).toBe(200)
    expect(health.body).toEqual({ status: "ok" })
    const ready = await call(worker!, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: "ready", database: "postgres", role: "worker" })
  })

  test("serves no partner endpoint, OpenAPI, docs or admin RPC: 404 not_found", async () => {
    const seeded = await seedAccount(api, "Hotelera Worker")
    const notFound = (method: string, path: string) => ({
      status: 404,
      body: { error: expect.any(String), code: "not_found", details: {} },
      method,
      path
    })
    const probes: Array<[string, string, Record<string, unknown>]> = [
      ["GET", "/api/partners/properties", { key: seeded.testKey }],
      ["PATCH", "/api/partners/properties", { key: seeded.testKey, json: { mappings: [] } }],
      ["GET", "/openapi.json", {}],
      ["GET", "/docs", {}],
      ["POST", "/rpc/admin", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, json: {} }]
    ]
    for (const [method, path, options] of probes) {
      const res = await call(worker!, method, path, options)
      expect({ status: res.status, body: res.body, method, path }).toEqual(notFound(method, path))
    }
    await expect(admin(worker!, (c) => c.ListKeys({ account_id: seeded.accountId }))).rejects.toBeDefined()
  })
})

describe("background loops", () => {
  test("worker and all instances beat; the api instance does not", async () => {
    expect(await heartbeats()).toEqual(["all", "worker"])
    const [row] = await db.query<{ instance_id: string; fresh: boolean }>(
      "SELECT instance_id, last_seen_at > now() - interval '1 minute' AS fresh FROM worker_heartbeats WHERE role = 'worker'"
    )
    expect(row!.instance_id).toMatch(/^\d+-[0-9a-f]{8}$/)
    expect(row!.fresh).toBe(true)
  })

  test("the all instance serves the partner API too", async () => {
    const ready = await call(all!, "GET", "/readyz")
    expect(ready.body).toEqual({ status: "ready", database: "postgres", role: "all" })
    const seeded = await seedAccount(all!, "Hotelera All")
    const listed = await call(all!, "GET", "/api/partners/properties", { key: seeded.testKey })
    expect(listed.status).toBe(200)
  })

  test("stopping the worker removes its heartbeat row; the others keep serving", async () => {
    await worker!.stop()
    worker = undefined
    expect(await heartbeats()).toEqual(["all"])
    await all!.stop()
    all = undefined
    expect(await heartbeats()).toEqual([])
    expect((await call(api, "GET", "/readyz")).status).toBe(200)
  })
})
