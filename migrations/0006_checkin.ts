import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Guest check-in (design §5): who signed the contract, as typed on the page. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE reservations ADD COLUMN contract_signer text`
})
