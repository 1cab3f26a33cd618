import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"

export const Health = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ examples: [{ status: "ok" }] })
export const Readiness = Schema.Struct({
  status: Schema.Literal("ready", "unavailable"),
  database: Schema.Literal("postgres", "embedded"),
  role: Schema.Literal("all", "api", "worker")
}).annotations({
  examples: [
    { status: "ready", database: "postgres", role: "all" },
    { status: "unavailable", database: "postgres", role: "all" }
  ]
})

/** Process liveness and database readiness; no authentication (design §1, issue #2). */
export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Health)
      .annotate(OpenApi.Summary, "Liveness: the process answers")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Readiness)
      .addError(Readiness, { status: 503 })
      .annotate(OpenApi.Summary, "Readiness: the database answers (503 while it does not)")
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Probes for orchestrators and load balancers; no authentication.")
{}
