import { RpcSerialization, RpcServer } from "@effect/rpc"
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { Accounts } from "../accounts/Accounts.ts"
import { Sandbox } from "../accounts/Sandbox.ts"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { ReportRuns } from "../compliance/ReportRuns.ts"
import { Properties } from "../properties/Properties.ts"
import { isUuid } from "../shared/Uuid.ts"
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

const HandlersLive = AdminRpcs.toLayer(Effect.gen(function*() {
  const accounts = yield* Accounts
  const keys = yield* ApiKeys
  const properties = yield* Properties
  const sandbox = yield* Sandbox
  const reports = yield* ReportRuns
  const fileNotFound = (id: string) => new AdminError({ message: `no SIRE file ${id} waiting for confirmation`, code: "file_not_found" })
  return {
    CreateAccount: (input) => accounts.create(input),
    SetLimits: ({ account_id, reset, ...limits }) => accounts.setLimits(account_id, reset ? "reset" : limits),
    CreateSandbox: ({ account_id }) => sandbox.create(account_id),
    CreateKey: ({ account_id, environment }) => keys.create(account_id, environment),
    RevokeKey: ({ key_id }) => keys.revoke(key_id),
    ListKeys: ({ account_id }) => keys.list(account_id),
    CreateProperty: ({ account_id, ...settings }) => properties.create(account_id, settings),
    UpdateProperty: ({ property_id, ...settings }) => properties.update(property_id, settings),
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
        : Effect.fail(fileNotFound(file_id))
  }
}))

/** The admin RPC on the same HTTP server as the partner API, at `/rpc/admin`. */
export const layer = RpcServer.layer(AdminRpcs, { disableFatalDefects: true }).pipe(
  Layer.provide(HandlersLive),
  Layer.provide(AdminAuthLive),
  Layer.provide(RpcServer.layerProtocolHttp({ path: "/rpc/admin", routerTag: HttpApiBuilder.Router })),
  Layer.provide(RpcSerialization.layerJson)
)
