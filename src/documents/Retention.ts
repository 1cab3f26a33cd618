import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Schedule } from "effect"
import { ReservationRepo } from "../reservations/ReservationRepo.ts"
import { addDays, todayInBogota } from "../shared/Calendar.ts"
import { DocumentStore } from "./DocumentStore.ts"

/** Photos are deleted 30 days after check-out (spec constants; design §5). */
export const RETENTION_DAYS = 30
/** How often the retention job looks (it is cheap: one indexed query when nothing is due). */
export const RETENTION_EVERY = Duration.hours(6)
const BATCH = 500

/** The last check-out whose photos are kept on `today` (Bogotá): `today - 30 days`. */
export const keptSince = (today: string): string => addDays(today, -RETENTION_DAYS)

/**
 * Deletes the document photos of stays whose check-out is more than 30 days past (Bogotá date), files first
 * and then their records, so a crash in between only leaves records whose files are already gone (deleting
 * again is harmless). From that day `document_uploaded` reads null (design §6.4), whatever the files.
 */
export class Retention extends Effect.Service<Retention>()("documents/Retention", {
  dependencies: [ReservationRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reservations = yield* ReservationRepo
    const store = yield* DocumentStore

    /** One pass; answers how many guests' documents were deleted. */
    const run = Effect.gen(function*() {
      const cutoff = keptSince(yield* todayInBogota)
      let deleted = 0
      for (;;) {
        const ids = yield* reservations.guestsWithDocumentsCheckedOutBefore(cutoff, BATCH)
        if (ids.length === 0) return deleted
        yield* Effect.forEach(ids, (id) => store.removeGuest(id), { concurrency: 8, discard: true })
        yield* sql`DELETE FROM guest_documents WHERE guest_id IN ${sql.in(ids)}`
        deleted += ids.length
      }
    }).pipe(Effect.orDie, Effect.withSpan("Retention.run"))

    return { run } as const
  })
}) {}

/** The retention loop (ROLE=worker|all): at start, then every `RETENTION_EVERY`. */
export const loop = Layer.scopedDiscard(Effect.flatMap(Retention, (retention) =>
  Effect.forkScoped(Effect.repeat(
    retention.run.pipe(
      Effect.tap((deleted) => deleted > 0 ? Effect.logInfo(`deleted the document photos of ${deleted} guests`) : Effect.void),
      Effect.catchAllCause((cause) => Effect.logError("document retention failed", cause))
    ),
    Schedule.spaced(RETENTION_EVERY)
  ))))
