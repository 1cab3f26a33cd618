import { afterAll, afterEach, beforeAll, expect, test } from "bun:test"
import { Redacted } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodeNet from "node:net"
import { ENDPOINT_CONCURRENCY } from "../src/webhooks/DeliveryLoop.ts"
import { admin, call, type RunningApp, seedAccount, startApp, tempDir } from "./support/app.ts"
import { freshDatabase, type TestDatabase } from "./support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "./support/fakeTra.ts"
import { colombian, registrationBody, reservationBody } from "./support/guests.ts"
import { type ServiceProcess, spawnService, within } from "./support/process.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"
import { startFakeSmtp } from "./support/smtp.ts"
import { bogotaToday } from "./support/trm.ts"

/**
 * Start and stop of `bun src/main.ts` as a real process (design §9, issue 16 item 4): one start-up line; on
 * SIGTERM the listener closes at once, requests in flight finish (up to SHUTDOWN_DRAIN_SECONDS), the job
 * leases the process still holds are given back so another instance takes the work at once, one shutdown line,
 * exit 0. On a fresh PostgreSQL database; a real webhook receiver and a fake TRA stand in for the outside.
 */

const ADMIN_TOKEN = "lifecycle-admin-token"

let db: TestDatabase
let receiver: Receiver
let tra: FakeTra
let dirs: Array<string> = []
let services: Array<ServiceProcess> = []
let app: RunningApp | undefined

beforeAll(async () => {
  db = await freshDatabase()
  receiver = startReceiver()
  tra = startFakeTra()
})

afterEach(async () => {
  for (const service of services) {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill("SIGKILL")
    await service.child.exited
  }
  services = []
  await app?.stop()
  app = undefined
})

afterAll(async () => {
  await db?.drop()
  receiver?.stop()
  tra?.stop()
  await Promise.all(dirs.map((dir) => NodeFs.rm(dir, { recursive: true, force: true })))
})

const start = async (env: Record<string, string> = {}) => {
  const dataDir = await tempDir("lifecycle")
  dirs.push(dataDir)
  const service = spawnService({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    LOG_FORMAT: "json",
    ...env
  })
  services.push(service)
  return service
}

/** The exit code after SIGTERM, within `ms`; the process's output in the failure otherwise. */
const exitAfterSigterm = (service: ServiceProcess, ms = 10_000) =>
  within(ms, "exit after SIGTERM", service.child.exited).catch((error) => {
    throw new Error(`${error}; output:\n${service.output()}`)
  })

/** The JSON log lines of a process whose message starts with `prefix`. */
const linesStarting = (service: ServiceProcess, prefix: string) =>
  service.output().trim().split("\n").flatMap((line) => {
    try {
      const parsed = JSON.parse(line)
      return typeof parsed.message === "string" && parsed.message.startsWith(prefix) ? [parsed] : []
    } catch {
      return []
    }
  })

/** A webhook endpoint of a fresh test account on the service at `url`, pointing at the receiver's `path`. */
const endpointAt = async (url: string, path: string) => {
  const seeded = await seedAccount({ baseUrl: url, adminToken: ADMIN_TOKEN } as RunningApp, `Hotel ${path.slice(1)}`)
  const created = await call({ baseUrl: url }, "POST", "/api/partners/webhooks", {
    key: seeded.testKey,
    json: { url: `${receiver.url}${path}` }
  })
  expect(created.status).toBe(201)
  return { key: seeded.testKey, id: created.body.id as string }
}

/** Opens a new TCP connection to `url`'s port: "connected", or the error's code (ECONNREFUSED once nobody listens). */
const connect = (url: string) =>
  new Promise<string>((resolve) => {
    const socket = NodeNet.connect(Number(new URL(url).port), "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve("connected")
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)))
  })

/** Resolves once a new connection to `url` is refused (the listener closed); a fresh socket, not fetch's pool. */
const refused = async (url: string) => {
  for (;;) {
    const outcome = await connect(url)
    if (outcome !== "connected") return outcome
    await Bun.sleep(20)
  }
}

test("one start-up line; on SIGTERM a slow request finishes, new connections are refused, one shutdown line, exit 0", async () => {
  const service = await start()
  const url = await service.ready(30_000)
  const port = Number(new URL(url).port)

  const started = linesStarting(service, "started:")
  expect(started).toHaveLength(1)
  expect(started[0].message).toBe(
    `started: version 0.1.0, role all, port ${port}, postgres database, pid ${service.child.pid}; listening on ${url}`
  )
  expect(started[0]).toMatchObject({
    logLevel: "INFO",
    annotations: { version: "0.1.0", role: "all", port, database: "postgres" }
  })

  receiver.on("/slow", { status: 200, delayMs: 2_500 })
  const { key, id } = await endpointAt(url, "/slow")
  let answered = false
  const ping = call({ baseUrl: url }, "POST", `/api/partners/webhooks/${id}/test`, { key }).finally(() => (answered = true))
  await receiver.waitFor((request) => request.path === "/slow", 10_000)

  const signalled = performance.now()
  service.child.kill("SIGTERM")
  // The listener closes at once, while the ping is still being answered.
  expect(await within(2_000, "new connections refused", refused(url))).toBe("ECONNREFUSED")
  expect(answered).toBe(false)

  const result = await ping
  expect(result.status).toBe(200)
  expect(result.body).toMatchObject({ delivered: true, http_status: 200, error: "" })
  const code = await exitAfterSigterm(service)
  expect(code).toBe(0)
  expect(performance.now() - signalled).toBeLessThan(8_000)

  await service.stop()
  const stopped = linesStarting(service, "stopped:")
  expect(stopped).toHaveLength(1)
  expect(stopped[0].message).toBe("stopped: drained 1 request in flight, released 0 job leases")
  expect(stopped[0].annotations).toEqual({ drained_requests: 1, cut_requests: 0, released_leases: 0 })
}, 60_000)

/** An API-only service with SHUTDOWN_DRAIN_SECONDS `drain`, and a webhook endpoint whose receiver never answers. */
const serviceWithHangingEndpoint = async (drain: string, path: string) => {
  const service = await start({ ROLE: "api", SHUTDOWN_DRAIN_SECONDS: drain })
  const url = await service.ready(30_000)
  receiver.on(path, { hang: true })
  return { service, url, ...await endpointAt(url, path) }
}

test("a request whose client hangs up is no longer in flight: a later SIGTERM has nothing to wait for", async () => {
  const { service, url, key, id } = await serviceWithHangingEndpoint("5", "/hang-up")
  const client = new AbortController()
  const ping = fetch(`${url}/api/partners/webhooks/${id}/test`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    signal: client.signal
  }).then((response) => response.status, (error: Error) => error.name)
  await receiver.waitFor((request) => request.path === "/hang-up", 10_000)
  client.abort()
  expect(await ping).toBe("AbortError")
  // The abort interrupts the route's handler on the server; give it a moment to unwind.
  await Bun.sleep(300)

  const signalled = performance.now()
  service.child.kill("SIGTERM")
  expect(await exitAfterSigterm(service)).toBe(0)
  // Counted in flight still, the drain would wait its 5 s and report the request cut off.
  expect(performance.now() - signalled).toBeLessThan(4_000)
  await service.stop()
  const stopped = linesStarting(service, "stopped:").map((line) => line.message)
  expect(stopped).toHaveLength(1)
  expect(stopped[0]).toMatch(/^stopped: drained 0 requests in flight, released \d+ job leases?$/)
  // The ping's delivery is still pending: a worker of a later test delivers it, and must not hang on it.
  receiver.on("/hang-up", 200)
}, 60_000)

test("LOG_LEVEL=Warning: no line per request, but the start-up and stop lines are still written", async () => {
  const service = await start({ LOG_LEVEL: "Warning" })
  const url = await service.ready(30_000)
  for (const path of ["/healthz", "/api/partners/properties", "/no-such-route"]) await fetch(`${url}${path}`)
  service.child.kill("SIGTERM")
  expect(await exitAfterSigterm(service)).toBe(0)
  await service.stop()
  expect(linesStarting(service, "started:")).toHaveLength(1)
  expect(linesStarting(service, "stopped:")).toHaveLength(1)
  // The access log's line per request is Info: below the level (before the fix, LOG_LEVEL=Warning meant Info).
  expect(linesStarting(service, "request")).toEqual([])
}, 60_000)

test("a request still running after SHUTDOWN_DRAIN_SECONDS is cut off, and the delivery lease it held is given back", async () => {
  const { service, url, key, id } = await serviceWithHangingEndpoint("1", "/hang")
  const ping = call({ baseUrl: url }, "POST", `/api/partners/webhooks/${id}/test`, { key }).then(
    (result) => result.status,
    (error) => String(error)
  )
  await receiver.waitFor((request) => request.path === "/hang", 10_000)
  const leased = await db.query("SELECT status, lease_until FROM webhook_deliveries WHERE endpoint_id = $1", [id])
  expect(leased).toEqual([{ status: "pending", lease_until: expect.any(Date) }])
  // The lease of a ping outlives this test (DELIVERY_LEASE, 15 s): only a release can clear it now.
  expect((leased[0]!.lease_until as Date).getTime()).toBeGreaterThan(Date.now() + 5_000)

  const signalled = performance.now()
  service.child.kill("SIGTERM")
  const code = await exitAfterSigterm(service)
  expect(code).toBe(0)
  const took = performance.now() - signalled
  expect(took).toBeGreaterThan(900)
  expect(took).toBeLessThan(6_000)
  // Cut off: answered 503 by the HTTP layer as it closes, not the ping's 200.
  expect(await ping).toBe(503)

  // Given back: pending, no lease, so any instance's delivery loop takes it at once.
  expect(await db.query("SELECT status, lease_until FROM webhook_deliveries WHERE endpoint_id = $1", [id])).toEqual([
    { status: "pending", lease_until: null }
  ])
  await service.stop()
  const stopped = linesStarting(service, "stopped:")
  expect(stopped.map((line) => line.message)).toEqual([
    "stopped: drained 0 requests in flight (1 cut off after SHUTDOWN_DRAIN_SECONDS), released 1 job lease"
  ])

  // A worker started now delivers it at its first round, well before the old lease would have ended.
  receiver.on("/hang", 200)
  const worker = await start({ ROLE: "worker" })
  await worker.ready(30_000)
  await receiver.waitForCount(2, (request) => request.path === "/hang", 10_000)
  const leaseWouldEnd = (leased[0]!.lease_until as Date).getTime()
  for (;;) {
    const [row] = await db.query("SELECT status FROM webhook_deliveries WHERE endpoint_id = $1", [id])
    if (row!.status === "delivered") break
    await Bun.sleep(50)
  }
  expect(Date.now()).toBeLessThan(leaseWouldEnd)
}, 60_000)

test("stopped while a receiver never answers: requests in flight end at the delivery timeout and are recorded; deliveries claimed but not sent are given back", async () => {
  const service = await start()
  const url = await service.ready(30_000)
  const running = { baseUrl: url, adminToken: ADMIN_TOKEN } as RunningApp
  receiver.on("/stuck", { hang: true })
  const seeded = await seedAccount(running, "Hotel Stuck")
  await admin(running, (c) => c.SetLimits({ account_id: seeded.accountId, writes: 10_000 }))
  const endpoint = await call(running, "POST", "/api/partners/webhooks", {
    key: seeded.testKey,
    json: { url: `${receiver.url}/stuck`, events: ["reservation.created"] }
  })
  expect(endpoint.status).toBe(201)
  // More deliveries than the endpoint's lanes: 32 are sent and hang, the rest wait, claimed, for a lane.
  const events = ENDPOINT_CONCURRENCY + 8
  for (let i = 0; i < events; i++) {
    const created = await call(running, "POST", "/api/partners/reservations", {
      key: seeded.testKey,
      json: reservationBody(seeded.testProperties[0]!.property_id)
    })
    expect(created.status).toBe(201)
  }
  await receiver.waitForCount(ENDPOINT_CONCURRENCY, (request) => request.path === "/stuck", 10_000)
  const leased = () =>
    db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND lease_until IS NOT NULL",
      [endpoint.body.id]
    )
  for (const started = Date.now(); (await leased())[0]!.n < events;) {
    if (Date.now() - started > 10_000) throw new Error(`not all claimed: ${JSON.stringify(await leased())}`)
    await Bun.sleep(50)
  }

  const signalled = performance.now()
  service.child.kill("SIGTERM")
  expect(await exitAfterSigterm(service, 20_000)).toBe(0)
  const took = performance.now() - signalled
  // The requests in flight ran into their 10-s limit (DELIVERY_TIMEOUT) before the process exited.
  expect(took).toBeGreaterThan(8_000)
  expect(took).toBeLessThan(14_000)
  await service.stop()

  // Only the requests in flight were ever sent; the others were not started during the stop.
  expect(receiver.matching((request) => request.path === "/stuck")).toHaveLength(ENDPOINT_CONCURRENCY)
  const rows = await db.query<{ attempts: number; status: string; lease_until: Date | null; last_error: string | null }>(
    "SELECT attempts, status, lease_until, last_error FROM webhook_deliveries WHERE endpoint_id = $1",
    [endpoint.body.id]
  )
  const attempted = rows.filter((row) => row.attempts === 1)
  expect(attempted).toHaveLength(ENDPOINT_CONCURRENCY)
  for (const row of attempted) {
    expect(row).toMatchObject({ status: "pending", lease_until: null })
    expect(row.last_error).toContain("no complete answer")
  }
  // Given back, not left to lapse: any instance takes them at once.
  expect(rows.filter((row) => row.attempts === 0)).toEqual(
    Array.from({ length: 8 }, () => ({ attempts: 0, status: "pending", lease_until: null, last_error: null }))
  )
  expect(linesStarting(service, "stopped:").map((line) => line.message)).toEqual([
    "stopped: drained 0 requests in flight, released 8 job leases"
  ])
  // Aborted or given up, nothing is logged as a failed attempt.
  expect(linesStarting(service, "webhook delivery attempt failed")).toEqual([])
  // The next tests' workers share this database: they must not find these deliveries due.
  await db.query("DELETE FROM webhook_deliveries WHERE endpoint_id = $1", [endpoint.body.id])
}, 60_000)

test("a report run stopped by SIGTERM gives its reservation back: another worker reports it at once, not a lease later", async () => {
  // The API in-process (ROLE=api: no loop of its own); the workers are real processes.
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api", TRA_BASE_URL: tra.url })
  const account = await seedAccount(app, "Hotel Relevo")
  const property = await admin(app, (c) =>
    c.CreateProperty({
      account_id: account.accountId,
      name: "Hotel Relevo",
      rnt_id: "97531",
      tra_token: Redacted.make(DEFAULT_TOKEN),
      reports_sire: false
    }))
  const body = registrationBody(property.property_id, [colombian({ numero_documento: "52001122" })], {
    check_in: bogotaToday(),
    check_out: "2099-03-01"
  })
  expect((await call(app, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })).status).toBe(201)
  const leaseOf = async () =>
    (await db.query<{ report_lease_until: Date | null }>(
      "SELECT report_lease_until FROM reservations WHERE external_id = $1",
      [body.external_id]
    ))[0]!.report_lease_until

  // The TRA takes the post and never answers; the run holds the reservation under its lease (1 minute).
  tra.faults.push("hang")
  const first = await start({ ROLE: "worker", TRA_BASE_URL: tra.url, REPORTS_EVERY: "1 hour" })
  await tra.waitForCount(1, undefined, 30_000)
  expect((await leaseOf())?.getTime()).toBeGreaterThan(Date.now() + 30_000)

  first.child.kill("SIGTERM")
  expect(await exitAfterSigterm(first)).toBe(0)
  expect(await leaseOf()).toBeNull()
  await first.stop()
  expect(linesStarting(first, "stopped:").map((line) => line.message)).toEqual([
    "stopped: drained 0 requests in flight, released 1 job lease"
  ])

  // The next worker's first run takes it over at once (its TRA post is a possible duplicate: the first one's
  // outcome is unknown).
  const restarted = performance.now()
  await start({ ROLE: "worker", TRA_BASE_URL: tra.url, REPORTS_EVERY: "1 hour" })
  for (;;) {
    const detail = await call(app, "GET", `/api/partners/registrations?external_id=${body.external_id}`, { key: account.liveKey })
    if (detail.body.tra.status === "success") break
    if (performance.now() - restarted > 30_000) throw new Error(`TRA still ${JSON.stringify(detail.body.tra)}`)
    await Bun.sleep(100)
  }
  expect(tra.mains()).toHaveLength(2)
}, 90_000)

test("an e-mail whose SMTP server never answers: cut off after the mail grace, its lease given back, exit 0", async () => {
  const smtp = await startFakeSmtp()
  try {
    smtp.stall()
    const service = await start({ SMTP_URL: smtp.url, MAIL_FROM: "no-reply@hotel.example.co" })
    const url = await service.ready(30_000)
    const email = "holder@relevo-mail.example.co"
    await admin({ baseUrl: url, adminToken: ADMIN_TOKEN }, (c) => c.CreateAccount({ name: "Hotel Correo", email }))
    expect((await call({ baseUrl: url }, "POST", "/api/panel/session/code", { json: { email } })).status).toBe(202)
    for (let i = 0; i < 200 && smtp.stalled() === 0; i++) await Bun.sleep(50)
    expect(smtp.stalled()).toBe(1)
    const [held] = await db.query<{ state: string; lease_until: Date | null }>(
      "SELECT state, lease_until FROM mail_outbox WHERE recipient = $1",
      [email]
    )
    // MAIL_LEASE: 2 minutes.
    expect(held!.state).toBe("pending")
    expect(held!.lease_until!.getTime()).toBeGreaterThan(Date.now() + 60_000)

    const signalled = performance.now()
    service.child.kill("SIGTERM")
    expect(await exitAfterSigterm(service, 25_000)).toBe(0)
    // The send gets MAIL_SHUTDOWN_GRACE (10 s), not the SMTP timeout (60 s).
    expect(performance.now() - signalled).toBeLessThan(20_000)
    expect(await db.query("SELECT state, lease_until FROM mail_outbox WHERE recipient = $1", [email])).toEqual([
      { state: "pending", lease_until: null }
    ])
    await service.stop()
    expect(linesStarting(service, "stopped:").map((line) => line.message)).toEqual([
      "stopped: drained 0 requests in flight, released 1 job lease"
    ])
  } finally {
    await smtp.stop()
  }
}, 90_000)
