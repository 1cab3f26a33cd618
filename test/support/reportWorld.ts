import { afterEach, expect } from "bun:test"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, type ManagedRuntime, Option, Redacted, TestClock, TestContext } from "effect"
import { Alerts } from "../../src/alerts/Alerts.ts"
import { Reference } from "../../src/compliance/Reference.ts"
import { ReportRuns } from "../../src/compliance/ReportRuns.ts"
import * as SireGateway from "../../src/compliance/SireGateway.ts"
import * as TraClient from "../../src/compliance/TraClient.ts"
import { call, type RunningApp, seedAccount, startApp, traProperty } from "./app.ts"
import { freshDatabase, type TestDatabase } from "./database.ts"
import { type FakeSire, startFakeSire } from "./fakeSire.ts"
import { type FakeTra, startFakeTra } from "./fakeTra.ts"
import { registrationBody } from "./guests.ts"
import { serviceRuntime as supportRuntime } from "./services.ts"
import { bogotaToday } from "./trm.ts"

/**
 * A live hotel and its authorities for report tests played over several Bogotá days: its own database, the app
 * (ROLE=api: no loop of its own), a fake TRA and a fake SIRE gateway, and a `ReportRuns` runtime whose clock a
 * test sets to noon in Bogotá of the day it plays (`runOn`). Dates count from the real Bogotá date (`day`), since
 * the API (creating, changing, cancelling) runs on the real clock.
 */
export const GATEWAY_TOKEN = "report-world-gateway-token"

/** A live hotel with its authorities: the fakes, its own database, the app, a live key and a reporting property. */
export interface LiveHotel {
  readonly tra: FakeTra
  readonly sire: FakeSire
  readonly db: TestDatabase
  readonly app: RunningApp
  readonly liveKey: string
  readonly propertyId: string
}

export interface ReportWorld extends LiveHotel {
  readonly runtime: ManagedRuntime.ManagedRuntime<ReportRuns | Alerts, unknown>
  readonly stop: () => Promise<void>
}

export const startReportWorld = async (
  mode: "manual" | "gateway",
  options: { readonly reportsTra?: boolean } = {}
): Promise<ReportWorld> => {
  const tra = startFakeTra()
  const sire = startFakeSire({ token: GATEWAY_TOKEN })
  const db = await freshDatabase()
  const env = { SIRE_MODE: mode, SIRE_GATEWAY_URL: sire.url, SIRE_GATEWAY_TOKEN: GATEWAY_TOKEN, TRA_BASE_URL: tra.url }
  const app = await startApp({ DATABASE_URL: db.url, ROLE: "api", ...env })
  const account = await seedAccount(app)
  const property = await traProperty(app, account.accountId, "Hotel Semana", "13579", {
    sire_hotel_code: "2468",
    sire_city_code: "11001",
    ...(options.reportsTra === false ? { reports_tra: false } : {})
  })
  const runtime = serviceRuntime(app, env, { tra, sire })
  return {
    tra,
    sire,
    db,
    app,
    liveKey: account.liveKey,
    propertyId: property.property_id,
    runtime,
    stop: async () => {
      await runtime.dispose()
      await app.stop()
      await db.drop()
      tra.stop()
      sire.stop()
    }
  }
}

/** A `startReportWorld` for one test file: every world it starts is stopped after its test. */
export const reportWorlds = () => {
  let worlds: Array<ReportWorld> = []
  afterEach(async () => {
    for (const world of worlds) await world.stop()
    worlds = []
  })
  return async (...args: Parameters<typeof startReportWorld>) => {
    const world = await startReportWorld(...args)
    worlds.push(world)
    return world
  }
}

const serviceRuntime = (
  app: RunningApp,
  env: Readonly<Record<string, string>>,
  fakes: { readonly tra: FakeTra; readonly sire: FakeSire }
) =>
  supportRuntime(
    app,
    Layer.merge(Alerts.Default, ReportRuns.Default.pipe(
      Layer.provide([
        TraClient.layer({ baseUrl: fakes.tra.url, concurrency: 2 }),
        SireGateway.layer({ url: fakes.sire.url, token: Option.some(Redacted.make(GATEWAY_TOKEN)) }).pipe(
          Layer.provide(FetchHttpClient.layer)
        ),
        Reference.default
      ])
    )),
    env
  )

/** The Bogotá date `days` after today's. */
export const day = (days: number) =>
  new Date(Date.parse(`${bogotaToday()}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
/** `YYYY-MM-DD` as the SIRE file writes dates. */
export const sireDate = (date: string) => date.split("-").reverse().join("/")

/** A report run at noon in Bogotá (17:00 UTC) of `date`, on the runtime's TestClock. */
export const runOn = (world: ReportWorld, date: string) =>
  world.runtime.runPromise(
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse(`${date}T17:00:00Z`))
      return yield* Effect.flatMap(ReportRuns, (runs) => runs.run())
    }).pipe(Effect.provide(TestContext.TestContext))
  )

/** The alert scan, as a worker runs it. */
export const scanAlerts = (world: ReportWorld) => world.runtime.runPromise(Effect.flatMap(Alerts, (alerts) => alerts.scan))

/** Endpoint 7 with these guests; answers the external id. */
export const registerGuests = async (
  world: ReportWorld,
  guests: ReadonlyArray<Record<string, unknown>>,
  stay: { readonly check_in: string; readonly check_out: string }
) => {
  const body = registrationBody(world.propertyId, guests, stay)
  const res = await call(world.app, "POST", "/api/partners/registrations", { key: world.liveKey, json: body })
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 201 })
  return body.external_id as string
}

export const detail = async (world: ReportWorld, externalId: string) =>
  (await call(world.app, "GET", `/api/partners/registrations?external_id=${externalId}`, { key: world.liveKey })).body

export const cancel = async (world: ReportWorld, externalId: string) => {
  const res = await call(world.app, "POST", "/api/partners/reservations/cancel", {
    key: world.liveKey,
    json: { external_id: externalId }
  })
  expect(res.status).toBe(200)
  return res.body
}

/** The SIRE lines the gateway received for a document number: [movement, date] per line. */
export const sireLinesOf = (world: ReportWorld, document: string) =>
  world.sire.uploads.flatMap((upload) => upload.rows.filter((row) => row[3] === document).map((row) => [row[8], row[9]]))

export const eventsOf = async (world: ReportWorld, externalId: string) =>
  (await world.db.query<{ type: string }>(
    "SELECT e.type FROM events e JOIN reservations r ON r.id = e.reservation_id WHERE r.external_id = $1 ORDER BY e.seq",
    [externalId]
  )).map((event) => event.type)
