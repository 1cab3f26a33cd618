import { afterAll, beforeAll, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import { tempDir } from "../support/app.ts"
import { APPLIED_MIGRATIONS, freshDatabase, type TestDatabase } from "../support/database.ts"
import { refusedStart, spawnService, within } from "../support/process.ts"

/** Start-up and shutdown of `bun src/main.ts` as a real process (design §2, §3). */

let db: TestDatabase
let dataDir: string

beforeAll(async () => {
  db = await freshDatabase()
  dataDir = await tempDir("startup")
})

afterAll(async () => {
  await db?.drop()
  await NodeFs.rm(dataDir, { recursive: true, force: true })
})

test("an unreachable DATABASE_URL stops start-up with a non-zero exit and a clear message", async () => {
  const output = await refusedStart(
    spawnService({ DATABASE_URL: "postgres://postgres:s3cret@127.0.0.1:1/x", DATA_DIR: dataDir, ADMIN_TOKEN: "t" }),
    "exit on an unreachable database"
  )
  expect(output).toContain("start-up failed")
  expect(output).toContain("cannot reach the database at postgres://postgres:***@127.0.0.1:1/x")
  expect(output).toContain("ECONNREFUSED")
  expect(output).toContain("Set DATABASE_URL to a reachable PostgreSQL")
  // the password never reaches the log
  expect(output).not.toContain("s3cret")
  expect(output).not.toContain("listening on")
}, 20_000)

test("a healthy process answers /healthz and /readyz, and exits 0 promptly on SIGTERM, cleaning up", async () => {
  const service = spawnService({ DATABASE_URL: db.url, DATA_DIR: dataDir, ADMIN_TOKEN: "t" })
  try {
    const url = await service.ready()
    const health = await fetch(`${url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: "ok" })
    const ready = await fetch(`${url}/readyz`)
    expect(await ready.json()).toEqual({ status: "ready", database: "postgres", role: "all" })
    expect(service.output()).toContain("applied migrations: 0001_foundation")
    expect(await db.query("SELECT role FROM worker_heartbeats")).toEqual([{ role: "all" }])

    const started = Date.now()
    service.child.kill("SIGTERM")
    const code = await within(5_000, "exit after SIGTERM", service.child.exited)
    expect(code).toBe(0)
    expect(Date.now() - started).toBeLessThan(5_000)
    // layers closed in order: the heartbeat finalizer ran before the pool closed
    expect(await db.query("SELECT role FROM worker_heartbeats")).toEqual([])
    await expect(fetch(`${url}/healthz`)).rejects.toThrow()
  } finally {
    await service.stop()
  }
}, 30_000)

test("processes booting together on one fresh database apply each migration once", async () => {
  const target = await freshDatabase()
  const dirs = await Promise.all([tempDir("boot-a"), tempDir("boot-b"), tempDir("boot-c")])
  const services = dirs.map((dir) => spawnService({ DATABASE_URL: target.url, DATA_DIR: dir, ADMIN_TOKEN: "t", ROLE: "api" }))
  try {
    const urls = await Promise.all(services.map((s) => s.ready()))
    for (const url of urls) {
      const ready = await fetch(`${url}/readyz`)
      expect(ready.status).toBe(200)
      expect(await ready.json()).toEqual({ status: "ready", database: "postgres", role: "api" })
    }
    expect(await target.query("SELECT migration_id, name FROM schema_migrations ORDER BY migration_id")).toEqual(APPLIED_MIGRATIONS)
    const applied = services.filter((s) => s.output().includes("applied migrations: 0001_foundation, 0002_reservations, 0003_documents, 0004_webhooks, 0005_compliance, 0006_checkin, 0007_mail, 0008_panel, 0009_event_order, 0010_report_safety, 0011_reference_overrides, 0015_alerts, 0016_trace_context, 0017_secrets_at_rest, 0018_delivery_endpoint_due, 0019_departure, 0020_report_run_indexes, 0021_key_names, 0022_delivery_history_retention"))
    expect(applied).toHaveLength(1)
    expect(await Promise.all(services.map((s) => s.stop()))).toEqual([0, 0, 0])
  } finally {
    await Promise.all(services.map((s) => s.stop()))
    await target.drop()
    await Promise.all(dirs.map((dir) => NodeFs.rm(dir, { recursive: true, force: true })))
  }
}, 40_000)

// Known defects (see the report to the lead): enable (test.todo → test) once src/ is fixed.
test("an invalid setting (ROLE=workers) stops start-up with a message naming the variable", async () => {
  const output = await refusedStart(spawnService({ ROLE: "workers", DATA_DIR: dataDir, ADMIN_TOKEN: "t" }), "exit on an invalid ROLE")
  expect(output).toContain("ROLE")
}, 20_000)

test("LOG_FORMAT=json writes one JSON document per log line", async () => {
  const service = spawnService({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/x", DATA_DIR: dataDir, LOG_FORMAT: "json" })
  await within(15_000, "exit on an unreachable database", service.child.exited)
  await service.stop()
  const lines = service.output().trim().split("\n")
  expect(lines.length).toBeGreaterThan(0)
  for (const line of lines) expect(JSON.parse(line)).toMatchObject({ logLevel: expect.any(String), message: expect.anything() })
}, 20_000)

test("a DATA_DIR the process cannot write stops start-up saying so, not that a key is malformed", async () => {
  // Tests run as root, which writes any directory: a DATA_DIR under a regular file cannot be made by anyone.
  const file = `${dataDir}/not-a-directory`
  await NodeFs.writeFile(file, "")
  const output = await refusedStart(spawnService({ DATA_DIR: `${file}/data` }), "exit on an unwritable DATA_DIR")
  expect(output).toContain(`start-up failed: cannot write ${file}/data/`)
  expect(output).toContain("ENOTDIR")
  expect(output).toContain("DATA_DIR must be a directory this process")
  expect(output).not.toContain("does not hold a 32-byte base64 key")
  expect(output).not.toContain("listening on")
}, 30_000)
