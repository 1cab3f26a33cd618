import { Rpc, RpcGroup, RpcMiddleware } from "@effect/rpc"
import { Schema } from "effect"
import { TableName } from "../compliance/ReferenceTables.ts"
import { Property } from "../properties/Property.ts"
import { Email, IsoDate, ReportStatus } from "../reservations/Reservation.ts"
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
  name: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
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

/** One report of a reservation (`reports list`, `reports retry`): the TRA, or SIRE's entry or exit movements. */
export const ReportAuthority = Schema.Literal("tra", "sire_entry", "sire_exit")

/** What `reports list --status` filters on: the reports that need someone (design §9). */
export const ReportListStatus = Schema.Literal("pending", "error")

const ReportListing = Schema.Struct({
  reservation_id: Schema.String,
  external_id: Schema.String,
  account_id: Schema.String,
  property_id: Schema.String,
  authority: ReportAuthority,
  status: ReportStatus,
  sends_on: Schema.NullOr(Schema.String),
  warning: Schema.NullOr(Schema.String),
  overdue: Schema.Boolean
})

const ReferenceEntry = Schema.Struct({
  table: TableName,
  key: Schema.String,
  value: Schema.NullOr(Schema.String),
  bundled: Schema.NullOr(Schema.String),
  sources: Schema.NullOr(Schema.String),
  overridden: Schema.Boolean,
  note: Schema.NullOr(Schema.String),
  updated_at: Schema.NullOr(Schema.String),
  ignored: Schema.NullOr(Schema.String)
})

/** Why a reference change was made (`reference set --note`), kept with it and in the audit log. */
export const ReferenceNote = Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(500)).annotations({
  message: () => ({ message: "must be 1 to 500 characters, neither starting nor ending with a space", override: true })
})

/** One operation of the admin RPC: every one fails with `AdminError`. */
const adminRpc = <
  const Tag extends string,
  Payload extends Schema.Schema.Any | Schema.Struct.Fields = typeof Schema.Void,
  Success extends Schema.Schema.Any = typeof Schema.Void
>(tag: Tag, options: { readonly payload?: Payload; readonly success: Success }) =>
  Rpc.make(tag, { ...options, error: AdminError })

/** The admin RPC served at `/rpc/admin`; `src/cli.ts` is its client. */
export class AdminRpcs extends RpcGroup.make(
  adminRpc("CreateAccount", {
    // The partner API's e-mail rule: an address the panel and the mails can use.
    payload: { name: AccountName, email: Email },
    success: Schema.Struct({ account_id: Schema.String, name: Schema.String, email: Schema.String })
  }),
  adminRpc("SetLimits", {
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
    })
  }),
  adminRpc("EnableLive", {
    payload: { account_id: Schema.String },
    success: Schema.Struct({ account_id: Schema.String, live_enabled: Schema.Literal(true) })
  }),
  adminRpc("CreateSandbox", {
    payload: { account_id: Schema.String },
    success: Schema.Struct({ api_key: Schema.String, key_id: Schema.String, properties: Schema.Array(Property) })
  }),
  adminRpc("CreateKey", {
    payload: { account_id: Schema.String, environment: Environment },
    success: Schema.Struct({ key_id: Schema.String, api_key: Schema.String, environment: Environment })
  }),
  adminRpc("RevokeKey", {
    payload: { key_id: Schema.String },
    success: Schema.Struct({ key_id: Schema.String, revoked_at: Schema.String })
  }),
  adminRpc("ListKeys", {
    payload: { account_id: Schema.String },
    success: Schema.Struct({ keys: Schema.Array(KeyListing) })
  }),
  adminRpc("CreateProperty", {
    payload: { account_id: Schema.String, ...PropertySettings, name: Schema.NonEmptyTrimmedString },
    success: AdminProperty
  }),
  adminRpc("UpdateProperty", {
    payload: { property_id: Schema.String, ...PropertySettings },
    success: AdminProperty
  }),
  // Design §4/§6.8: a report run now, for everything due on or before `date` (Bogotá), backoff waits included.
  adminRpc("RunReports", {
    payload: { date: Schema.optional(IsoDate) },
    success: Schema.Struct({ date: Schema.String, reservations: Schema.Int, tra: Counts, sire: Counts })
  }),
  adminRpc("SireFiles", {
    payload: { property_id: Schema.optional(Schema.String) },
    success: Schema.Struct({ files: Schema.Array(SireFile) })
  }),
  adminRpc("ConfirmSireFile", {
    payload: { file_id: Schema.String },
    success: Schema.Struct({ file_id: Schema.String, status: Schema.String })
  }),
  // Design §9: the live reports that need someone — waiting or failed —, and re-queueing failed ones.
  adminRpc("ListReports", {
    payload: {
      status: Schema.optional(ReportListStatus),
      overdue: Schema.optional(Schema.Boolean),
      property_id: Schema.optional(Schema.String),
      /** `next_cursor` of the previous page. */
      cursor: Schema.optional(Schema.String),
      limit: Schema.optional(Schema.Int)
    },
    success: Schema.Struct({ reports: Schema.Array(ReportListing), next_cursor: Schema.NullOr(Schema.String) })
  }),
  adminRpc("RetryReports", {
    payload: { reservation_id: Schema.String },
    success: Schema.Struct({
      reservation_id: Schema.String,
      requeued: Schema.Array(Schema.Struct({ authority: ReportAuthority, guests: Schema.Int })),
      reports: Schema.Array(ReportListing)
    })
  }),
  // Design §6.10: the reference tables with the operators' overrides; keys and values are checked by the service
  // with each table's schemas (`ReferenceTables.ts`), which the CLI applies before calling too.
  adminRpc("ListReference", {
    payload: { table: Schema.optional(TableName), key: Schema.optional(Schema.String) },
    success: Schema.Struct({ entries: Schema.Array(ReferenceEntry) })
  }),
  adminRpc("SetReference", {
    payload: {
      table: TableName,
      key: Schema.String,
      /** null: no value (reports that need it wait with a warning); only where the table has gaps. */
      value: Schema.NullOr(Schema.String),
      note: Schema.optional(ReferenceNote)
    },
    success: Schema.Struct({ ...ReferenceEntry.fields, previous: Schema.NullOr(Schema.String) })
  }),
  adminRpc("UnsetReference", {
    payload: { table: TableName, key: Schema.String },
    success: Schema.Struct({ ...ReferenceEntry.fields, previous: Schema.NullOr(Schema.String) })
  }),
  // Design §9: every stored secret not under the current SECRETS_KEY sealed under it (a second run answers 0).
  adminRpc("RotateSecrets", {
    success: Schema.Struct({ reencrypted: Schema.Int })
  })
).middleware(AdminAuth) {}
