import { describe, expect, test } from "bun:test"
import { admin, call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"
import { colombian, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { JPEG, PNG } from "../support/photos.ts"

/** The check-in JSON API of design §5 (issue 6, item 1), over HTTP on the real app. */
const f = appFixture()

const createStay = async (propertyId: string, guests_count = 2) => {
  const res = await call(f.app, "POST", "/api/partners/reservations", {
    key: f.account.testKey,
    json: reservationBody(propertyId, { guests_count })
  })
  expect(res.status).toBe(201)
  const token = (res.body.checkin_url as string).split("/checkin/")[1]!
  return { token, externalId: res.body.external_id as string, reservationId: res.body.reservation_id as string }
}
const checkin = (method: string, path: string, json?: unknown) => call(f.app, method, `/api/checkin/${path}`, json === undefined ? {} : { json })
const eventsOf = async (reservationId: string) =>
  (await f.db.query<{ type: string }>("SELECT type FROM events WHERE reservation_id = $1 ORDER BY seq", [reservationId])).map((e) => e.type)

describe("check-in JSON API (design §5)", () => {
  test("guests register one by one; the first gives motivo; the last completes and (test key) reports at once", async () => {
    const stay = await createStay(f.account.testProperties[0]!.property_id)
    const empty = await checkin("GET", stay.token)
    expect(empty.status).toBe(200)
    expect(empty.body).toMatchObject({ guests_count: 2, guests_registered: 0, checkin_status: "pending", contract_signed: false, guests: [] })
    expect(empty.body.property).toMatchObject({ requires_contract_signature: false, requires_document_photos: false })

    const noMotivo = await checkin("POST", `${stay.token}/guests`, colombian())
    expect(noMotivo.status).toBe(400)
    expect(noMotivo.body).toMatchObject({ code: "invalid_request", details: { fields: [{ field: "motivo" }] } })

    const first = await checkin("POST", `${stay.token}/guests`, { ...colombian(), motivo: "Vacaciones, recreo y ocio" })
    expect(first.status).toBe(201)
    expect(first.body).toEqual({ guest_id: expect.any(String), registered: true, guests_registered: 1, checkin_status: "pending" })

    const duplicate = await checkin("POST", `${stay.token}/guests`, colombian())
    expect(duplicate.status).toBe(409)
    expect(duplicate.body.code).toBe("duplicate_document")

    const invalid = await checkin("POST", `${stay.token}/guests`, { ...foreigner(), fecha_nacimiento: undefined, nacionalidad: "XX" })
    expect(invalid.status).toBe(400)
    expect(invalid.body.details.fields.map((x: { field: string }) => x.field).sort()).toEqual(["fecha_nacimiento", "nacionalidad"])

    const second = await checkin("POST", `${stay.token}/guests`, foreigner())
    expect(second.body).toMatchObject({ registered: true, guests_registered: 2, checkin_status: "completed" })

    const view = await checkin("GET", stay.token)
    expect(view.body.guests.map((g: { is_primary: boolean; registered: boolean }) => [g.is_primary, g.registered])).toEqual([
      [true, true],
      [false, true]
    ])
    // Names and progress only: nothing else of a guest is shown through the link.
    expect(Object.keys(view.body.guests[0]).sort()).toEqual(["apellido", "document_uploaded", "guest_id", "is_primary", "nombre", "registered"])

    const third = await checkin("POST", `${stay.token}/guests`, colombian({ numero_documento: "999" }))
    expect(third.status).toBe(400)
    expect(third.body.code).toBe("registration_rejected")

    const detail = await call(f.app, "GET", `/api/partners/registrations?external_id=${stay.externalId}`, { key: f.account.testKey })
    expect(detail.body).toMatchObject({ status: "compliant", checkin_status: "completed", guests_registered: 2 })
    expect(await eventsOf(stay.reservationId)).toEqual([
      "reservation.created",
      "registration.updated",
      "registration.completed",
      "tra.reported",
      "sire.reported"
    ])
  })

  test("a contract, where required, only once every guest is in: 409 registration_open before; then contract.signed and the reports", async () => {
    const property = await admin(f.app, (c) =>
      c.CreateProperty({ account_id: f.account.accountId, name: "Con contrato", environment: "test", requires_contract_signature: true }))
    const stay = await createStay(property.property_id, 1)
    const early = await checkin("POST", `${stay.token}/contract`, { signer_name: "Ana Pérez", accepted: true })
    expect(early.status).toBe(409)
    expect(early.body.code).toBe("registration_open")
    await checkin("POST", `${stay.token}/guests`, { ...colombian(), motivo: "Trabajo" })
    const waiting = await call(f.app, "GET", `/api/partners/registrations?external_id=${stay.externalId}`, { key: f.account.testKey })
    expect(waiting.body.status).toBe("pending_signature")
    const refused = await checkin("POST", `${stay.token}/contract`, { signer_name: " ", accepted: false })
    expect(refused.status).toBe(400)
    expect(refused.body.details.fields.map((x: { field: string }) => x.field).sort()).toEqual(["accepted", "signer_name"])
    const signed = await checkin("POST", `${stay.token}/contract`, { signer_name: "Ana Pérez", accepted: true })
    expect(signed.status).toBe(200)
    expect(signed.body).toEqual({ contract_signed: true, signed_at: expect.any(String) })
    const again = await checkin("POST", `${stay.token}/contract`, { signer_name: "Ana Pérez", accepted: true })
    expect(again.body.signed_at).toBe(signed.body.signed_at)
    const done = await call(f.app, "GET", `/api/partners/registrations?external_id=${stay.externalId}`, { key: f.account.testKey })
    expect(done.body.status).toBe("compliant")
    const [row] = await f.db.query<{ contract_signer: string; contract_signed_at: Date }>(
      "SELECT contract_signer, contract_signed_at FROM reservations WHERE id = $1",
      [stay.reservationId]
    )
    expect(row!.contract_signer).toBe("Ana Pérez")
    expect(row!.contract_signed_at.toISOString()).toBe(signed.body.signed_at)
    expect(await eventsOf(stay.reservationId)).toEqual([
      "reservation.created",
      "registration.completed",
      "contract.signed",
      "tra.reported"
    ])
  })

  test("where photos are required, a guest is registered once its front photo is stored (design §5)", async () => {
    const property = await admin(f.app, (c) =>
      c.CreateProperty({ account_id: f.account.accountId, name: "Con fotos", environment: "test", requires_document_photos: true }))
    const stay = await createStay(property.property_id, 1)
    const entered = await checkin("POST", `${stay.token}/guests`, { ...foreigner(), motivo: "Tránsito" })
    expect(entered.body).toMatchObject({ registered: false, guests_registered: 0, checkin_status: "pending" })
    const guestId = entered.body.guest_id as string

    const upload = (id: string, files: Record<string, Uint8Array | string>) => {
      const form = new FormData()
      for (const [field, content] of Object.entries(files)) form.append(field, new Blob([content as BlobPart]), `${field}.bin`)
      return fetch(`${f.app.baseUrl}/api/checkin/${stay.token}/guests/${id}/document`, { method: "PUT", body: form })
    }
    const wrongType = await upload(guestId, { front: "plain text, not a photo" })
    expect(wrongType.status).toBe(400)
    expect(await wrongType.json()).toMatchObject({ code: "invalid_request", details: { fields: [{ field: "front" }] } })
    const big = new Uint8Array(10 * 1024 * 1024 + 1)
    big.set(JPEG)
    const tooBig = await upload(guestId, { front: big })
    expect(tooBig.status).toBe(400)
    expect((await tooBig.json()).details.fields[0].field).toBe("front")
    const unknown = await upload("0b7c3a0e-1d2f-4c3b-9a8e-000000000000", { front: JPEG })
    expect(unknown.status).toBe(404)
    expect((await unknown.json()).code).toBe("registration_not_found")

    const stored = await upload(guestId, { front: JPEG, back: PNG })
    expect(stored.status).toBe(200)
    expect(await stored.json()).toEqual({ document_uploaded: true })
    const view = await checkin("GET", stay.token)
    expect(view.body).toMatchObject({ guests_registered: 1, checkin_status: "completed" })
    expect(view.body.guests[0]).toMatchObject({ registered: true, document_uploaded: true })
    const documents = await f.db.query<{ side: string; content_type: string }>(
      "SELECT side, content_type FROM guest_documents WHERE guest_id = $1 ORDER BY side DESC",
      [guestId]
    )
    expect(documents).toEqual([{ side: "front", content_type: "image/jpeg" }, { side: "back", content_type: "image/png" }])
    const detail = await call(f.app, "GET", `/api/partners/registrations?external_id=${stay.externalId}&include=guests`, {
      key: f.account.testKey
    })
    expect(detail.body.status).toBe("compliant")
    expect(detail.body.guests[0].document_uploaded).toBe(true)
    // A second guest cannot be added beyond guests_count.
    const extra = await checkin("POST", `${stay.token}/guests`, colombian({ numero_documento: "5555" }))
    expect(extra.body.code).toBe("registration_rejected")
  })

  test("a document number typed with dots, spaces or dashes is cleaned, not refused (issue 26 item 5); other signs still are", async () => {
    const stay = await createStay(f.account.testProperties[0]!.property_id)
    const dotted = await checkin("POST", `${stay.token}/guests`, { ...colombian({ numero_documento: " 1.020.345-678 " }), motivo: "Trabajo" })
    expect(dotted.status).toBe(201)
    const [guest] = await f.db.query<{ numero_documento: string }>(
      "SELECT numero_documento FROM guests WHERE id = $1",
      [dotted.body.guest_id]
    )
    expect(guest!.numero_documento).toBe("1020345678")
    // The cleaned number is the one compared: the same cédula typed without dots is a duplicate.
    const again = await checkin("POST", `${stay.token}/guests`, colombian({ numero_documento: "1020345678" }))
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("duplicate_document")
    for (const numero_documento of ["AB_123", "AB/123", "...", "Ñ123"]) {
      const refused = await checkin("POST", `${stay.token}/guests`, colombian({ numero_documento }))
      expect(refused.status).toBe(400)
      expect(refused.body.details.fields).toEqual([{ field: "numero_documento", message: "must be letters and digits only (^[a-zA-Z0-9]+$)" }])
    }
    // The partner API keeps its documented rule: no cleaning there.
    const partner = await call(f.app, "POST", "/api/partners/registrations", {
      key: f.account.testKey,
      json: registrationBody(f.account.testProperties[0]!.property_id, [colombian({ numero_documento: "1.020.345.678" })])
    })
    expect(partner.status).toBe(400)
    expect(partner.body.details.fields.map((x: { field: string }) => x.field)).toEqual(["guests[0].numero_documento"])
  })

  test("unknown tokens are 404 registration_not_found; a cancelled stay is 409 reservation_cancelled", async () => {
    for (const token of ["nope", "A".repeat(43)]) {
      const res = await checkin("GET", token)
      expect(res.status).toBe(404)
      expect(res.body.code).toBe("registration_not_found")
    }
    const stay = await createStay(f.account.testProperties[0]!.property_id)
    await call(f.app, "POST", "/api/partners/reservations/cancel", { key: f.account.testKey, json: { external_id: stay.externalId } })
    for (const res of [await checkin("GET", stay.token), await checkin("POST", `${stay.token}/guests`, { ...colombian(), motivo: "Trabajo" })]) {
      expect(res.status).toBe(409)
      expect(res.body.code).toBe("reservation_cancelled")
    }
  })

  test("30 writes per minute per token (design §5): the 31st is 429 rate_limited; reads are not counted", async () => {
    const stay = await createStay(f.account.testProperties[0]!.property_id, 2)
    const guest = { ...colombian(), motivo: "Trabajo" }
    const statuses: Array<number> = []
    // Writes that reach the service count, refused ones included (a repeated guest: 409 duplicate_document).
    for (let i = 0; i < 30; i++) statuses.push((await checkin("POST", `${stay.token}/guests`, guest)).status)
    expect(statuses[0]).toBe(201)
    expect(statuses.slice(1).every((status) => status === 409)).toBe(true)
    const refused = await checkin("POST", `${stay.token}/guests`, guest)
    expect(refused.status).toBe(429)
    expect(refused.body.code).toBe("rate_limited")
    expect(refused.headers.get("retry-after")).toEqual(expect.any(String))
    expect((await checkin("GET", stay.token)).status).toBe(200)
    // Another token has its own budget.
    const other = await createStay(f.account.testProperties[0]!.property_id, 1)
    expect((await checkin("POST", `${other.token}/guests`, guest)).status).toBe(201)
  })

  test("the check-in API is not in the partner OpenAPI document", async () => {
    const res = await call(f.app, "GET", "/openapi.json")
    expect(Object.keys(res.body.paths).some((path) => path.startsWith("/api/checkin"))).toBe(false)
  })
})
