import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer } from "effect"
import { PhotoQueue, type PhotoToFetch } from "../reservations/Ports.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * The queue of document photos to fetch (design §6.5): written with the registration that names their URLs;
 * worked by `PhotoFetcher`.
 */

/**
 * Writes the fetch jobs for endpoint 7's `doc_photo_*_url` values (design §6.5). Must run inside the
 * registration's transaction, so a committed registration always has its jobs and a rolled-back one none.
 */
export const enqueuePhotoFetches = (photos: ReadonlyArray<PhotoToFetch>) =>
  Effect.gen(function*() {
    if (photos.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const now = DateTime.toDateUtc(yield* DateTime.now)
    // Each fetch continues the registration's trace (design §9).
    const traceParent = yield* TraceContext.current
    yield* sql`INSERT INTO document_fetches ${
      sql.insert(photos.map((photo) => ({
        guest_id: photo.guestId,
        side: photo.side,
        url: photo.url,
        state: "pending",
        next_attempt_at: now,
        created_at: now,
        ...TraceContext.column(traceParent)
      })))
    }`
  })

/** The reservations' port for photo fetches (`reservations/Ports.ts`), in the caller's transaction. */
export const photoQueue = Layer.effect(
  PhotoQueue,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    enqueue: (photos: ReadonlyArray<PhotoToFetch>) =>
      enqueuePhotoFetches(photos).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)
  }))
)
