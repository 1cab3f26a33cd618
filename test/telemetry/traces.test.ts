import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { admin, call, type RunningApp, seedAccount, startApp, stopAll, traProperty } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, registrationBody, reservationBody } from "../support/guests.ts"
import { outputOf, ROOT } from "../support/process.ts"
import { type Receiver, startReceiver } from "../support/receiver.ts"
import { panelClient } from "../support/panel.ts"
import { type FakeSmtp, startFakeSmtp } from "../support/smtp.ts"
import { type ExportedSpan, type OtlpReceiver, startOtlpReceiver } from "../support/telemetry.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * Traces over OTLP/HTTP (design §9) to a real in-process receiver: the app (ROLE=all) with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` set, a webhook receiver and a fake TRA. One reservation's journey — the partner's
 * request, its SQL, the outbox, the webhook attempt made later by the delivery loop, and the TRA submission
 * made by a report run — reads as one trace. The app is stopped before the spans are read: its shutdown flushes
 * the exporter's batch, so every span ended before it is at the receiver.
 */
let db: TestDatabase
let app: RunningApp
let otlp: OtlpReceiver
let receiver: Receiver
let tra: FakeTra
let smtp: FakeSmtp
let account: Awaited<ReturnType<typeof seedAccount>>
let checkinToken = ""

beforeAll(async () => {
  db = await freshDatabase()
  otlp = startOtlpReceiver()
  receiver = startReceiver()
  tra = startFakeTra()
  smtp = await startFakeSmtp()
  app = await startApp({
    SMTP_URL: smtp.url,
    DATABASE_URL: db.url,
    OTEL_EXPORTER_OTLP_ENDPOINT: `${otlp.url}/`,
    OTEL_SERVICE_NAME: "registro-test",
    TRA_BASE_URL: tra.url,
    REPORTS_EVERY: "24 hours",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true"
  })
  account = await seedAccount(app)
})

afterAll(() => stopAll(app, db, otlp, receiver, tra, smtp))

const inTrace = (traceId: string) => otlp.spans.filter((span) => span.traceId === traceId)
const names = (spans: ReadonlyArray<ExportedSpan>) => [...new Set(spans.map((span) => span.name))].sort()
/** Follows parents up to the root: `ancestor` is on the way. */
const descendsFrom = (span: ExportedSpan, ancestor: ExportedSpan) => {
  const byId = new Map(otlp.spans.map((s) => [s.spanId, s]))
  for (let at: ExportedSpan | undefined = span; at !== undefined; at = byId.get(at.parentSpanId)) {
    if (at.spanId === ancestor.spanId) return true
  }
  return false
}

describe("traces over OTLP/HTTP (design §9)", () => {
  test("one trace from the partner's request through the outbox to the webhook attempt and the TRA submission", async () => {
    const hook = await call(app, "POST", "/api/partners/webhooks", {
      key: account.liveKey,
      json: { url: `${receiver.url}/hooks/traced`, events: ["reservation.created"] }
    })
    expect(hook.status).toBe(201)
    const property = await traProperty(app, account.accountId, "Hotel Trazado", "66666", { reports_sire: false })
    const body = registrationBody(property.property_id, [colombian({ numero_documento: "51000001" })], {
      check_in: bogotaToday(),
      check_out: "2099-01-03",
      room_number: "301"
    })
    const created = await call(app, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })
    expect(created.status).toBe(201)
    await receiver.waitFor((r) => r.path === "/hooks/traced")
    // The TRA is posted by a report run, long after the request (here at once, through the admin RPC).
    expect((await admin(app, (c) => c.RunReports({}))).tra).toMatchObject({ sent: 1, accepted: 1 })
    // A guest's check-in: its token never reaches the collector.
    const stay = await call(app, "POST", "/api/partners/reservations", {
      key: account.testKey,
      json: reservationBody(account.testProperties[0]!.property_id)
    })
    expect(stay.status).toBe(201)
    checkinToken = new URL(stay.body.checkin_url as string).pathname.split("/").at(-1)!
    expect((await call(app, "GET", `/api/checkin/${checkinToken}`)).status).toBe(200)
    expect((await call(app, "GET", `/checkin/${checkinToken}?lang=en`)).status).toBe(200)
    // A browser that ignored the page's Referrer-Policy would send the page's URL with its assets' requests.
    expect((await call(app, "GET", `/api/checkin/${checkinToken}`, {
      headers: { referer: `https://registro.example.co/checkin/${checkinToken}` }
    })).status).toBe(200)
    // The panel's sign-in: the code's e-mail is sent by the mail loop, in the request's trace; the session's
    // CSRF token, sent on the sign-out, is not exported.
    const panel = panelClient(app, smtp)
    await panel.signIn("hoteleraandina@example.co")
    expect((await panel.request("DELETE", "/api/panel/session")).status).toBe(200)
    // Probes are answered without a span.
    expect((await call(app, "GET", "/healthz")).status).toBe(200)
    expect((await call(app, "GET", "/readyz")).status).toBe(200)
    // The attempt is recorded after the receiver answered; then the shutdown flushes every ended span.
    await Bun.sleep(300)
    await app.stop()

    expect(otlp.refused).toEqual([])
    expect(otlp.spans.length).toBeGreaterThan(0)
    expect(new Set(otlp.spans.map((span) => span.serviceName))).toEqual(new Set(["registro-test"]))

    const request = otlp.spans.find((span) =>
      span.name === "http.server POST" && span.attributes["url.path"] === "/api/partners/registrations"
    )
    if (request === undefined) throw new Error(`no request span; spans: ${names(otlp.spans).join(", ")}`)
    expect(request.parentSpanId).toBe("")
    const trace = inTrace(request.traceId)
    const trail = names(trace).join(", ")

    // The request's SQL and the outbox, inside it.
    const statements = trace.filter((span) => span.name === "sql.execute")
    expect(statements.length, trail).toBeGreaterThan(0)
    expect(statements.some((span) => String(span.attributes["db.query.text"] ?? "").includes("INSERT INTO reservations")))
      .toBe(true)
    const enqueue = trace.find((span) => span.name === "Outbox.enqueue")
    expect(enqueue, trail).toBeDefined()
    expect(descendsFrom(enqueue!, request)).toBe(true)

    // The webhook attempt, made by the delivery loop from the stored trace context: a child of the outbox write.
    const attempt = trace.find((span) => span.name === "Deliveries.attempt")
    expect(attempt, trail).toBeDefined()
    expect(attempt!.parentSpanId).toBe(enqueue!.spanId)
    const outbound = trace.filter((span) => span.name === "http.client POST" && descendsFrom(span, attempt!))
    expect(outbound.length, trail).toBe(1)
    expect(outbound[0]!.attributes["http.response.status_code"]).toBe(200)
    // The attempt's own SQL (the recorded outcome) is in the same trace.
    expect(trace.some((span) => span.name === "sql.execute" && descendsFrom(span, attempt!))).toBe(true)

    // The TRA submission, made by the report run: in the request's trace, linked to the run's.
    const reportWork = trace.find((span) => span.name === "ReportRuns.reservation")
    expect(reportWork, trail).toBeDefined()
    expect(reportWork!.links.length).toBe(1)
    const run = otlp.spans.find((span) => span.name === "ReportRuns.run" && span.spanId === reportWork!.links[0]!.spanId)
    expect(run?.traceId).toBe(reportWork!.links[0]!.traceId)
    expect(run?.traceId).not.toBe(request.traceId)
    const submission = trace.find((span) => span.name === "TraClient.submitMain")
    expect(submission, trail).toBeDefined()
    expect(descendsFrom(submission!, reportWork!)).toBe(true)
    expect(submission!.attributes["tra.outcome"]).toBe("Accepted")
    const traPost = trace.find((span) => span.name === "http.client POST" && descendsFrom(span, submission!))
    expect(traPost, trail).toBeDefined()
    // No trace headers to a government service, nor to a partner's endpoint.
    expect(tra.requests[0]!.headers["traceparent"]).toBeUndefined()
    expect(receiver.matching((r) => r.path === "/hooks/traced")[0]!.headers["traceparent"]).toBeUndefined()
  }, 60_000)

  test("the stored trace context: the reservation and its event keep the request's traceparent", async () => {
    const [row] = await db.query<{ trace_parent: string | null; event_trace: string | null }>(
      `SELECT r.trace_parent, e.trace_parent AS event_trace
       FROM reservations r JOIN events e ON e.reservation_id = r.id WHERE r.room_number = '301' LIMIT 1`
    )
    expect(row?.trace_parent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    expect(row?.event_trace?.slice(0, 35)).toBe(row?.trace_parent?.slice(0, 35))
    const request = otlp.spans.find((span) => span.name === "http.server POST" && row?.trace_parent?.includes(span.traceId))
    expect(request).toBeDefined()
  })

  test("an e-mail: queued by the request, sent by the mail loop in its trace", () => {
    const request = otlp.spans.find((span) =>
      span.name === "http.server POST" && span.attributes["url.path"] === "/api/panel/session/code"
    )!
    expect(request).toBeDefined()
    const trace = inTrace(request.traceId)
    const enqueue = trace.find((span) => span.name === "MailQueue.enqueue")
    expect(enqueue, names(trace).join(", ")).toBeDefined()
    const deliver = trace.find((span) => span.name === "MailQueue.deliver")
    expect(deliver, names(trace).join(", ")).toBeDefined()
    expect(deliver!.parentSpanId).toBe(enqueue!.spanId)
    const send = trace.find((span) => span.name === "Mailer.send")
    expect(send).toBeDefined()
    expect(descendsFrom(send!, deliver!)).toBe(true)
  })

  test("the panel's CSRF header is recorded redacted", () => {
    const signOut = otlp.spans.find((span) =>
      span.name === "http.server DELETE" && span.attributes["url.path"] === "/api/panel/session"
    )!
    expect(signOut).toBeDefined()
    expect(signOut.attributes["http.request.header.x-panel-csrf"]).toBe("<redacted>")
    expect(signOut.attributes["http.request.header.cookie"]).toBe("<redacted>")
  })

  test("a check-in token is never exported: the request spans say :token", () => {
    expect(checkinToken.length).toBeGreaterThan(20)
    const exported = JSON.stringify(otlp.spans)
    expect(exported).not.toContain(checkinToken)
    const paths = new Set(otlp.spans.map((span) => span.attributes["url.path"]))
    expect(paths.has("/api/checkin/:token")).toBe(true)
    expect(paths.has("/checkin/:token")).toBe(true)
    const page = otlp.spans.find((span) => span.attributes["url.path"] === "/checkin/:token")!
    expect(page.attributes["url.full"]).toEndWith("/checkin/:token?lang=en")
  })

  test("probes make no spans (the other requests do)", () => {
    const paths = new Set(otlp.spans.map((span) => span.attributes["url.path"]))
    expect(paths.has("/api/partners/webhooks")).toBe(true)
    expect(paths.has("/healthz")).toBe(false)
    expect(paths.has("/readyz")).toBe(false)
  })
})

describe("telemetry unset (design §9)", () => {
  test("nothing of OpenTelemetry is loaded: no exporter, no SDK, no metrics producer", async () => {
    const local = await freshDatabase()
    try {
      const child = Bun.spawn([process.execPath, `${ROOT}test/support/telemetry-unset.ts`], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: local.url, METRICS_PORT: "", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
        stdout: "pipe",
        stderr: "pipe"
      })
      const { code, stdout, stderr } = await outputOf(child)
      expect(code, stderr).toBe(0)
      expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({ status: 200, loaded: [] })
    } finally {
      await local.drop()
    }
  })
})
