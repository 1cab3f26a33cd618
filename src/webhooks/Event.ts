import { Schema } from "effect"
import { randomBytes } from "node:crypto"
import { carriesGuests, ReservationEvent, UPDATED_FIELDS } from "../reservations/machine/State.ts"
import {
  CheckinStatus,
  Guest,
  IsoDate,
  JsonObject,
  ReservationStatus,
  SireReport,
  Status,
  TraReport
} from "../reservations/Reservation.ts"
import { API_VERSION } from "../shared/ApiVersion.ts"

/**
 * The webhook body of the spec's "Events" section, as schemas: the delivery engine builds `data` with
 * `ReservationEventData`'s type (`Views.eventData`) and the ping with `PingEventBody`'s (`pingBody`), the OpenAPI
 * document's `webhooks` section is generated from `eventBodySchemas`, and a test decodes the bodies a receiver
 * really got with them.
 */

/** `evt_` followed by 32 hex characters (spec "Events": body `id`, header `X-Service-Event-Id`). */
export const newEventId = () => `evt_${randomBytes(16).toString("hex")}`

const EXAMPLE_EVENT_ID = "evt_4f6c2a9e0b1d4c7e8f3a5b6c7d8e9f01"

export const EventId = Schema.String.pipe(Schema.pattern(/^evt_[0-9a-f]{32}$/)).annotations({
  description: "`evt_` and 32 hex characters; equals the `X-Service-Event-Id` header: deduplicate on it",
  examples: [EXAMPLE_EVENT_ID]
})

const DateTimeString = Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } })
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** Registration events keep `guests`; delivery drops them for endpoints without include_guests (design §6.14). */

/** The event types a webhook can carry: the spec's EventType minus `*`. */
export type DeliveredEvent = ReservationEvent | "ping"

/** When each event is sent (spec "Events", event types table). */
export const EVENT_SENT_WHEN: Readonly<Record<DeliveredEvent, string>> = {
  "reservation.created": "A reservation was created through the API (endpoint 3 or 7).",
  "reservation.updated":
    "The dates or the number of guests changed (endpoint 4), or the day the guests left was recorded (departure); " +
    "`data.changed` names which.",
  "reservation.cancelled": "The reservation was cancelled (endpoint 5); no further event follows for it.",
  "registration.updated": "One guest registered; others are still missing.",
  "registration.completed":
    "All guests registered. If the property requires a contract, `status` is `pending_signature` until it is signed.",
  "contract.signed": "The guest signed the contract.",
  "tra.reported": "The tourism ministry accepted the TRA; `data.tra.mincit_code` carries its code.",
  "tra.failed": "The TRA was rejected; `data.tra.warning` gives the reason when known.",
  "sire.reported": "The migration authority accepted the SIRE report.",
  "sire.failed": "The SIRE report was rejected; `data.sire.warning` gives the reason when known.",
  "ping": "A test event requested through endpoint 14; sent whatever the endpoint subscribes to."
}

// ---------------------------------------------------------------------------------------------------------------
// `data`

const EXAMPLE_RESERVATION = {
  reservation_id: "5f0c7c1e-3b2a-4d9e-8f61-2a7b9c0d1e23",
  external_id: "PMS-2026-0042",
  source: "pms-acme",
  property_id: "0d6f1c9a-8b3e-4f2a-9c71-5e4b3a2d1f08",
  reservation_status: "confirmed",
  status: "pending_checkin",
  check_in: "2026-12-18",
  check_out: "2026-12-21",
  guests_count: 2,
  checkin_url: "https://registro.example.co/checkin/Yq3Jv0xT6bWmK2pR8sZ1uD4hF7nL9cE5",
  checkin_status: "pending",
  guests_registered: 0,
  contract_signed: false,
  tra: { status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null },
  sire: { status: "not_applicable", reported_at: null, foreign_guests: 0, exit: { status: "not_applicable", sends_on: null, reported_at: null } },
  departed_on: null,
  metadata: { channel: "booking-engine" }
} as const

const ReservationEventFields = {
  reservation_id: Schema.String,
  external_id: Schema.String,
  source: Schema.NullOr(Schema.String),
  property_id: Schema.UUID,
  reservation_status: ReservationStatus,
  status: Status,
  check_in: IsoDate,
  check_out: IsoDate,
  guests_count: Schema.Int,
  checkin_url: Schema.NullOr(Schema.String.annotations({ jsonSchema: { type: "string", format: "uri" } })),
  checkin_status: Schema.NullOr(CheckinStatus),
  guests_registered: Schema.Int,
  contract_signed: Schema.Boolean,
  tra: TraReport,
  sire: SireReport,
  /** The day the guests actually left, once recorded (design §6.8). */
  departed_on: Schema.NullOr(IsoDate),
  /** As sent on creation, unchanged. */
  metadata: JsonObject
}

/** `data` of every reservation event: the reservation as of the event, without guests (`Views.eventData`). */
export const ReservationEventData = Schema.Struct(ReservationEventFields).annotations({
  identifier: "ReservationEventData",
  description: "The reservation as of the event.",
  examples: [EXAMPLE_RESERVATION]
})
export type ReservationEventData = typeof ReservationEventData.Type

/** `data` of `reservation.updated`: the reservation as of the event and the fields whose change it reports. */
export const ReservationUpdatedEventData = Schema.Struct({
  ...ReservationEventFields,
  changed: Schema.Array(Schema.Literal(...UPDATED_FIELDS)).annotations({
    description: "The fields whose value changed: `check_in`, `check_out`, `guests_count`, `departed_on`."
  })
}).annotations({
  identifier: "ReservationUpdatedEventData",
  description: "The reservation as of the event, and `changed`: what changed.",
  examples: [{ ...EXAMPLE_RESERVATION, departed_on: "2026-12-20", changed: ["departed_on"] }]
})
export type ReservationUpdatedEventData = typeof ReservationUpdatedEventData.Type

/** `data` of `registration.*` events: with the guests, which delivery drops for endpoints without include_guests. */
export const RegistrationEventData = Schema.Struct({
  ...ReservationEventFields,
  guests: optional(Schema.Array(Guest)).annotations({
    description: "Only when the endpoint has `include_guests` true (design §6.14)."
  })
}).annotations({
  identifier: "RegistrationEventData",
  description: "The reservation as of the event; `guests` only for endpoints with `include_guests`.",
  examples: [{
    ...EXAMPLE_RESERVATION,
    status: "pending_compliance",
    checkin_status: "completed",
    guests_registered: 1,
    guests_count: 1,
    tra: { status: "pending", reported_at: null, sends_on: "2026-12-18", mincit_code: null },
    guests: [{
      is_primary: true,
      tipo_documento: "C.C",
      numero_documento: "1020304050",
      nombre: "Ana",
      apellido: "Gómez",
      nacionalidad: "CO",
      fecha_nacimiento: null,
      email: null,
      phone: null,
      address: null,
      ciudad_residencia: "Bogotá",
      pais_residencia: "CO",
      registered_at: "2026-12-10T15:04:05.000Z",
      document_uploaded: false
    }]
  }]
})
export type RegistrationEventData = typeof RegistrationEventData.Type

export const PING_MESSAGE = "Test event from the Partner Reservation Registration Service."

/** `data` of `ping` (design §6.14). */
export const PingEventData = Schema.Struct({
  endpoint_id: Schema.String,
  message: Schema.String
}).annotations({
  identifier: "PingEventData",
  examples: [{ endpoint_id: "3c9b2f4e-1a7d-4e8b-9c60-5d2e1f0a7b84", message: PING_MESSAGE }]
})

// ---------------------------------------------------------------------------------------------------------------
// The body

const bodyOf = <T extends DeliveredEvent, D extends Schema.Schema.AnyNoContext>(type: T, data: D) =>
  Schema.Struct({
    id: EventId,
    type: Schema.Literal(type),
    created_at: DateTimeString,
    api_version: Schema.String.annotations({ examples: [API_VERSION] }),
    sandbox: Schema.Boolean.annotations({ description: "true for events of the test environment" }),
    data
  }).annotations({
    identifier: `${type.split(/[._]/).map((word) => word[0]!.toUpperCase() + word.slice(1)).join("")}Event`,
    description: EVENT_SENT_WHEN[type]
  })

/** What endpoint 14 sends (`pingBody`). */
export const PingEventBody = bodyOf("ping", PingEventData)
export type PingEventBody = typeof PingEventBody.Type

const lifecycleBody = (type: ReservationEvent) =>
  bodyOf(
    type,
    carriesGuests(type)
      ? RegistrationEventData
      : type === "reservation.updated"
      ? ReservationUpdatedEventData
      : ReservationEventData
  )

/** One body schema per event type a webhook carries: `guests` only in `registration.*`. */
export const eventBodySchemas = {
  "reservation.created": lifecycleBody("reservation.created"),
  "reservation.updated": lifecycleBody("reservation.updated"),
  "reservation.cancelled": lifecycleBody("reservation.cancelled"),
  "registration.updated": lifecycleBody("registration.updated"),
  "registration.completed": lifecycleBody("registration.completed"),
  "contract.signed": lifecycleBody("contract.signed"),
  "tra.reported": lifecycleBody("tra.reported"),
  "tra.failed": lifecycleBody("tra.failed"),
  "sire.reported": lifecycleBody("sire.reported"),
  "sire.failed": lifecycleBody("sire.failed"),
  "ping": PingEventBody
} as const satisfies Readonly<Record<DeliveredEvent, Schema.Schema.AnyNoContext>>

/** Any body a receiver can get. */
export const EventBody = Schema.Union(...Object.values(eventBodySchemas))

// ---------------------------------------------------------------------------------------------------------------
// Constructors of the delivery engine

/**
 * The body of a reservation's event as the outbox stores it. `data` is `Views.eventData` (typed
 * `ReservationEventData` there); the test suite decodes delivered bodies with `EventBody`.
 */
export interface StoredEventBody {
  readonly id: string
  readonly type: ReservationEvent
  readonly created_at: string
  readonly api_version: string
  readonly sandbox: boolean
  readonly data: Readonly<Record<string, unknown>>
}

export const eventBody = (input: {
  readonly id: string
  readonly type: ReservationEvent
  readonly createdAt: Date
  readonly sandbox: boolean
  readonly data: Readonly<Record<string, unknown>>
  readonly guests: ReadonlyArray<unknown>
  /** `reservation.updated` only: the fields whose change it reports. */
  readonly changed?: ReadonlyArray<string> | undefined
}): StoredEventBody => ({
  id: input.id,
  type: input.type,
  created_at: input.createdAt.toISOString(),
  api_version: API_VERSION,
  sandbox: input.sandbox,
  data: carriesGuests(input.type)
    ? { ...input.data, guests: input.guests }
    : input.type === "reservation.updated"
    ? { ...input.data, changed: input.changed ?? [] }
    : input.data
})

/** The body of a `ping` (endpoint 14). */
export const pingBody = (input: {
  readonly id: string
  readonly createdAt: Date
  readonly sandbox: boolean
  readonly endpointId: string
}): PingEventBody => ({
  id: input.id,
  type: "ping",
  created_at: input.createdAt.toISOString(),
  api_version: API_VERSION,
  sandbox: input.sandbox,
  data: { endpoint_id: input.endpointId, message: PING_MESSAGE }
})
