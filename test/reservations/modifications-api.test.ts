import { describe, expect, test } from "bun:test"
import { Redacted } from "effect"
import { admin, call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"
import { colombian, externalId, registrationBody, reservationBody } from "../support/guests.ts"

const f = appFixture()

const create = (body: Record<string, unknown>, key = f.account.testKey) =>
  call(f.app, "POST", "/api/partners/reservations", { key, json: body })
const patch = (body: Record<string, unknown>, key = f.account.testKey) =>
  call(f.app, "PATCH", "/api/partners/reservations", { key, json: body })
const newReservation = async (overrides: Record<string, unknown> = {}) => {
  const res = await create(reservationBody(f.account.testProperties[0]!.property_id, {
    external_id: externalId("M"),
    guest_email: "ana@example.co",
    notes: "first floor",
    metadata: { roomType: "DBL" },
    ...overrides
  }))
  expect(res.status).toBe(201)
  return res.body as { reservation_id: string; external_id: string }
}
const eventTypes = async (reservationId: string) =>
  (await f.db.query<{ type: string }>("SELECT type FROM events WHERE reservation_id = $1 ORDER BY seq", [reservationId]))
    .map((e) => e.type)

/**
 * Registers guests the way the check-in page will (issue 6 builds it): rows in `guests` and the counters.
 * Only state the API cannot reach yet is arranged this way.
 */
const registerGuests = async (reservationId: string, nationalities: ReadonlyArray<string>, complete: boolean) => {
  for (const [i, nacionalidad] of nationalities.entries()) {
    await f.db.query(
      `INSERT INTO guests (reservation_id, position, is_primary, tipo_documento, numero_documento, nombre, apellido,
         nacionalidad, registered_at)
       VALUES ($1, $2, $3, 'Pasaporte', $4, 'G', 'Uest', $5, now())`,
      [reservationId, i, i === 0, `DOC${i}${Math.random().toString(36).slice(2, 6)}`, nacionalidad]
    )
  }
  await f.db.query(
    `UPDATE reservations SET guests_registered = $2, registration_complete = $3,
       completed_at = CASE WHEN $3 THEN now() END WHERE id = $1`,
    [reservationId, nationalities.length, complete]
  )
}

/** The TRA as accepted (what the compliance engine records). */
const markTraReported = (reservationId: string) =>
  f.db.query(
    `UPDATE reservations SET registration_complete = true, tra_reported = true, status = 'compliant',
       tra = jsonb_build_object('status', 'success', 'reported_at', now(), 'sends_on', check_in::text,
                                'mincit_code', 4242, 'simulated', true)
     WHERE id = $1`,
    [reservationId]
  )

describe("PATCH /api/partners/reservations (endpoint 4)", () => {
  test("changed names what changed; dates and guest count emit reservation.updated, other fields do not", async () => {
    const r = await newReservation()
    const res = await patch({ external_id: r.external_id, check_out: "2026-12-24", guest_name: "Ana P.", notes: null })
    expect(res.status).toBe(200)
    expect(res.body.changed).toEqual(["check_out", "guest_name", "notes"])
    expect(res.body).toMatchObject({ reservation_id: r.reservation_id, idempotent_replay: false, status: "pending_checkin" })
    const detail = await call(f.app, "GET", `/api/partners/registrations/${r.external_id}`, { key: f.account.testKey })
    expect(detail.body.check_out).toBe("2026-12-24")
    const [row] = await f.db.query<{ guest_name: string; notes: string | null; guest_email: string }>(
      "SELECT guest_name, notes, guest_email FROM reservations WHERE id = $1",
      [r.reservation_id]
    )
    expect(row).toEqual({ guest_name: "Ana P.", notes: null, guest_email: "ana@example.co" })

    const plainOnly = await patch({ external_id: r.external_id, metadata: { roomType: "SGL", floor: 2 } })
    expect(plainOnly.body.changed).toEqual(["metadata"])
    expect(plainOnly.body.metadata).toEqual({ roomType: "SGL", floor: 2 })
    expect(await eventTypes(r.reservation_id)).toEqual(["reservation.created", "reservation.updated"])
    // The event names the judged fields that changed (plain ones emit none), and the departure not yet recorded.
    const [updated] = await f.db.query<{ body: any }>(
      "SELECT body FROM events WHERE reservation_id = $1 AND type = 'reservation.updated'",
      [r.reservation_id]
    )
    const data = (typeof updated!.body === "string" ? JSON.parse(updated!.body) : updated!.body).data
    expect([data.changed, data.departed_on]).toEqual([["check_out"], null])
  })

  test("a retry of the original creation still replays after a PATCH, answering the current state", async () => {
    const original = reservationBody(f.account.testProperties[0]!.property_id, { external_id: externalId("M") })
    expect((await create(original)).status).toBe(201)
    await patch({ external_id: original.external_id, check_out: "2026-12-25" })
    const retry = await create(original)
    expect(retry.status).toBe(200)
    expect(retry.body.idempotent_replay).toBe(true)
    const detail = await call(f.app, "GET", `/api/partners/registrations/${original.external_id}`, { key: f.account.testKey })
    expect(detail.body.check_out).toBe("2026-12-25")
    const changed = await create({ ...original, check_out: "2026-12-25" })
    expect([changed.status, changed.body.code]).toEqual([409, "reservation_conflict"])
  })

  test("sending current values changes nothing: changed [] and no event", async () => {
    const r = await newReservation()
    const res = await patch({ external_id: r.external_id, check_in: "2026-12-20", guests_count: 2, guest_name: "Ana Pérez" })
    expect(res.status).toBe(200)
    expect(res.body.changed).toEqual([])
    expect(await eventTypes(r.reservation_id)).toEqual(["reservation.created"])
  })

  test("409 reservation_cancelled, 404 registration_not_found, 400 for dates in the wrong order", async () => {
    const r = await newReservation()
    await call(f.app, "POST", "/api/partners/reservations/cancel", { key: f.account.testKey, json: { external_id: r.external_id } })
    const cancelled = await patch({ external_id: r.external_id, guest_name: "X" })
    expect([cancelled.status, cancelled.body.code]).toEqual([409, "reservation_cancelled"])
    const unknown = await patch({ external_id: "nope", guest_name: "X" })
    expect([unknown.status, unknown.body.code]).toEqual([404, "registration_not_found"])
    const other = await newReservation()
    const backwards = await patch({ external_id: other.external_id, check_out: "2026-12-19" })
    expect(backwards.status).toBe(400)
    expect(backwards.body.details.fields[0].field).toBe("check_out")
    const otherAccount = await patch({ external_id: other.external_id, guest_name: "X" }, f.account.liveKey)
    expect(otherAccount.status).toBe(404)
  })

  test("409 guests_already_registered below the registered count", async () => {
    const r = await newReservation({ guests_count: 3 })
    await registerGuests(r.reservation_id, ["CO", "CO"], false)
    const res = await patch({ external_id: r.external_id, guests_count: 1 })
    expect([res.status, res.body.code]).toEqual([409, "guests_already_registered"])
  })

  test("lowering guests_count to the registered count completes registration; test keys get their reports at once", async () => {
    const r = await newReservation({ guests_count: 3 })
    await registerGuests(r.reservation_id, ["CO", "US"], false)
    const res = await patch({ external_id: r.external_id, guests_count: 2 })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: "compliant", checkin_status: "completed", guests_registered: 2 })
    expect(res.body.tra).toMatchObject({ status: "success", simulated: true, sends_on: "2026-12-20" })
    expect(res.body.tra.mincit_code).toBeGreaterThan(0)
    expect(res.body.sire).toMatchObject({ status: "success", foreign_guests: 1 })
    expect(await eventTypes(r.reservation_id)).toEqual([
      "reservation.created",
      "reservation.updated",
      "registration.completed",
      "tra.reported",
      "sire.reported"
    ])
    const [completed] = await f.db.query<{ body: any }>(
      "SELECT body FROM events WHERE reservation_id = $1 AND type = 'registration.completed'",
      [r.reservation_id]
    )
    expect(completed!.body.data.guests).toHaveLength(2)
  })

  test("raising guests_count after completion reopens registration while nothing was reported", async () => {
    const r = await newReservation({ property_id: f.account.testProperties[1]!.property_id, guests_count: 1 })
    await registerGuests(r.reservation_id, ["CO"], true)
    const res = await patch({ external_id: r.external_id, guests_count: 2 })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: "pending_checkin", checkin_status: "pending", changed: ["guests_count"] })
    expect(res.body.tra.status).toBe("not_applicable")
    const [row] = await f.db.query<{ completed_at: Date | null }>("SELECT completed_at FROM reservations WHERE id = $1", [
      r.reservation_id
    ])
    expect(row!.completed_at).toBeNull()
  })

  test("reopening an endpoint-7 registration issues a checkin_url (it had none)", async () => {
    // A live key: reports are pending, nothing has gone out yet, so raising guests_count reopens.
    const property = await admin(f.app, (c) =>
      c.CreateProperty({ account_id: f.account.accountId, name: "Live reopen", tra_token: Redacted.make("t") }))
    const submitted = await call(f.app, "POST", "/api/partners/registrations", {
      key: f.account.liveKey,
      json: registrationBody(
        property.property_id,
        [colombian({ apellido: "Pérez", ciudad_procedencia: "Bogotá", ciudad_residencia: "Bogotá" })],
        { external_id: externalId("R7"), check_out: "2026-12-22", motivo: "Trabajo" }
      )
    })
    expect(submitted.status).toBe(201)
    expect(submitted.body).toMatchObject({ status: "pending_compliance", checkin_token: null })
    const res = await patch({ external_id: submitted.body.external_id, guests_count: 2 }, f.account.liveKey)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: "pending_checkin", checkin_status: "pending", guests_registered: 1 })
    expect(res.body.checkin_url).toMatch(/\/checkin\/[A-Za-z0-9_-]{32}$/)
    expect(res.body.tra.status).toBe("not_applicable")
  })

  test("after the TRA was reported: extending check_out is simulated again; shortening or moving check_in is 409", async () => {
    const r = await newReservation()
    await registerGuests(r.reservation_id, ["CO", "CO"], true)
    await markTraReported(r.reservation_id)
    const shorten = await patch({ external_id: r.external_id, check_out: "2026-12-22" })
    expect([shorten.status, shorten.body.code]).toEqual([409, "already_reported"])
    const move = await patch({ external_id: r.external_id, check_in: "2026-12-21" })
    expect([move.status, move.body.code]).toEqual([409, "already_reported"])
    const raise = await patch({ external_id: r.external_id, guests_count: 3 })
    expect([raise.status, raise.body.code]).toEqual([409, "already_reported"])

    const extend = await patch({ external_id: r.external_id, check_out: "2026-12-26" })
    expect(extend.status).toBe(200)
    expect(extend.body.changed).toEqual(["check_out"])
    expect(extend.body.tra.status).toBe("success")
    expect(extend.body.tra.mincit_code).not.toBe(4242)
    expect(await eventTypes(r.reservation_id)).toEqual(["reservation.created", "reservation.updated", "tra.reported"])
  })

  test("guests_count over 50 on modify is invalid_request", async () => {
    const r = await newReservation()
    const res = await patch({ external_id: r.external_id, guests_count: 51 })
    expect(res.status).toBe(400)
    expect(res.body.details.fields[0].field).toBe("guests_count")
  })
})
