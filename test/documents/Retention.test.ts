import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, Layer, type ManagedRuntime, TestClock, TestContext } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as DocumentStore from "../../src/documents/DocumentStore.ts"
import { keptSince, Retention } from "../../src/documents/Retention.ts"
import { call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { colombian, reservationBody } from "../support/guests.ts"
import { JPEG } from "../support/photos.ts"
import { serviceRuntime } from "../support/services.ts"

/** Photos are deleted 30 days after check-out (design §5), by a job driven here on a TestClock. */
let db: TestDatabase
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>
let runtime: ManagedRuntime.ManagedRuntime<Retention, unknown>

beforeAll(async () => {
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api" })
  account = await seedAccount(app)
  runtime = serviceRuntime(app, Retention.Default.pipe(Layer.provide(DocumentStore.filesystem)))
})

afterAll(async () => {
  await runtime?.dispose()
  await app?.stop()
  await db?.drop()
})

describe("document retention (design §5)", () => {
  test("keptSince: the last check-out whose photos are kept", () => {
    expect(keptSince("2027-01-31")).toBe("2027-01-01")
    expect(keptSince("2027-03-01")).toBe("2027-01-30")
  })

  test("a stay's photos are deleted once its check-out is more than 30 days past, not before", async () => {
    // Sandbox property 2 requires document photos.
    const body = reservationBody(account.testProperties[1]!.property_id, { guests_count: 1, check_in: "2026-12-20", check_out: "2026-12-23" })
    const created = await call(app, "POST", "/api/partners/reservations", { key: account.testKey, json: body })
    const token = (created.body.checkin_url as string).split("/checkin/")[1]!
    const guest = await call(app, "POST", `/api/checkin/${token}/guests`, { json: { ...colombian(), motivo: "Trabajo" } })
    const form = new FormData()
    form.append("front", new Blob([JPEG as BlobPart]), "front.jpg")
    const uploaded = await fetch(`${app.baseUrl}/api/checkin/${token}/guests/${guest.body.guest_id}/document`, { method: "PUT", body: form })
    expect(uploaded.status).toBe(200)
    const file = NodePath.join(app.dataDir, "documents", guest.body.guest_id, "front")
    await NodeFs.stat(file)

    const run = (bogotaNoon: string) =>
      runtime.runPromise(
        Effect.zipRight(TestClock.setTime(Date.parse(`${bogotaNoon}T17:00:00Z`)), Effect.flatMap(Retention, (r) => r.run)).pipe(
          Effect.provide(TestContext.TestContext)
        )
      )
    expect(await run("2027-01-22")).toBe(0) // 30 days after check-out: still kept
    await NodeFs.stat(file)
    expect(await run("2027-01-23")).toBe(1)
    await expect(NodeFs.stat(file)).rejects.toThrow()
    expect(await db.query("SELECT 1 FROM guest_documents WHERE guest_id = $1", [guest.body.guest_id])).toEqual([])
    expect(await run("2027-01-24")).toBe(0)
  })
})
