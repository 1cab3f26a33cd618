import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Redacted } from "effect"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { Warnings } from "../../src/compliance/TraInputs.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * The compliance engine end to end (issue 5): live registrations through endpoint 7, report runs started by
 * the admin RPC (`cli reports run`), a real local fake of the TRA web service, SIRE in manual mode (files kept
 * for an operator, `cli sire files` / `cli sire confirm`). The app runs with ROLE=api: no periodic run
 * competes with the ones the tests start.
 */
let tra: FakeTra
let db: TestDatabase
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>
let property: { property_id: string }
let noToken: { property_id: string }
let noRnt: { property_id: string }

beforeAll(async () => {
  tra = startFakeTra()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api", TRA_BASE_URL: tra.url, SIRE_MODE: "manual" })
  account = await seedAccount(app)
  await admin(app, (c) => c.SetLimits({ account_id: account.accountId, writes: 10_000 }))
  property = await admin(app, (c) =>
    c.CreateProperty({
      account_id: account.accountId,
      name: "Hotel Candelaria",
      rnt_id: "98765",
      establishment_name: "Hotel Candelaria SAS",
      tra_token: Redacted.make(DEFAULT_TOKEN),
      sire_hotel_code: "12345",
      sire_city_code: "11001"
    }))
  noToken = await admin(app, (c) =>
    c.CreateProperty({ account_id: account.accountId, name: "Sin token", sire_hotel_code: "777", sire_city_code: "5001" }))
  noRnt = await admin(app, (c) =>
    c.CreateProperty({
      account_id: account.accountId,
      name: "Sin RNT",
      tra_token: Redacted.make(DEFAULT_TOKEN),
      sire_hotel_code: "778"
    }))
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  tra?.stop()
})

const runReports = (date?: string) => admin(app, (c) => c.RunReports(date === undefined ? {} : { date }))
const detail = async (externalId: string) =>
  (await call(app, "GET", `/api/partners/registrations?external_id=${externalId}`, { key: account.liveKey })).body
const eventsOf = async (externalId: string) =>
  (await db.query<{ type: string }>(
    "SELECT e.type FROM events e JOIN reservations r ON r.id = e.reservation_id WHERE r.external_id = $1 ORDER BY e.seq",
    [externalId]
  )).map((e) => e.type)

let documentNumber = 90000000
const guestsOf3 = () => [
  colombian({ numero_documento: String(documentNumber++), nombre: "Laura", apellido: "Gómez Restrepo" }),
  foreigner({ numero_documento: `P${documentNumber++}`, nombre: "James", apellido: "Miller" }),
  colombian({ numero_documento: String(documentNumber++), nombre: "Tomás", apellido: "Gómez" })
]
const submitLive = async (overrides: Record<string, unknown> = {}, guests = guestsOf3(), propertyId = property.property_id) => {
  const body = registrationBody(propertyId, guests, {
    check_in: bogotaToday(),
    check_out: "2099-01-03",
    room_number: "204",
    total_amount: 1250000,
    currency: "COP",
    ...overrides
  })
  const res = await call(app, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })
  expect(res.status).toBe(201)
  return { externalId: body.external_id as string, body, response: res.body }
}
const mainsFor = (_externalId: string, body: Record<string, unknown>) =>
  tra.mains().filter((r) => (r.body as Record<string, string>).numero_identificacion ===
    ((body.guests as Array<Record<string, string>>)[0]!.numero_documento))

describe("report runs (design §6.8–§6.13)", () => {
  test("live endpoint 7: pending with sends_on; a run posts /one/ then /two/ per companion; SIRE file kept; confirm → compliant", async () => {
    tra.clear()
    const { externalId, body, response } = await submitLive()
    expect(response.status).toBe("pending_compliance")
    expect(response.tra).toMatchObject({ status: "pending", sends_on: bogotaToday(), mincit_code: null })
    expect(response.sire).toMatchObject({ status: "pending", foreign_guests: 1 })

    const summary = await runReports()
    expect(summary.tra).toEqual({ sent: 3, accepted: 3, rejected: 0 })
    expect(summary.sire).toEqual({ sent: 1, accepted: 0, rejected: 0 })
    const [main] = mainsFor(externalId, body)
    expect(main!.auth).toBe("valid")
    expect(main!.body).toMatchObject({
      tipo_identificacion: "C.C",
      nombres: "Laura",
      apellidos: "Gómez Restrepo",
      numero_habitacion: "204",
      numero_acompanantes: "2",
      check_in: bogotaToday(),
      check_out: "2099-01-03",
      costo: "1250000",
      rnt_establecimiento: "98765",
      nombre_establecimiento: "Hotel Candelaria SAS",
      motivo: expect.any(String),
      tipo_acomodacion: "Habitación"
    })
    const companions = tra.companions().filter((r) => tra.registered.get(Number((r.body as { padre: string }).padre)) !== undefined)
    const ours = companions.filter((r) =>
      [(body.guests as Array<Record<string, string>>)[1]!.numero_documento, (body.guests as Array<Record<string, string>>)[2]!.numero_documento]
        .includes((r.body as Record<string, string>).numero_identificacion)
    )
    expect(ours).toHaveLength(2)
    const after = await detail(externalId)
    expect({ ...after.tra }).toMatchObject({ status: "success", mincit_code: expect.any(Number), reported_at: expect.any(String) })
    expect(ours.map((r) => Number((r.body as { padre: string }).padre))).toEqual([after.tra.mincit_code, after.tra.mincit_code])
    // Manual SIRE: the movement is in a kept file; the report waits for the operator.
    expect(after.sire.status).toBe("pending")
    expect(after.status).toBe("pending_compliance")
    const { files } = await admin(app, (c) => c.SireFiles({ property_id: property.property_id }))
    const file = files[0]!
    expect(file.lines).toBe(1)
    expect(file.status).toBe("generated")
    const columns = file.content.replace(/\r\n$/, "").split("\t")
    expect(columns).toHaveLength(13)
    expect(columns.slice(0, 2)).toEqual(["12345", "11001"])
    expect(columns[8]).toBe("E")
    expect(file.content.endsWith("\r\n")).toBe(true)

    const confirmed = await admin(app, (c) => c.ConfirmSireFile({ file_id: file.file_id }))
    expect(confirmed).toEqual({ file_id: file.file_id, status: "confirmed" })
    const done = await detail(externalId)
    expect(done.sire).toMatchObject({ status: "success", reported_at: expect.any(String) })
    expect(done.status).toBe("compliant")
    expect(await eventsOf(externalId)).toEqual(["reservation.created", "registration.completed", "tra.reported", "sire.reported"])

    // A second run sends nothing again.
    const before = tra.requests.length
    const again = await runReports()
    expect(again.tra.sent).toBe(0)
    expect(tra.requests.length).toBe(before)
  })

  test("not due before its arrival date (Bogotá); a run for that date sends it", async () => {
    tra.clear()
    const { externalId } = await submitLive({ check_in: "2099-01-01" })
    await runReports()
    expect((await detail(externalId)).tra.status).toBe("pending")
    const summary = await runReports("2099-01-01")
    expect(summary.tra.accepted).toBeGreaterThanOrEqual(3)
    expect((await detail(externalId)).tra.status).toBe("success")
  })

  test("a failed companion is retried alone; the main guest is never posted twice", async () => {
    tra.clear()
    const guests = guestsOf3()
    const failing = guests[1]!.numero_documento as string
    let failures = 0
    tra.faultFor = (request) =>
      request.path === "/two/" && (request.body as Record<string, string>).numero_identificacion === failing && failures++ === 0
        ? "500"
        : undefined
    const { externalId, body } = await submitLive({}, guests)
    const first = await runReports()
    expect(first.tra).toMatchObject({ sent: 3, accepted: 2 })
    expect((await detail(externalId)).tra.status).toBe("pending")
    const second = await runReports()
    expect(second.tra).toEqual({ sent: 1, accepted: 1, rejected: 0 })
    expect(mainsFor(externalId, body)).toHaveLength(1)
    expect((await detail(externalId)).tra).toMatchObject({ status: "success", mincit_code: expect.any(Number) })
    tra.faultFor = undefined
  })

  test("a rejected guest (400) ends the TRA in error naming the guest, with tra.failed", async () => {
    tra.clear()
    tra.faults.push({ kind: "400-reject", reason: "Número de identificación inválido", field: "numero_identificacion" })
    const { externalId } = await submitLive()
    await runReports()
    const after = await detail(externalId)
    expect(after.tra.status).toBe("error")
    expect(after.tra.warning).toContain("guests[0]")
    expect(after.tra.warning).toContain("Número de identificación inválido")
    expect(after.status).toBe("failed") // design §6.9: an error and no success (SIRE still waits in its kept file)
    expect(await eventsOf(externalId)).toContain("tra.failed")
  })

  test("a refused token (401) keeps the TRA pending with a warning to fix it, retried every run", async () => {
    tra.clear()
    tra.faults.push("401")
    const { externalId, body } = await submitLive()
    await runReports()
    const after = await detail(externalId)
    expect(after.tra.status).toBe("pending")
    expect(after.tra.warning).toContain("token")
    await runReports()
    expect(mainsFor(externalId, body)).toHaveLength(2)
    expect((await detail(externalId)).tra.status).toBe("success")
  })

  for (const [label, fault] of [
    ["401", "401" as const],
    ["403", { kind: "answer" as const, status: 403, body: JSON.stringify({ detail: "No tiene permiso." }) }]
  ] as const) {
    test(`refused for credentials (${label}): nothing was registered, so a cancellation answers already_reported.tra false`, async () => {
      tra.clear()
      tra.faults.push(fault)
      const { externalId, body } = await submitLive()
      await runReports()
      expect(mainsFor(externalId, body)).toHaveLength(1)
      const cancelled = await call(app, "POST", "/api/partners/reservations/cancel", {
        key: account.liveKey,
        json: { external_id: externalId }
      })
      // The SIRE entry is in a kept file (manual mode): that one counts as sent.
      expect(cancelled.body.already_reported).toEqual({ tra: false, sire: true })
    })
  }

  test("an unknown outcome (registered, but no code came back) is posted again, marked possible duplicate", async () => {
    tra.clear()
    tra.faults.push("no-code")
    const { externalId, body } = await submitLive()
    await admin(app, (c) => c.RunReports({}))
    expect((await detail(externalId)).tra.status).toBe("pending")
    await runReports()
    expect(mainsFor(externalId, body)).toHaveLength(2)
    const [main] = await db.query<{ history: Array<Record<string, unknown>>; possible_duplicate: boolean }>(
      `SELECT s.history, s.possible_duplicate FROM tra_submissions s JOIN reservations r ON r.id = s.reservation_id
       WHERE r.external_id = $1 AND s.role = 'main'`,
      [externalId]
    )
    expect(main!.possible_duplicate).toBe(true)
    expect(main!.history.at(-1)).toMatchObject({ outcome: "Accepted", possible_duplicate: true })
  })

  test("without a token: pending with the warning; nothing is posted", async () => {
    tra.clear()
    const { externalId, response } = await submitLive({}, guestsOf3(), noToken.property_id)
    expect(response.tra.warning).toContain("TRA token")
    await runReports()
    const after = await detail(externalId)
    expect(after.tra).toMatchObject({ status: "pending" })
    expect(after.tra.warning).toContain("TRA token")
    expect(tra.requests).toHaveLength(0)
  })

  test("without an RNT or a SIRE city code: pending with a warning naming what to configure; nothing sent", async () => {
    tra.clear()
    const { externalId } = await submitLive({}, guestsOf3(), noRnt.property_id)
    await runReports()
    const after = await detail(externalId)
    expect(after.tra.status).toBe("pending")
    expect(after.tra.warning).toContain("RNT")
    expect(after.sire.status).toBe("pending")
    expect(after.sire.warning).toContain("city code")
    expect(tra.requests).toHaveLength(0)
  })

  test("an extension after the TRA went out posts the added nights (a new /one/ and /two/s); tra.reported again", async () => {
    tra.clear()
    const { externalId, body } = await submitLive({ check_out: "2099-01-03" })
    await runReports()
    const first = await detail(externalId)
    const firstCode = first.tra.mincit_code as number
    const patched = await call(app, "PATCH", "/api/partners/reservations", {
      key: account.liveKey,
      json: { external_id: externalId, check_out: "2099-01-06" }
    })
    expect(patched.status).toBe(200)
    expect(patched.body.changed).toEqual(["check_out"])
    tra.clear()
    const summary = await runReports()
    expect(summary.tra).toEqual({ sent: 3, accepted: 3, rejected: 0 })
    const [main] = tra.mains()
    expect(main!.body).toMatchObject({ check_in: "2099-01-03", check_out: "2099-01-06", numero_acompanantes: "2" })
    const after = await detail(externalId)
    const newCode = after.tra.mincit_code as number
    expect(newCode).not.toBe(firstCode)
    expect(tra.companions().map((r) => Number((r.body as { padre: string }).padre))).toEqual([newCode, newCode])
    expect(after.tra.status).toBe("success")
    expect((await eventsOf(externalId)).filter((type) => type === "tra.reported")).toHaveLength(2)
    // Nothing more to send.
    tra.clear()
    expect((await runReports()).tra.sent).toBe(0)
    void body
  })

  test("cancelled after the TRA went out: already_reported.tra, and no further event", async () => {
    tra.clear()
    const { externalId } = await submitLive()
    await runReports()
    const cancelled = await call(app, "POST", "/api/partners/reservations/cancel", {
      key: account.liveKey,
      json: { external_id: externalId }
    })
    expect(cancelled.body.already_reported).toEqual({ tra: true, sire: true })
    expect(cancelled.body.warning).toMatch(/TRA and SIRE \(in SIRE-12345-\d{8}-\d{6}-[0-9a-f]{8}\.txt\)/)
    const events = await eventsOf(externalId)
    expect(events.at(-1)).toBe("reservation.cancelled")
  })

  test("cancelled before the run: nothing is sent, no SIRE line; the reports are withdrawn", async () => {
    tra.clear()
    const { externalId, body } = await submitLive()
    const cancelled = await call(app, "POST", "/api/partners/reservations/cancel", {
      key: account.liveKey,
      json: { external_id: externalId }
    })
    expect(cancelled.body.already_reported).toEqual({ tra: false, sire: false })
    const filesBefore = (await admin(app, (c) => c.SireFiles({}))).files.length
    await runReports()
    expect(mainsFor(externalId, body)).toHaveLength(0)
    const files = (await admin(app, (c) => c.SireFiles({}))).files
    const foreignDocument = (body.guests as Array<Record<string, string>>)[1]!.numero_documento as string
    expect(files.slice(0, files.length - filesBefore).some((file) => file.content.includes(foreignDocument))).toBe(false)
    const after = await detail(externalId)
    expect(after.tra.status).toBe("not_applicable")
    expect(after.sire.status).toBe("not_applicable")
  })

  test("test keys never reach the TRA: compliant at once (design §6.12)", async () => {
    tra.clear()
    const body = registrationBody(account.testProperties[0]!.property_id, guestsOf3(), { check_in: bogotaToday() })
    const res = await call(app, "POST", "/api/partners/registrations", { key: account.testKey, json: body })
    expect(res.body.status).toBe("compliant")
    await runReports()
    expect(tra.requests).toHaveLength(0)
  })
})

describe("values from public sources (design §6.10), as the fake TRA receives them", () => {
  let withRoom: { property_id: string }
  beforeAll(async () => {
    withRoom = await admin(app, (c) =>
      c.CreateProperty({
        account_id: account.accountId,
        name: "Cabañas del Río",
        rnt_id: "55555",
        tra_token: Redacted.make(DEFAULT_TOKEN),
        sire_hotel_code: "4321",
        sire_city_code: "5001",
        default_room: "Cabaña 7"
      }))
  })

  /** A live link-flow stay (endpoint 3, no tipo_acomodacion, no room_number) registered on the check-in API. */
  const linkStay = async (propertyId: string, guests: ReadonlyArray<Record<string, unknown>>) => {
    const created = await call(app, "POST", "/api/partners/reservations", {
      key: account.liveKey,
      json: reservationBody(propertyId, { guests_count: guests.length, check_in: bogotaToday(), check_out: "2099-01-03" })
    })
    expect(created.status).toBe(201)
    const token = (created.body.checkin_url as string).split("/checkin/")[1]!
    for (const [index, guest] of guests.entries()) {
      const json = index === 0 ? { ...guest, motivo: "Vacaciones, recreo y ocio" } : guest
      expect((await call(app, "POST", `/api/checkin/${token}/guests`, { json })).status).toBe(201)
    }
    return created.body.external_id as string
  }
  const mainOf = (document: string) =>
    tra.mains().find((r) => (r.body as Record<string, string>).numero_identificacion === document)!.body as Record<string, string>

  test("one guest, no room anywhere: Sencilla, numero_habitacion blank, and tra.warning says so (still sent)", async () => {
    tra.clear()
    const guest = colombian({ numero_documento: String(documentNumber++) })
    const externalId = await linkStay(property.property_id, [guest])
    await runReports()
    expect(mainOf(guest.numero_documento as string)).toMatchObject({ tipo_acomodacion: "Sencilla", numero_habitacion: "" })
    const after = await detail(externalId)
    expect(after.tra).toMatchObject({ status: "success", mincit_code: expect.any(Number), warning: Warnings.roomMissing })
  })

  test("two guests on a property with a default room: Doble, the default room, no warning", async () => {
    tra.clear()
    const guests = [colombian({ numero_documento: String(documentNumber++) }), colombian({ numero_documento: String(documentNumber++) })]
    const externalId = await linkStay(withRoom.property_id, guests)
    await runReports()
    expect(mainOf(guests[0]!.numero_documento as string)).toMatchObject({ tipo_acomodacion: "Doble", numero_habitacion: "Cabaña 7" })
    expect(tra.companions().at(-1)!.body).toMatchObject({ numero_habitacion: "Cabaña 7" })
    const after = await detail(externalId)
    expect(after.tra.status).toBe("success")
    expect(after.tra).not.toHaveProperty("warning")
  })

  test("an extension's /one/ declares the added nights' share of the stored COP amount (half-up)", async () => {
    tra.clear()
    const checkIn = bogotaToday()
    const day = (offset: number) => new Date(Date.parse(`${checkIn}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10)
    const guests = [colombian({ numero_documento: String(documentNumber++) })]
    const { externalId } = await submitLive({ check_out: day(2), total_amount: 900001 }, guests)
    await runReports()
    expect(mainOf(guests[0]!.numero_documento as string).costo).toBe("900001")
    const patched = await call(app, "PATCH", "/api/partners/reservations", {
      key: account.liveKey,
      json: { external_id: externalId, check_out: day(4) }
    })
    expect(patched.status).toBe(200)
    tra.clear()
    await runReports()
    // 2 added nights of the 4 the stay now has: 900 001 × 2 / 4 = 450 000,5 → 450 001.
    expect(tra.mains().map((r) => r.body)).toEqual([expect.objectContaining({
      check_in: day(2),
      check_out: day(4),
      costo: "450001",
      numero_habitacion: "204"
    })])
    expect((await detail(externalId)).tra.status).toBe("success")
  })
})
