import { RpcSerialization, RpcServer } from "@effect/rpc"
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { Accounts } from "../accounts/Accounts.ts"
import { Sandbox } from "../accounts/Sandbox.ts"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { Properties } from "../properties/Properties.ts"
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
  return {
    CreateAccount: (input) => accounts.create(input),
    SetLimits: ({ account_id, reset, ...limits }) => accounts.setLimits(account_id, reset ? "reset" : limits),
    CreateSandbox: ({ account_id }) => sandbox.create(account_id),
    CreateKey: ({ account_id, environment }) => keys.create(account_id, environment),
    RevokeKey: ({ key_id }) => keys.revoke(key_id),
    ListKeys: ({ account_id }) => keys.list(account_id),
    CreateProperty: ({ account_id, ...settings }) => properties.create(account_id, settings),
    UpdateProperty: ({ property_id, ...settings }) => properties.update(property_id, settings)
  }
}))

/** The admin RPC on the same HTTP server as the partner API, at `/rpc/admin`. */
export const layer = RpcServer.layer(AdminRpcs, { disableFatalDefects: true }).pipe(
  Layer.provide(HandlersLive),
  Layer.provide(AdminAuthLive),
  Layer.provide(RpcServer.layerProtocolHttp({ path: "/rpc/admin", routerTag: HttpApiBuilder.Router })),
  Layer.provide(RpcSerialization.layerJson)
)
