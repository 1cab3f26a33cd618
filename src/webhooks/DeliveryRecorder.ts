import type { SqlError } from "@effect/sql"
import { Chunk, Effect, Exit, Metric, Option, Queue, type Scope, type Tracer } from "effect"
import * as Metrics from "../shared/Metrics.ts"
import { type OutcomeKind, outcomeKind, outcomeRow, retryOf, type Sent } from "./Attempt.ts"
import type { ClaimedDelivery, OutcomeRow } from "./DeliveryStore.ts"
import type { DeliveryStatus } from "./Webhook.ts"

/**
 * Outcomes recorded by one statement at most (the recorder takes whatever is waiting, up to this): a batch is
 * one transaction, one WAL flush, instead of one per attempt (docs/performance.md, "Batched deliveries").
 */
const RECORD_BATCH = 1000

/** An attempt's outcome waiting to be recorded. */
export interface PendingRecord {
  readonly job: ClaimedDelivery
  readonly sent: Sent
  /** The attempt's span: the batch's statement is traced under the first one's. */
  readonly span: Option.Option<Tracer.AnySpan>
  /** Called once the outcome is recorded (with the status written) or could not be. */
  readonly done: (exit: Exit.Exit<DeliveryStatus, SqlError.SqlError>) => void
}

/**
 * The recorder of webhook delivery outcomes: one fiber takes every outcome waiting and writes them together
 * (`write`, one statement that also clears their leases), so a backlog is recorded in batches while a lone attempt
 * is written at once; the recorded rows' leases are `settled`. A row attempted twice in one batch (redelivered
 * while its first attempt was in flight) is written by a second statement: one `UPDATE … FROM` changes a row
 * once. The statement runs in the first attempt's trace. Answers how an outcome is handed over (no fiber).
 */
export const make = (
  write: (rows: ReadonlyArray<OutcomeRow>) => Effect.Effect<unknown, SqlError.SqlError>,
  settled: (ids: ReadonlyArray<string>) => Effect.Effect<void>
): Effect.Effect<(record: PendingRecord) => void, never, Scope.Scope> =>
  Effect.gen(function*() {
    // The counter per outcome, tagged once: a tagged metric made per attempt is hashed and compared at every
    // increment (measurable in a backlog's profile).
    const attemptsBy: Record<OutcomeKind, Metric.Metric.Counter<number>> = {
      endpoint_inactive: Metric.tagged(Metrics.webhookAttempts, "outcome", "endpoint_inactive"),
      delivered: Metric.tagged(Metrics.webhookAttempts, "outcome", "delivered"),
      network_error: Metric.tagged(Metrics.webhookAttempts, "outcome", "network_error"),
      http_error: Metric.tagged(Metrics.webhookAttempts, "outcome", "http_error")
    }

    const recordBatch = (batch: ReadonlyArray<PendingRecord>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const seen = new Set<string>()
        const now: Array<PendingRecord> = []
        const later: Array<PendingRecord> = []
        for (const record of batch) {
          if (seen.has(record.job.id)) later.push(record)
          else {
            seen.add(record.job.id)
            now.push(record)
          }
        }
        const rows = yield* Effect.forEach(now, ({ job, sent }) =>
          Effect.map(retryOf(job, sent), (retry) => outcomeRow(job, sent, retry)))
        const counts = new Map<OutcomeKind, number>()
        for (const { job, sent } of now) {
          const kind = outcomeKind(job, sent)
          counts.set(kind, (counts.get(kind) ?? 0) + 1)
        }
        for (const [kind, n] of counts) yield* Metric.incrementBy(attemptsBy[kind], n)
        const first = now[0]!.span
        const statement = write(rows)
        const exit = yield* Effect.exit(
          Option.isSome(first) ? Effect.withParentSpan(statement, first.value) : statement
        )
        if (Exit.isSuccess(exit)) yield* settled(rows.map((row) => row.id))
        else yield* Effect.logError("webhook delivery outcomes not recorded; their leases lapse", exit.cause)
        rows.forEach((row, index) => now[index]!.done(Exit.as(exit, row.status)))
        if (later.length > 0) yield* recordBatch(later)
      })

    const pending = yield* Queue.unbounded<PendingRecord>()
    yield* Queue.takeBetween(pending, 1, RECORD_BATCH).pipe(
      // Once taken, a batch is written and answered whatever happens: its attempts wait for it.
      Effect.flatMap((batch) => Effect.uninterruptible(recordBatch(Chunk.toReadonlyArray(batch)))),
      Effect.forever,
      Effect.forkScoped
    )
    return (record) => {
      pending.unsafeOffer(record)
    }
  })
