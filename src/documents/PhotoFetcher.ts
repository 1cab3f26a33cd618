import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { DateTime, Duration, Effect, Layer, Option, Schedule } from "effect"
import * as JobQueue from "../jobs/JobQueue.ts"
import { OutboundFailed, SafeHttp } from "../net/SafeHttp.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { Command } from "../reservations/machine/Machine.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { MAX_DOCUMENT_BYTES, sniffDocument } from "./DocumentKind.ts"
import { type DocumentSide, DocumentStore } from "./DocumentStore.ts"
import * as GuestDocuments from "./GuestDocuments.ts"

/** Gaps between attempts after a transient failure: 1, 3, 9, 27, 81 minutes (±20 %, `Schedule.jittered`), then `failed`. */
export const PHOTO_RETRIES = Schedule.exponential("1 minute", 3).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(5))
)
/** Long enough for one download (its own timeout is shorter) plus the write; an expired lease is reclaimed. */
export const PHOTO_LEASE = Duration.minutes(2)
export const PHOTO_TIMEOUT = Duration.seconds(30)
export const PHOTO_BATCH = 8
/** Downloads in flight per instance; each worker takes one job at a time, so one slow host holds up one worker. */
export const PHOTO_WORKERS = 4
export const PHOTO_POLL_EVERY = Duration.seconds(2)

interface ClaimedFetch {
  readonly id: string
  readonly guest_id: string
  /** The guest's reservation: the photo's mark is a change of it (`Reservations.apply`). */
  readonly reservation_id: string
  readonly side: DocumentSide
  readonly url: string
  readonly attempts: number
  readonly trace_parent: string | null
}

/** What one attempt came to: stored, worth another try later, or never going to work. */
type Outcome =
  | { readonly _tag: "Stored"; readonly contentType: string; readonly size: number }
  | { readonly _tag: "Transient"; readonly error: string }
  | { readonly _tag: "Permanent"; readonly error: string }

const transientStatus = (status: number) => status >= 500 || status === 408 || status === 429

/**
 * Downloads document photos in the background under the outbound-URL rules (design §6.5, §7): through
 * `SafeHttp` (public HTTPS address checked and pinned, no redirects), at most 10 MB, JPEG/PNG/PDF by content.
 * Jobs are rows of the one job queue (`jobs/JobQueue.ts`): claimed with `FOR UPDATE SKIP LOCKED` under a lease,
 * so any number of workers share them and a crash mid-download only delays a photo until the lease runs out.
 */
export class PhotoFetcher extends Effect.Service<PhotoFetcher>()("documents/PhotoFetcher", {
  // Reservations comes from the composition root, with the ports it needs (`App.ReservationsLayer`).
  dependencies: [],
  effect: Effect.gen(function*() {
    const { sql, reservations, http, store } = yield* Effect.all({
      sql: SqlClient.SqlClient, reservations: Reservations, http: SafeHttp, store: DocumentStore
    })

    const queue = yield* JobQueue.make({ kind: "document photo", table: "document_fetches", lease: PHOTO_LEASE })

    const claim = (limit: number) =>
      queue.claimDue<ClaimedFetch>(
        limit,
        `id, guest_id, side, url, attempts, trace_parent,
          (SELECT reservation_id FROM guests WHERE guests.id = document_fetches.guest_id) AS reservation_id`
      )

    const download = (job: ClaimedFetch) =>
      http.execute(HttpClientRequest.get(job.url), { maxBodyBytes: MAX_DOCUMENT_BYTES, timeout: PHOTO_TIMEOUT }).pipe(
        Effect.flatMap((response): Effect.Effect<Outcome> => {
          if (response.status >= 300 && response.status < 400) {
            return Effect.succeed({ _tag: "Permanent", error: `HTTP ${response.status}: redirects are not followed` })
          }
          if (response.status < 200 || response.status >= 300) {
            const error = `HTTP ${response.status}`
            return Effect.succeed(transientStatus(response.status) ? { _tag: "Transient", error } : { _tag: "Permanent", error })
          }
          const contentType = sniffDocument(response.body)
          if (contentType === undefined) {
            return Effect.succeed({ _tag: "Permanent", error: "the file is not a JPEG, PNG or PDF" })
          }
          return store.put({ guestId: job.guest_id, side: job.side }, response.body).pipe(
            Effect.as({ _tag: "Stored", contentType, size: response.body.byteLength } as const)
          )
        }),
        Effect.catchTags({
          UnsafeUrl: (error) => Effect.succeed<Outcome>({ _tag: "Permanent", error: error.message }),
          OutboundFailed: (error: OutboundFailed) =>
            Effect.succeed<Outcome>(
              error.kind === "too_large"
                ? { _tag: "Permanent", error: "the file is larger than 10 MB" }
                : { _tag: "Transient", error: error.message }
            )
        }),
        // A storage failure (disk full, permissions) is ours, not the partner's: try again later.
        Effect.catchAllDefect((defect) =>
          Effect.logError("document photo could not be stored", defect).pipe(
            Effect.as<Outcome>({ _tag: "Transient", error: "the photo could not be stored" })
          )
        )
      )

    const record = (job: ClaimedFetch, outcome: Outcome) =>
      Effect.gen(function*() {
        const at = DateTime.toDateUtc(yield* DateTime.now)
        const failed = (error: string) => queue.settle(job.id, { state: "failed", last_error: error, finished_at: at })
        switch (outcome._tag) {
          case "Stored":
            return yield* Effect.gen(function*() {
              yield* GuestDocuments.recordStored({
                guestId: job.guest_id,
                side: job.side,
                contentType: outcome.contentType,
                sizeBytes: outcome.size,
                at
              }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
              yield* queue.settle(job.id, { state: "stored", last_error: null, finished_at: at })
              if (job.side === "front") {
                // The guest is the job's own (the claim read its reservation): a refusal would be a defect.
                yield* reservations.apply(job.reservation_id, Command.DocumentFetched({ guestId: job.guest_id })).pipe(Effect.orDie)
              }
            }).pipe(sql.withTransaction)
          case "Transient": {
            const retryAt = yield* JobQueue.nextAttemptAt(PHOTO_RETRIES, job.attempts, undefined)
            return yield* Option.match(retryAt, {
              onNone: () => failed(outcome.error),
              onSome: (next) => queue.settle(job.id, { next_attempt_at: next, last_error: outcome.error })
            })
          }
          case "Permanent":
            return yield* failed(outcome.error)
        }
      })

    const work = (job: ClaimedFetch) =>
      download(job).pipe(
        Effect.flatMap((outcome) => record(job, outcome)),
        TraceContext.withSpan("PhotoFetcher.fetch", {
          attributes: { "document.side": job.side },
          ...TraceContext.parentOf(job.trace_parent)
        })
      )

    /** Claims up to `limit` due jobs and works them; answers how many were claimed. */
    const runDue = (limit = PHOTO_BATCH) =>
      Effect.gen(function*() {
        const jobs = yield* claim(limit)
        yield* Effect.forEach(jobs, work, { concurrency: PHOTO_WORKERS, discard: true })
        return jobs.length
      }).pipe(TraceContext.withSpan("PhotoFetcher.runDue"))

    return { runDue } as const
  })
}) {}

/**
 * The background loop (ROLE=worker|all): `PHOTO_WORKERS` fibers, each taking one due job at a time and
 * polling every `PHOTO_POLL_EVERY` when there is none.
 */
export const loop = Layer.scopedDiscard(Effect.gen(function*() {
  const fetcher = yield* PhotoFetcher
  yield* JobQueue.poll("document photo fetch", fetcher.runDue(1), { every: PHOTO_POLL_EVERY, workers: PHOTO_WORKERS })
}))
