import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Secrets and personal data at rest (design §3, §9).
 * - Secrets (`properties.tra_token`, `webhook_endpoints.secret`) keep their columns and become sealed values
 *   (`v1:<key id>:…`, `secrets/SecretBox.ts`). A migration cannot know `SECRETS_KEY`, so existing plaintext is
 *   sealed by the start-up step that follows the migrations (`secrets/StoredSecrets.ts`), and read as it is
 *   until then.
 * - Guest personal data leaves event bodies and SIRE file contents 30 days after check-out (the retention job,
 *   `documents/Retention.ts`): `personal_data_removed_at` marks a reservation done (the partial index keeps the
 *   job's search to those still holding data), `redacted_at` a SIRE file whose content was removed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE reservations ADD COLUMN personal_data_removed_at timestamptz`
  yield* sql`
    CREATE INDEX reservations_personal_data_idx ON reservations (check_out) WHERE personal_data_removed_at IS NULL`
  yield* sql`ALTER TABLE sire_files ADD COLUMN redacted_at timestamptz`
})
