import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * API keys with a name and the time they were last used (the panel's key list, issue 26 item 4). A live key's
 * name travels with the code e-mailed to confirm it (`panel_codes.key_name`), so the key is created with it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN name text CHECK (char_length(name) BETWEEN 1 AND 60)`
  yield* sql`ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz`
  yield* sql`ALTER TABLE panel_codes ADD COLUMN key_name text`
})
