import { Rpc, RpcGroup, RpcMiddleware } from "@effect/rpc"
import { Schema } from "effect"
import { Property } from "../properties/Property.ts"
import { Email, IsoDate } from "../reservations/Reservation.ts"
import { Environment } from "../shared/Environment.ts"
import { AdminError } from "./AdminError.ts"

/** `Authorization: Bearer <ADMIN_TOKEN>` on every admin call (design §4). */
export class AdminAuth extends RpcMiddleware.Tag<AdminAuth>()("admin/AdminAuth", { failure: AdminError }) {}

/** A per-key limit per minute; the CLI checks `--reads` and the others with it, so its message is theirs. */
export const Limit = Schema.Int.pipe(Schema.between(1, 1_000_000)).annotations({
  message: () => ({ message: "must be a whole number from 1 to 1000000", override: true })
})

/** An account's name (`accounts create --name`). */
export const AccountName = Schema.NonEmptyTrimmedString

export const PropertySettings = {
  name: Schema.optional(Schema.NonEmptyTrimmedString),
  environment: Schema.optional(Environment),
  rnt_id: Schema.optional(Schema.String),
  external_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120))),
  internal_name: Schema.optional(Schema.String),
  reports_tra: Schema.optional(Schema.Boolean),
  reports_sire: Schema.optional(Schema.Boolean),
  requires_contract_signature: Schema.optional(Schema.Boolean),
  requires_document_photos: Schema.optional(Schema.Boolean),
  checkin_enabled: Schema.optional(Schema.Boolean),
  // Redacted: the TRA token shows as <redacted> in any log or trace of the RPC call.
  tra_token: Schema.optional(Schema.Redacted(Schema.String)),
  sire_hotel_code: Schema.optional(Schema.String),
  sire_city_code: Schema.optional(Schema.String),
  establishment_name: Schema.optional(Schema.String),
  tipo_acomodacion: Schema.optional(Schema.String),
  // numero_habitacion when a reservation has no room_number (design §6.10); the panel's limit.
  default_room: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(50)))
}

export const AdminProperty = Schema.Struct({ ...Property.fields, environment: Environment })

const KeyListing = Schema.Struct({
  key_id: Schema.String,
  environment: Environment,
  prefix: Schema.String,
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String)
})

const Counts = Schema.Struct({ sent: Schema.Int, accepted: Schema.Int, rejected: Schema.Int })

const SireFile = Schema.Struct({
  file_id: Schema.String,
  property_id: Schema.String,
  name: Schema.String,
  created_at: Schema.String,
  lines: Schema.Int,
  status: Schema.String,
  content: Schema.String
})

/** The admin RPC served at `/rpc/admin`; `src/cli.ts` is its client. */
export class AdminRpcs extends RpcGroup.make(
  Rpc.make("CreateAccount", {
    // The partner API's e-mail rule: an address the panel and the mails can use.
    payload: { name: AccountName, email: Email },
    success: Schema.Struct({ account_id: Schema.String, name: Schema.String, email: Schema.String }),
    error: AdminError
  }),
  Rpc.make("SetLimits", {
    payload: {
      account_id: Schema.String,
      reads: Schema.optional(Limit),
      writes: Schema.optional(Limit),
      tests: Schema.optional(Limit),
      reset: Schema.optional(Schema.Boolean)
    },
    success: Schema.Struct({
      account_id: Schema.String,
      limits: Schema.Struct({ reads: Schema.Number, writes: Schema.Number, tests: Schema.Number })
    }),
    error: AdminError
  }),
  Rpc.make("EnableLive", {
    payload: { account_id: Schema.String },
    success: Schema.Struct({ account_id: Schema.String, live_enabled: Schema.Literal(true) }),
    error: AdminError
  }),
  Rpc.make("CreateSandbox", {
    payload: { account_id: Schema.String },
    success: Schema.Struct({ api_key: Schema.String, key_id: Schema.String, properties: Schema.Array(Property) }),
    error: AdminError
  }),
  Rpc.make("CreateKey", {
    payload: { account_id: Schema.String, environment: Environment },
    success: Schema.Struct({ key_id: Schema.String, api_key: Schema.String, environment: Environment }),
    error: AdminError
  }),
  Rpc.make("RevokeKey", {
    payload: { key_id: Schema.String },
    success: Schema.Struct({ key_id: Schema.String, revoked_at: Schema.String }),
    error: AdminError
  }),
  Rpc.make("ListKeys", {
    payload: { account_id: Schema.String },
    success: Schema.Struct({ keys: Schema.Array(KeyListing) }),
    error: AdminError
  }),
  Rpc.make("CreateProperty", {
    payload: { account_id: Schema.String, ...PropertySettings, name: Schema.NonEmptyTrimmedString },
    success: AdminProperty,
    error: AdminError
  }),
  Rpc.make("UpdateProperty", {
    payload: { property_id: Schema.String, ...PropertySettings },
    success: AdminProperty,
    error: AdminError
  }),
  // Design §4/§6.8: a report run now, for everything due on or before `date` (Bogotá), backoff waits included.
  Rpc.make("RunReports", {
    payload: { date: Schema.optional(IsoDate) },
    success: Schema.Struct({ date: Schema.String, reservations: Schema.Int, tra: Counts, sire: Counts }),
    error: AdminError
  }),
  Rpc.make("SireFiles", {
    payload: { property_id: Schema.optional(Schema.String) },
    success: Schema.Struct({ files: Schema.Array(SireFile) }),
    error: AdminError
  }),
  Rpc.make("ConfirmSireFile", {
    payload: { file_id: Schema.String },
    success: Schema.Struct({ file_id: Schema.String, status: Schema.String }),
    error: AdminError
  })
).middleware(AdminAuth) {}
