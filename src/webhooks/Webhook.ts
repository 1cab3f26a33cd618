import { DateTime, Either, Option, Schema } from "effect"
import { ReservationEvent } from "../reservations/machine/State.ts"
import { InvalidRequest } from "../shared/errors.ts"
import { SingleLineString, StoredString } from "../shared/StoredString.ts"

/**
 * Schemas of endpoints 9–16 (spec "Resources": WebhookEndpoint, Delivery; "Events": EventType) and design
 * §6.14. Pure: no I/O. Request schemas report every failing field; unknown fields are dropped.
 */

export const Limits = {
  /** Spec constants: active webhook endpoints per key, read per (account, environment) (design §6.1). */
  activeEndpoints: 5,
  deliveriesDefault: 50,
  deliveriesMax: 200,
  /** Not in the spec: a practical URL limit (browsers and proxies), so a URL always fits a log line. */
  url: 2048,
  /** Design §6.14: how far back recover reaches. */
  recoverDays: 7
} as const

/** The spec's EventType: every lifecycle event, `*` (all) and `ping` (endpoint 14). */
export const EVENT_TYPES = ["*", ...ReservationEvent.literals, "ping"] as const

export const EventType = Schema.Literal(...EVENT_TYPES).annotations({ identifier: "EventType" })
export type EventType = typeof EventType.Type

export const DeliveryStatus = Schema.Literal("pending", "delivered", "failed")
export type DeliveryStatus = typeof DeliveryStatus.Type

const requestOptions = { parseOptions: { errors: "all" } } as const
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const DateTimeString = Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } })

/** Examples for the OpenAPI document, typed by the schemas they illustrate. */
const EXAMPLE_ENDPOINT = {
  id: "3c9b2f4e-1a7d-4e8b-9c60-5d2e1f0a7b84",
  url: "https://pms.example.com/hooks/registro",
  events: ["*"],
  include_guests: false,
  is_active: true,
  created_at: "2026-11-20T09:00:00.000Z",
  secret_rotated_at: null
} as const
const EXAMPLE_SECRET = "whsec_Ltu50B6bX6+1HM4EE+6CiP+jjJLHLlIkK1aZKtBlW1E="
const EXAMPLE_DELIVERY_ID = "8a1d5e2c-6f3b-4c9a-b7e0-1d2c3b4a5f60"
const EXAMPLE_EVENT_ID = "evt_4f6c2a9e0b1d4c7e8f3a5b6c7d8e9f01"
const EXAMPLE_DELIVERY = {
  id: EXAMPLE_DELIVERY_ID,
  endpoint_id: EXAMPLE_ENDPOINT.id,
  event_id: EXAMPLE_EVENT_ID,
  event: "reservation.created",
  status: "delivered",
  attempts: 2,
  last_http_status: 200,
  last_error: null,
  next_attempt_at: null,
  delivered_at: "2026-12-01T14:31:02.000Z",
  created_at: "2026-12-01T14:30:00.000Z",
  attempt_log: [
    { attempted_at: "2026-12-01T14:30:00.120Z", http_status: 503, duration_ms: 212, error: "HTTP 503" },
    { attempted_at: "2026-12-01T14:31:02.000Z", http_status: 200, duration_ms: 95, error: null }
  ]
} as const

/**
 * Where deliveries go. Only its shape is checked here; whether it is a public HTTPS address is the URL
 * policy's decision (`invalid_webhook_url`, design §7), made by the service.
 */
const WebhookUrl = SingleLineString.pipe(
  Schema.filter((value) => value.length > 0 && value.length <= Limits.url, {
    message: () => `must be a URL of at most ${Limits.url} characters`,
    jsonSchema: { format: "uri", maxLength: Limits.url }
  })
)

const Events = Schema.Array(EventType).pipe(
  Schema.minItems(1, { message: () => "must name at least one event type (\"*\" for all)" })
)

/** Endpoint 10's body. `events` defaults to `["*"]` (design §6.14). */
export const CreateWebhook = Schema.Struct({
  url: WebhookUrl,
  events: optional(Events),
  include_guests: optional(Schema.Boolean)
}).annotations({
  identifier: "CreateWebhook",
  examples: [{ url: EXAMPLE_ENDPOINT.url, events: ["reservation.created", "registration.completed", "tra.failed"] }],
  ...requestOptions
})
export type CreateWebhook = typeof CreateWebhook.Type

/** Endpoint 11's body: every field optional; absent fields keep their value. */
export const UpdateWebhook = Schema.Struct({
  url: optional(WebhookUrl),
  events: optional(Events),
  include_guests: optional(Schema.Boolean)
}).annotations({ identifier: "UpdateWebhook", examples: [{ include_guests: true }], ...requestOptions })
export type UpdateWebhook = typeof UpdateWebhook.Type

// Path and query structs carry no `identifier`: the OpenAPI generator turns a struct into parameters only when
// it is inlined (an identifier makes it a `$ref`, and every parameter would be dropped).

/** A path's `:id`, any string: an id that is not a uuid is simply not found (404), like an unknown one. */
const IdPath = (description: string, example: string) =>
  Schema.Struct({
    id: Schema.propertySignature(Schema.String).annotations({ description, examples: [example] })
  }).annotations(requestOptions)

export const WebhookPath = IdPath(
  "The webhook endpoint's id (a uuid, as endpoint 10 answered it).",
  "3c9b2f4e-1a7d-4e8b-9c60-5d2e1f0a7b84"
)

export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventType),
  include_guests: Schema.Boolean,
  is_active: Schema.Boolean,
  created_at: DateTimeString,
  secret_rotated_at: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "WebhookEndpoint", examples: [EXAMPLE_ENDPOINT] })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export const WebhookEndpointCreated = Schema.Struct({
  ...WebhookEndpoint.fields,
  /** `whsec_…`: shown in this response only. */
  secret: Schema.String
}).annotations({ identifier: "WebhookEndpointCreated", examples: [{ ...EXAMPLE_ENDPOINT, secret: EXAMPLE_SECRET }] })

export const WebhookList = Schema.Struct({ endpoints: Schema.Array(WebhookEndpoint) }).annotations({
  identifier: "WebhookList",
  examples: [{ endpoints: [EXAMPLE_ENDPOINT] }]
})

export const DeactivateResponse = Schema.Struct({
  ok: Schema.Boolean,
  id: Schema.String,
  is_active: Schema.Boolean
}).annotations({
  identifier: "DeactivateWebhookResponse",
  examples: [{ ok: true, id: EXAMPLE_ENDPOINT.id, is_active: false }]
})

export const RotateResponse = Schema.Struct({ id: Schema.String, secret: Schema.String }).annotations({
  identifier: "RotateSecretResponse",
  examples: [{ id: EXAMPLE_ENDPOINT.id, secret: EXAMPLE_SECRET }]
})

export const TestResponse = Schema.Struct({
  event_id: Schema.String,
  delivered: Schema.Boolean,
  http_status: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  /** Why the ping was not delivered; empty when it was. */
  error: Schema.String
}).annotations({
  identifier: "TestWebhookResponse",
  examples: [{ event_id: EXAMPLE_EVENT_ID, delivered: true, http_status: 200, duration_ms: 84, error: "" }]
})

/**
 * A query-string integer from 1 to `max`. Documented as the integer it is (the JSON schema of its encoded side
 * would say "string"); default and examples go in that override, since property-level ones are encoded to text.
 */
export const IntFromQuery = (max: number, defaultValue: number) =>
  Schema.NumberFromString.pipe(
    Schema.int({ message: () => "must be an integer" }),
    Schema.between(1, max, { message: () => `must be between 1 and ${max}` })
  ).annotations({ jsonSchema: { type: "integer", minimum: 1, maximum: max, default: defaultValue, examples: [20] } })

/** Endpoint 15's query. */
export const DeliveriesQuery = Schema.Struct({
  status: optional(DeliveryStatus).annotations({ description: "Only deliveries in this status.", examples: ["failed"] }),
  event: optional(StoredString).annotations({
    description: "Only deliveries of this event type.",
    examples: ["reservation.created"]
  }),
  external_id: optional(StoredString).annotations({
    description: "Only deliveries of events about the reservation with this external_id.",
    examples: ["PMS-2026-0042"]
  }),
  limit: optional(IntFromQuery(Limits.deliveriesMax, Limits.deliveriesDefault)).annotations({
    description: `How many deliveries, most recent first: 1 to ${Limits.deliveriesMax}, default ${Limits.deliveriesDefault}.`
  })
}).annotations(requestOptions)
export type DeliveriesQuery = typeof DeliveriesQuery.Type

export const AttemptLogEntry = Schema.Struct({
  attempted_at: DateTimeString,
  http_status: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DeliveryAttempt" })
export type AttemptLogEntry = typeof AttemptLogEntry.Type

/**
 * An attempt as `attempt_log` stores it: the partner's entry and the receiver's answer, its first 2 KB
 * (`Attempt.excerptOf`; absent in entries written before it was kept). Endpoint 15 shows only `AttemptLogEntry`'s
 * fields (its schema drops the rest); the panel's delivery view shows the excerpt too (design §8).
 */
export interface StoredAttempt extends AttemptLogEntry {
  readonly response_excerpt?: string | null
}

export const Delivery = Schema.Struct({
  id: Schema.String,
  endpoint_id: Schema.String,
  event_id: Schema.String,
  event: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  last_http_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(DateTimeString),
  delivered_at: Schema.NullOr(DateTimeString),
  created_at: DateTimeString,
  attempt_log: Schema.Array(AttemptLogEntry)
}).annotations({ identifier: "Delivery", examples: [EXAMPLE_DELIVERY] })
export type Delivery = typeof Delivery.Type

export const DeliveryList = Schema.Struct({ deliveries: Schema.Array(Delivery) }).annotations({
  identifier: "DeliveryList",
  examples: [{ deliveries: [EXAMPLE_DELIVERY] }]
})

export const DeliveryPath = IdPath(
  "The delivery's id (`id` in endpoint 15's list).",
  "8a1d5e2c-6f3b-4c9a-b7e0-1d2c3b4a5f60"
)

export const RedeliverResponse = Schema.Struct({
  ok: Schema.Boolean,
  id: Schema.String,
  event_id: Schema.String,
  status: DeliveryStatus
}).annotations({
  identifier: "RedeliverResponse",
  examples: [{ ok: true, id: EXAMPLE_DELIVERY_ID, event_id: EXAMPLE_EVENT_ID, status: "pending" }]
})

/** An instant as JSON carries it: an ISO 8601 date-time with its offset, such as 2026-11-27T12:00:00Z. */
const Instant = Schema.String.pipe(
  Schema.filter((text) => /^\d{4}-\d{2}-\d{2}T[^ ]*(Z|[+-]\d{2}:?\d{2})$/.test(text) && Option.isSome(DateTime.make(text)), {
    message: () => "must be a date-time with its offset, such as 2026-11-27T12:00:00Z",
    jsonSchema: { format: "date-time" }
  })
)

/** Recover's body (design §6.14): a window of creation times; `until` defaults to now. */
export const RecoverDeliveries = Schema.Struct({
  since: Instant.annotations({
    description: `Recover deliveries created at or after this instant: at most ${Limits.recoverDays} days ago.`
  }),
  until: optional(Instant.annotations({ description: "And created at or before this instant; now when absent." }))
}).annotations({
  identifier: "RecoverDeliveries",
  examples: [{ since: "2026-11-24T00:00:00Z", until: "2026-11-27T12:00:00Z" }],
  ...requestOptions
})
export type RecoverDeliveries = typeof RecoverDeliveries.Type

export const RecoverResponse = Schema.Struct({
  recovered: Schema.Int.annotations({ description: "How many failed deliveries were queued again." })
}).annotations({ identifier: "RecoverResponse", examples: [{ recovered: 3 }] })

/**
 * The window recover works on, or the 400 that names what is wrong with it: `since` at most `recoverDays`
 * back from `now`, and not after `until` (or now).
 */
export const recoveryWindow = (
  body: RecoverDeliveries,
  now: DateTime.Utc
): Either.Either<{ readonly since: Date; readonly until: Date }, InvalidRequest> => {
  const since = DateTime.unsafeMake(body.since)
  const until = body.until === undefined ? now : DateTime.unsafeMake(body.until)
  const fields: Array<{ readonly field: string; readonly message: string }> = []
  if (DateTime.lessThan(since, DateTime.subtract(now, { days: Limits.recoverDays }))) {
    fields.push({ field: "since", message: `must be at most ${Limits.recoverDays} days ago` })
  }
  if (DateTime.greaterThan(since, until)) {
    fields.push(
      body.until === undefined
        ? { field: "since", message: "must not be in the future" }
        : { field: "until", message: "must not be before since" }
    )
  }
  return fields.length === 0
    ? Either.right({ since: DateTime.toDateUtc(since), until: DateTime.toDateUtc(until) })
    : Either.left(
      new InvalidRequest({
        message: `invalid request: ${fields.map((f) => `${f.field} ${f.message}`).join("; ")}`,
        details: { fields }
      })
    )
}
