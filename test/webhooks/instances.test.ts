import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test"
import { admin, call, seedAccount, tempDir } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { type ServiceProcess, spawnService } from "../support/process.ts"
import { type Receiver, startReceiver, verifyReceived } from "../support/receiver.ts"

/**
 * Design §7 with real processes on real PostgreSQL: a worker killed with SIGKILL mid-delivery loses nothing
 * (its lease ends and another instance delivers, with the same event id), and several instances never
 * deliver one event twice otherwise.
 */
let receiver: Receiver
let db: TestDatabase
const running: Array<ServiceProcess> = []
const ADMIN_TOKEN = "instances-admin-token"

beforeAll(async () => {
  receiver = startReceiver()
  db = await freshDatabase()
})

afterEach(async () => {
  await Promise.all(running.splice(0).map((service) => service.stop()))
})

afterAll(async () => {
  await db?.drop()
  receiver?.stop()
})

const start = async (role: "all" | "worker") => {
  const service = spawnService({
    DATABASE_URL: db.url,
    DATA_DIR: await tempDir("instance"),
    ADMIN_TOKEN,
    ROLE: role,
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    LOG_LEVEL: "Warning"
  })
  running.push(service)
  return { service, baseUrl: await service.ready() }
}

const reservation = (baseUrl: string, key: string, property: string, externalId: string) =>
  call({ baseUrl }, "POST", "/api/partners/reservations", {
    key,
    json: {
      external_id: externalId,
      property_id: property,
      check_in: "2026-12-20",
      check_out: "2026-12-23",
      guest_name: "Ana Pérez",
      guests_count: 1
    }
  })

describe("delivery across processes (design §7)", () => {
  test("SIGKILL mid-delivery: after the lease, another instance delivers the same event; nothing is lost", async () => {
    const first = await start("all")
    const account = await seedAccount({ ...first, adminToken: ADMIN_TOKEN, dataDir: "", env: {}, stop: async () => {} })
    receiver.on("/crash", [{ hang: true }, 200])
    const hook = await call(first, "POST", "/api/partners/webhooks", {
      key: account.testKey,
      json: { url: `${receiver.url}/crash`, events: ["reservation.created"] }
    })
    expect(hook.status).toBe(201)
    const created = await reservation(first.baseUrl, account.testKey, account.testProperties[0]!.property_id, "CRASH-1")
    expect(created.status).toBe(201)
    // The first attempt reaches the receiver, which holds it: the worker is mid-delivery. Kill it hard.
    const [held] = await receiver.waitForCount(1, (r) => r.path === "/crash")
    first.service.child.kill("SIGKILL")
    await first.service.child.exited
    const [claimed] = await db.query<{ status: string; lease_until: Date | null; attempts: number }>(
      "SELECT status, lease_until, attempts FROM webhook_deliveries WHERE event_id = $1",
      [held!.headers["x-service-event-id"]]
    )
    expect(claimed).toMatchObject({ status: "pending", attempts: 0 })
    expect(claimed!.lease_until).not.toBeNull()

    await start("worker")
    const both = await receiver.waitForCount(2, (r) => r.path === "/crash", 30_000)
    expect(both[1]!.headers["x-service-event-id"]).toBe(held!.headers["x-service-event-id"])
    expect(both[1]!.body).toBe(held!.body)
    expect(verifyReceived(both[1]!, hook.body.secret)).toBe(true)
    // Taken over only once the lease had run out, never before.
    expect(both[1]!.receivedAt).toBeGreaterThanOrEqual(claimed!.lease_until!.getTime() - 1_000)
    let row: { status: string; attempts: number } | undefined
    for (let i = 0; i < 50; i++) {
      ;[row] = await db.query<{ status: string; attempts: number }>("SELECT status, attempts FROM webhook_deliveries WHERE event_id = $1", [
        held!.headers["x-service-event-id"]
      ])
      if (row?.status === "delivered") break
      await Bun.sleep(100)
    }
    // The killed attempt left no record: its outcome is unknown, so the event was sent again.
    expect(row).toEqual({ status: "delivered", attempts: 1 })
  }, 60_000)

  test("SIGTERM mid-delivery: the attempt in flight finishes and is recorded before the process exits", async () => {
    const only = await start("all")
    const account = await seedAccount({ ...only, adminToken: ADMIN_TOKEN, dataDir: "", env: {}, stop: async () => {} })
    receiver.on("/graceful", { status: 200, delayMs: 1_500 })
    const hook = await call(only, "POST", "/api/partners/webhooks", {
      key: account.testKey,
      json: { url: `${receiver.url}/graceful`, events: ["reservation.created"] }
    })
    expect(hook.status).toBe(201)
    await reservation(only.baseUrl, account.testKey, account.testProperties[0]!.property_id, "GRACEFUL-1")
    const [request] = await receiver.waitForCount(1, (r) => r.path === "/graceful")
    expect(await only.service.stop()).toBe(0)
    const [row] = await db.query<{ status: string; attempts: number; lease_until: Date | null }>(
      "SELECT status, attempts, lease_until FROM webhook_deliveries WHERE event_id = $1",
      [request!.headers["x-service-event-id"]]
    )
    expect(row).toEqual({ status: "delivered", attempts: 1, lease_until: null })
  }, 30_000)

  test("three instances deliver 60 events exactly once each", async () => {
    const instances = [await start("all"), await start("all"), await start("all")]
    const account = await seedAccount({ ...instances[0]!, adminToken: ADMIN_TOKEN, dataDir: "", env: {}, stop: async () => {} })
    await admin({ ...instances[0]!, adminToken: ADMIN_TOKEN }, (c) => c.SetLimits({ account_id: account.accountId, writes: 10_000 }))
    receiver.on("/many", { status: 200, delayMs: 20 })
    const hook = await call(instances[0]!, "POST", "/api/partners/webhooks", {
      key: account.testKey,
      json: { url: `${receiver.url}/many`, events: ["reservation.created"] }
    })
    expect(hook.status).toBe(201)
    // Spread the creations over the instances: each instance's NOTIFY wakes every instance's loop.
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) =>
      reservation(instances[i % 3]!.baseUrl, account.testKey, account.testProperties[0]!.property_id, `MANY-${i}`)
    ))
    expect(results.every((r) => r.status === 201)).toBe(true)
    const received = await receiver.waitForCount(60, (r) => r.path === "/many", 30_000)
    await Bun.sleep(1_000) // time for any duplicate to show up
    const all = receiver.matching((r) => r.path === "/many")
    expect(all).toHaveLength(60)
    expect(new Set(received.map((r) => r.headers["x-service-event-id"])).size).toBe(60)
    const [counts] = await db.query<{ delivered: number; attempts: number }>(
      `SELECT count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered, sum(d.attempts)::int AS attempts
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.url LIKE '%/many'`
    )
    expect(counts).toEqual({ delivered: 60, attempts: 60 })
  }, 60_000)
})
