import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Operator corrections of the reference tables (design §6.10, §9: `cli reference set|unset`). One row per
 * (table, key); a NULL `value` withdraws a bundled code (the reports that need it wait with a warning). The
 * report runs read these rows at the start of each run, so a change is in effect at the next run of every
 * instance, with no restart: the database, not a process's memory, is the truth.
 *
 * Every change is written to `audit_log` in the same transaction. Those entries belong to the deployment, not
 * to an account, so `account_id` becomes optional (the panel lists an account's own rows only, so it never shows
 * them), and `details` keeps what changed as data (table, key, old and new value).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE reference_overrides (
      table_name text NOT NULL CHECK (table_name IN ('sire-countries', 'sire-documents', 'tra-documents', 'tra-motivos')),
      key text NOT NULL,
      value text,
      note text,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (table_name, key)
    )`
  yield* sql`ALTER TABLE audit_log ALTER COLUMN account_id DROP NOT NULL`
  yield* sql`ALTER TABLE audit_log ADD COLUMN details jsonb`
})
