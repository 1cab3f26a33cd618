import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Redacted } from "effect"
import { Warnings } from "../../src/reservations/machine/Reports.ts"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { colombian, foreigner, JOHN_SMITH, registrationBody } from "../support/guests.ts"
import { bogotaToday, startFakeTrm } from "../support/trm.ts"

const trm = startFakeTrm()

let db: TestDatabase
let app: RunningApp
let a: Awaited<ReturnType<typeof seedAccount>>
let b: Awaited<ReturnType<typeof seedAccount>>
let c: Awaited<ReturnType<typeof seedAccount>>
/** Live properties of account a with different reporting settings. */
let full: { property_id: string }
let bare: { property_id: string }
let noSire: { property_id: string }
let noTra: { property_id: string }

beforeAll(async () => {
  db = await freshDatabase()
  app = await startApp({
    DATABASE_URL: db.url,
    TRM_URL: trm.url,
    PUBLIC_BASE_URL: "https://checkin.example.co"
  })
  a = await seedAccount(app, "Hotelera A")
  b = await seedAccount(app, "Hotelera B")
  c = await seedAccount(app, "Hotelera C")
  const token = Redacted.make("tra-token-secret")
  full = await admin(app, (client) =>
    client.CreateProperty({ account_id: a.accountId, name: "Full", tra_token: token, sire_hotel_code: "12345" }))
  bare = await admin(app, (client) => client.CreateProperty({ account_id: a.accountId, name: "Bare" }))
  noSire = await admin(app, (client) =>
    client.CreateProperty({ account_id: a.accountId, name: "No SIRE", reports_sire: false, tra_token: token }))
  noTra = await admin(app, (client) =>
    client.CreateProperty({ account_id: a.accountId, name: "No TRA", reports_tra: false, sire_hotel_code: "777" }))
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  trm.stop()
})

const body = (overrides: Record<string, unknown> = {}) => {
  const guests = (overrides.guests as Array<Record<string, unknown>> | undefined) ?? [colombian(), foreigner()]
  return registrationBody(a.testProperties[0]!.property_id, guests, overrides)
}
/** The SIRE part of an answer for one foreign guest whose entry cannot go out (`warning` says why): no exit. */
const unsentSireOfOne = (status: string, warning: string) => ({
  status,
  reported_at: null,
  foreign_guests: 1,
  warning,
  exit: { status: "not_applicable", sends_on: null, reported_at: null }
})
const submit = (key: string, json: Record<string, unknown>) => call(app, "POST", "/api/partners/registrations", { key, json })
const detail = (key: string, externalId: string) =>
  call(app, "GET", `/api/partners/registrations?external_id=${encodeURIComponent(externalId)}&include=guests`, { key })
const eventsOf = (reservationId: string) =>
  db.query<{ type: string; body: Record<string, any> }>(
    "SELECT type, body FROM events WHERE reservation_id = $1 ORDER BY seq",
    [reservationId]
  )

describe("POST /api/partners/registrations (endpoint 7), live key", () => {
  test("201 pending_compliance: tra pending on check_in, sire pending with a foreign guest", async () => {
    const sent = body({ property_id: full.property_id, source: "pms-x", metadata: { folio: 7 } })
    const res = await submit(a.liveKey, sent)
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      ok: true,
      reservation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      external_id: sent.external_id,
      status: "pending_compliance",
      reservation_status: "confirmed",
      sandbox: false,
      checkin_token: null,
      checkin_status: "completed",
      guests_registered: 2,
      tra: { status: "pending", reported_at: null, sends_on: "2026-12-20", mincit_code: null },
      sire: { status: "pending", reported_at: null, foreign_guests: 1, exit: { status: "not_applicable", sends_on: null, reported_at: null } },
      departed_on: null
    })
    const [row] = await db.query<Record<string, unknown>>(
      `SELECT flow, motivo, tipo_acomodacion, contract_required, registration_complete, completed_at IS NOT NULL AS done,
              tra_reported, sire_reported, checkin_token FROM reservations WHERE id = $1`,
      [res.body.reservation_id]
    )
    expect(row).toEqual({
      flow: "registration",
      motivo: "Vacaciones, recreo y ocio",
      tipo_acomodacion: "Habitación",
      contract_required: false,
      registration_complete: true,
      done: true,
      tra_reported: false,
      sire_reported: false,
      checkin_token: null
    })
    // doc photo URLs are stored (not fetched yet)
    const photos = await db.query<{ doc_photo_front_url: string | null }>(
      "SELECT doc_photo_front_url FROM guests WHERE reservation_id = $1 ORDER BY position",
      [res.body.reservation_id]
    )
    expect(photos.map((p) => p.doc_photo_front_url)).toEqual([null, "https://photos.example.com/front.jpg"])
  })

  test("sire not_applicable without a foreign guest (no warning); events in order, guests only in registration.completed", async () => {
    const res = await submit(a.liveKey, body({ property_id: full.property_id, guests: [colombian()] }))
    expect(res.status).toBe(201)
    expect(res.body.status).toBe("pending_compliance")
    expect(res.body.sire).toEqual({ status: "not_applicable", reported_at: null, foreign_guests: 0, exit: { status: "not_applicable", sends_on: null, reported_at: null } })
    const events = await eventsOf(res.body.reservation_id)
    expect(events.map((e) => e.type)).toEqual(["reservation.created", "registration.completed"])
    expect(events[0]!.body.data.guests).toBeUndefined()
    expect(events[1]!.body.data.guests).toHaveLength(1)
    expect(events[1]!.body.data).toMatchObject({
      checkin_url: null,
      checkin_status: "completed",
      guests_registered: 1,
      contract_signed: false,
      status: "pending_compliance"
    })
  })

  test("warnings: no TRA token, no SIRE hotel code, property not reporting SIRE or TRA", async () => {
    const bareRes = await submit(a.liveKey, body({ property_id: bare.property_id }))
    expect(bareRes.status).toBe(201)
    expect(bareRes.body.tra).toEqual({
      status: "pending",
      reported_at: null,
      sends_on: "2026-12-20",
      mincit_code: null,
      warning: Warnings.traTokenMissing
    })
    expect(bareRes.body.sire).toEqual(unsentSireOfOne("pending", Warnings.sireHotelCodeMissing))

    const noSireRes = await submit(a.liveKey, body({ property_id: noSire.property_id }))
    expect(noSireRes.body.tra).toEqual({ status: "pending", reported_at: null, sends_on: "2026-12-20", mincit_code: null })
    expect(noSireRes.body.sire).toEqual(unsentSireOfOne("not_applicable", Warnings.sireNotReported))

    const noTraRes = await submit(a.liveKey, body({ property_id: noTra.property_id }))
    expect(noTraRes.body.tra).toEqual({
      status: "not_applicable",
      reported_at: null,
      sends_on: null,
      mincit_code: null,
      warning: Warnings.traNotReported
    })
    expect(noTraRes.body.sire.status).toBe("pending")
    expect(noTraRes.body.status).toBe("pending_compliance")
  })

  test("400 invalid_request: sandbox_simulate with a live key; a birth date after today", async () => {
    const simulated = await submit(a.liveKey, body({ property_id: full.property_id, sandbox_simulate: "tra_failed" }))
    expect([simulated.status, simulated.body.code]).toEqual([400, "invalid_request"])
    expect(simulated.body.details.fields).toEqual([{ field: "sandbox_simulate", message: "is only accepted with a test key" }])

    const tomorrow = new Date(Date.now() - 5 * 3_600_000 + 86_400_000).toISOString().slice(0, 10)
    const unborn = await submit(
      a.liveKey,
      body({ property_id: full.property_id, guests: [colombian(), foreigner({ fecha_nacimiento: tomorrow })] })
    )
    expect([unborn.status, unborn.body.code]).toEqual([400, "invalid_request"])
    expect(unborn.body.details.fields.map((f: { field: string }) => f.field)).toEqual(["guests[1].fecha_nacimiento"])
    const today = await submit(
      a.liveKey,
      body({ property_id: full.property_id, guests: [colombian(), foreigner({ fecha_nacimiento: bogotaToday() })] })
    )
    expect(today.status).toBe(201)
  })
})

describe("POST /api/partners/registrations (endpoint 7), test key", () => {
  test("a simulated report carries the warning a live run would give: an unmapped country, a room sent blank (design §6.12)", async () => {
    // An operator withdrew Japan's SIRE code (as after finding it wrong): a live run would hold this guest's entry.
    await admin(app, (client) => client.SetReference({ table: "sire-countries", key: "JP", value: null }))
    try {
      const res = await submit(a.testKey, body({
        guests: [colombian(), foreigner({ nacionalidad: "JP", pais_procedencia: "JP", pais_residencia: "JP" })]
      }))
      expect(res.status).toBe(201)
      expect(res.body.status).toBe("compliant")
      expect(res.body.tra).toMatchObject({ status: "success", simulated: true, warning: expect.stringContaining("numero_habitacion was sent blank") })
      expect(res.body.sire).toMatchObject({ status: "success", simulated: true, warning: expect.stringContaining("guests[1].nacionalidad") })
    } finally {
      await admin(app, (client) => client.UnsetReference({ table: "sire-countries", key: "JP" }))
    }
    // Restored: the same stay, with a room, carries nothing.
    const clean = await submit(a.testKey, body({
      room_number: "12",
      guests: [colombian(), foreigner({ nacionalidad: "JP", pais_procedencia: "JP", pais_residencia: "JP" })]
    }))
    expect(clean.body.tra.warning).toBeUndefined()
    expect(clean.body.sire.warning).toBeUndefined()
  })

  test("compliant at once: simulated success with a mincit_code; tra.reported and sire.reported after registration.completed", async () => {
    // With a room, nothing a live run would say about these reports (see "the warning a live run would give").
    const sent = body({ room_number: "204" })
    const res = await submit(a.testKey, sent)
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      status: "compliant",
      sandbox: true,
      checkin_token: null,
      checkin_status: "completed",
      guests_registered: 2
    })
    expect(res.body.tra).toEqual({
      status: "success",
      reported_at: expect.any(String),
      sends_on: "2026-12-20",
      mincit_code: expect.any(Number),
      simulated: true
    })
    expect(Number.isInteger(res.body.tra.mincit_code) && res.body.tra.mincit_code >= 100_000).toBe(true)
    // The entry was accepted (simulated): the exit is simulated at once too, due on check_out (design §6.8).
    expect(res.body.sire).toEqual({
      status: "success",
      reported_at: expect.any(String),
      foreign_guests: 1,
      simulated: true,
      exit: { status: "success", sends_on: "2026-12-23", reported_at: expect.any(String), simulated: true }
    })

    const events = await eventsOf(res.body.reservation_id)
    expect(events.map((e) => e.type)).toEqual([
      "reservation.created",
      "registration.completed",
      "tra.reported",
      "sire.reported"
    ])
    for (const event of events) expect(event.body.sandbox).toBe(true)
    expect(events.map((e) => e.body.data.guests === undefined)).toEqual([true, false, true, true])
    expect(events[2]!.body.data.tra.mincit_code).toBe(res.body.tra.mincit_code)
    const guests = events[1]!.body.data.guests
    expect(guests.map((g: { numero_documento: string; is_primary: boolean }) => [g.numero_documento, g.is_primary]))
      .toEqual([["1020304050", true], ["AB123456", false]])
  })

  test("sandbox_simulate tra_failed: failed alone, partial with a SIRE success; tra.failed emitted", async () => {
    const alone = await submit(a.testKey, body({ guests: [colombian()], sandbox_simulate: "tra_failed", room_number: "204" }))
    expect(alone.status).toBe(201)
    expect(alone.body.status).toBe("failed")
    expect(alone.body.tra).toMatchObject({
      status: "error",
      mincit_code: null,
      warning: Warnings.simulatedTraRejection,
      simulated: true
    })
    expect(alone.body.tra.reported_at).toEqual(expect.any(String))
    expect((await eventsOf(alone.body.reservation_id)).map((e) => e.type)).toEqual([
      "reservation.created",
      "registration.completed",
      "tra.failed"
    ])

    const both = await submit(a.testKey, body({ sandbox_simulate: "tra_failed" }))
    expect(both.body.status).toBe("partial")
    expect(both.body.sire.status).toBe("success")
    expect((await eventsOf(both.body.reservation_id)).map((e) => e.type)).toEqual([
      "reservation.created",
      "registration.completed",
      "tra.failed",
      "sire.reported"
    ])
    const [row] = await db.query<{ tra_reported: boolean; sire_reported: boolean }>(
      "SELECT tra_reported, sire_reported FROM reservations WHERE id = $1",
      [both.body.reservation_id]
    )
    expect(row).toEqual({ tra_reported: false, sire_reported: true })
  })

  test("include=guests shows every Guest field, the first one primary; without it no personal data", async () => {
    const sent = body({ external_id: "PMS/REG/1" })
    const res = await submit(a.testKey, sent)
    const withGuests = await detail(a.testKey, sent.external_id)
    expect(withGuests.status).toBe(200)
    expect(withGuests.body).toMatchObject({
      reservation_id: res.body.reservation_id,
      checkin_url: null,
      checkin_token: null,
      checkin_status: "completed",
      guests_count: 2,
      completed_at: expect.any(String),
      idempotent_replay: false
    })
    expect(withGuests.body.guests).toEqual([
      {
        is_primary: true,
        tipo_documento: "C.C",
        numero_documento: "1020304050",
        nombre: "Ana",
        apellido: "Pérez Gómez",
        nacionalidad: "CO",
        fecha_nacimiento: null,
        email: null,
        phone: null,
        address: null,
        ciudad_residencia: "Medellín",
        pais_residencia: "CO",
        registered_at: expect.any(String),
        document_uploaded: false
      },
      {
        is_primary: false,
        ...JOHN_SMITH,
        email: "john@example.com",
        phone: "+1 305 555 0100",
        address: "1 Ocean Dr",
        ciudad_residencia: "Miami",
        pais_residencia: "US",
        registered_at: expect.any(String),
        document_uploaded: false
      }
    ])
    const plain = await call(app, "GET", `/api/partners/registrations?external_id=${encodeURIComponent(sent.external_id)}`, {
      key: a.testKey
    })
    const text = JSON.stringify(plain.body)
    for (const pii of ["1020304050", "AB123456", "john@example.com", "Smith", "Medellín"]) {
      expect(text.includes(pii)).toBe(false)
    }
  })

  test("document_uploaded is null for every guest once check_out is more than 30 days past (photos deleted)", async () => {
    const day = (offset: number) => {
      const date = new Date(`${bogotaToday()}T00:00:00Z`)
      date.setUTCDate(date.getUTCDate() + offset)
      return date.toISOString().slice(0, 10)
    }
    const recent = body({ check_in: day(-32), check_out: day(-30) })
    const old = body({ check_in: day(-33), check_out: day(-31) })
    expect((await submit(a.testKey, recent)).status).toBe(201)
    expect((await submit(a.testKey, old)).status).toBe(201)
    const recentGuests = (await detail(a.testKey, recent.external_id)).body.guests
    const oldGuests = (await detail(a.testKey, old.external_id)).body.guests
    expect(recentGuests.map((g: { document_uploaded: unknown }) => g.document_uploaded)).toEqual([false, false])
    expect(oldGuests.map((g: { document_uploaded: unknown }) => g.document_uploaded)).toEqual([null, null])
  })

  test("an identical repeat is 200 with the same registration; a different body is 409 reservation_conflict", async () => {
    const sent = body({ total_amount: 100.25, currency: "USD" })
    const first = await submit(a.testKey, sent)
    expect(first.status).toBe(201)
    const [money] = await db.query<{ total_amount_cop: string }>(
      "SELECT total_amount_cop FROM reservations WHERE id = $1",
      [first.body.reservation_id]
    )
    expect(money!.total_amount_cop).toBe("401050")
    const again = await submit(a.testKey, { ...sent, unknown_field: "ignored" })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    const different = await submit(a.testKey, { ...sent, guests: [colombian(), foreigner({ nombre: "Johnny" })] })
    expect([different.status, different.body.code]).toEqual([409, "reservation_conflict"])
    expect(await db.query("SELECT 1 FROM reservations WHERE external_id = $1", [sent.external_id])).toHaveLength(1)
    expect(await eventsOf(first.body.reservation_id)).toHaveLength(4)
  })

  test("409 registration_open for a reservation created by endpoint 3", async () => {
    const sent = body()
    const created = await call(app, "POST", "/api/partners/reservations", {
      key: a.testKey,
      json: {
        external_id: sent.external_id,
        property_id: sent.property_id,
        check_in: sent.check_in,
        check_out: sent.check_out,
        guest_name: sent.guest_name,
        guests_count: 2
      }
    })
    expect(created.status).toBe(201)
    const res = await submit(a.testKey, sent)
    expect([res.status, res.body.code]).toEqual([409, "registration_open"])
    expect(await db.query("SELECT 1 FROM guests WHERE reservation_id = $1", [created.body.reservation_id])).toHaveLength(0)
  })

  test("409 duplicate_document (case-insensitive) naming the number and the guests; 400 registration_rejected", async () => {
    const dup = await submit(
      a.testKey,
      body({ guests: [colombian(), foreigner({ numero_documento: "ab123456" }), foreigner({ numero_documento: "AB123456" })] })
    )
    expect([dup.status, dup.body.code]).toEqual([409, "duplicate_document"])
    expect(dup.body.error).toContain("ab123456")
    expect(dup.body.details.duplicates).toEqual([
      { numero_documento: "ab123456", guests: ["guests[1]", "guests[2]"], positions: [1, 2] }
    ])

    const mismatch = await submit(a.testKey, body({ guests_count: 3 }))
    expect([mismatch.status, mismatch.body.code]).toEqual([400, "registration_rejected"])
    expect(mismatch.body.details).toEqual({ guests_count: 3, guests: 2 })
    expect(mismatch.body.error).toContain("3")
    expect(mismatch.body.error).toContain("2")
  })

  test("1 to 30 guests: 0 and 31 are invalid_request, 30 is accepted", async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => colombian({ numero_documento: `${1000 + i}` }))
    const none = await submit(a.testKey, body({ guests: [], guests_count: 1 }))
    expect([none.status, none.body.code]).toEqual([400, "invalid_request"])
    expect(none.body.details.fields.map((f: { field: string }) => f.field)).toEqual(["guests"])
    const over = await submit(a.testKey, body({ guests: many(31) }))
    expect([over.status, over.body.code]).toEqual([400, "invalid_request"])
    const max = await submit(a.testKey, body({ guests: many(30) }))
    expect(max.status).toBe(201)
    expect(max.body.guests_registered).toBe(30)
  })

  test("the rule-12 errors", async () => {
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      [a.testKey, { property_id: b.testProperties[0]!.property_id }, 403, "property_out_of_scope"],
      [a.testKey, { property_id: full.property_id }, 403, "sandbox_property_required"],
      [a.liveKey, { property_id: a.testProperties[0]!.property_id }, 403, "live_property_required"],
      [a.testKey, { property_id: "00000000-0000-4000-8000-000000000000" }, 404, "property_not_found"],
      [a.testKey, { property_id: undefined, property_external_id: "NOPE" }, 404, "property_not_found"]
    ]
    for (const [key, overrides, status, code] of cases) {
      const res = await submit(key, body(overrides))
      expect([res.status, res.body.code]).toEqual([status, code])
    }
    const none = await submit(a.testKey, body({ property_id: undefined }))
    expect([none.status, none.body.code]).toEqual([400, "invalid_request"])
    const byRnt = await submit(a.testKey, body({ property_id: undefined, rnt_id: "SBX-00001" }))
    expect(byRnt.status).toBe(201)
  })

  test("concurrent identical submissions create exactly one reservation", async () => {
    const sent = body({ property_id: c.testProperties[0]!.property_id })
    const results = await Promise.all(Array.from({ length: 8 }, () => submit(c.testKey, sent)))
    expect(results.filter((r) => r.status === 201)).toHaveLength(1)
    for (const r of results.filter((r) => r.status !== 201)) {
      expect([200, 409]).toContain(r.status)
      if (r.status === 409) expect(r.body.code).toBe("creation_in_progress")
    }
    const rows = await db.query<{ id: string }>("SELECT id FROM reservations WHERE external_id = $1", [sent.external_id])
    expect(rows).toHaveLength(1)
    expect(await db.query("SELECT 1 FROM guests WHERE reservation_id = $1", [rows[0]!.id])).toHaveLength(2)
    expect(await eventsOf(rows[0]!.id)).toHaveLength(4)
  })

  test("tenant isolation: another account and the other environment cannot read it (404)", async () => {
    const sent = body()
    expect((await submit(a.testKey, sent)).status).toBe(201)
    for (const key of [b.testKey, a.liveKey]) {
      const res = await detail(key, sent.external_id)
      expect([res.status, res.body.code]).toEqual([404, "registration_not_found"])
    }
    // the same external_id in another account is its own registration
    const other = await submit(b.testKey, { ...sent, property_id: b.testProperties[0]!.property_id })
    expect(other.status).toBe(201)
  })
})
