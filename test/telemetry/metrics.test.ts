import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { admin, call, type RunningApp, seedAccount, startApp, stopAll, traProperty } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { type FakeSire, gatewayEnv, startFakeSire } from "../support/fakeSire.ts"
import { type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { ROOT } from "../support/process.ts"
import { type Receiver, startReceiver } from "../support/receiver.ts"
import { freePort, type Scrape, scrape } from "../support/telemetry.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * The metrics of design §9 through the real listener: the app in-process (ROLE=all: the delivery loop runs),
 * `METRICS_PORT` on a port of its own, a real webhook receiver and a fake TRA answering 500. Each test scrapes
 * before and after one cause and asserts its figure moved (the metric registry is the process's, so only
 * differences are asserted).
 */
let db: TestDatabase
let app: RunningApp
let tra: FakeTra
let sire: FakeSire
const GATEWAY_TOKEN = "sire-gateway-token"
let receiver: Receiver
let account: Awaited<ReturnType<typeof seedAccount>>
let metricsUrl: string

beforeAll(async () => {
  db = await freshDatabase()
  tra = startFakeTra()
  sire = startFakeSire({ token: GATEWAY_TOKEN })
  receiver = startReceiver()
  const port = freePort()
  metricsUrl = `http://127.0.0.1:${port}/metrics`
  app = await startApp({
    DATABASE_URL: db.url,
    METRICS_PORT: String(port),
    TRA_BASE_URL: tra.url,
    ...gatewayEnv(sire, GATEWAY_TOKEN),
    REPORTS_EVERY: "24 hours",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true"
  })
  account = await seedAccount(app)
})

afterAll(() => stopAll(app, db, tra, sire, receiver))

const metrics = () => scrape(metricsUrl)
/** Polls until `check` holds for a scrape (figures sampled from the database move when the loops have worked). */
const eventually = async (check: (s: Scrape) => boolean, timeoutMs = 15_000): Promise<Scrape> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const s = await metrics()
    if (check(s)) return s
    if (Date.now() > deadline) throw new Error(`metrics never matched; last scrape:\n${s.text}`)
    await Bun.sleep(200)
  }
}

let documents = 40_000_000
const register = (propertyId: string, checkIn: string) =>
  call(app, "POST", "/api/partners/registrations", {
    key: account.liveKey,
    json: registrationBody(propertyId, [colombian({ numero_documento: String(documents++) })], {
      check_in: checkIn,
      check_out: "2099-01-03",
      room_number: "101"
    })
  })

describe("metrics on METRICS_PORT (design §9)", () => {
  test("the listener is not the public port, and answers the Prometheus text format", async () => {
    expect(metricsUrl).not.toStartWith(app.baseUrl)
    const response = await fetch(metricsUrl)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4")
    const text = await response.text()
    expect(text).toContain("# TYPE http_server_requests_total counter")
    expect(text).toContain("# TYPE http_server_request_duration_seconds histogram")
    expect((await call(app, "GET", "/metrics")).status).toBe(404)
    expect((await fetch(metricsUrl.replace("/metrics", "/other"))).status).toBe(404)
  })

  test("a request: counted by method, route template and status, with its duration", async () => {
    const hook = await call(app, "POST", "/api/partners/webhooks", {
      key: account.testKey,
      json: { url: `${receiver.url}/hooks/unused`, events: ["reservation.cancelled"] }
    })
    expect(hook.status).toBe(201)
    const route = { method: "PATCH", route: "/api/partners/webhooks/:id" }
    const before = await metrics()
    const id = hook.body.id as string
    const unknown = "00000000-0000-4000-8000-000000000000"
    expect((await call(app, "PATCH", `/api/partners/webhooks/${id}`, { key: account.testKey, json: { events: ["*"] } })).status)
      .toBe(200)
    expect((await call(app, "PATCH", `/api/partners/webhooks/${unknown}`, { key: account.testKey, json: { events: ["*"] } }))
      .status).toBe(404)
    const after = await metrics()
    const count = (s: Scrape, status: string) => s.value("http_server_requests_total", { ...route, status })
    expect(count(after, "200") - count(before, "200")).toBe(1)
    expect(count(after, "404") - count(before, "404")).toBe(1)
    expect(after.value("http_server_request_duration_seconds_count", route) -
      before.value("http_server_request_duration_seconds_count", route)).toBe(2)
    expect(after.value("http_server_request_duration_seconds_bucket", { ...route, le: "+Inf" }) -
      before.value("http_server_request_duration_seconds_bucket", { ...route, le: "+Inf" })).toBe(2)
    // The template, never the id.
    expect(after.text).not.toContain(id)
    expect(after.text).not.toContain(unknown)
    await call(app, "DELETE", `/api/partners/webhooks/${id}`, { key: account.testKey })
  })

  test("a webhook delivery: one attempt delivered, the queue's delivered rows", async () => {
    const before = await metrics()
    const hook = await call(app, "POST", "/api/partners/webhooks", {
      key: account.testKey,
      json: { url: `${receiver.url}/hooks/metrics`, events: ["reservation.created"] }
    })
    expect(hook.status).toBe(201)
    const created = await call(app, "POST", "/api/partners/reservations", {
      key: account.testKey,
      json: reservationBody(account.testProperties[0]!.property_id)
    })
    expect(created.status).toBe(201)
    await receiver.waitFor((r) => r.path === "/hooks/metrics")
    const after = await eventually((s) =>
      s.value("webhook_attempts_total", { outcome: "delivered" }) > before.value("webhook_attempts_total", { outcome: "delivered" }) &&
      s.value("job_queue_items", { queue: "webhook_deliveries", state: "delivered" }) >= 1
    )
    expect(after.value("webhook_attempts_total", { outcome: "delivered" }) -
      before.value("webhook_attempts_total", { outcome: "delivered" })).toBe(1)
    expect(after.value("job_queue_items", { queue: "webhook_deliveries", state: "pending" })).toBe(0)
    expect(after.value("job_queue_oldest_pending_age_seconds", { queue: "webhook_deliveries" })).toBe(0)
  })

  test("a failed TRA post (500): an Unknown outcome, the run's duration, the submission pending", async () => {
    const property = await traProperty(app, account.accountId, "Hotel Métricas", "55555", { reports_sire: false })
    expect((await register(property.property_id, bogotaToday())).status).toBe(201)
    const before = await metrics()
    expect(before.value("compliance_reports", { authority: "tra", state: "due" })).toBe(1)
    tra.faults.push("500")
    const run = await admin(app, (c) => c.RunReports({}))
    expect(run.tra.sent).toBe(1)
    expect(tra.requests.length).toBe(1)
    const after = await metrics()
    const unknown = { authority: "tra", outcome: "Unknown" }
    expect(after.value("authority_submissions_total", unknown) - before.value("authority_submissions_total", unknown)).toBe(1)
    expect(after.value("report_run_duration_seconds_count") - before.value("report_run_duration_seconds_count")).toBe(1)
    expect(after.value("job_queue_items", { queue: "tra_submissions", state: "pending" })).toBe(1)
    expect(after.value("job_queue_oldest_pending_age_seconds", { queue: "tra_submissions" })).toBeGreaterThanOrEqual(0)
    // Still due: it waits for its retry.
    expect(after.value("compliance_reports", { authority: "tra", state: "due" })).toBe(1)
  })

  test("a SIRE file posted to the gateway: counted by its outcome", async () => {
    const property = await traProperty(app, account.accountId, "Hotel Migración", "77777", {
      sire_hotel_code: "4321",
      sire_city_code: "5001"
    })
    const body = registrationBody(property.property_id, [foreigner({ numero_documento: `P${documents++}` })], {
      check_in: bogotaToday(),
      check_out: "2099-01-03",
      room_number: "102"
    })
    expect((await call(app, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })).status).toBe(201)
    const before = await metrics()
    const run = await admin(app, (c) => c.RunReports({}))
    expect(run.sire.sent).toBe(1)
    expect(sire.uploads.length).toBe(1)
    const after = await metrics()
    const answered = { authority: "sire", outcome: "Answered" }
    expect(after.value("authority_submissions_total", answered) - before.value("authority_submissions_total", answered))
      .toBe(1)
    expect(after.value("job_queue_items", { queue: "sire_movements", state: "accepted" })).toBe(1)
  })

  test("an overdue report: past its sends_on and not success, per authority", async () => {
    const before = await metrics()
    const noToken = await admin(app, (c) =>
      c.CreateProperty({ account_id: account.accountId, name: "Sin token", rnt_id: "44444", reports_sire: false }))
    const yesterday = new Date(Date.parse(`${bogotaToday()}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10)
    const res = await register(noToken.property_id, yesterday)
    expect(res.status).toBe(201)
    expect(res.body.tra.sends_on).toBe(yesterday)
    const after = await metrics()
    expect(after.value("compliance_reports", { authority: "tra", state: "overdue" }) -
      before.value("compliance_reports", { authority: "tra", state: "overdue" })).toBe(1)
    expect(after.value("compliance_reports", { authority: "sire_entry", state: "overdue" })).toBe(0)
  })

  test("a rate-limit refusal: counted by owner and bucket", async () => {
    const other = await seedAccount(app, "Hotel Limitado")
    await admin(app, (c) => c.SetLimits({ account_id: other.accountId, reads: 1 }))
    const before = await metrics()
    expect((await call(app, "GET", "/api/partners/properties", { key: other.testKey })).status).toBe(200)
    expect((await call(app, "GET", "/api/partners/properties", { key: other.testKey })).status).toBe(429)
    const after = await metrics()
    const reads = { owner: "api_key", bucket: "reads" }
    expect(after.value("rate_limit_refusals_total", reads) - before.value("rate_limit_refusals_total", reads)).toBe(1)
    expect(after.value("http_server_requests_total", { route: "/api/partners/properties", status: "429" }) -
      before.value("http_server_requests_total", { route: "/api/partners/properties", status: "429" })).toBe(1)
  })

  test("traces unset: no trace context is stored with the jobs (the statements are those of before)", async () => {
    const [counts] = await db.query<{ events: number; with_context: number }>(
      `SELECT (SELECT count(*) FROM events)::int AS events,
        ((SELECT count(*) FROM events WHERE trace_parent IS NOT NULL) +
         (SELECT count(*) FROM reservations WHERE trace_parent IS NOT NULL))::int AS with_context`
    )
    expect(counts!.events).toBeGreaterThan(0)
    expect(counts!.with_context).toBe(0)
  })

  test("the Grafana dashboard (docs/ops) queries only metrics the listener exports, with their labels", async () => {
    const dashboard = await Bun.file(`${ROOT}docs/ops/grafana-dashboard.json`).json()
    const exported = await metrics()
    const names = new Set(exported.series.map((s) => s.name))
    const labels = new Set(exported.series.flatMap((s) => Object.keys(s.labels)))
    const panels = (dashboard.panels as Array<any>).filter((panel) => panel.type !== "row")
    expect(panels.length).toBeGreaterThan(10)
    const uses = panels.flatMap((panel) =>
      (panel.targets as Array<{ expr: string }>).flatMap(({ expr }) =>
        [...expr.matchAll(/([a-z_][a-z0-9_]*)\{([^}]*)\}/g)].map((m) => ({ metric: m[1]!, matchers: m[2]!, expr }))
      )
    )
    expect(uses.length).toBeGreaterThan(15)
    for (const use of uses) {
      expect(names.has(use.metric), `${use.metric} in ${use.expr}`).toBe(true)
      for (const [, label] of use.matchers.matchAll(/([a-z_]+)\s*=~?/g)) {
        // `job` and `instance` are added by Prometheus at the scrape.
        if (label !== "job" && label !== "instance") expect(labels.has(label!), `${label} in ${use.expr}`).toBe(true)
      }
    }
    // Every family the service defines has a panel.
    for (const family of ["http_server_requests_total", "http_server_request_duration_seconds_bucket", "job_queue_items",
      "job_queue_oldest_pending_age_seconds", "webhook_attempts_total", "authority_submissions_total", "compliance_reports",
      "report_run_duration_seconds_bucket", "rate_limit_refusals_total", "db_pool_connections"]) {
      expect(uses.some((use) => use.metric === family), family).toBe(true)
    }
  })

  test("the database pool: its size and connections", async () => {
    const s = await metrics()
    expect(s.value("db_pool_max_connections")).toBe(10)
    expect(s.value("db_pool_connections", { state: "idle" }) + s.value("db_pool_connections", { state: "in_use" }))
      .toBeGreaterThanOrEqual(1)
  })
})
