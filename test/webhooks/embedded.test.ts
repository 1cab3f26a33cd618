import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { type Receiver, startReceiver, verifyReceived } from "../support/receiver.ts"

/**
 * Deliveries on the embedded database (no DATABASE_URL): no LISTEN/NOTIFY there (one connection, design §3),
 * so the delivery loop polls; events still reach the receiver within a couple of seconds.
 */
let receiver: Receiver
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>

beforeAll(async () => {
  receiver = startReceiver()
  app = await startApp({ WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
  account = await seedAccount(app)
}, 60_000)

afterAll(async () => {
  await app?.stop()
  receiver?.stop()
})

describe("webhooks on the embedded database", () => {
  test("an event is delivered by the polling loop, signed; a ping is sent at once", async () => {
    const hook = await call(app, "POST", "/api/partners/webhooks", {
      key: account.testKey,
      json: { url: `${receiver.url}/embedded` }
    })
    expect(hook.status).toBe(201)
    const ping = await call(app, "POST", `/api/partners/webhooks/${hook.body.id}/test`, { key: account.testKey })
    expect(ping.body).toMatchObject({ delivered: true, http_status: 200 })
    const created = await call(app, "POST", "/api/partners/reservations", {
      key: account.testKey,
      json: {
        external_id: "EMB-1",
        property_id: account.testProperties[0]!.property_id,
        check_in: "2026-12-20",
        check_out: "2026-12-23",
        guest_name: "Ana Pérez",
        guests_count: 1
      }
    })
    expect(created.status).toBe(201)
    const started = Date.now()
    const [event] = await receiver.waitForCount(1, (r) => r.headers["x-service-event"] === "reservation.created", 10_000)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(verifyReceived(event!, hook.body.secret)).toBe(true)
    expect(JSON.parse(event!.body).data.external_id).toBe("EMB-1")
  })
})
