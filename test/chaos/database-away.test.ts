import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { call, type RunningApp, seedAccount, startApp, stopAll } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.ts"
import { reservationBody } from "../support/guests.ts"
import { type Receiver, startReceiver } from "../support/receiver.ts"

let db: TestDatabase
let proxy: FaultProxy
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>
let receiver: Receiver

beforeAll(async () => {
  db = await freshDatabase()
  const url = new URL(db.url)
  proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) })
  url.port = String(proxy.port)
  app = await startApp({ DATABASE_URL: url.toString(), WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
  account = await seedAccount(app, "Hotel Sin Base")
  receiver = startReceiver()
})

afterAll(async () => {
  await proxy?.restore()
  await stopAll(app, proxy, db, receiver)
})

const timed = async <A>(run: () => Promise<A>) => {
  const started = performance.now()
  const result = await run()
  return { result, ms: performance.now() - started }
}

describe("PostgreSQL away (a fault proxy between the service and the database)", () => {
  test("every request: 503 service_unavailable in the Error shape within 10 s; back without a restart", async () => {
    const property = account.testProperties[0]!.property_id
    expect((await call(app, "GET", "/api/partners/properties", { key: account.testKey })).status).toBe(200)

    await proxy.cut()
    const requests = [
      () => call(app, "GET", "/api/partners/properties", { key: account.testKey }),
      () => call(app, "POST", "/api/partners/reservations", { key: account.testKey, json: reservationBody(property) }),
      () => call(app, "GET", "/api/partners/registrations/nope", { key: account.testKey }),
      () => call(app, "GET", "/api/partners/webhooks/deliveries", { key: account.testKey }),
      // The panel's sign-in (same-origin, as the page sends it): its code goes through the database's mail queue.
      () =>
        call(app, "POST", "/api/panel/session/code", {
          json: { email: "hotelsinbase@example.co" },
          headers: { origin: app.baseUrl }
        })
    ]
    for (const request of [...requests, ...requests]) {
      const { ms, result } = await timed(request)
      expect(ms).toBeLessThan(10_000)
      expect({ status: result.status, code: result.body?.code }).toEqual({ status: 503, code: "service_unavailable" })
      expect(Object.keys(result.body).sort()).toEqual(["code", "details", "error"])
      expect(result.body.details).toEqual({ request_id: expect.any(String) })
      expect(result.headers.get("retry-after")).toBe("5")
    }
    expect((await call(app, "GET", "/readyz")).status).toBe(503)

    await proxy.restore()
    const restored = performance.now()
    let answered = 0
    while (performance.now() - restored < 15_000) {
      answered = (await call(app, "GET", "/api/partners/properties", { key: account.testKey })).status
      if (answered === 200) break
      await Bun.sleep(100)
    }
    expect(answered).toBe(200)
    expect(performance.now() - restored).toBeLessThan(10_000)
    const created = await call(app, "POST", "/api/partners/reservations", {
      key: account.testKey,
      json: reservationBody(property)
    })
    expect(created.status).toBe(201)
    expect((await call(app, "GET", "/readyz")).status).toBe(200)
  })

  test("webhook deliveries resume within seconds of the database's return (LISTEN re-established)", async () => {
    const property = account.testProperties[0]!.property_id
    const endpoint = await call(app, "POST", "/api/partners/webhooks", {
      key: account.testKey,
      json: { url: `${receiver.url}/hooks/back`, events: ["reservation.created"] }
    })
    expect(endpoint.status).toBe(201)
    await proxy.cut()
    // Long enough for the delivery loop to fail a round and the listener to notice its connection is gone.
    await Bun.sleep(1_500)
    await proxy.restore()
    let created = 0
    while (created !== 201) {
      created = (await call(app, "POST", "/api/partners/reservations", {
        key: account.testKey,
        json: reservationBody(property)
      })).status
      if (created !== 201) await Bun.sleep(100)
    }
    // Nothing else is due, so the idle loop sleeps its 30 s backstop: only the NOTIFY of the new delivery, heard
    // on the re-established LISTEN, wakes it this soon.
    const [delivered] = await receiver.waitFor((r) => r.path === "/hooks/back", 5_000)
    expect(delivered!.headers["x-service-event"]).toBe("reservation.created")
  })

  test("a slow database (300 ms each way per packet) is slow, not failing", async () => {
    await proxy.delay(300)
    try {
      const { ms, result } = await timed(() => call(app, "GET", "/api/partners/properties", { key: account.testKey }))
      expect(result.status).toBe(200)
      expect(ms).toBeGreaterThan(300)
      expect(ms).toBeLessThan(10_000)
    } finally {
      await proxy.restore()
    }
  })
})
