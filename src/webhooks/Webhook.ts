import { Schema } from "effect"
import { LifecycleEvent } from "../reservations/Lifecycle.ts"
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
  url: 2048
} as const

/** The spec's EventType: every lifecycle event, `*` (all) and `ping` (endpoint 14). */
export const EVENT_TYPES = ["*", ...LifecycleEvent.literals, "ping"] as const

export const EventType = Schema.Literal(...EVENT_TYPES).annotations({ identifier: "EventType" })
export type EventType = typeof EventType.Type

export const DeliveryStatus = Schema.Literal("pending", "delivered", "failed")
export type DeliveryStatus = typeof DeliveryStatus.Type

const requestOptions = { parseOptions: { errors: "all" } } as const
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const DateTimeString = Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } })

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
}).annotations({ identifier: "CreateWebhook", ...requestOptions })
export type CreateWebhook = typeof CreateWebhook.Type

/** Endpoint 11's body: every field optional; absent fields keep their value. */
export const UpdateWebhook = Schema.Struct({
  url: optional(WebhookUrl),
  events: optional(Events),
  include_guests: optional(Schema.Boolean)
}).annotations({ identifier: "UpdateWebhook", ...requestOptions })
export type UpdateWebhook = typeof UpdateWebhook.Type

/** Any string: an id that is not a uuid is simply not found (404), like an unknown one. */
export const WebhookPath = Schema.Struct({ id: Schema.String }).annotations({
  identifier: "WebhookPath",
  ...requestOptions
})

export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventType),
  include_guests: Schema.Boolean,
  is_active: Schema.Boolean,
  created_at: DateTimeString,
  secret_rotated_at: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export const WebhookEndpointCreated = Schema.Struct({
  ...WebhookEndpoint.fields,
  /** `whsec_…`: shown in this response only. */
  secret: Schema.String
}).annotations({ identifier: "WebhookEndpointCreated" })

export const WebhookList = Schema.Struct({ endpoints: Schema.Array(WebhookEndpoint) }).annotations({
  identifier: "WebhookList"
})

export const DeactivateResponse = Schema.Struct({
  ok: Schema.Boolean,
  id: Schema.String,
  is_active: Schema.Boolean
}).annotations({ identifier: "DeactivateWebhookResponse" })

export const RotateResponse = Schema.Struct({ id: Schema.String, secret: Schema.String }).annotations({
  identifier: "RotateSecretResponse"
})

export const TestResponse = Schema.Struct({
  event_id: Schema.String,
  delivered: Schema.Boolean,
  http_status: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  /** Why the ping was not delivered; empty when it was. */
  error: Schema.String
}).annotations({ identifier: "TestWebhookResponse" })

const IntFromQuery = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "must be an integer" }),
  Schema.between(1, Limits.deliveriesMax, { message: () => `must be between 1 and ${Limits.deliveriesMax}` })
)

/** Endpoint 15's query. */
export const DeliveriesQuery = Schema.Struct({
  status: optional(DeliveryStatus),
  event: optional(StoredString),
  external_id: optional(StoredString),
  limit: optional(IntFromQuery)
}).annotations({ identifier: "DeliveriesQuery", ...requestOptions })
export type DeliveriesQuery = typeof DeliveriesQuery.Type

export const AttemptLogEntry = Schema.Struct({
  attempted_at: DateTimeString,
  http_status: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DeliveryAttempt" })
export type AttemptLogEntry = typeof AttemptLogEntry.Type

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
}).annotations({ identifier: "Delivery" })
export type Delivery = typeof Delivery.Type

export const DeliveryList = Schema.Struct({ deliveries: Schema.Array(Delivery) }).annotations({
  identifier: "DeliveryList"
})

export const DeliveryPath = Schema.Struct({ id: Schema.String }).annotations({
  identifier: "DeliveryPath",
  ...requestOptions
})

export const RedeliverResponse = Schema.Struct({
  ok: Schema.Boolean,
  id: Schema.String,
  event_id: Schema.String,
  status: DeliveryStatus
}).annotations({ identifier: "RedeliverResponse" })
