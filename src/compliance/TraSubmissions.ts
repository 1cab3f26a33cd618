import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"

/**
 * The `tra_submissions` table: one row per guest and round of a reservation's TRA (round 0 = the stay, n = the
 * n-th extension, design §6.8). A main guest with a `code` is never posted again; companions are retried
 * alone; `history` keeps every attempt's outcome (design §7).
 */

export const SubmissionState = Schema.Literal("pending", "accepted", "rejected")
export type SubmissionState = typeof SubmissionState.Type

export const SubmissionRow = Schema.Struct({
  id: Schema.String,
  guest_id: Schema.String,
  role: Schema.Literal("main", "companion"),
  state: SubmissionState,
  /** The ministry's code (`bigint`, read as text). */
  code: Schema.NullOr(Schema.String),
  possible_duplicate: Schema.Boolean,
  last_error: Schema.NullOr(Schema.String),
  /** Handed to the network at this instant and not answered yet (or the process stopped before recording). */
  sending_since: Schema.NullOr(Schema.DateFromSelf)
}).annotations({ identifier: "TraSubmissionRow" })
export type SubmissionRow = typeof SubmissionRow.Type

/** One attempt's outcome, appended to `history`. */
export interface SubmissionAttempt {
  readonly at: Date
  readonly state: SubmissionState
  readonly code: number | null
  readonly reason: string | null
  /** The request may have reached the TRA without an answer: a retry may register the guest twice (design §7). */
  readonly unknownOutcome: boolean
  readonly entry: Readonly<Record<string, unknown>>
}

export class TraSubmissions extends Effect.Service<TraSubmissions>()("compliance/TraSubmissions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const ofRound = SqlSchema.findAll({
      Request: Schema.Struct({ reservationId: Schema.String, round: Schema.Number }),
      Result: SubmissionRow,
      execute: ({ reservationId, round }) =>
        sql`
          SELECT id, guest_id, role, state, code::text AS code, possible_duplicate, last_error, sending_since
          FROM tra_submissions WHERE reservation_id = ${reservationId} AND round = ${round}`
    })

    const decodeRows = Schema.decodeUnknown(Schema.Array(SubmissionRow))

    const Round = Schema.Struct({ round: Schema.Number })
    const startedRound = SqlSchema.findOne({
      Request: Schema.Struct({ reservationId: Schema.String, from: Schema.String }),
      Result: Round,
      execute: ({ reservationId, from }) =>
        sql`
          SELECT round FROM tra_submissions WHERE reservation_id = ${reservationId} AND round > 0 AND period_from = ${from}
          ORDER BY round DESC LIMIT 1`
    })
    const FailedRound = Schema.Struct({ round: Schema.Number, period_from: Schema.String })
    const failedRound = SqlSchema.findOne({
      Request: Schema.String,
      Result: FailedRound,
      execute: (reservationId) =>
        sql`
          SELECT round, period_from::text AS period_from FROM tra_submissions
          WHERE reservation_id = ${reservationId} AND state = 'rejected'
          ORDER BY round DESC LIMIT 1`
    })
    const lastRound = SqlSchema.single({
      Request: Schema.String,
      Result: Round,
      execute: (reservationId) =>
        sql`SELECT COALESCE(max(round), 0) AS round FROM tra_submissions WHERE reservation_id = ${reservationId}`
    })

    return {
      /** The rows of one round; created for every given guest (the first is the main guest) if missing. */
      ensureRound: (input: {
        readonly reservationId: string
        readonly round: number
        readonly period: { readonly from: string; readonly to: string }
        readonly guestIds: ReadonlyArray<string>
        readonly at: Date
      }) =>
        Effect.gen(function*() {
          if (input.guestIds.length === 0) return yield* ofRound({ reservationId: input.reservationId, round: input.round })
          // One statement: the rows it adds (RETURNING) and those already there (the statement's snapshot does not
          // see its own inserts, so the two sets never overlap).
          const rows = yield* sql`
            WITH added AS (
              INSERT INTO tra_submissions ${
            sql.insert(input.guestIds.map((guestId, index) => ({
              reservation_id: input.reservationId,
              guest_id: guestId,
              round: input.round,
              role: index === 0 ? "main" : "companion",
              period_from: input.period.from,
              period_to: input.period.to,
              state: "pending",
              updated_at: input.at
            })))
          }
              ON CONFLICT (reservation_id, round, guest_id) DO NOTHING
              RETURNING id, guest_id, role, state, code::text AS code, possible_duplicate, last_error, sending_since)
            SELECT * FROM added
            UNION ALL
            SELECT id, guest_id, role, state, code::text AS code, possible_duplicate, last_error, sending_since
            FROM tra_submissions WHERE reservation_id = ${input.reservationId} AND round = ${input.round}`
          return yield* decodeRows(rows)
        }).pipe(Effect.orDie),
      ofRound: (reservationId: string, round: number) => ofRound({ reservationId, round }).pipe(Effect.orDie),
      /**
       * The round of an extension from `from` (design §6.8): the one already started for those nights, else the
       * next after the last.
       */
      extensionRound: (reservationId: string, from: string) =>
        Effect.gen(function*() {
          const started = yield* startedRound({ reservationId, from })
          if (Option.isSome(started)) return started.value.round
          return (yield* lastRound(reservationId)).round + 1
        }).pipe(Effect.orDie),
      /** The requests are about to leave: from now on their outcome is unknown until `record` (design §7). */
      markSending: (ids: ReadonlyArray<string>, at: Date) =>
        ids.length === 0
          ? Effect.void
          : sql`UPDATE tra_submissions SET sending_since = ${at} WHERE id IN ${sql.in(ids)}`.pipe(Effect.asVoid, Effect.orDie),
      /**
       * The round whose guests the TRA rejected, newest first: what `cli reports retry` sends again. None when no
       * guest was rejected (a report that gave up after 72 h of no answer: its rows are still pending).
       */
      failedRound: (reservationId: string) => failedRound(reservationId).pipe(Effect.orDie),
      /**
       * `cli reports retry` (design §9): the rejected guests of a round are pending again — the next run posts
       * them, and only them (an accepted main guest keeps its code and is never posted twice). Their history says
       * so. Answers how many guests.
       */
      requeue: (reservationId: string, round: number, at: Date) =>
        Effect.map(
          sql<{ id: string }>`
            UPDATE tra_submissions SET state = 'pending', last_error = NULL, updated_at = ${at},
              history = history || ${JSON.stringify([{ at: at.toISOString(), outcome: "Requeued", by: "operator" }])}::jsonb
            WHERE reservation_id = ${reservationId} AND round = ${round} AND state = 'rejected'
            RETURNING id`,
          (rows) => rows.length
        ).pipe(Effect.orDie),
      record: (id: string, attempt: SubmissionAttempt) =>
        sql`
          UPDATE tra_submissions SET
            sending_since = NULL,
            state = ${attempt.state},
            code = COALESCE(${attempt.code}::bigint, code),
            attempts = attempts + 1,
            possible_duplicate = possible_duplicate OR ${attempt.unknownOutcome},
            last_error = ${attempt.reason},
            history = history || ${JSON.stringify([attempt.entry])}::jsonb,
            updated_at = ${attempt.at}
          WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
    } as const
  })
}) {}
