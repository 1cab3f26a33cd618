import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Lookups of the report runs and the retention job that read whole tables (found by the model run of issue 23,
 * whose per-sequence time grew with the database):
 * - a file's movements (`sire_movements.file_id`): recovering lost gateway files, confirming a manual file,
 *   emptying files for retention and a cancellation's file names all join or filter on it;
 * - gateway files still `sending` (each run's `recoverLostFiles`): few at any time, among every file ever made.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX sire_movements_file_idx ON sire_movements (file_id) WHERE file_id IS NOT NULL`
  yield* sql`CREATE INDEX sire_files_sending_idx ON sire_files (id) WHERE state = 'sending'`
})
