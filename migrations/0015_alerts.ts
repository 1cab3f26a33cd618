import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Alerts to the account holder (design §9): one row per cause — a report in `error`, a report still `pending`
 * with a configuration warning on its due date, a failed SIRE exit, a webhook endpoint failing every delivery
 * for 24 h —, e-mailed once when raised and listed in the panel; `resolved_at` once the cause is gone.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE alerts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts (id),
      kind text NOT NULL CHECK (kind IN ('report_error', 'report_blocked', 'exit_error', 'webhook_failing')),
      cause text NOT NULL,
      authority text CHECK (authority IN ('tra', 'sire')),
      reservation_id uuid REFERENCES reservations (id),
      endpoint_id uuid REFERENCES webhook_endpoints (id),
      message text NOT NULL,
      created_at timestamptz NOT NULL,
      resolved_at timestamptz,
      UNIQUE (account_id, cause)
    )`
  yield* sql`CREATE INDEX alerts_account_idx ON alerts (account_id, created_at DESC)`
  yield* sql`CREATE INDEX alerts_open_idx ON alerts (kind) WHERE resolved_at IS NULL`
  // The scan reads live reservations in error without a full scan of the table.
  yield* sql`
    CREATE INDEX reservations_errors_idx ON reservations (id)
    WHERE environment = 'live'
      AND ((tra->>'status') = 'error' OR (sire->>'status') = 'error' OR (sire->'exit'->>'status') = 'error')`
})
