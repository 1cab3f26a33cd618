import { expect, test } from "bun:test"
import { Either, Schema } from "effect"
import { makeViews } from "../../src/reservations/Views.ts"
import { type DeliveredEvent, EventBody, eventBodySchemas, ReservationEventData } from "../../src/webhooks/Event.ts"
import { DeliveryHeaders, deliveryHeaders } from "../../src/webhooks/Signature.ts"
import { call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"
import { colombian, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { bodyOf, type ReceivedRequest, startReceiver } from "../support/receiver.ts"
import { reservationRow } from "../support/rows.ts"

/**
 * The schemas the OpenAPI `webhooks` section is generated from (`webhooks/Event.ts`, `webhooks/Signature.ts`)
 * are the ones the delivery engine's real bodies and headers decode with, strictly: nothing missing, nothing
 * more. Bodies come from the real engine, delivered to a real receiver.
 */

const f = appFixture({ WEBHOOK_ALLOW_PRIVATE_URLS: "true" })

const decodeStrictly = (schema: Schema.Schema.AnyNoContext, value: unknown) =>
  Schema.decodeUnknownEither(schema, { onExcessProperty: "error", errors: "all" })(value)

/** The headers as the spec names them, read from a recorded request (names arrive in lower case). */
const specHeaders = (request: ReceivedRequest) =>
  Object.fromEntries(Object.keys(DeliveryHeaders.fields).map((name) => [name, request.headers[name.toLowerCase()]]))

test("what the reservations write as an event's data (Views.eventData) is ReservationEventData, typed and strictly", () => {
  // The reservations cannot import the webhooks (module order), so the type is checked here: this line compiles
  // only while the two agree.
  const data: ReservationEventData = makeViews("https://registro.example.co").eventData(reservationRow())
  expect(Either.isRight(decodeStrictly(ReservationEventData, data))).toBe(true)
})

test("deliveryHeaders sends exactly the documented headers, plus Content-Type", () => {
  const sent = deliveryHeaders({ secret: "whsec_x", eventId: "evt_0", eventType: "ping", timestamp: 1, body: "{}" })
  expect(Object.keys(sent).sort()).toEqual(
    ["content-type", ...Object.keys(DeliveryHeaders.fields).map((name) => name.toLowerCase())].sort()
  )
})

test("every body the engine delivers decodes with its event type's schema, and its headers with DeliveryHeaders", async () => {
  const receiver = startReceiver()
  try {
    const key = f.account.testKey
    const propertyId = f.account.testProperties[0]!.property_id
    const withGuests = await call(f.app, "POST", "/api/partners/webhooks", {
      key,
      json: { url: `${receiver.url}/with-guests`, include_guests: true }
    })
    const without = await call(f.app, "POST", "/api/partners/webhooks", { key, json: { url: `${receiver.url}/without` } })
    expect([withGuests.status, without.status]).toEqual([201, 201])

    const reservation = reservationBody(propertyId)
    expect((await call(f.app, "POST", "/api/partners/reservations", { key, json: reservation })).status).toBe(201)
    const update = { external_id: reservation.external_id, check_out: "2026-12-24" }
    expect((await call(f.app, "PATCH", "/api/partners/reservations", { key, json: update })).status).toBe(200)
    const cancel = { external_id: reservation.external_id }
    expect((await call(f.app, "POST", "/api/partners/reservations/cancel", { key, json: cancel })).status).toBe(200)
    const accepted = registrationBody(propertyId, [colombian(), foreigner()])
    expect((await call(f.app, "POST", "/api/partners/registrations", { key, json: accepted })).status).toBe(201)
    const rejected = registrationBody(propertyId, [foreigner()], { sandbox_simulate: "tra_failed" })
    expect((await call(f.app, "POST", "/api/partners/registrations", { key, json: rejected })).status).toBe(201)
    expect((await call(f.app, "POST", `/api/partners/webhooks/${withGuests.body.id}/test`, { key })).status).toBe(200)

    const expected: ReadonlyArray<DeliveredEvent> = [
      "reservation.created",
      "reservation.updated",
      "reservation.cancelled",
      "registration.completed",
      "tra.reported",
      "tra.failed",
      "sire.reported"
    ]
    for (const path of ["/with-guests", "/without"]) {
      for (const type of expected) {
        await receiver.waitFor((request) => request.path === path && request.headers["x-service-event"] === type, 15_000)
      }
    }
    await receiver.waitFor((request) => request.headers["x-service-event"] === "ping", 15_000)

    const seen = new Set<string>()
    for (const request of receiver.received) {
      const body = bodyOf(request)
      const type = body.type as DeliveredEvent
      seen.add(type)
      const label = `${type} to ${request.path}`
      expect({ label, typed: decodeStrictly(eventBodySchemas[type], body)._tag }).toEqual({ label, typed: "Right" })
      expect({ label, any: decodeStrictly(EventBody, body)._tag }).toEqual({ label, any: "Right" })
      expect({ label, headers: decodeStrictly(DeliveryHeaders, specHeaders(request))._tag }).toEqual({
        label,
        headers: "Right"
      })
      expect(request.headers["x-service-event"]).toBe(type)
      expect(request.headers["x-service-event-id"]).toBe(body.id)
      if (type.startsWith("registration.")) {
        expect({ label, guests: Array.isArray(body.data.guests) }).toEqual({ label, guests: request.path === "/with-guests" })
      }
    }
    expect([...seen].sort()).toEqual([...expected, "ping"].sort())
  } finally {
    receiver.stop()
  }
}, 60_000)
