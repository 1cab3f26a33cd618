import { SqlClient } from "@effect/sql"
import { DateTime, Duration, Effect, Either, Fiber, FiberSet, Layer, Option, Schedule } from "effect"
import * as JobQueue from "../jobs/JobQueue.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { type MailFailed, Mailer } from "./Mailer.ts"
import { type MailLanguage, type MailTemplate, render } from "./Messages.ts"

/**
 * Gaps between attempts after a transient failure: 30 s, 1 min, 5 min, 15 min, then every hour, each ±20 %
 * (`Schedule.jittered`), until `MAIL_GIVE_UP_AFTER`.
 */
export const MAIL_RETRIES = Schedule.fromDelays("30 seconds", "1 minute", "5 minutes", "15 minutes").pipe(
  Schedule.andThen(Schedule.spaced("1 hour")),
  Schedule.jittered
)
/** A message still failing this long after it was queued is `failed` (about 76 attempts). */
export const MAIL_GIVE_UP_AFTER = Duration.days(3)
/** Longer than one send can take (`SMTP_SEND_TIMEOUT`) plus its bookkeeping; an expired lease is reclaimed. */
export const MAIL_LEASE = Duration.minutes(2)
/** Messages claimed at once per instance; all of them are sent in parallel, so none waits out its lease. */
export const MAIL_BATCH = 5
export const MAIL_POLL_EVERY = Duration.seconds(1)
/** On shutdown, sends in flight get this long to finish and be recorded before they are cut off. */
export const MAIL_SHUTDOWN_GRACE = Duration.seconds(10)

/** One message to queue: a recipient, a language (Spanish unless told) and a template with its data. */
export interface MailToSend {
  readonly to: string
  readonly language?: MailLanguage
  readonly template: MailTemplate
}

/**
 * Renders `mail` and writes it to `mail_outbox`, due now; answers the row's id. It runs in the caller's
 * transaction, if any (design §8): a change that rolls back leaves no message, one that commits always has it.
 * Needs only the `SqlClient`; a database failure is a defect, which rolls the caller's transaction back.
 */
export const enqueueMail = (mail: MailToSend): Effect.Effect<string, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const language = mail.language ?? "es"
    const rendered = render(mail.template, language)
    const now = DateTime.toDateUtc(yield* DateTime.now)
    const [row] = yield* sql<{ readonly id: string }>`
      INSERT INTO mail_outbox ${
      sql.insert({
        recipient: mail.to,
        language,
        template: mail.template._tag,
        subject: rendered.subject,
        text_body: rendered.text,
        html_body: rendered.html,
        state: "pending",
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
        // Its sending continues the trace of what queued it (design §9).
        ...TraceContext.column(yield* TraceContext.current)
      })
    }
      RETURNING id`
    return row!.id
  }).pipe(Effect.orDie, TraceContext.withSpan("MailQueue.enqueue"))

/** A row claimed for one attempt. */
export interface ClaimedMail {
  readonly id: string
  readonly recipient: string
  readonly template: string
  readonly subject: string
  readonly text_body: string
  readonly html_body: string
  /** Attempts so far, this one included. */
  readonly attempts: number
  readonly created_at: Date
  readonly trace_parent: string | null
}

/**
 * The mail outbox (design §8): `enqueue` inside the transaction of the change that causes a message, and the
 * worker side — due rows of the one job queue (`jobs/JobQueue.ts`), claimed with `FOR UPDATE SKIP LOCKED` under a
 * lease (so any number of instances share the queue and a crashed worker's message is taken over when its lease
 * ends), sent through the `Mailer`
 * outside any transaction, and the outcome recorded: `sent`, retried later on `MAIL_RETRIES`, or `failed`.
 * Built from the `SqlClient` alone; only the sending side needs a `Mailer`.
 */
export class MailQueue extends Effect.Service<MailQueue>()("mail/MailQueue", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const queue = yield* JobQueue.make({ kind: "mail", table: "mail_outbox", lease: MAIL_LEASE })

    /** `enqueueMail` with this service's client; it still joins the caller's transaction. */
    const enqueue = (mail: MailToSend): Effect.Effect<string> =>
      enqueueMail(mail).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    /** Leases up to `limit` due messages and counts the attempt. */
    const claim = (limit: number) =>
      queue.claimDue<ClaimedMail>(
        limit,
        "id, recipient, template, subject, text_body, html_body, attempts, created_at, trace_parent"
      )

    const markFailed = (job: ClaimedMail, error: MailFailed, at: Date) =>
      Effect.zipRight(
        queue.settle(job.id, { state: "failed", last_error: error.reason }),
        Effect.logError("e-mail failed for good").pipe(
          Effect.annotateLogs({
            mail_id: job.id,
            template: job.template,
            attempts: job.attempts,
            reason: error.reason,
            queued_at: job.created_at.toISOString(),
            at: at.toISOString()
          })
        )
      )

    /** Writes what one attempt came to. */
    const record = (job: ClaimedMail, outcome: Option.Option<MailFailed>) =>
      Effect.gen(function*() {
        const at = DateTime.toDateUtc(yield* DateTime.now)
        if (Option.isNone(outcome)) {
          return yield* queue.settle(job.id, { state: "sent", sent_at: at, last_error: null })
        }
        const error = outcome.value
        if (!error.transient) return yield* markFailed(job, error, at)
        const next = yield* JobQueue.nextAttemptAt(MAIL_RETRIES, job.attempts, undefined)
        const giveUpAt = job.created_at.getTime() + Duration.toMillis(MAIL_GIVE_UP_AFTER)
        if (Option.isNone(next) || next.value.getTime() > giveUpAt) return yield* markFailed(job, error, at)
        yield* queue.settle(job.id, { next_attempt_at: next.value, last_error: error.reason })
        yield* Effect.logWarning("e-mail not sent; will retry").pipe(
          Effect.annotateLogs({
            mail_id: job.id,
            template: job.template,
            attempts: job.attempts,
            reason: error.reason,
            next_attempt_at: next.value.toISOString()
          })
        )
      }).pipe(Effect.orDie)

    /** One attempt at one claimed message: send (outside any transaction), then record the outcome. */
    const deliver = (job: ClaimedMail): Effect.Effect<void, never, Mailer> =>
      Effect.flatMap(Mailer, (mailer) =>
        mailer.send({ to: job.recipient, subject: job.subject, text: job.text_body, html: job.html_body }).pipe(
          Effect.either,
          Effect.flatMap((result) => record(job, Either.getLeft(result)))
        )).pipe(TraceContext.withSpan("MailQueue.deliver", TraceContext.parentOf(job.trace_parent)))

    /** Claims up to `limit` due messages and sends them all at once; answers how many were claimed. */
    const runDue = (limit = MAIL_BATCH): Effect.Effect<number, never, Mailer> =>
      Effect.gen(function*() {
        const jobs = yield* claim(limit)
        yield* Effect.forEach(jobs, deliver, { concurrency: "unbounded", discard: true })
        return jobs.length
      }).pipe(TraceContext.withSpan("MailQueue.runDue"))

    return { enqueue, claim, deliver, runDue } as const
  })
}) {}

/**
 * The delivery loop (ROLE=worker|all): claims a batch, sends it, and goes on at once while there was work;
 * when nothing was due it looks again after `MAIL_POLL_EVERY`. Sends run in their own fiber set: on shutdown
 * the loop stops claiming first, then sends in flight get `MAIL_SHUTDOWN_GRACE` to finish and be recorded;
 * whatever is still running is cut off and its message, unrecorded, is claimed again when its lease ends.
 */
export const loop = Layer.scopedDiscard(Effect.gen(function*() {
  const queue = yield* MailQueue
  const mailer = yield* Mailer
  const sends = yield* FiberSet.make<void, never>()
  // Finalizers run in reverse: the loop fiber (forked by `poll` below) stops, then this grace, then the set is closed.
  // A finalizer is uninterruptible: without `interruptible` the timeout could not end the wait, and a hanging
  // SMTP server would hold the shutdown for SMTP_SEND_TIMEOUT instead of this grace.
  yield* Effect.addFinalizer(() =>
    Effect.interruptible(FiberSet.awaitEmpty(sends)).pipe(Effect.timeout(MAIL_SHUTDOWN_GRACE), Effect.ignore)
  )

  const round = Effect.gen(function*() {
    const jobs = yield* queue.claim(MAIL_BATCH)
    const fibers = yield* Effect.forEach(jobs, (job) =>
      FiberSet.run(sends, queue.deliver(job).pipe(
        Effect.provideService(Mailer, mailer),
        Effect.catchAllCause((cause) => Effect.logError("e-mail delivery attempt failed", cause))
      )))
    yield* Fiber.awaitAll(fibers)
    return jobs.length
  })
  yield* JobQueue.poll("e-mail delivery", round, { every: MAIL_POLL_EVERY })
}))
