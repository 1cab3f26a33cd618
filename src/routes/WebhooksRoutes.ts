import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../auth/CurrentKey.ts"
import { PartnerApi } from "./PartnerApi.ts"
import { Deliveries } from "../webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../webhooks/WebhookEndpoints.ts"

export const WebhooksLive = HttpApiBuilder.group(PartnerApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const endpoints = yield* WebhookEndpoints
    const deliveries = yield* Deliveries
    return handlers
      .handle("list", () => Effect.flatMap(CurrentKey, endpoints.list))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentKey, (key) =>
          Effect.map(endpoints.create(key, payload), (created) => HttpServerResponse.unsafeJson(created, { status: 201 }))))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentKey, (key) => endpoints.update(key, path.id, payload)))
      .handle("deactivate", ({ path }) => Effect.flatMap(CurrentKey, (key) => endpoints.deactivate(key, path.id)))
      .handle("rotate", ({ path }) => Effect.flatMap(CurrentKey, (key) => endpoints.rotate(key, path.id)))
      .handle("test", ({ path }) => Effect.flatMap(CurrentKey, (key) => deliveries.ping(key, path.id)))
      .handle("recover", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (key) =>
          Effect.map(endpoints.recover(key, path.id, payload), (answer) => HttpServerResponse.unsafeJson(answer, { status: 202 }))))
      .handle("deliveries", ({ urlParams }) => Effect.flatMap(CurrentKey, (key) => deliveries.list(key, urlParams)))
      .handle("redeliver", ({ path }) => Effect.flatMap(CurrentKey, (key) => deliveries.redeliver(key, path.id)))
  }))
