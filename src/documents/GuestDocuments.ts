import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { DocumentSide } from "./DocumentStore.ts"

/**
 * The `guest_documents` table: what the DocumentStore holds for each guest and side (design §5, §6.5). The only
 * writer of it; run inside the caller's transaction (with the file written, or with the fetch's outcome).
 */

/** A document photo stored (uploaded on the check-in page or fetched from endpoint 7's URL); a new one replaces it. */
export const recordStored = (document: {
  readonly guestId: string
  readonly side: DocumentSide
  readonly contentType: string
  readonly sizeBytes: number
  readonly at: Date
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO guest_documents (guest_id, side, content_type, size_bytes, stored_at)
      VALUES (${document.guestId}, ${document.side}, ${document.contentType}, ${document.sizeBytes}, ${document.at})
      ON CONFLICT (guest_id, side) DO UPDATE
      SET content_type = EXCLUDED.content_type, size_bytes = EXCLUDED.size_bytes, stored_at = EXCLUDED.stored_at`)

/** These guests' photos were deleted by the retention job (design §3): their records go. */
export const forget = (guestIds: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM guest_documents WHERE guest_id IN ${sql.in(guestIds)}`)
