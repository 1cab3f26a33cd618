import { SqlClient } from "@effect/sql"
import { DateTime, Duration, Effect, Layer, Schedule } from "effect"
import { SireRecords } from "../compliance/SireRecords.ts"
import { Command } from "../reservations/machine/Machine.ts"
import { ReservationRepo } from "../reservations/ReservationRepo.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { addDays, todayInBogota } from "../shared/Calendar.ts"
import { stripGuests } from "../webhooks/Outbox.ts"
import { DocumentStore } from "./DocumentStore.ts"
import * as GuestDocuments from "./GuestDocuments.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/** Photos are deleted 30 days after check-out (spec constants; design §5), and guest data leaves with them (§3). */
export const RETENTION_DAYS = 30
/** How often the retention job looks (it is cheap: one indexed query when nothing is due). */
export const RETENTION_EVERY = Duration.hours(6)
const BATCH = 500

/** The last check-out whose photos are kept on `today` (Bogotá): `today - 30 days`. */
export const keptSince = (today: string): string => addDays(today, -RETENTION_DAYS)

/**
 * The retention job, for stays whose check-out is more than 30 days past (Bogotá date):
 * - deletes the document photos, files first and then their records, so a crash in between only leaves records
 *   whose files are already gone (deleting again is harmless). From that day `document_uploaded` reads null
 *   (design §6.4), whatever the files;
 * - removes the guests' personal data from what was kept of their stay besides the reservation itself (design
 *   §3): `guests` leaves the stored event bodies, which are also what every delivery sends and redelivers (the
 *   delivery rows, their attempts, statuses, event ids and types stay); the content of each SIRE file goes once
 *   every stay in it is past the 30 days (its name, line count, state and the authority's answer stay).
 *   `reservations.personal_data_removed_at` marks a stay done. The guests' own rows are the reservation's
 *   record, which endpoint 6 still answers, and are not touched.
 */
export class Retention extends Effect.Service<Retention>()("documents/Retention", {
  // Reservations comes from the composition root, with the ports it needs (`App.ReservationsLayer`).
  dependencies: [ReservationRepo.Default, SireRecords.Default],
  effect: Effect.gen(function*() {
    const { sql, repo, reservations, store, sire } = yield* Effect.all({
      sql: SqlClient.SqlClient, repo: ReservationRepo, reservations: Reservations, store: DocumentStore,
      sire: SireRecords
    })

    /** Photos; answers how many guests' documents were deleted. */
    const run = Effect.gen(function*() {
      const cutoff = keptSince(yield* todayInBogota)
      let deleted = 0
      for (;;) {
        const ids = yield* repo.guestsWithDocumentsCheckedOutBefore(cutoff, BATCH)
        if (ids.length === 0) return deleted
        yield* Effect.forEach(ids, (id) => store.removeGuest(id), { concurrency: 8, discard: true })
        yield* GuestDocuments.forget(ids).pipe(Effect.provideService(SqlClient.SqlClient, sql))
        deleted += ids.length
      }
    }).pipe(Effect.orDie, TraceContext.withSpan("Retention.run"))

    /**
     * One batch of stays, in one transaction: the mark (through the reservation machine, which locks the rows in
     * id order as every writer does), then their events.
     */
    const redactBatch = (ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        yield* reservations.applyAll(ids.map((id) => ({ id, command: Command.PersonalDataRemoved() })))
        yield* stripGuests(ids).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      }).pipe(sql.withTransaction)

    /** Personal data of event bodies and SIRE files; answers how many stays and files were done. */
    const redact = Effect.gen(function*() {
      const cutoff = keptSince(yield* todayInBogota)
      const at = DateTime.toDateUtc(yield* DateTime.now)
      let stays = 0
      for (;;) {
        const ids = yield* repo.holdingPersonalDataCheckedOutBefore(cutoff, BATCH)
        if (ids.length === 0) break
        yield* redactBatch(ids)
        stays += ids.length
      }
      const files = (yield* sire.redactFiles(cutoff, at)).length
      return { stays, files }
    }).pipe(Effect.orDie, TraceContext.withSpan("Retention.redact"))

    return { run, redact } as const
  })
}) {}

/** The retention loop (ROLE=worker|all): at start, then every `RETENTION_EVERY`. */
export const loop = Layer.scopedDiscard(Effect.flatMap(Retention, (retention) =>
  Effect.forkScoped(Effect.repeat(
    Effect.zipRight(
      retention.run.pipe(
        Effect.tap((deleted) => deleted > 0 ? Effect.logInfo(`deleted the document photos of ${deleted} guests`) : Effect.void),
        Effect.catchAllCause((cause) => Effect.logError("document retention failed", cause))
      ),
      retention.redact.pipe(
        Effect.tap(({ files, stays }) =>
          stays + files > 0
            ? Effect.logInfo(`removed guest personal data from the events of ${stays} stays and from ${files} SIRE files`)
            : Effect.void
        ),
        Effect.catchAllCause((cause) => Effect.logError("personal data retention failed", cause))
      )
    ),
    Schedule.spaced(RETENTION_EVERY)
  ))))
