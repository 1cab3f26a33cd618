import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Departure (design §6.8): the Bogotá day a guest actually left, recorded by
 * `POST /api/partners/reservations/departure`. Null until recorded; `check_out` stays the booked date (the TRA
 * keeps it), while the SIRE exit movements are dated this day.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE reservations ADD COLUMN departed_on date NULL`
})
