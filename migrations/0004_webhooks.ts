import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhook endpoints and deliveries (spec endpoints 9–16, design §6.14, §7). One delivery row per (event,
 * matching active endpoint), written by the same statement that writes the event; workers claim due rows with
 * `FOR UPDATE SKIP LOCKED` under a lease. A row trigger wakes the delivery loops through `NOTIFY` at commit
 * (PostgreSQL folds the notifications of one transaction into one; with no listener, as on the embedded
 * database, it costs nothing).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      url text NOT NULL,
      events jsonb NOT NULL,
      include_guests boolean NOT NULL,
      is_active boolean NOT NULL DEFAULT true,
      secret text NOT NULL,
      secret_rotated_at timestamptz,
      created_at timestamptz NOT NULL,
      deactivated_at timestamptz
    )`
  yield* sql`CREATE INDEX webhook_endpoints_active_idx ON webhook_endpoints (account_id, environment) WHERE is_active`
  // A ping belongs to no reservation.
  yield* sql`ALTER TABLE events ALTER COLUMN reservation_id DROP NOT NULL`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigserial NOT NULL UNIQUE,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
      event_seq bigint NOT NULL REFERENCES events (seq),
      event_id text NOT NULL,
      event_type text NOT NULL,
      account_id uuid NOT NULL REFERENCES accounts (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      cycle_attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      last_http_status integer,
      last_error text,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL,
      attempt_log jsonb NOT NULL DEFAULT '[]'
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_history_idx ON webhook_deliveries (account_id, environment, seq DESC)`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id) WHERE status = 'pending'`
  yield* sql`
    CREATE FUNCTION notify_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('webhook_deliveries', '1');
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER webhook_deliveries_notify AFTER INSERT ON webhook_deliveries
    FOR EACH ROW EXECUTE FUNCTION notify_webhook_deliveries()`
})
