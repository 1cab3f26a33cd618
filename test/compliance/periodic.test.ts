import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, Fiber, Layer, type ManagedRuntime, Redacted, TestClock, TestContext } from "effect"
import { Reference } from "../../src/compliance/Reference.ts"
import { periodic, ReportRuns } from "../../src/compliance/ReportRuns.ts"
import { SireGateway } from "../../src/compliance/SireGateway.ts"
import * as TraClient from "../../src/compliance/TraClient.ts"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { serviceRuntime } from "../support/services.ts"

/**
 * The periodic run on a TestClock (design §6.8): a reservation arriving tomorrow (Bogotá) is not sent by the
 * runs of today, and is sent by the first run after midnight in Bogotá. The app runs with ROLE=api; the loop
 * under test is the only one.
 */
let tra: FakeTra
let db: TestDatabase
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>
let property: { property_id: string }
let runtime: ManagedRuntime.ManagedRuntime<ReportRuns, unknown>

beforeAll(async () => {
  tra = startFakeTra()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api", TRA_BASE_URL: tra.url })
  account = await seedAccount(app)
  property = await admin(app, (c) =>
    c.CreateProperty({
      account_id: account.accountId,
      name: "Hotel Reloj",
      rnt_id: "24680",
      tra_token: Redacted.make(DEFAULT_TOKEN),
      sire_hotel_code: "1",
      sire_city_code: "11001"
    }))
  runtime = serviceRuntime(
    app,
    ReportRuns.Default.pipe(
      Layer.provide([
        TraClient.layer({ baseUrl: tra.url, concurrency: 2 }),
        Layer.succeed(SireGateway, { submit: () => Effect.dieMessage("manual mode") }),
        Reference.default
      ])
    )
  )
})

afterAll(async () => {
  await runtime?.dispose()
  await app?.stop()
  await db?.drop()
  tra?.stop()
})

describe("periodic report runs (TestClock)", () => {
  test("runs every REPORTS_EVERY; a stay is sent by the first run on its arrival date in Bogotá, not before", async () => {
    const today = new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10)
    const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
    const body = registrationBody(property.property_id, [colombian(), foreigner()], { check_in: tomorrow, check_out: "2099-02-01" })
    const res = await call(app, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })
    expect(res.status).toBe(201)

    const seen = await runtime.runPromise(Effect.gen(function*() {
      // 22:00 in Bogotá the day before arrival (03:00 UTC on the arrival date).
      yield* TestClock.setTime(Date.parse(`${tomorrow}T03:00:00Z`))
      const fiber = yield* Effect.fork(periodic("1 hour"))
      const counts: Array<number> = []
      for (let hour = 0; hour < 4; hour++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300))) // let the run finish
        counts.push(tra.mains().length)
        yield* TestClock.adjust("1 hour")
      }
      yield* Fiber.interrupt(fiber)
      return counts
    }).pipe(Effect.provide(TestContext.TestContext)))
    // 22:00 and 23:00 the day before: nothing; 00:00 (the arrival date in Bogotá): sent; then never again.
    expect(seen).toEqual([0, 0, 1, 1])
    const detail = await call(app, "GET", `/api/partners/registrations?external_id=${body.external_id}`, { key: account.liveKey })
    expect(detail.body.tra.status).toBe("success")
  })
})
