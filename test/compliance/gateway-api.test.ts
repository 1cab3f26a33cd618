import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test"
import { admin, call, type RunningApp, seedAccount, startApp, traProperty } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { type FakeSire, gatewayEnv, startFakeSire } from "../support/fakeSire.ts"
import { type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * Issue 5's end-to-end path in gateway mode: a live endpoint-7 registration is pending with sends_on; after a
 * run the fake TRA holds exactly one /one/ and one /two/ per companion, the SIRE file holds exactly the foreign
 * guests, and the reservation is compliant with its mincit_code. Two instances running at once send nothing
 * twice.
 */
const GATEWAY_TOKEN = "sire-gateway-token"
let tra: FakeTra
let sire: FakeSire
let db: TestDatabase
let apps: Array<RunningApp> = []
let account: Awaited<ReturnType<typeof seedAccount>>
let property: { property_id: string }

beforeAll(async () => {
  tra = startFakeTra()
  sire = startFakeSire({ token: GATEWAY_TOKEN })
  db = await freshDatabase()
  const env = { DATABASE_URL: db.url, ROLE: "api", TRA_BASE_URL: tra.url, ...gatewayEnv(sire, GATEWAY_TOKEN) }
  apps = [await startApp(env), await startApp(env)]
  account = await seedAccount(apps[0]!)
  await admin(apps[0]!, (c) => c.SetLimits({ account_id: account.accountId, writes: 10_000 }))
  property = await traProperty(apps[0]!, account.accountId, "Hotel Gateway", "55555", {
    sire_hotel_code: "4321",
    sire_city_code: "5001"
  })
})

afterAll(async () => {
  for (const app of apps) await app.stop()
  await db?.drop()
  tra?.stop()
  sire?.stop()
})

let n = 0
const submit = async (guests: ReadonlyArray<Record<string, unknown>>) => {
  const body = registrationBody(property.property_id, guests, { check_in: bogotaToday(), check_out: "2099-01-05" })
  const res = await call(apps[0]!, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })
  expect(res.status).toBe(201)
  return { externalId: body.external_id as string, response: res.body }
}
const detail = async (externalId: string) =>
  (await call(apps[0]!, "GET", `/api/partners/registrations?external_id=${externalId}`, { key: account.liveKey })).body
const doc = () => String(70_000_000 + ++n)
/** A Colombian main guest and a foreign companion whose document starts with `prefix`, registered. */
const submitPair = (prefix: string) =>
  submit([colombian({ numero_documento: doc() }), foreigner({ numero_documento: `${prefix}${doc()}` })])

describe("gateway mode, end to end", () => {
  // Each test counts the requests and uploads of its own stays only.
  beforeEach(() => {
    tra.clear()
    sire.reset()
  })

  test("pending with sends_on → one run → exactly the expected requests and file → compliant with mincit_code", async () => {
    const guests = [
      colombian({ numero_documento: doc() }),
      foreigner({ numero_documento: `X${doc()}`, apellido: "de la Cruz Pérez" }),
      foreigner({ numero_documento: `Y${doc()}`, nacionalidad: "ES", pais_procedencia: "ES", nombre: "Íñigo", apellido: "Núñez" }),
      colombian({ numero_documento: doc() })
    ]
    const { externalId, response } = await submit(guests)
    expect(response.status).toBe("pending_compliance")
    expect(response.tra).toMatchObject({ status: "pending", sends_on: bogotaToday() })
    expect(response.sire).toMatchObject({ status: "pending", foreign_guests: 2 })

    const summary = await admin(apps[0]!, (c) => c.RunReports({}))
    expect(summary.tra).toEqual({ sent: 4, accepted: 4, rejected: 0 })
    expect(summary.sire).toEqual({ sent: 2, accepted: 2, rejected: 0 })
    expect(tra.mains()).toHaveLength(1)
    expect(tra.companions()).toHaveLength(3)
    expect(sire.uploads).toHaveLength(1)
    const upload = sire.last()
    expect(upload.bearer).toBe("valid")
    expect(upload.headers["x-sire-hotel-code"]).toBe("4321")
    expect(upload.headers["x-sire-city-code"]).toBe("5001")
    expect(upload.rows.map((row) => row[3])).toEqual([guests[1]!.numero_documento as string, guests[2]!.numero_documento as string])
    expect(upload.rows[0]!.slice(5, 8)).toEqual(["DE LA CRUZ", "PEREZ", "JOHN"])
    expect(upload.rows[1]!.slice(5, 8)).toEqual(["NUNEZ", "", "INIGO"])
    expect(upload.rows.every((row) => row.length === 13 && row[8] === "E")).toBe(true)

    const after = await detail(externalId)
    const code = after.tra.mincit_code // read first: bun's toMatchObject writes its matchers into what it checks
    expect(after.status).toBe("compliant")
    expect({ ...after.tra }).toMatchObject({ status: "success", mincit_code: expect.any(Number) })
    expect(after.sire).toMatchObject({ status: "success" })
    expect(tra.companions().map((r) => Number((r.body as { padre: string }).padre))).toEqual([code, code, code])
  })

  test("the codes and labels sent are the ones of the fakes' own tables, for the guest each line is about", async () => {
    tra.guests.clear()
    // Niger and Nigeria are swapped between the sources (C12 vs C4's DIAN table); a documento extranjero is a
    // plausible "Pasaporte" to one source (C8): the fakes are told who each guest is and accept only the one value.
    const guests = [
      colombian({ numero_documento: doc() }),
      foreigner({ numero_documento: `NG${doc()}`, nacionalidad: "NG", pais_procedencia: "NG", pais_residencia: "NG" }),
      foreigner({ numero_documento: `NE${doc()}`, nacionalidad: "NE", pais_procedencia: "NE", pais_residencia: "NE" }),
      foreigner({ tipo_documento: "D.E", numero_documento: `AR${doc()}`, nacionalidad: "AR", pais_procedencia: "AR" })
    ]
    for (const guest of guests) {
      const number = guest.numero_documento as string
      tra.guests.set(number, guest.tipo_documento as string)
      if (guest.nacionalidad !== "CO") {
        sire.traveller(number, { nationality: guest.nacionalidad as string, document: guest.tipo_documento as string })
      }
    }
    const { externalId } = await submit(guests)
    const summary = await admin(apps[0]!, (c) => c.RunReports({}))
    expect(summary.tra).toEqual({ sent: 4, accepted: 4, rejected: 0 })
    expect(summary.sire).toEqual({ sent: 3, accepted: 3, rejected: 0 })
    expect(sire.last().rows.map((row) => [row[2], row[4]])).toEqual([["3", "525"], ["3", "528"], ["10", "63"]])
    expect((await detail(externalId)).status).toBe("compliant")
    tra.guests.clear()
  })

  test("a line the gateway refuses fails that guest's movement: sire error with the message, sire.failed", async () => {
    const { externalId } = await submitPair("Z")
    sire.rejectLine(1, "Número de pasaporte inválido")
    await admin(apps[0]!, (c) => c.RunReports({}))
    const after = await detail(externalId)
    expect(after.sire.status).toBe("error")
    expect(after.sire.warning).toContain("Número de pasaporte inválido")
    expect(after.tra.status).toBe("success")
    expect(after.status).toBe("partial")
  })

  test("a gateway refusing the credentials (401) registered nothing: already_reported.sire false on a cancellation", async () => {
    const { externalId } = await submitPair("U")
    sire.fail("401")
    await admin(apps[0]!, (c) => c.RunReports({}))
    const after = await detail(externalId)
    expect(after.sire.status).toBe("pending")
    expect(after.sire.warning).toContain("SIRE_GATEWAY_TOKEN")
    const cancelled = await call(apps[0]!, "POST", "/api/partners/reservations/cancel", {
      key: account.liveKey,
      json: { external_id: externalId }
    })
    expect(cancelled.body.already_reported).toEqual({ tra: true, sire: false })
  })

  test("a gateway that does not answer (500) leaves SIRE pending and retries it alone next time", async () => {
    const { externalId } = await submitPair("W")
    sire.fail("500")
    await admin(apps[0]!, (c) => c.RunReports({}))
    expect((await detail(externalId)).sire.status).toBe("pending")
    expect((await detail(externalId)).tra.status).toBe("success")
    await admin(apps[0]!, (c) => c.RunReports({}))
    expect(sire.uploads).toHaveLength(2)
    expect(tra.mains()).toHaveLength(1)
    expect((await detail(externalId)).status).toBe("compliant")
  })

  test("two instances running at once send each report once (SKIP LOCKED claims)", async () => {
    tra.delayMs = 20
    const ids: Array<string> = []
    for (let i = 0; i < 12; i++) {
      ids.push((await submitPair("V")).externalId)
    }
    const [a, b] = await Promise.all(apps.map((app) => admin(app, (c) => c.RunReports({}))))
    tra.delayMs = 0
    expect(a!.reservations + b!.reservations).toBe(12)
    expect(tra.mains()).toHaveLength(12)
    expect(tra.companions()).toHaveLength(12)
    const numbers = tra.mains().map((r) => (r.body as { numero_identificacion: string }).numero_identificacion)
    expect(new Set(numbers).size).toBe(12)
    const lines = sire.uploads.flatMap((upload) => upload.rows.map((row) => row[3]))
    expect(lines).toHaveLength(12)
    expect(new Set(lines).size).toBe(12)
    for (const id of ids) expect((await detail(id)).status).toBe("compliant")
  })
})
