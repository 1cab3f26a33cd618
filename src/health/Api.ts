import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"

export const Health = Schema.Struct({ status: Schema.Literal("ok") })
export const Readiness = Schema.Struct({
  status: Schema.Literal("ready", "unavailable"),
  database: Schema.Literal("postgres", "embedded"),
  role: Schema.Literal("all", "api", "worker")
})

/** Process liveness and database readiness; no authentication (design §1, issue #2). */
export class HealthApi extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Readiness).addError(Readiness, { status: 503 }))
  .annotate(OpenApi.Title, "Health")
{}
