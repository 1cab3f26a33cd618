import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Events of a reservation reach an endpoint in order (design §6.14 "Order"): a delivery waits while an older
 * delivery of the same reservation to the same endpoint waits for its first attempt or is in flight. The
 * delivery carries its event's reservation so the claim can tell, with an index for that question.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN reservation_id uuid REFERENCES reservations (id)`
  yield* sql`
    UPDATE webhook_deliveries d SET reservation_id = ev.reservation_id
    FROM events ev WHERE ev.seq = d.event_seq AND ev.reservation_id IS NOT NULL`
  yield* sql`
    CREATE INDEX webhook_deliveries_order_idx ON webhook_deliveries (endpoint_id, reservation_id, event_seq)
    WHERE status = 'pending'`
})
