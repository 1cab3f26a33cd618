import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The delivery claim's per-endpoint bound (docs/performance.md, "Batched deliveries"): each endpoint's oldest due
 * rows are read through (endpoint, due time), so an endpoint whose receiver is slow and whose backlog is long
 * costs the claim nothing while it has no room, and the others' rows are reached without walking past that
 * backlog. It supersedes the index on the endpoint alone (its leading column serves the same lookups).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at)
    WHERE status = 'pending'`
  yield* sql`DROP INDEX webhook_deliveries_endpoint_idx`
})
