import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Trace context across the outbox (design §9 "Traces"): the W3C `traceparent` of the span that created a job,
 * stored with it, so the work done later by a loop — a webhook attempt, an authority submission, an e-mail,
 * a photo fetch — is a child of the request that caused it and one reservation's journey reads as one trace.
 * Nullable: rows written before this migration (or outside any span) simply start a trace of their own.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events ADD COLUMN trace_parent text`
  yield* sql`ALTER TABLE reservations ADD COLUMN trace_parent text`
  yield* sql`ALTER TABLE mail_outbox ADD COLUMN trace_parent text`
  yield* sql`ALTER TABLE document_fetches ADD COLUMN trace_parent text`
})
