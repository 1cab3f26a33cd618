import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../auth/CurrentKey.ts"
import { PartnerApi } from "./PartnerApi.ts"
import { Properties } from "../properties/Properties.ts"

export const PropertiesLive = HttpApiBuilder.group(PartnerApi, "properties", (handlers) =>
  Effect.gen(function*() {
    const properties = yield* Properties
    return handlers
      // Hot read: rows are built to the contract's shape and sent without re-encoding (docs/performance.md).
      .handle("list", () =>
        Effect.flatMap(CurrentKey, (key) =>
          Effect.map(properties.list(key), (list) => HttpServerResponse.unsafeJson({ properties: list }))))
      .handle("map", ({ payload }) => Effect.flatMap(CurrentKey, (key) => properties.map(key, payload.mappings)))
  }))
