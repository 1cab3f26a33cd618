import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Guest document photos (design §5, §6.5). `guest_documents` records what the `DocumentStore` holds (one row
 * per guest and side; the bytes live in the store, never in PostgreSQL). `document_fetches` are the durable
 * jobs that download endpoint 7's `doc_photo_*_url` values in the background (design §7: background work lives
 * in PostgreSQL, claimed with `FOR UPDATE SKIP LOCKED` under a lease).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE guest_documents (
      guest_id uuid NOT NULL REFERENCES guests (id),
      side text NOT NULL CHECK (side IN ('front', 'back')),
      content_type text NOT NULL,
      size_bytes integer NOT NULL,
      stored_at timestamptz NOT NULL,
      PRIMARY KEY (guest_id, side)
    )`
  yield* sql`
    CREATE TABLE document_fetches (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      guest_id uuid NOT NULL REFERENCES guests (id),
      side text NOT NULL CHECK (side IN ('front', 'back')),
      url text NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'stored', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      lease_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL,
      finished_at timestamptz,
      UNIQUE (guest_id, side)
    )`
  yield* sql`CREATE INDEX document_fetches_due_idx ON document_fetches (next_attempt_at) WHERE state = 'pending'`
})
