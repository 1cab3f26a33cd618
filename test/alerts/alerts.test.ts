import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, Layer, type ManagedRuntime, Redacted, TestClock, TestContext } from "effect"
import { Alerts } from "../../src/alerts/Alerts.ts"
import * as Mailer from "../../src/mail/Mailer.ts"
import { MailQueue } from "../../src/mail/MailQueue.ts"
import { admin, call, type RunningApp, seedAccount, startApp, stopAll, traProperty } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, registrationBody } from "../support/guests.ts"
import { type PanelClient, panelClient } from "../support/panel.ts"
import { type Receiver, startReceiver } from "../support/receiver.ts"
import { serviceRuntime } from "../support/services.ts"
import { type FakeSmtp, startFakeSmtp } from "../support/smtp.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * Alerts to the account holder (design §9), end to end: the scan runs on a `TestClock` (its own runtime on the
 * app's database), the app (ROLE=all, its own scan and report run once at start and then a day apart) sends the
 * queued e-mails to a real SMTP server, and the panel lists the alerts. Each cause is mailed once, in the
 * account's language, and resolved when it is gone.
 */
let db: TestDatabase
let app: RunningApp
let smtp: FakeSmtp
let tra: FakeTra
let receiver: Receiver
let runtime: ManagedRuntime.ManagedRuntime<Alerts | MailQueue | Mailer.Mailer, unknown>
let account: Awaited<ReturnType<typeof seedAccount>>
const EMAIL = "alertas@hotelandino.example.co"

beforeAll(async () => {
  db = await freshDatabase()
  smtp = await startFakeSmtp()
  tra = startFakeTra()
  receiver = startReceiver()
  app = await startApp({
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    TRA_BASE_URL: tra.url,
    REPORTS_EVERY: "24 hours",
    ALERTS_EVERY: "24 hours",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    PUBLIC_BASE_URL: "https://registro.example.co"
  })
  const created = await admin(app, (c) => c.CreateAccount({ name: "Hotelera Alertas", email: EMAIL }))
  const sandbox = await admin(app, (c) => c.CreateSandbox({ account_id: created.account_id }))
  const live = await admin(app, (c) => c.CreateKey({ account_id: created.account_id, environment: "live" }))
  account = { accountId: created.account_id, testKey: sandbox.api_key, liveKey: live.api_key, testProperties: sandbox.properties }
  runtime = serviceRuntime(app, Layer.mergeAll(Alerts.Default, MailQueue.Default, Mailer.layer), {
    PUBLIC_BASE_URL: "https://registro.example.co",
    SMTP_URL: smtp.url
  })
})

afterAll(() => stopAll(runtime, app, db, smtp, tra, receiver))

/**
 * One scan with the clock at `instant`, then the mail queue's due messages sent at that same instant (the
 * alert e-mails are queued at the scan's time, which the app's own mail loop, on the real clock, has not reached).
 */
const scanAt = (instant: Date) =>
  runtime.runPromise(
    Effect.gen(function*() {
      yield* TestClock.setTime(instant.getTime())
      const result = yield* Effect.flatMap(Alerts, (alerts) => alerts.scan)
      yield* Effect.flatMap(MailQueue, (queue) => queue.runDue())
      return result
    }).pipe(Effect.provide(TestContext.TestContext))
  )
/** Noon in Bogotá (17:00 UTC) `days` after today's date there. */
const noon = (days: number) => new Date(Date.parse(`${bogotaToday()}T17:00:00Z`) + days * 86_400_000)
const day = (days: number) => noon(days).toISOString().slice(0, 10)
let panel: PanelClient | undefined
const alertsInPanel = async () => {
  if (panel === undefined) {
    panel = panelClient(app, smtp)
    await panel.signIn(EMAIL)
  }
  const res = await panel.request("GET", "/api/panel/alerts")
  expect(res.status).toBe(200)
  return res.body.alerts as Array<Record<string, unknown>>
}
const mailsAbout = (text: string) => smtp.matching((mail) => mail.to.includes(EMAIL) && mail.subject.includes(text))

let documents = 30_000_000
const register = async (propertyId: string, checkIn: string) => {
  const body = registrationBody(propertyId, [colombian({ numero_documento: String(documents++) })], {
    check_in: checkIn,
    check_out: day(5),
    room_number: "101"
  })
  const res = await call(app, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })
  expect(res.status).toBe(201)
  return body.external_id as string
}

describe("alerts to the account holder (design §9)", () => {
  test("a report blocked by configuration on its due date: one e-mail, in the panel, resolved once fixed and sent", async () => {
    const property = await admin(app, (c) =>
      c.CreateProperty({ account_id: account.accountId, name: "Hotel Sin Token", rnt_id: "11223", reports_sire: false }))
    const externalId = await register(property.property_id, day(1))
    const pending = (await call(app, "GET", `/api/partners/registrations?external_id=${externalId}`, { key: account.liveKey })).body
    expect(pending.tra).toMatchObject({ status: "pending", warning: expect.stringContaining("token") })

    // The day before arrival: not due yet, nothing to say.
    expect((await scanAt(noon(0))).raised).toBe(0)
    // On the arrival date it is due and cannot go out: the holder is told once.
    expect(await scanAt(noon(1))).toMatchObject({ raised: 1 })
    expect((await scanAt(noon(1))).raised).toBe(0)
    const mail = await smtp.waitFor((m) => m.to.includes(EMAIL) && m.subject.includes(externalId), 15_000)
    expect(mail.subject).toBe(`Reporte TRA detenido por configuración: ${externalId}`)
    expect(mail.text).toContain("Hotel Sin Token")
    expect(mail.text).toContain("token")
    expect(mail.text).toContain("https://registro.example.co/panel")
    const [listed] = (await alertsInPanel()).filter((alert) => alert.external_id === externalId)
    expect(listed).toMatchObject({ kind: "report_blocked", authority: "tra", resolved_at: null })

    // Fixed: the token is set and the report goes out; the next scan resolves the alert, without another e-mail.
    await admin(app, (c) => c.UpdateProperty({ property_id: property.property_id, tra_token: Redacted.make(DEFAULT_TOKEN) }))
    await admin(app, (c) => c.RunReports({ date: day(1) }))
    expect((await scanAt(noon(1))).resolved).toBeGreaterThanOrEqual(1)
    const [resolved] = (await alertsInPanel()).filter((alert) => alert.external_id === externalId)
    expect(resolved!.resolved_at).toEqual(expect.any(String))
    expect(mailsAbout(externalId)).toHaveLength(1)
  })

  test("a report that ends in error is mailed once with the authority's reason", async () => {
    const property = await traProperty(app, account.accountId, "Hotel Rechazo", "44556", { reports_sire: false })
    const externalId = await register(property.property_id, bogotaToday())
    tra.faults.push({ kind: "400-reject", field: "numero_identificacion", reason: "Documento no válido" })
    await admin(app, (c) => c.RunReports({}))
    expect(await scanAt(new Date())).toMatchObject({ raised: 1 })
    const mail = await smtp.waitFor((m) => m.subject.includes(externalId), 15_000)
    expect(mail.subject).toBe(`Reporte TRA con error: ${externalId}`)
    expect(mail.text).toContain("Documento no válido")
    await scanAt(new Date())
    expect(mailsAbout(externalId)).toHaveLength(1)
  })

  test("a live webhook endpoint failing every delivery for 24 h: one e-mail; resolved after a delivery succeeds", async () => {
    receiver.on("/down", 500)
    const endpoint = await call(app, "POST", "/api/partners/webhooks", {
      key: account.liveKey,
      json: { url: `${receiver.url}/down`, events: ["reservation.created"] }
    })
    expect(endpoint.status).toBe(201)
    const property = await admin(app, (c) =>
      c.CreateProperty({ account_id: account.accountId, name: "Hotel Webhook", reports_sire: false, reports_tra: false }))
    await register(property.property_id, day(2))
    await receiver.waitFor((request) => request.path === "/down", 15_000)
    // Wait until the failed attempt is recorded.
    for (let i = 0; i < 100; i++) {
      const [row] = await db.query<{ attempts: number }>(
        "SELECT attempts FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq LIMIT 1",
        [endpoint.body.id]
      )
      if ((row?.attempts ?? 0) > 0) break
      await Bun.sleep(50)
    }

    const now = Date.now()
    expect((await scanAt(new Date(now + 23 * 3_600_000))).raised).toBe(0)
    expect(await scanAt(new Date(now + 25 * 3_600_000))).toMatchObject({ raised: 1 })
    const mail = await smtp.waitFor((m) => m.subject.includes(`${receiver.url}/down`), 15_000)
    expect(mail.subject).toBe(`Webhook sin entregas desde hace 24 horas: ${receiver.url}/down`)
    const [listed] = (await alertsInPanel()).filter((alert) => alert.endpoint_id === endpoint.body.id)
    expect(listed).toMatchObject({ kind: "webhook_failing", endpoint_url: `${receiver.url}/down`, resolved_at: null })

    // The endpoint answers again and a redelivery succeeds: the cause is gone.
    receiver.on("/down", 200)
    const [failed] = await db.query<{ id: string }>(
      "SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq LIMIT 1",
      [endpoint.body.id]
    )
    const redelivered = await call(app, "POST", `/api/partners/webhooks/deliveries/${failed!.id}/redeliver`, { key: account.liveKey })
    expect(redelivered.status).toBe(200)
    for (let i = 0; i < 200; i++) {
      const [row] = await db.query<{ status: string }>("SELECT status FROM webhook_deliveries WHERE id = $1", [failed!.id])
      if (row?.status === "delivered") break
      await Bun.sleep(50)
    }
    expect((await scanAt(new Date(now + 26 * 3_600_000))).resolved).toBeGreaterThanOrEqual(1)
    expect(smtp.matching((m) => m.subject.includes(`${receiver.url}/down`))).toHaveLength(1)
  })

  test("test-environment reports and endpoints never raise an alert", async () => {
    const before = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM alerts")
    const res = await call(app, "POST", "/api/partners/registrations", {
      key: account.testKey,
      json: {
        ...registrationBody(account.testProperties[0]!.property_id, [colombian({ numero_documento: String(documents++) })], {
          check_in: bogotaToday(),
          check_out: day(3)
        }),
        sandbox_simulate: "tra_failed"
      }
    })
    expect(res.status).toBe(201)
    expect(res.body.tra.status).toBe("error")
    await scanAt(new Date())
    expect(await db.query<{ n: number }>("SELECT count(*)::int AS n FROM alerts")).toEqual(before)
  })
})
