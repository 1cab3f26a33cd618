import { Context, Schema } from "effect"
import { Property, ReportingSettingsFields } from "../properties/Property.ts"
import {
  Email,
  IsoDate,
  Limits as ReservationLimits,
  RegistrationStatus,
  Status,
  StayDate
} from "../reservations/Reservation.ts"
import { Environment } from "../shared/Environment.ts"
import { SingleLineString, StoredString } from "../shared/StoredString.ts"
import { CreateWebhook, Delivery, IntFromQuery, Limits as WebhookLimits, WebhookEndpoint } from "../webhooks/Webhook.ts"

/**
 * Schemas of the account panel's JSON API (design §8): what the page at `/panel` sends and receives. Requests
 * report every failing field; unknown fields are ignored, as on the partner API.
 */

/** How long an e-mailed code is valid, and how many wrong tries burn it (design §8). */
export const CODE_MINUTES = 10
export const CODE_TRIES = 5
/** Session lifetimes (design §8): idle and absolute. */
export const SESSION_IDLE_MINUTES = 30
export const SESSION_HOURS = 12
/** Rate limits of code requests (design §8): per e-mail and per client IP, per hour. */
export const CODES_PER_EMAIL_PER_HOUR = 5
export const CODES_PER_IP_PER_HOUR = 30
/** The session cookie's name. */
export const SESSION_COOKIE = "panel_session"
/** The header that carries the session's CSRF token (design §8). */
export const CSRF_HEADER = "x-panel-csrf"
/** Digits of an e-mailed code. */
export const CODE_LENGTH = 6
/** Lengths the requests below accept; the page at `/panel` gets them too (src/panel/Page.ts). */
export const Limits = {
  name: 120,
  /** An API key's name. */
  keyName: 60,
  traToken: 500,
  establishmentName: 255,
  tipoAcomodacion: 100,
  defaultRoom: 50,
  /** SIRE hotel and city codes: digits only. */
  sireCodeDigits: 12,
  search: 120
} as const

const requestOptions = { parseOptions: { errors: "all" } } as const
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const DateTimeString = Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } })
/**
 * A path or query parameter. Their structs carry no `identifier`: the OpenAPI generator turns a struct into
 * parameters only when it is inlined. The description sits on the property, so no validation message changes.
 */
const param = <S extends Schema.Schema.Any>(schema: S, description: string, example: Schema.Schema.Type<S>) =>
  Schema.propertySignature(schema).annotations({ description, examples: [example] })
const optionalParam = <S extends Schema.Schema.Any>(schema: S, description: string, example?: Schema.Schema.Type<S>) =>
  optional(schema).annotations(example === undefined ? { description } : { description, examples: [example] })
const environmentParam = optionalParam(Environment, "The environment: `live` (default) or `test`.", "test")

/** An e-mail address as the panel keys it: trimmed, lower case. */
export const PanelEmail = Schema.transform(Schema.String, Email, {
  strict: true,
  decode: (value) => value.trim().toLowerCase(),
  encode: (value) => value
}).annotations({ jsonSchema: { type: "string", format: "email", maxLength: ReservationLimits.email } })

/** A 6-digit e-mailed code. */
export const Code = Schema.String.pipe(
  Schema.pattern(new RegExp(`^\\d{${CODE_LENGTH}}$`), {
    message: () => `must be the ${CODE_LENGTH} digits of the e-mailed code`
  })
)

const Name = SingleLineString.pipe(
  Schema.filter((value) => value.trim().length > 0 || "must not be blank"),
  Schema.maxLength(Limits.name, { message: () => `must be at most ${Limits.name} characters` })
)

// ---------------------------------------------------------------------------------------------------------------
// Examples for the OpenAPI document, typed by the schemas they illustrate

const EXAMPLE = {
  accountId: "2f8e6d4c-0b1a-4e3d-9c7b-5a6f4e3d2c1b",
  accountName: "Hotelera Andina",
  holder: "reservas@hotelandino.example.co",
  member: "recepcion@hotelandino.example.co",
  keyId: "b7e4c1d2-9a3f-4e6b-8c5d-0f1e2a3b4c5d",
  confirmationId: "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
  at: "2026-12-01T14:30:00.000Z"
} as const

const EXAMPLE_PROPERTY = {
  property_id: "0d6f1c9a-8b3e-4f2a-9c71-5e4b3a2d1f08",
  external_id: null,
  rnt_id: null,
  name: "Hotel Sandbox Centro",
  internal_name: null,
  checkin_enabled: true,
  compliance: { tra: true, sire: true },
  requires_contract_signature: false,
  requires_document_photos: false
} as const

// ---------------------------------------------------------------------------------------------------------------
// Sign-in

export const CodeRequest = Schema.Struct({ email: PanelEmail }).annotations({
  identifier: "PanelCodeRequest",
  examples: [{ email: EXAMPLE.holder }],
  ...requestOptions
})
export const SignIn = Schema.Struct({ email: PanelEmail, code: Code }).annotations({
  identifier: "PanelSignIn",
  examples: [{ email: EXAMPLE.holder, code: "482913" }],
  ...requestOptions
})
export const Signup = Schema.Struct({ name: Name, email: PanelEmail }).annotations({
  identifier: "PanelSignup",
  examples: [{ name: EXAMPLE.accountName, email: EXAMPLE.holder }],
  ...requestOptions
})

export const Accepted = Schema.Struct({}).annotations({ identifier: "PanelAccepted", examples: [{}] })

export const SessionView = Schema.Struct({
  account_id: Schema.String,
  account_name: Schema.String,
  email: Schema.String
}).annotations({
  identifier: "PanelSession",
  examples: [{ account_id: EXAMPLE.accountId, account_name: EXAMPLE.accountName, email: EXAMPLE.holder }]
})
export type SessionView = typeof SessionView.Type

export const SignedOut = Schema.Struct({ ok: Schema.Boolean }).annotations({
  identifier: "PanelSignedOut",
  examples: [{ ok: true }]
})

// ---------------------------------------------------------------------------------------------------------------
// Account, keys, test environment

export const AccountView = Schema.Struct({
  account_id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  members: Schema.Array(Schema.String),
  sandbox: Schema.Boolean,
  /** False for a self-signed-up account until an operator enables live keys. */
  live_enabled: Schema.Boolean,
  /** Who is signed in, and whether that is the account's own e-mail (only it may change members). */
  signed_in_as: Schema.String,
  is_holder: Schema.Boolean
}).annotations({
  identifier: "PanelAccount",
  examples: [{
    account_id: EXAMPLE.accountId,
    name: EXAMPLE.accountName,
    email: EXAMPLE.holder,
    members: [EXAMPLE.member],
    sandbox: true,
    live_enabled: true,
    signed_in_as: EXAMPLE.holder,
    is_holder: true
  }]
})
export type AccountView = typeof AccountView.Type

export const KeyListing = Schema.Struct({
  key_id: Schema.String,
  environment: Environment,
  prefix: Schema.String,
  name: Schema.NullOr(Schema.String).annotations({ description: "The name given when the key was made; null if none." }),
  created_at: DateTimeString,
  last_used_at: Schema.NullOr(DateTimeString).annotations({
    description: "When a request last came with this key, to within a minute; null if never."
  }),
  revoked_at: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "PanelKey" })
const exampleKey: typeof KeyListing.Type = {
  key_id: EXAMPLE.keyId,
  environment: "test",
  prefix: "svc_test_Q7d2Kx",
  name: "PMS staging",
  created_at: EXAMPLE.at,
  last_used_at: EXAMPLE.at,
  revoked_at: null
}
export const KeyList = Schema.Struct({ keys: Schema.Array(KeyListing) }).annotations({
  identifier: "PanelKeyList",
  examples: [{ keys: [exampleKey] }]
})

/** An API key's name: what it is for ("PMS production"), shown in the key list. */
const KeyName = SingleLineString.pipe(
  Schema.filter((value) => value.trim().length > 0 || "must not be blank"),
  Schema.maxLength(Limits.keyName, { message: () => `must be at most ${Limits.keyName} characters` })
)

export const CreateKey = Schema.Struct({
  environment: Environment,
  name: optional(KeyName).annotations({
    description: "What the key is for, shown in the key list; a live key gets it once its code is confirmed."
  })
}).annotations({
  identifier: "PanelCreateKey",
  examples: [{ environment: "live", name: "PMS production" }],
  ...requestOptions
})
export const NewKey = Schema.Struct({
  key_id: Schema.String,
  api_key: Schema.String,
  environment: Environment,
  name: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "PanelNewKey",
  examples: [{ key_id: EXAMPLE.keyId, api_key: "svc_test_Q7d2Kx9mB4vT1nR6sW8zL3pF5hJ0cY2e", environment: "test", name: "PMS staging" }]
})
export const Confirmation = Schema.Struct({ confirmation_id: Schema.String }).annotations({
  identifier: "PanelConfirmation",
  examples: [{ confirmation_id: EXAMPLE.confirmationId }]
})
export const ConfirmKey = Schema.Struct({
  confirmation_id: Schema.UUID.annotations({ message: () => "must be the confirmation_id answered when the key was asked for" }),
  code: Code
}).annotations({
  identifier: "PanelConfirmKey",
  examples: [{ confirmation_id: EXAMPLE.confirmationId, code: "482913" }],
  ...requestOptions
})
export const KeyPath = Schema.Struct({
  key_id: param(Schema.String, "The key's id (`key_id` in the key list).", "b7e4c1d2-9a3f-4e6b-8c5d-0f1e2a3b4c5d")
})
export const Revoked = Schema.Struct({ key_id: Schema.String, revoked_at: DateTimeString }).annotations({
  identifier: "PanelRevokedKey",
  examples: [{ key_id: EXAMPLE.keyId, revoked_at: EXAMPLE.at }]
})

export const SandboxCreated = Schema.Struct({
  api_key: Schema.String,
  key_id: Schema.String,
  properties: Schema.Array(Property)
}).annotations({
  identifier: "PanelSandbox",
  examples: [{
    api_key: "svc_test_Q7d2Kx9mB4vT1nR6sW8zL3pF5hJ0cY2e",
    key_id: EXAMPLE.keyId,
    properties: [EXAMPLE_PROPERTY]
  }]
})

// ---------------------------------------------------------------------------------------------------------------
// Properties and their authority settings (write-only secrets)

const Setting = (max: number) =>
  SingleLineString.pipe(
    Schema.filter((value) => value.trim().length > 0 || "must not be blank; send null to clear it"),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )
const Digits = StoredString.pipe(
  Schema.pattern(new RegExp(`^\\d{1,${Limits.sireCodeDigits}}$`), {
    message: () => `must be digits only (at most ${Limits.sireCodeDigits})`
  })
)

export const PropertySettings = Schema.Struct({
  /** Never returned: the answer says only whether one is set. */
  tra_token_set: Schema.Boolean,
  ...ReportingSettingsFields
}).annotations({ identifier: "PanelPropertySettings" })

export const PanelProperty = Schema.Struct({
  ...Property.fields,
  environment: Environment,
  settings: PropertySettings
}).annotations({
  identifier: "PanelProperty",
  examples: [{
    ...EXAMPLE_PROPERTY,
    environment: "test",
    settings: {
      tra_token_set: true,
      establishment_name: "Hotel Sandbox Centro",
      tipo_acomodacion: "Hotel",
      default_room: null,
      sire_hotel_code: "12345",
      sire_city_code: "11001"
    }
  }]
})
export type PanelProperty = typeof PanelProperty.Type
export const PropertyList = Schema.Struct({ properties: Schema.Array(PanelProperty) }).annotations({
  identifier: "PanelPropertyList",
  examples: [{
    properties: [{
      ...EXAMPLE_PROPERTY,
      environment: "test",
      settings: {
        tra_token_set: false,
        establishment_name: null,
        tipo_acomodacion: null,
        default_room: null,
        sire_hotel_code: null,
        sire_city_code: null
      }
    }]
  }]
})

/** Any of the settings; `null` clears one (the TRA token too). */
export const UpdateSettings = Schema.Struct({
  tra_token: optional(Schema.NullOr(Setting(Limits.traToken))),
  establishment_name: optional(Schema.NullOr(Setting(Limits.establishmentName))),
  tipo_acomodacion: optional(Schema.NullOr(Setting(Limits.tipoAcomodacion))),
  default_room: optional(Schema.NullOr(Setting(Limits.defaultRoom))),
  sire_hotel_code: optional(Schema.NullOr(Digits)),
  sire_city_code: optional(Schema.NullOr(Digits))
}).annotations({
  identifier: "PanelUpdateSettings",
  examples: [{ tra_token: "tra-token-from-the-ministry", sire_hotel_code: "12345", default_room: null }],
  ...requestOptions
})
export type UpdateSettings = typeof UpdateSettings.Type
export const PropertyPath = Schema.Struct({
  property_id: param(Schema.String, "The property's id.", "0d6f1c9a-8b3e-4f2a-9c71-5e4b3a2d1f08")
})

// ---------------------------------------------------------------------------------------------------------------
// Webhooks and deliveries (as endpoints 9, 14, 15, 16, per environment)

export const EnvironmentQuery = Schema.Struct({ environment: environmentParam }).annotations(requestOptions)

/** Deliveries by what the panel calls their status: `pending` is split into first attempt waiting and `retrying`. */
export const PanelDeliveryStatus = Schema.Literal("pending", "retrying", "delivered", "failed")
export const DeliveryCounts = Schema.Struct({
  pending: Schema.Int,
  retrying: Schema.Int,
  delivered: Schema.Int,
  failed: Schema.Int
}).annotations({ identifier: "PanelDeliveryCounts" })

export const WebhookSummary = Schema.Struct({
  ...WebhookEndpoint.fields,
  /** Its deliveries created in the last 7 days, by status (retrying: pending after a failed attempt). */
  last_7_days: DeliveryCounts
}).annotations({ identifier: "PanelWebhook" })
export const WebhookSummaryList = Schema.Struct({ endpoints: Schema.Array(WebhookSummary) }).annotations({
  identifier: "PanelWebhookList",
  examples: [{
    endpoints: [{
      id: "3c9b2f4e-1a7d-4e8b-9c60-5d2e1f0a7b84",
      url: "https://pms.example.com/hooks/registro",
      events: ["*"],
      include_guests: false,
      is_active: true,
      created_at: EXAMPLE.at,
      secret_rotated_at: null,
      last_7_days: { pending: 0, retrying: 2, delivered: 42, failed: 1 }
    }]
  }]
})

/** `POST /api/panel/webhooks`: endpoint 10's body in the chosen environment. */
export const CreatePanelWebhook = Schema.Struct({
  environment: Environment,
  ...CreateWebhook.fields
}).annotations({
  identifier: "PanelCreateWebhook",
  examples: [{ environment: "test", url: "https://pms.example.com/hooks/registro", events: ["reservation.created"] }],
  ...requestOptions
})
export type CreatePanelWebhook = typeof CreatePanelWebhook.Type

export const DeliveriesQuery = Schema.Struct({
  environment: environmentParam,
  status: optionalParam(
    PanelDeliveryStatus,
    "Only deliveries in this status (`retrying`: pending after a failed attempt; `pending`: waiting for its first).",
    "failed"
  ),
  event: optionalParam(StoredString, "Only deliveries of this event type.", "reservation.created"),
  external_id: optionalParam(StoredString, "Only deliveries of events about this reservation.", "PMS-2026-0042"),
  endpoint_id: optionalParam(Schema.UUID, "Only deliveries to this webhook endpoint.", "3c9b2f4e-1a7d-4e8b-9c60-5d2e1f0a7b84"),
  limit: optionalParam(
    IntFromQuery(WebhookLimits.deliveriesMax, WebhookLimits.deliveriesDefault),
    `How many, most recent first: 1 to ${WebhookLimits.deliveriesMax}, default ${WebhookLimits.deliveriesDefault}.`
  ),
  cursor: optionalParam(StoredString, "The `next_cursor` of the previous page.", "MTIzNA")
}).annotations(requestOptions)
export type DeliveriesQuery = typeof DeliveriesQuery.Type

/** A delivery in the panel's log: endpoint 15's fields with its panel status, endpoint URL and reservation. */
export const PanelDelivery = Schema.Struct({
  ...Delivery.fields,
  panel_status: PanelDeliveryStatus,
  endpoint_url: Schema.String,
  /** The reservation its event is about; null for a test ping. */
  external_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PanelDelivery" })

const EXAMPLE_DELIVERY = {
  id: "8a1d5e2c-6f3b-4c9a-b7e0-1d2c3b4a5f60",
  endpoint_id: "3c9b2f4e-1a7d-4e8b-9c60-5d2e1f0a7b84",
  event_id: "evt_4f6c2a9e0b1d4c7e8f3a5b6c7d8e9f01",
  event: "tra.failed",
  status: "failed",
  attempts: 10,
  last_http_status: 500,
  last_error: "HTTP 500",
  next_attempt_at: null,
  delivered_at: null,
  created_at: EXAMPLE.at,
  attempt_log: [{ attempted_at: EXAMPLE.at, http_status: 500, duration_ms: 130, error: "HTTP 500" }],
  panel_status: "failed",
  endpoint_url: "https://pms.example.com/hooks/registro",
  external_id: "PMS-2026-0042"
} as const

export const DeliveryList = Schema.Struct({
  deliveries: Schema.Array(PanelDelivery),
  /** The next page's `cursor`; null on the last page. */
  next_cursor: Schema.NullOr(Schema.String),
  /** How many deliveries match the filters other than `status`, by status. */
  counts: DeliveryCounts
}).annotations({
  identifier: "PanelDeliveryList",
  examples: [{
    deliveries: [EXAMPLE_DELIVERY],
    next_cursor: null,
    counts: { pending: 0, retrying: 0, delivered: 41, failed: 1 }
  }]
})

/** One attempt in the delivery view: when, the receiver's status and answer (its first 2 KB), how long. */
export const DeliveryAttempt = Schema.Struct({
  at: DateTimeString,
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String),
  response_excerpt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PanelDeliveryAttempt" })

/** `GET /api/panel/deliveries/{id}`: the delivery, its event's payload as sent, and every attempt. */
export const DeliveryDetail = Schema.Struct({
  ...PanelDelivery.fields,
  /** The JSON body sent (with `data.guests` only when the endpoint includes guests). */
  payload: Schema.Unknown,
  /** Every attempt, oldest first, with the receiver's answer (`attempts` is their count, as on endpoint 15). */
  attempt_details: Schema.Array(DeliveryAttempt)
}).annotations({
  identifier: "PanelDeliveryDetail",
  examples: [{
    ...EXAMPLE_DELIVERY,
    payload: { id: "evt_4f6c2a9e0b1d4c7e8f3a5b6c7d8e9f01", type: "tra.failed", data: {} },
    attempt_details: [{ at: EXAMPLE.at, status_code: 500, duration_ms: 130, error: "HTTP 500", response_excerpt: "busy" }]
  }]
})

export const DeliveryIdPath = Schema.Struct({
  id: param(Schema.String, "The delivery's id.", "8a1d5e2c-6f3b-4c9a-b7e0-1d2c3b4a5f60")
})

// ---------------------------------------------------------------------------------------------------------------
// Reservations: what was reported, what failed and why — no guest personal data

export const ReservationsQuery = Schema.Struct({
  environment: environmentParam,
  status: optionalParam(Status, "Only reservations in this status.", "failed"),
  from: optionalParam(StayDate, "Arrivals on or after this date.", "2026-12-01"),
  to: optionalParam(StayDate, "Arrivals on or before this date.", "2026-12-31"),
  q: optionalParam(
    StoredString.pipe(Schema.maxLength(Limits.search, { message: () => `must be at most ${Limits.search} characters` })),
    "Part of an external_id.",
    "PMS-2026"
  ),
  limit: optionalParam(IntFromQuery(200, 50), "How many per page: 1 to 200, default 50."),
  cursor: optionalParam(Schema.String, "`next_cursor` of the previous page.")
}).annotations(requestOptions)
export type ReservationsQuery = typeof ReservationsQuery.Type

const EXAMPLE_PANEL_RESERVATION = {
  ok: true,
  reservation_id: "5f0c7c1e-3b2a-4d9e-8f61-2a7b9c0d1e23",
  external_id: "PMS-2026-0042",
  status: "failed",
  reservation_status: "confirmed",
  sandbox: true,
  checkin_token: null,
  checkin_status: "completed",
  guests_registered: 2,
  tra: {
    status: "error",
    reported_at: null,
    warning: "simulated rejection (sandbox_simulate tra_failed)",
    simulated: true,
    sends_on: "2026-12-18",
    mincit_code: null
  },
  sire: { status: "success", reported_at: EXAMPLE.at, simulated: true, foreign_guests: 1, exit: { status: "success", sends_on: "2026-12-04", reported_at: EXAMPLE.at, simulated: true } },
  departed_on: null,
  check_in: "2026-12-18",
  check_out: "2026-12-21",
  property_id: EXAMPLE_PROPERTY.property_id,
  updated_at: EXAMPLE.at
} as const

export const ReservationSummary = Schema.Struct({
  ...RegistrationStatus.fields,
  check_in: IsoDate,
  check_out: IsoDate,
  property_id: Schema.String,
  updated_at: DateTimeString
}).annotations({ identifier: "PanelReservation", examples: [EXAMPLE_PANEL_RESERVATION] })
export type ReservationSummary = typeof ReservationSummary.Type
/** The path of one reservation (its `reservation_id`, as the list shows it). */
export const ReservationIdPath = Schema.Struct({
  reservation_id: param(
    Schema.UUID.annotations({ message: () => "must be a UUID" }),
    "The reservation's id.",
    "5f0c7c1e-3b2a-4d9e-8f61-2a7b9c0d1e23"
  )
})

/** Record the day the guests left (design §6.8), as the partner API's departure does. */
export const RecordDeparture = Schema.Struct({ departed_on: StayDate }).annotations({
  identifier: "PanelRecordDeparture",
  examples: [{ departed_on: "2026-12-20" }],
  ...requestOptions
})
export type RecordDeparture = typeof RecordDeparture.Type

export const ReservationPage = Schema.Struct({
  reservations: Schema.Array(ReservationSummary),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "PanelReservationPage",
  examples: [{
    reservations: [EXAMPLE_PANEL_RESERVATION],
    next_cursor: null
  }]
})

// ---------------------------------------------------------------------------------------------------------------
// Members and audit

export const Member = Schema.Struct({
  email: Schema.String,
  added_by: Schema.String,
  added_at: DateTimeString
}).annotations({ identifier: "PanelMember" })
export const MemberList = Schema.Struct({
  /** The account's own e-mail: it signs in too and alone may change the members. */
  holder: Schema.String,
  members: Schema.Array(Member)
}).annotations({
  identifier: "PanelMemberList",
  examples: [{ holder: EXAMPLE.holder, members: [{ email: EXAMPLE.member, added_by: EXAMPLE.holder, added_at: EXAMPLE.at }] }]
})
export const AddMember = Schema.Struct({ email: PanelEmail }).annotations({
  identifier: "PanelAddMember",
  examples: [{ email: EXAMPLE.member }],
  ...requestOptions
})
export const MemberPath = Schema.Struct({
  email: param(Schema.String, "The member's e-mail.", "recepcion@hotelandino.example.co")
})

export const AuditQuery = Schema.Struct({
  limit: optionalParam(IntFromQuery(200, 100), "How many entries, newest first: 1 to 200, default 100.")
}).annotations(requestOptions)
export const AuditEntry = Schema.Struct({
  at: DateTimeString,
  actor_email: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  ip: Schema.NullOr(Schema.String),
  /** What the page words the entry with (a key's prefix, a property's name, an endpoint's URL…); null before issue 26. */
  details: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "PanelAuditEntry" })
export const AuditLog = Schema.Struct({ entries: Schema.Array(AuditEntry) }).annotations({
  identifier: "PanelAuditLog",
  examples: [{
    entries: [{
      at: EXAMPLE.at,
      actor_email: EXAMPLE.holder,
      action: "key.created",
      target: EXAMPLE.keyId,
      ip: "203.0.113.7",
      details: { environment: "test", prefix: "svc_test_7Hq2" }
    }]
  }]
})

// ---------------------------------------------------------------------------------------------------------------
// Who is signed in

/** The signed-in person of a panel request (the session middleware provides it). */
export interface PanelUser {
  readonly sessionId: string
  readonly accountId: string
  readonly accountName: string
  /** The account's own e-mail (its holder). */
  readonly accountEmail: string
  /** Who signed in: the holder's e-mail or a member's. */
  readonly email: string
  /** The client's address, for the audit log. */
  readonly ip: string | null
  /** The session's `X-Panel-CSRF` value (derived from its token; `Secrets.csrfToken`). */
  readonly csrf: string
}

export class CurrentPanelUser extends Context.Tag("panel/CurrentPanelUser")<CurrentPanelUser, PanelUser>() {}

/** Only the holder may change the account's members (design §8). */
export const isHolder = (user: Pick<PanelUser, "email" | "accountEmail">) =>
  user.email === user.accountEmail.toLowerCase()
