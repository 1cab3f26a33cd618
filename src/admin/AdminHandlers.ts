import { RpcSerialization, RpcServer } from "@effect/rpc"
import { Effect, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { Accounts } from "../accounts/Accounts.ts"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { ReferenceStore } from "../compliance/ReferenceStore.ts"
import { ReportOps } from "../compliance/ReportOps.ts"
import { ReportRuns } from "../compliance/ReportRuns.ts"
import { Properties } from "../properties/Properties.ts"
import { Sandbox } from "../sandbox/Sandbox.ts"
import { StoredSecrets } from "../secrets/StoredSecrets.ts"
import type {
  AccountNotFound,
  ExternalIdInUse,
  InvalidRequest,
  KeyLimitReached,
  KeyNotFound,
  NothingToRetry,
  OverrideNotFound,
  PropertyNotFound,
  ReservationNotFound,
  SandboxExists
} from "../shared/errors.ts"
import { isUuid } from "../shared/Uuid.ts"
import * as AdminEnvelope from "./AdminEnvelope.ts"
import { AdminError } from "./AdminError.ts"
import { AdminAuth, AdminRpcs } from "./AdminRpcs.ts"
import { AdminToken } from "./AdminToken.ts"

const digest = (value: string) => createHash("sha256").update(value).digest()

const AdminAuthLive = Layer.effect(
  AdminAuth,
  Effect.map(AdminToken, (token) => {
    const expected = digest(`Bearer ${Redacted.value(token)}`)
    return AdminAuth.of(({ headers }) =>
      timingSafeEqual(digest(headers["authorization"] ?? ""), expected)
        ? Effect.void
        : Effect.fail(new AdminError({ message: "missing or wrong admin token", code: "unauthorized" }))
    )
  })
)

/** The domain errors the operator services fail with. */
type ServiceError =
  | AccountNotFound
  | KeyNotFound
  | KeyLimitReached
  | PropertyNotFound
  | ExternalIdInUse
  | SandboxExists
  | ReservationNotFound
  | NothingToRetry
  | OverrideNotFound
  | InvalidRequest

/** The admin RPC's stable code for each; the CLI prints it and scripts match on it (see `AdminError`). */
const adminCodes = {
  AccountNotFound: "account_not_found",
  KeyNotFound: "key_not_found",
  KeyLimitReached: "key_limit_reached",
  PropertyNotFound: "property_not_found",
  ExternalIdInUse: "external_id_in_use",
  SandboxExists: "sandbox_exists",
  ReservationNotFound: "reservation_not_found",
  NothingToRetry: "nothing_to_retry",
  OverrideNotFound: "override_not_found",
  // A value the service refused (a reference value another key already has): the CLI's code for refused values.
  InvalidRequest: "invalid_request"
} as const satisfies Record<ServiceError["_tag"], string>

/** The one translation from the services' domain errors to the admin RPC's: same message, the admin code. */
const toAdminError = (error: ServiceError): AdminError =>
  new AdminError({ message: error.message, code: adminCodes[error._tag] })

const HandlersLive = AdminRpcs.toLayer(Effect.gen(function*() {
  const accounts = yield* Accounts
  const keys = yield* ApiKeys
  const properties = yield* Properties
  const sandbox = yield* Sandbox
  const reports = yield* ReportRuns
  const reportOps = yield* ReportOps
  const reference = yield* ReferenceStore
  const secrets = yield* StoredSecrets
  const fileNotFound = (id: string) => new AdminError({ message: `no SIRE file ${id} waiting for confirmation`, code: "file_not_found" })
  return {
    CreateAccount: (input) => accounts.create(input),
    SetLimits: ({ account_id, reset, ...limits }) =>
      Effect.mapError(accounts.setLimits(account_id, reset ? "reset" : limits), toAdminError),
    EnableLive: ({ account_id }) => Effect.mapError(accounts.enableLive(account_id), toAdminError),
    CreateSandbox: ({ account_id }) => Effect.mapError(sandbox.create(account_id), toAdminError),
    CreateKey: ({ account_id, environment }) => Effect.mapError(keys.create(account_id, environment), toAdminError),
    RevokeKey: ({ key_id }) => Effect.mapError(keys.revoke(key_id), toAdminError),
    ListKeys: ({ account_id }) => Effect.mapError(keys.list(account_id), toAdminError),
    CreateProperty: ({ account_id, ...settings }) =>
      Effect.mapError(properties.create(account_id, settings), toAdminError),
    UpdateProperty: ({ property_id, ...settings }) =>
      Effect.mapError(properties.update(property_id, settings), toAdminError),
    RunReports: ({ date }) =>
      Effect.map(reports.run({ date, force: true }), ({ date, reservations, tra, sire }) => ({
        date,
        reservations,
        tra,
        sire: { sent: sire.sent, accepted: sire.accepted, rejected: sire.rejected }
      })),
    SireFiles: ({ property_id }) =>
      property_id !== undefined && !isUuid(property_id)
        ? Effect.succeed({ files: [] })
        : reports.files(property_id),
    ConfirmSireFile: ({ file_id }) =>
      isUuid(file_id)
        ? Effect.flatMap(reports.confirm(file_id), Option.match({
          onNone: () => Effect.fail(fileNotFound(file_id)),
          onSome: Effect.succeed
        }))
        : Effect.fail(fileNotFound(file_id)),
    ListReports: ({ cursor, limit, overdue, property_id, status }) =>
      Effect.mapError(reportOps.list({ status, overdue, propertyId: property_id, cursor, limit }), toAdminError),
    RetryReports: ({ reservation_id }) => Effect.mapError(reportOps.retry(reservation_id), toAdminError),
    ListReference: (filter) => Effect.mapError(reference.list(filter), toAdminError),
    SetReference: (input) => Effect.mapError(reference.set(input), toAdminError),
    UnsetReference: (input) => Effect.mapError(reference.unset(input), toAdminError),
    RotateSecrets: () =>
      Effect.flatMap(secrets.rotate, ({ reencrypted, unreadable }) =>
        unreadable.length === 0 ? Effect.succeed({ reencrypted }) : Effect.fail(
          new AdminError({
            code: "secret_unreadable",
            message: `re-encrypted ${reencrypted}; ${unreadable.length} stored secrets are under a key that is neither `
              + `SECRETS_KEY nor SECRETS_KEY_PREVIOUS and were left as they are: `
              + unreadable.map((u) => `${u.table}.${u.column} of ${u.id} (key ${u.key_id})`).join(", ")
          })
        ))
  }
}))

/**
 * The admin RPC on the same HTTP server as the partner API, at `/rpc/admin`, behind its envelope check
 * (`AdminEnvelope`) and the router's body guard.
 */
export const layer = RpcServer.layer(AdminRpcs, { disableFatalDefects: true }).pipe(
  Layer.provide(HandlersLive),
  Layer.provide(AdminAuthLive),
  Layer.provide(AdminEnvelope.layerProtocol("/rpc/admin")),
  Layer.provide(RpcSerialization.layerJson)
)
