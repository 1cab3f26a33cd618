import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Reports that a crash can never leave stuck (design §6.8, §7): a TRA submission says when it was handed to the
 * network (`sending_since`), so a restart knows its outcome is unknown; a gateway SIRE file is `sending` while
 * its upload is in flight, and `unknown` once a later run found it orphaned (its run's leases lapsed). Exit
 * movements (S) are claimed on their own due date, also for a reservation cancelled after its entry went out.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tra_submissions ADD COLUMN sending_since timestamptz`
  yield* sql`ALTER TABLE sire_files DROP CONSTRAINT sire_files_state_check`
  yield* sql`
    ALTER TABLE sire_files ADD CONSTRAINT sire_files_state_check
    CHECK (state IN ('generated', 'confirmed', 'sending', 'posted', 'failed', 'unknown'))`
  // Every SIRE report gets its exit (design §6.8): due on check_out (or an earlier cancellation's Bogotá date,
  // UTC−5) when the entry already went out; a test key's is simulated as accepted.
  yield* sql`
    UPDATE reservations SET sire = sire || jsonb_build_object('exit', CASE
      WHEN sire_reported AND environment = 'live' AND (sire->>'foreign_guests')::int > 0 THEN jsonb_build_object(
        'status', 'pending',
        'sends_on', LEAST(check_out, COALESCE(((cancelled_at AT TIME ZONE 'UTC') - interval '5 hours')::date, check_out))::text,
        'reported_at', NULL)
      WHEN sire_reported AND environment = 'test' AND (sire->>'foreign_guests')::int > 0 THEN jsonb_build_object(
        'status', 'success', 'sends_on', check_out::text, 'reported_at', sire->'reported_at', 'simulated', true)
      ELSE '{"status": "not_applicable", "sends_on": null, "reported_at": null}'::jsonb
    END)
    WHERE NOT (sire ? 'exit')`
  yield* sql`
    CREATE INDEX reservations_exits_due_idx ON reservations (((sire->'exit'->>'sends_on')))
    WHERE environment = 'live' AND (sire->'exit'->>'status') = 'pending'`
})
