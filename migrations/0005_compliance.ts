import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The compliance engine's state (design §6.8–§6.13, §7). The reservation keeps its report objects (`tra`,
 * `sire`); the rows below are what a run needs to send each thing exactly once and to resume after a crash:
 * - `tra_submissions`: one per guest and round (round 0 = the stay, n = the n-th extension); a main guest
 *   with a `code` is never posted again; companions are retried alone.
 * - `sire_movements`: one entry movement per foreign guest; `in_file` once it is in a generated or posted
 *   file (it counts as sent: a later cancellation cannot take it back, design §6.8).
 * - `sire_files`: the files of a run, per property (manual: kept for an operator; gateway: posted).
 * A run claims reservations with `report_lease_until` (SKIP LOCKED) and waits for `report_retry_at` after a
 * transient failure.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE reservations
      ADD COLUMN report_lease_until timestamptz,
      ADD COLUMN report_retry_at timestamptz,
      ADD COLUMN report_failures integer NOT NULL DEFAULT 0,
      ADD COLUMN tra_extension_from date`
  yield* sql`
    CREATE INDEX reservations_reports_due_idx ON reservations (check_in)
    WHERE environment = 'live' AND reservation_status <> 'cancelled'
      AND ((tra->>'status') = 'pending' OR (sire->>'status') = 'pending' OR tra_extension_from IS NOT NULL)`
  yield* sql`
    CREATE TABLE tra_submissions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      reservation_id uuid NOT NULL REFERENCES reservations (id),
      guest_id uuid NOT NULL REFERENCES guests (id),
      round integer NOT NULL,
      role text NOT NULL CHECK (role IN ('main', 'companion')),
      period_from date NOT NULL,
      period_to date NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'accepted', 'rejected')),
      code bigint,
      attempts integer NOT NULL DEFAULT 0,
      possible_duplicate boolean NOT NULL DEFAULT false,
      last_error text,
      history jsonb NOT NULL DEFAULT '[]',
      updated_at timestamptz NOT NULL,
      UNIQUE (reservation_id, round, guest_id)
    )`
  yield* sql`
    CREATE TABLE sire_files (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      property_id uuid NOT NULL REFERENCES properties (id),
      mode text NOT NULL CHECK (mode IN ('manual', 'gateway')),
      state text NOT NULL CHECK (state IN ('generated', 'confirmed', 'posted', 'failed')),
      name text NOT NULL,
      content text NOT NULL,
      lines integer NOT NULL,
      answer jsonb,
      created_at timestamptz NOT NULL,
      confirmed_at timestamptz
    )`
  yield* sql`
    CREATE TABLE sire_movements (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      reservation_id uuid NOT NULL REFERENCES reservations (id),
      guest_id uuid NOT NULL REFERENCES guests (id),
      movement text NOT NULL CHECK (movement IN ('E', 'S')),
      movement_date date NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'in_file', 'accepted', 'rejected')),
      file_id uuid REFERENCES sire_files (id),
      line integer,
      attempts integer NOT NULL DEFAULT 0,
      possible_duplicate boolean NOT NULL DEFAULT false,
      last_error text,
      updated_at timestamptz NOT NULL,
      UNIQUE (reservation_id, guest_id, movement)
    )`
})
