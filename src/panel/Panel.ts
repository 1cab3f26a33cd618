import { Context, Schema } from "effect"
import { Property } from "../properties/Property.ts"
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
import { Delivery, DeliveryStatus, Limits as WebhookLimits, WebhookEndpoint } from "../webhooks/Webhook.ts"

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

const requestOptions = { parseOptions: { errors: "all" } } as const
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const DateTimeString = Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } })

/** An e-mail address as the panel keys it: trimmed, lower case. */
export const PanelEmail = Schema.transform(Schema.String, Email, {
  strict: true,
  decode: (value) => value.trim().toLowerCase(),
  encode: (value) => value
}).annotations({ jsonSchema: { type: "string", format: "email", maxLength: ReservationLimits.email } })

/** A 6-digit e-mailed code. */
export const Code = Schema.String.pipe(
  Schema.pattern(/^\d{6}$/, { message: () => "must be the 6 digits of the e-mailed code" })
)

const Name = SingleLineString.pipe(
  Schema.filter((value) => value.trim().length > 0 || "must not be blank"),
  Schema.maxLength(120, { message: () => "must be at most 120 characters" })
)

// ---------------------------------------------------------------------------------------------------------------
// Sign-in

export const CodeRequest = Schema.Struct({ email: PanelEmail }).annotations({ identifier: "PanelCodeRequest", ...requestOptions })
export const SignIn = Schema.Struct({ email: PanelEmail, code: Code }).annotations({ identifier: "PanelSignIn", ...requestOptions })
export const Signup = Schema.Struct({ name: Name, email: PanelEmail }).annotations({ identifier: "PanelSignup", ...requestOptions })

export const Accepted = Schema.Struct({}).annotations({ identifier: "PanelAccepted" })

export const SessionView = Schema.Struct({
  account_id: Schema.String,
  account_name: Schema.String,
  email: Schema.String
}).annotations({ identifier: "PanelSession" })
export type SessionView = typeof SessionView.Type

export const SignedOut = Schema.Struct({ ok: Schema.Boolean }).annotations({ identifier: "PanelSignedOut" })

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
}).annotations({ identifier: "PanelAccount" })
export type AccountView = typeof AccountView.Type

export const KeyListing = Schema.Struct({
  key_id: Schema.String,
  environment: Environment,
  prefix: Schema.String,
  created_at: DateTimeString,
  revoked_at: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "PanelKey" })
export const KeyList = Schema.Struct({ keys: Schema.Array(KeyListing) }).annotations({ identifier: "PanelKeyList" })

export const CreateKey = Schema.Struct({ environment: Environment }).annotations({ identifier: "PanelCreateKey", ...requestOptions })
export const NewKey = Schema.Struct({
  key_id: Schema.String,
  api_key: Schema.String,
  environment: Environment
}).annotations({ identifier: "PanelNewKey" })
export const Confirmation = Schema.Struct({ confirmation_id: Schema.String }).annotations({ identifier: "PanelConfirmation" })
export const ConfirmKey = Schema.Struct({
  confirmation_id: Schema.UUID.annotations({ message: () => "must be the confirmation_id answered when the key was asked for" }),
  code: Code
}).annotations({ identifier: "PanelConfirmKey", ...requestOptions })
export const KeyPath = Schema.Struct({ key_id: Schema.String }).annotations({ identifier: "PanelKeyPath" })
export const Revoked = Schema.Struct({ key_id: Schema.String, revoked_at: DateTimeString }).annotations({
  identifier: "PanelRevokedKey"
})

export const SandboxCreated = Schema.Struct({
  api_key: Schema.String,
  key_id: Schema.String,
  properties: Schema.Array(Property)
}).annotations({ identifier: "PanelSandbox" })

// ---------------------------------------------------------------------------------------------------------------
// Properties and their authority settings (write-only secrets)

const Setting = (max: number) =>
  SingleLineString.pipe(
    Schema.filter((value) => value.trim().length > 0 || "must not be blank; send null to clear it"),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )
const Digits = StoredString.pipe(
  Schema.pattern(/^\d{1,12}$/, { message: () => "must be digits only (at most 12)" })
)

export const PropertySettings = Schema.Struct({
  /** Never returned: the answer says only whether one is set. */
  tra_token_set: Schema.Boolean,
  establishment_name: Schema.NullOr(Schema.String),
  tipo_acomodacion: Schema.NullOr(Schema.String),
  default_room: Schema.NullOr(Schema.String),
  sire_hotel_code: Schema.NullOr(Schema.String),
  sire_city_code: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PanelPropertySettings" })

export const PanelProperty = Schema.Struct({
  ...Property.fields,
  environment: Environment,
  settings: PropertySettings
}).annotations({ identifier: "PanelProperty" })
export type PanelProperty = typeof PanelProperty.Type
export const PropertyList = Schema.Struct({ properties: Schema.Array(PanelProperty) }).annotations({
  identifier: "PanelPropertyList"
})

/** Any of the settings; `null` clears one (the TRA token too). */
export const UpdateSettings = Schema.Struct({
  tra_token: optional(Schema.NullOr(Setting(500))),
  establishment_name: optional(Schema.NullOr(Setting(255))),
  tipo_acomodacion: optional(Schema.NullOr(Setting(100))),
  default_room: optional(Schema.NullOr(Setting(50))),
  sire_hotel_code: optional(Schema.NullOr(Digits)),
  sire_city_code: optional(Schema.NullOr(Digits))
}).annotations({ identifier: "PanelUpdateSettings", ...requestOptions })
export type UpdateSettings = typeof UpdateSettings.Type
export const PropertyPath = Schema.Struct({ property_id: Schema.String }).annotations({ identifier: "PanelPropertyPath" })

// ---------------------------------------------------------------------------------------------------------------
// Webhooks and deliveries (as endpoints 9, 14, 15, 16, per environment)

export const EnvironmentQuery = Schema.Struct({
  /** Default `live`. */
  environment: optional(Environment)
}).annotations({ identifier: "PanelEnvironmentQuery", ...requestOptions })

export const WebhookSummary = Schema.Struct({
  ...WebhookEndpoint.fields,
  /** Deliveries of the last 7 days that ended delivered or failed. */
  last_7_days: Schema.Struct({ delivered: Schema.Int, failed: Schema.Int })
}).annotations({ identifier: "PanelWebhook" })
export const WebhookSummaryList = Schema.Struct({ endpoints: Schema.Array(WebhookSummary) }).annotations({
  identifier: "PanelWebhookList"
})

const Limit = (max: number) =>
  Schema.NumberFromString.pipe(
    Schema.int({ message: () => "must be an integer" }),
    Schema.between(1, max, { message: () => `must be between 1 and ${max}` })
  )

export const DeliveriesQuery = Schema.Struct({
  environment: optional(Environment),
  status: optional(DeliveryStatus),
  event: optional(StoredString),
  external_id: optional(StoredString),
  limit: optional(Limit(WebhookLimits.deliveriesMax))
}).annotations({ identifier: "PanelDeliveriesQuery", ...requestOptions })
export type DeliveriesQuery = typeof DeliveriesQuery.Type
export const DeliveryList = Schema.Struct({ deliveries: Schema.Array(Delivery) }).annotations({
  identifier: "PanelDeliveryList"
})
export const IdPath = Schema.Struct({ id: Schema.String }).annotations({ identifier: "PanelIdPath" })

// ---------------------------------------------------------------------------------------------------------------
// Reservations: what was reported, what failed and why — no guest personal data

export const ReservationsQuery = Schema.Struct({
  environment: optional(Environment),
  status: optional(Status),
  /** Arrivals on or after this date. */
  from: optional(StayDate),
  /** Arrivals on or before this date. */
  to: optional(StayDate),
  /** Part of an external_id. */
  q: optional(StoredString.pipe(Schema.maxLength(120, { message: () => "must be at most 120 characters" }))),
  limit: optional(Limit(200)),
  /** `next_cursor` of the previous page. */
  cursor: optional(Schema.String)
}).annotations({ identifier: "PanelReservationsQuery", ...requestOptions })
export type ReservationsQuery = typeof ReservationsQuery.Type

export const ReservationSummary = Schema.Struct({
  ...RegistrationStatus.fields,
  check_in: IsoDate,
  check_out: IsoDate,
  property_id: Schema.String,
  updated_at: DateTimeString
}).annotations({ identifier: "PanelReservation" })
export type ReservationSummary = typeof ReservationSummary.Type
export const ReservationPage = Schema.Struct({
  reservations: Schema.Array(ReservationSummary),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PanelReservationPage" })

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
}).annotations({ identifier: "PanelMemberList" })
export const AddMember = Schema.Struct({ email: PanelEmail }).annotations({ identifier: "PanelAddMember", ...requestOptions })
export const MemberPath = Schema.Struct({ email: Schema.String }).annotations({ identifier: "PanelMemberPath" })

export const AuditQuery = Schema.Struct({ limit: optional(Limit(200)) }).annotations({
  identifier: "PanelAuditQuery",
  ...requestOptions
})
export const AuditEntry = Schema.Struct({
  at: DateTimeString,
  actor_email: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  ip: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PanelAuditEntry" })
export const AuditLog = Schema.Struct({ entries: Schema.Array(AuditEntry) }).annotations({ identifier: "PanelAuditLog" })

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
