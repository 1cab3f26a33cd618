import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The retention of the webhook delivery history (issue 27 item 4, `webhooks/HistoryRetention.ts`) asks, for each old
 * event, whether a delivery of it is not delivered yet, and deletes an event's deliveries: both by `event_seq`,
 * which had no index (deliveries were only ever read by their own id, endpoint or account).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_seq)`
})
