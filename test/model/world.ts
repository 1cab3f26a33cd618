import { Redacted } from "effect"
import { admin, call, type RunningApp, startApp, tempDir } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { type FakeSire, startFakeSire } from "../support/fakeSire.ts"
import { type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { type ServiceProcess, spawnService } from "../support/process.ts"
import { bogotaToday } from "../support/trm.ts"
import { type AuthorityProxy, startAuthorityProxy } from "./authorityProxy.ts"

/**
 * What every sequence of the model-based test shares (one per test file, for the budget): one database, one app
 * (ROLE=api: no report loop, runs only when a command asks), the fake TRA and the fake SIRE gateway, each behind
 * an `AuthorityProxy` that lets a sequence take its authority down or lose its answers. Sequences are isolated by
 * their own account, property, TRA token, SIRE hotel code and documents; when a sequence starts, the reservations
 * of earlier ones are parked (their report lease set to infinity, so no run claims them again) and the reference
 * overrides are cleared.
 */
export const GATEWAY_TOKEN = "model-gateway-token"
/** A crashed worker's claims lapse after this; the next run picks its work up. */
export const WORKER_LEASE_MS = 1_000

export interface World {
  readonly db: TestDatabase
  readonly app: RunningApp
  readonly tra: FakeTra
  readonly sire: FakeSire
  readonly traProxy: AuthorityProxy
  readonly sireProxy: AuthorityProxy
  /** Bogotá's date when the world started: day 0 of the model's week. */
  readonly today: string
  /** Whether `POST /api/partners/reservations/departure` exists in this build. */
  readonly hasDeparture: boolean
  readonly stop: () => Promise<void>
}

export const startWorld = async (): Promise<World> => {
  const tra = startFakeTra({ tokens: [] })
  const sire = startFakeSire({ token: GATEWAY_TOKEN })
  const traProxy = await startAuthorityProxy(tra.url)
  const sireProxy = await startAuthorityProxy(sire.url)
  const db = await freshDatabase()
  const app = await startApp({
    DATABASE_URL: db.url,
    ROLE: "api",
    TRA_BASE_URL: traProxy.url,
    SIRE_MODE: "gateway",
    SIRE_GATEWAY_URL: sireProxy.url,
    SIRE_GATEWAY_TOKEN: GATEWAY_TOKEN,
    REPORT_LEASE: "1 second"
  })
  const probe = await call(app, "POST", "/api/partners/reservations/departure", { json: {} })
  // An unknown route is 404 `not_found`; the endpoint itself answers 401 without a key.
  const hasDeparture = !(probe.status === 404 && (probe.body as { code?: string } | null)?.code === "not_found")
  return {
    db,
    app,
    tra,
    sire,
    traProxy,
    sireProxy,
    today: bogotaToday(),
    hasDeparture,
    stop: async () => {
      await app.stop()
      await db.drop()
      await traProxy.stop()
      await sireProxy.stop()
      tra.stop()
      sire.stop()
    }
  }
}

/** `today` + `days`, as YYYY-MM-DD. */
export const dayOf = (world: Pick<World, "today">, days: number) => {
  const date = new Date(`${world.today}T00:00:00Z`)
  date.setUTCDate(date.getUTCDate() + days)
  return date.toISOString().slice(0, 10)
}

let sequenceNumber = 0

/** One sequence's hotel: an account with a live key, and a live property reporting to both authorities. */
export interface Hotel {
  readonly n: number
  readonly accountId: string
  readonly liveKey: string
  readonly propertyId: string
  readonly rnt: string
  readonly traToken: string
  readonly hotelCode: string
  /** The SIRE hotel code the gateway refuses (the "credentials removed" state). */
  readonly revokedHotelCode: string
}

export const newHotel = async (world: World): Promise<Hotel> => {
  const n = ++sequenceNumber
  const tag = `${process.pid}${n}`
  // Earlier sequences' reservations are never claimed again, and their overrides are gone. Only the rows not
  // parked yet are written: rewriting every earlier row each time left the table with hundreds of thousands of
  // dead rows (371 MB after 3,500 sequences) and made each sequence slower than the last.
  await world.db.query(
    "UPDATE reservations SET report_lease_until = 'infinity' WHERE environment = 'live' AND report_lease_until IS DISTINCT FROM 'infinity'"
  )
  await world.db.query("DELETE FROM reference_overrides")
  const account = await admin(world.app, (c) => c.CreateAccount({ name: `Hotel Modelo ${tag}`, email: `modelo${tag}@example.co` }))
  await admin(world.app, (c) => c.SetLimits({ account_id: account.account_id, reads: 1_000_000, writes: 1_000_000 }))
  const key = await admin(world.app, (c) => c.CreateKey({ account_id: account.account_id, environment: "live" }))
  const traToken = `model-tra-token-${tag}-0123456789`
  world.tra.tokens.add(traToken)
  const rnt = String(100000 + n)
  const hotelCode = String(500000 + n * 2)
  const property = await admin(world.app, (c) =>
    c.CreateProperty({
      account_id: account.account_id,
      name: `Hotel Modelo ${n}`,
      environment: "live",
      rnt_id: rnt,
      establishment_name: `Hotel Modelo ${n} SAS`,
      tra_token: Redacted.make(traToken),
      sire_hotel_code: hotelCode,
      sire_city_code: "11001",
      requires_contract_signature: false,
      default_room: "101"
    }))
  world.traProxy.log.length = 0
  world.sireProxy.log.length = 0
  return {
    n,
    accountId: account.account_id,
    liveKey: key.api_key,
    propertyId: property.property_id,
    rnt,
    traToken,
    hotelCode,
    revokedHotelCode: String(500000 + n * 2 + 1)
  }
}

/** A worker process on the world's database and authorities, with `failpoints` armed. */
export const spawnWorker = async (world: World, failpoints: string): Promise<ServiceProcess> =>
  spawnService({
    DATABASE_URL: world.db.url,
    DATA_DIR: await tempDir("model-worker"),
    ROLE: "worker",
    LOG_LEVEL: "Info",
    REPORTS_EVERY: "1 hour",
    REPORT_LEASE: "1 second",
    TRA_BASE_URL: world.traProxy.url,
    SIRE_MODE: "gateway",
    SIRE_GATEWAY_URL: world.sireProxy.url,
    SIRE_GATEWAY_TOKEN: GATEWAY_TOKEN,
    FAILPOINTS: failpoints
  })
