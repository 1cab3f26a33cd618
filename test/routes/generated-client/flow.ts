import createClient, { type Middleware } from "openapi-fetch"
import type { paths } from "./generated/partner.ts"

/**
 * A PMS's integration, written as a PMS developer would: against the types `openapi-typescript` generates from
 * the served `/openapi.json` (into `./generated/`, not committed) and the `openapi-fetch` client, nothing of
 * ours. `test/routes/generated-client.test.ts` generates the types, type-checks this file with them under `tsc`
 * (`./tsconfig.json`) and runs it against the real server: if the document and the server drift, a path, a
 * parameter or a field here stops compiling, a call answers what the document does not say, or the recorded
 * answers no longer match the document's schemas.
 */

/** One answer as the client saw it, with the document's path template. */
export interface Exchange {
  readonly method: string
  readonly schemaPath: string
  readonly status: number
  readonly body: unknown
}

export interface FlowInput {
  readonly baseUrl: string
  /** A test key (`svc_test_…`) of an account with its test environment. */
  readonly apiKey: string
  /** The base URL of a webhook receiver the service may call. */
  readonly receiverUrl: string
  /** Resolves once the receiver got an event of `type` (about `externalId`, when given). */
  readonly waitForEvent: (type: string, externalId?: string) => Promise<void>
}

export interface FlowOutcome {
  readonly exchanges: ReadonlyArray<Exchange>
  readonly webhookId: string
  /** The endpoint's secret after rotation: every delivery after it is signed with it. */
  readonly secret: string
  readonly reservationExternalId: string
  readonly registrationExternalId: string
  /** The event that was redelivered (endpoint 16): the receiver gets it twice. */
  readonly redeliveredEventId: string
  readonly pingEventId: string
}

/** Endpoint 7's body, which the validate endpoint takes too. */
type RegistrationBody = paths["/api/partners/registrations"]["post"]["requestBody"]["content"]["application/json"]

class FlowError extends Error {}

const check = (condition: boolean, message: string): void => {
  if (!condition) throw new FlowError(message)
}

/** The body of a successful answer, or an error naming what failed. */
const ok = async <D, E>(
  pending: Promise<{ data?: D; error?: E; response: Response }>,
  what: string,
  status = 200
): Promise<D> => {
  const { data, error, response } = await pending
  if (response.status !== status || data === undefined) {
    throw new FlowError(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(error ?? data)}`)
  }
  return data
}

/** A calendar day `days` from today, as the API writes dates. */
const day = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const pmsFlow = async (input: FlowInput): Promise<FlowOutcome> => {
  const exchanges: Array<Exchange> = []
  const recorder: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      const text = await response.clone().text()
      exchanges.push({ method: request.method, schemaPath, status: response.status, body: text === "" ? null : JSON.parse(text) })
    }
  }
  const client = createClient<paths>({ baseUrl: input.baseUrl, headers: { Authorization: `Bearer ${input.apiKey}` } })
  client.use(recorder)

  // Properties (endpoints 1, 2): find ours and map it to the PMS's id.
  const { properties } = await ok(client.GET("/api/partners/properties"), "list properties")
  const property = properties.find((candidate) => candidate.checkin_enabled)
  if (property === undefined) throw new FlowError("no property with check-in enabled")
  const mapped = await ok(
    client.PATCH("/api/partners/properties", {
      body: { mappings: [{ property_id: property.property_id, external_id: "HOTEL-PMS-1" }] }
    }),
    "map properties"
  )
  check(mapped.ok && mapped.mappings[0]?.external_id === "HOTEL-PMS-1", "the mapping is answered back")

  // Webhooks (endpoints 10, 9, 11, 14, 13 and recover): create, list, change, ping, rotate, recover.
  const created = await ok(
    client.POST("/api/partners/webhooks", { body: { url: `${input.receiverUrl}/hooks/pms`, events: ["*"] } }),
    "create webhook",
    201
  )
  check(created.secret.startsWith("whsec_") && !created.include_guests, "a new endpoint has a whsec_ secret")
  const listed = await ok(client.GET("/api/partners/webhooks"), "list webhooks")
  check(listed.endpoints.some((endpoint) => endpoint.id === created.id), "the new endpoint is listed")
  const path = { path: { id: created.id } }
  const changed = await ok(
    client.PATCH("/api/partners/webhooks/{id}", { params: path, body: { include_guests: true } }),
    "change webhook"
  )
  check(changed.include_guests && changed.events.includes("*"), "include_guests changed, events kept")
  const ping = await ok(client.POST("/api/partners/webhooks/{id}/test", { params: path }), "test webhook")
  check(ping.delivered && ping.http_status === 200 && ping.error === "", `the ping was delivered: ${ping.error}`)
  await input.waitForEvent("ping")
  const rotated = await ok(client.POST("/api/partners/webhooks/{id}/rotate-secret", { params: path }), "rotate")
  check(rotated.id === created.id && rotated.secret !== created.secret, "rotation gives a new secret")
  const since = new Date(Date.now() - 3_600_000).toISOString()
  const recovered = await ok(client.POST("/api/partners/webhooks/{id}/recover", { params: path, body: { since } }), "recover", 202)
  check(recovered.recovered === 0, "nothing had failed, so recover queued nothing")

  // Endpoint 3: create, then the identical retry.
  const reservationExternalId = `PMS-${Date.now().toString(36)}`
  const reservation = {
    external_id: reservationExternalId,
    source: "pms-flow",
    property_external_id: "HOTEL-PMS-1",
    check_in: day(30),
    check_out: day(33),
    guest_name: "Ana Gómez",
    guests_count: 2,
    total_amount: 1_250_000,
    currency: "COP" as const,
    metadata: { folio: 42 }
  }
  const first = await ok(client.POST("/api/partners/reservations", { body: reservation }), "create", 201)
  check(first.idempotent_replay === false && first.checkin_url !== null, "a new reservation with its checkin_url")
  const replay = await ok(client.POST("/api/partners/reservations", { body: reservation }), "replay", 200)
  check(
    replay.idempotent_replay && replay.reservation_id === first.reservation_id && replay.checkin_url === first.checkin_url,
    "the identical retry is the same reservation"
  )

  // Endpoint 8: by path.
  const byPath = await ok(
    client.GET("/api/partners/registrations/{external_id}", { params: { path: { external_id: reservationExternalId } } }),
    "get by path"
  )
  check(byPath.status === "pending_checkin" && byPath.guests === undefined, "statuses only, no guests")
  check(byPath.check_in === reservation.check_in && byPath.metadata["folio"] === 42, "the stay as created")

  // Endpoint 4: modify.
  const modified = await ok(
    client.PATCH("/api/partners/reservations", {
      body: { external_id: reservationExternalId, check_out: day(34), guests_count: 3 }
    }),
    "modify"
  )
  check(
    modified.changed.includes("check_out") && modified.changed.includes("guests_count"),
    `changed names the fields: ${modified.changed.join(", ")}`
  )

  // Endpoint 7: a complete registration, under an id with a slash (so endpoint 6's query form is the way back).
  const registrationExternalId = `PMS/REG/${Date.now().toString(36)}`
  const registration: RegistrationBody = {
    external_id: registrationExternalId,
    property_id: property.property_id,
    check_in: day(40),
    check_out: day(42),
    guest_name: "Carlos Pérez",
    guests_count: 1,
    motivo: "Trabajo",
    tipo_acomodacion: "Hotel",
    guests: [{
      tipo_documento: "C.C",
      numero_documento: "1020304050",
      nombre: "Carlos",
      apellido: "Pérez",
      nacionalidad: "CO",
      pais_procedencia: "CO",
      ciudad_procedencia: "Bogotá",
      pais_residencia: "CO",
      ciudad_residencia: "Medellín"
    }]
  }
  // Beyond the spec (design §8b): what the TRA and SIRE would be sent, before anything is stored.
  const validation = await ok(client.POST("/api/partners/registrations/validate", { body: registration }), "validate")
  check(
    validation.valid && validation.tra.would_send[0]?.fields["numero_identificacion"] === "1020304050" &&
      !validation.sire.applies,
    "the TRA would get the Colombian guest; SIRE does not apply"
  )
  // Beyond the spec (design §8b): what the service maps a document type to, with the sources.
  const documents = await ok(
    client.GET("/api/partners/reference/{table}", { params: { path: { table: "document_types" } } }),
    "reference table"
  )
  const cedula = documents.entries.find((entry) => entry.key === "C.C")
  check(cedula?.tra === "C.C" && cedula.sire === null && cedula.source.length > 0, "a cédula goes to the TRA as C.C, never to SIRE")
  const registered = await ok(
    client.POST("/api/partners/registrations", { body: registration }),
    "submit registration",
    201
  )
  check(registered.guests_registered === 1 && registered.sandbox, "the registration is closed (test environment)")

  // Endpoint 6: by query, with the guests.
  const byQuery = await ok(
    client.GET("/api/partners/registrations", {
      params: { query: { external_id: registrationExternalId, include: "guests" } }
    }),
    "get by query"
  )
  const guest = byQuery.guests?.[0]
  check(guest !== undefined && guest.numero_documento === "1020304050" && guest.is_primary, "the guest is there")

  // An error answer is typed by the document too.
  const missing = await client.GET("/api/partners/registrations/{external_id}", {
    params: { path: { external_id: "PMS-NOBODY" } }
  })
  check(
    missing.response.status === 404 && missing.error?.code === "registration_not_found",
    "an unknown id is 404 registration_not_found"
  )

  // Endpoint 5: cancel.
  const cancelled = await ok(
    client.POST("/api/partners/reservations/cancel", { body: { external_id: reservationExternalId, reason: "no-show" } }),
    "cancel"
  )
  check(
    cancelled.reservation_status === "cancelled" && !cancelled.already_cancelled && !cancelled.already_reported.tra,
    "cancelled, for the first time, nothing reported yet"
  )
  await input.waitForEvent("reservation.cancelled", reservationExternalId)

  // Endpoints 15 and 16: the delivery of reservation.created, then send it again.
  let delivery: { readonly id: string; readonly event_id: string } | undefined
  for (let attempt = 0; attempt < 50 && delivery === undefined; attempt++) {
    const { deliveries } = await ok(
      client.GET("/api/partners/webhooks/deliveries", {
        params: {
          query: { external_id: reservationExternalId, event: "reservation.created", status: "delivered", limit: 10 }
        }
      }),
      "list deliveries"
    )
    delivery = deliveries[0]
    if (delivery === undefined) await sleep(100)
  }
  if (delivery === undefined) throw new FlowError("reservation.created was never delivered")
  const redelivered = await ok(
    client.POST("/api/partners/webhooks/deliveries/{id}/redeliver", { params: { path: { id: delivery.id } } }),
    "redeliver"
  )
  check(redelivered.status === "pending" && redelivered.event_id === delivery.event_id, "same event, pending again")

  // Endpoint 12: deactivate; the endpoint is gone from the API.
  await input.waitForEvent("reservation.created", reservationExternalId)
  const deactivated = await ok(client.DELETE("/api/partners/webhooks/{id}", { params: path }), "deactivate")
  check(deactivated.id === created.id && !deactivated.is_active, "deactivated")
  const gone = await client.POST("/api/partners/webhooks/{id}/test", { params: path })
  check(gone.response.status === 404 && gone.error?.code === "webhook_not_found", "a deactivated endpoint is 404")

  return {
    exchanges,
    webhookId: created.id,
    secret: rotated.secret,
    reservationExternalId,
    registrationExternalId,
    redeliveredEventId: delivery.event_id,
    pingEventId: ping.event_id
  }
}
