import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { DateTime, Duration, Effect, Layer, Option, Schedule } from "effect"
import { JobLeases } from "../jobs/JobLeases.ts"
import { OutboundFailed, SafeHttp } from "../net/SafeHttp.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { Command } from "../reservations/machine/Machine.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { delayBeforeRetry } from "../shared/DurableRetry.ts"
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
 * Jobs are rows claimed with `FOR UPDATE SKIP LOCKED` under a lease, so any number of workers share them and
 * a crash mid-download only delays a photo until the lease runs out.
 */
export class PhotoFetcher extends Effect.Service<PhotoFetcher>()("documents/PhotoFetcher", {
  // Reservations comes from the composition root, with the ports it needs (`App.ReservationsLayer`).
  dependencies: [],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reservations = yield* Reservations
    const http = yield* SafeHttp
    const store = yield* DocumentStore

    const leases = yield* (yield* JobLeases).register("document photo", (ids, until) =>
      sql<{ id: string }>`
        UPDATE document_fetches SET lease_until = NULL
        WHERE id IN ${sql.in(ids)} AND lease_until = ${until} RETURNING id`
        .pipe(Effect.map((rows) => rows.length), Effect.orDie))

    const claim = (limit: number) => Effect.gen(function*() {
      const now = yield* DateTime.now
      const leaseUntil = DateTime.toDateUtc(DateTime.addDuration(now, PHOTO_LEASE))
      const at = DateTime.toDateUtc(now)
      return yield* leases.claimed(sql<ClaimedFetch>`
        UPDATE document_fetches SET lease_until = ${leaseUntil}, attempts = attempts + 1
        WHERE id IN (
          SELECT id FROM document_fetches
          WHERE state = 'pending' AND next_attempt_at <= ${at} AND (lease_until IS NULL OR lease_until <= ${at})
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        RETURNING id, guest_id, side, url, attempts, trace_parent,
          (SELECT reservation_id FROM guests WHERE guests.id = document_fetches.guest_id) AS reservation_id`,
        leaseUntil,
        (job) => job.id
      )
    })

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
        const now = yield* DateTime.now
        const at = DateTime.toDateUtc(now)
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
              yield* sql`
                UPDATE document_fetches SET state = 'stored', lease_until = NULL, last_error = NULL, finished_at = ${at}
                WHERE id = ${job.id}`
              if (job.side === "front") {
                // The guest is the job's own (the claim read its reservation): a refusal would be a defect.
                yield* reservations.apply(job.reservation_id, Command.DocumentFetched({ guestId: job.guest_id })).pipe(Effect.orDie)
              }
            }).pipe(sql.withTransaction)
          case "Transient": {
            const delay = yield* delayBeforeRetry(PHOTO_RETRIES, job.attempts, undefined)
            if (Option.isSome(delay)) {
              const next = DateTime.toDateUtc(DateTime.addDuration(now, delay.value))
              return yield* sql`
                UPDATE document_fetches SET next_attempt_at = ${next}, lease_until = NULL, last_error = ${outcome.error}
                WHERE id = ${job.id}`
            }
            return yield* sql`
              UPDATE document_fetches SET state = 'failed', lease_until = NULL, last_error = ${outcome.error},
                finished_at = ${at}
              WHERE id = ${job.id}`
          }
          case "Permanent":
            return yield* sql`
              UPDATE document_fetches SET state = 'failed', lease_until = NULL, last_error = ${outcome.error},
                finished_at = ${at}
              WHERE id = ${job.id}`
        }
      })

    const work = (job: ClaimedFetch) =>
      download(job).pipe(
        Effect.flatMap((outcome) => record(job, outcome)),
        Effect.zipRight(leases.settled([job.id])),
        Effect.withSpan("PhotoFetcher.fetch", {
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
      }).pipe(Effect.withSpan("PhotoFetcher.runDue"))

    return { runDue } as const
  })
}) {}

/**
 * The background loop (ROLE=worker|all): `PHOTO_WORKERS` fibers, each taking one due job at a time and
 * polling every `PHOTO_POLL_EVERY` when there is none.
 */
export const loop = Layer.scopedDiscard(Effect.gen(function*() {
  const fetcher = yield* PhotoFetcher
  const one = fetcher.runDue(1).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("document photo fetch failed", cause).pipe(Effect.as(0)))
  )
  // While jobs keep coming, take the next at once; when none was due, wait for the next poll.
  const drain: Effect.Effect<void> = Effect.flatMap(one, (claimed) => claimed > 0 ? drain : Effect.void)
  const worker = Effect.repeat(drain, Schedule.spaced(PHOTO_POLL_EVERY))
  for (let i = 0; i < PHOTO_WORKERS; i++) yield* Effect.forkScoped(worker)
}))
