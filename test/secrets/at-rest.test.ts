import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, Layer, type ManagedRuntime, TestClock, TestContext } from "effect"
import * as DocumentStore from "../../src/documents/DocumentStore.ts"
import { Retention } from "../../src/documents/Retention.ts"
import { admin, call, type RunningApp, seedAccount, startApp, stopAll, traProperty } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { bodyOf, type Receiver, startReceiver, verifyReceived } from "../support/receiver.ts"
import { serviceRuntime } from "../support/services.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * What the database holds at rest (design §3): after a full flow — a property with its TRA token, a webhook
 * endpoint with guests, a live registration reported to the TRA and into a SIRE file, its events delivered —
 * every text and JSON column of every table is read directly. No TRA token and no webhook secret is there in
 * clear; the guests' document numbers are in the guests' own rows (the reservation's record) and, until 30 days
 * after check-out, in the event bodies and the SIRE file; then the retention job removes them from those, and
 * the delivery history stays.
 */

let db: TestDatabase
let app: RunningApp
let tra: FakeTra
let receiver: Receiver
let account: Awaited<ReturnType<typeof seedAccount>>
let retention: ManagedRuntime.ManagedRuntime<Retention, unknown>

const CHECK_OUT = "2099-01-03"
const COLOMBIAN_DOCUMENT = "80123456"
const PASSPORT = "ZX9081726"

beforeAll(async () => {
  db = await freshDatabase()
  tra = startFakeTra()
  receiver = startReceiver()
  app = await startApp({
    DATABASE_URL: db.url,
    TRA_BASE_URL: tra.url,
    SIRE_MODE: "manual",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true"
  })
  account = await seedAccount(app)
  retention = serviceRuntime(app, Retention.Default.pipe(Layer.provide(DocumentStore.filesystem)))
})

afterAll(() => stopAll(retention, app, db, tra, receiver))

/** Every `table.column` of a text, varchar, json or jsonb column whose text contains `needle`. */
const columnsHolding = async (needle: string): Promise<Array<string>> => {
  const columns = await db.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'json', 'jsonb')
     ORDER BY table_name, column_name`
  )
  expect(columns.length).toBeGreaterThan(40)
  const found: Array<string> = []
  for (const { column_name, table_name } of columns) {
    const [row] = await db.query<{ hits: number }>(
      `SELECT count(*)::int AS hits FROM "${table_name}" WHERE strpos("${column_name}"::text, $1) > 0`,
      [needle]
    )
    if (row!.hits > 0) found.push(`${table_name}.${column_name}`)
  }
  return found
}

/** Runs the retention job once on a TestClock set to noon (Bogotá) of `date`. */
const retentionOn = (date: string) =>
  retention.runPromise(
    Effect.zipRight(
      TestClock.setTime(Date.parse(`${date}T17:00:00Z`)),
      Effect.flatMap(Retention, (r) => Effect.zip(r.run, r.redact))
    ).pipe(Effect.provide(TestContext.TestContext))
  )

describe("secrets and personal data at rest (design §3)", () => {
  let secret: string
  let externalId: string

  test("a full flow: token and secret never in clear; document numbers in events and the SIRE file for now", async () => {
    const property = await traProperty(app, account.accountId, "Hotel Reposo", "24680", {
      establishment_name: "Hotel Reposo SAS",
      sire_hotel_code: "13579",
      sire_city_code: "11001"
    })
    const created = await call(app, "POST", "/api/partners/webhooks", {
      key: account.liveKey,
      json: { url: `${receiver.url}/hooks/at-rest`, events: ["*"], include_guests: true }
    })
    expect(created.status).toBe(201)
    secret = created.body.secret
    const body = registrationBody(property.property_id, [
      colombian({ numero_documento: COLOMBIAN_DOCUMENT }),
      foreigner({ numero_documento: PASSPORT, doc_photo_front_url: undefined, doc_photo_back_url: undefined })
    ], { check_in: bogotaToday(), check_out: CHECK_OUT, room_number: "7", total_amount: 500000, currency: "COP" })
    externalId = body.external_id as string
    const submitted = await call(app, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })
    expect(submitted.status).toBe(201)
    const summary = await admin(app, (c) => c.RunReports({}))
    expect(summary.tra.accepted).toBe(2)
    expect(summary.sire.sent).toBe(1)
    expect(tra.mains().at(-1)!.auth).toBe("valid")

    // The registration's event reached the partner with its guests, signed with the secret given at creation.
    const [delivered] = await receiver.waitFor((r) => bodyOf(r).type === "registration.completed", 20_000)
    expect(verifyReceived(delivered!, secret)).toBe(true)
    expect(delivered!.body).toContain(PASSPORT)

    expect(await columnsHolding(DEFAULT_TOKEN)).toEqual([])
    expect(await columnsHolding(secret)).toEqual([])
    expect(await columnsHolding(secret.slice("whsec_".length))).toEqual([])
    // A secret rotated through endpoint 13 is stored sealed too, and signs from then on.
    const rotated = await call(app, "POST", `/api/partners/webhooks/${created.body.id}/rotate-secret`, { key: account.liveKey })
    expect(rotated.status).toBe(200)
    expect(await columnsHolding(rotated.body.secret)).toEqual([])
    receiver.clear()
    expect((await call(app, "POST", `/api/partners/webhooks/${created.body.id}/test`, { key: account.liveKey })).status).toBe(200)
    const [ping] = await receiver.waitFor((r) => bodyOf(r).type === "ping")
    expect(verifyReceived(ping!, rotated.body.secret)).toBe(true)
    secret = rotated.body.secret
    expect(await columnsHolding(PASSPORT)).toEqual(["events.body", "guests.numero_documento", "sire_files.content"])
    expect(await columnsHolding(COLOMBIAN_DOCUMENT)).toEqual(["events.body", "guests.numero_documento"])
  }, 60_000)

  test("30 days after check-out the retention job removes them; the delivery history stays and redelivers", async () => {
    const deliveriesBefore = await db.query(
      "SELECT id, event_id, event_type, status, attempts FROM webhook_deliveries ORDER BY seq"
    )
    expect(deliveriesBefore.length).toBeGreaterThan(0)
    const [filesBefore] = await db.query<{ lines: number; name: string }>("SELECT name, lines FROM sire_files")

    // 30 days after check-out: still kept
    expect((await retentionOn("2099-02-02"))[1]).toEqual({ stays: 0, files: 0 })
    expect(await columnsHolding(PASSPORT)).toContain("events.body")
    // 31 days
    expect((await retentionOn("2099-02-03"))[1]).toEqual({ stays: 1, files: 1 })

    expect(await columnsHolding(PASSPORT)).toEqual(["guests.numero_documento"])
    expect(await columnsHolding(COLOMBIAN_DOCUMENT)).toEqual(["guests.numero_documento"])
    expect(await columnsHolding("Pérez Gómez")).toEqual(["guests.apellido"])
    expect(await columnsHolding(DEFAULT_TOKEN)).toEqual([])
    expect(await columnsHolding(secret)).toEqual([])

    // Delivery rows, statuses, event ids and types as they were; the file keeps its name and line count.
    expect(await db.query("SELECT id, event_id, event_type, status, attempts FROM webhook_deliveries ORDER BY seq"))
      .toEqual(deliveriesBefore)
    expect(await db.query("SELECT name, lines, content, redacted_at IS NOT NULL AS redacted FROM sire_files")).toEqual([
      { ...filesBefore!, content: "", redacted: true }
    ])
    // The event bodies are still the events, without `guests`.
    const events = await db.query<{ type: string; body: Record<string, any> }>(
      "SELECT e.type, e.body FROM events e JOIN reservations r ON r.id = e.reservation_id WHERE r.external_id = $1 ORDER BY e.seq",
      [externalId]
    )
    const completed = events.find((e) => e.type === "registration.completed")!
    expect(completed.body.data).not.toHaveProperty("guests")
    expect(completed.body.data.external_id).toBe(externalId)

    // A redelivery sends the body as it is now, signed with the same secret.
    const history = await call(app, "GET", "/api/partners/webhooks/deliveries?event=registration.completed", { key: account.liveKey })
    expect(history.status).toBe(200)
    const delivery = history.body.deliveries[0]
    receiver.clear()
    const redelivered = await call(app, "POST", `/api/partners/webhooks/deliveries/${delivery.id}/redeliver`, { key: account.liveKey })
    expect(redelivered.status).toBeLessThan(300)
    const [again] = await receiver.waitFor((r) => bodyOf(r).type === "registration.completed", 20_000)
    expect(verifyReceived(again!, secret)).toBe(true)
    expect(bodyOf(again!).id).toBe(delivery.event_id)
    expect(again!.body).not.toContain(PASSPORT)

    // Done once: the next pass finds nothing.
    expect((await retentionOn("2099-02-04"))[1]).toEqual({ stays: 0, files: 0 })
  }, 60_000)
})
