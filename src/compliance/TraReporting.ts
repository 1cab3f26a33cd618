import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Either } from "effect"
import { Command } from "../reservations/machine/Machine.ts"
import { type GuestPart, type Hold, verdictOf } from "../reservations/machine/Outcomes.ts"
import { giveUpIfLate, Warnings as ReportWarnings, withdrawn } from "../reservations/machine/Reports.ts"
import type { GuestRow } from "../reservations/ReservationRow.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { type DueReservation, guestLabel } from "./DueReports.ts"
import { Reference } from "./Reference.ts"
import { withPadre } from "./Tra.ts"
import { traBodies, type TraGuestBody, Warnings } from "./TraInputs.ts"
import { TraClient, TraOutcome } from "./TraClient.ts"
import { type SubmissionAttempt, type SubmissionRow, type SubmissionState, TraSubmissions } from "./TraSubmissions.ts"
import { AppConfig } from "../config/AppConfig.ts"
import * as Failpoints from "../shared/Failpoints.ts"

/**
 * The TRA stage of a report run (design §6.8–§6.10, §7): build the `/one/` and `/two/` bodies from the
 * reservation, post what is still missing — the main guest, then each companion linked to its code —, record
 * every answer per guest, and settle the report through `Reservations.apply`. The stay is round 0; each
 * extension after the TRA was accepted is a round of its own for the added nights.
 */

/** What one reservation's TRA came to in this run, for the run's summary. */
export interface TraCounts {
  readonly sent: number
  readonly accepted: number
  readonly rejected: number
}

const stateOf = (outcome: TraOutcome): SubmissionState =>
  outcome._tag === "Accepted" ? "accepted" : outcome._tag === "Rejected" ? "rejected" : "pending"

const refusedToken = (status: number) => `the TRA refused the property's token (HTTP ${status}); check the TRA token`

/** One answer to a submission: the attempt `TraSubmissions.record` stores, and the submission as it stands after it. */
const answerOf = (submission: SubmissionRow, outcome: TraOutcome, at: Date) => {
  const state = stateOf(outcome)
  const code = outcome._tag === "Accepted" ? outcome.code : null
  const reason = outcome._tag === "Accepted" ? null : outcome.reason
  const recorded: SubmissionAttempt = {
    at,
    state,
    code,
    reason,
    unknownOutcome: outcome._tag === "Unknown",
    entry: {
      at: at.toISOString(),
      outcome: outcome._tag,
      ...(outcome._tag === "Rejected" || outcome._tag === "Misconfigured" ? { status: outcome.status } : {}),
      ...(code === null ? {} : { code }),
      ...(reason === null ? {} : { reason }),
      // design §7: a retry after an unknown outcome may register the guest twice; say so.
      ...(submission.possible_duplicate ? { possible_duplicate: true } : {})
    }
  }
  const after: SubmissionRow = {
    ...submission,
    state,
    code: code === null ? submission.code : String(code),
    last_error: reason,
    possible_duplicate: submission.possible_duplicate || outcome._tag === "Unknown",
    sending_since: null
  }
  return { recorded, after }
}

/** Each guest's part of a round's submissions, the guest whose code is the report's, and what the TRA may hold. */
const roundParts = (rows: ReadonlyArray<SubmissionRow>, guests: ReadonlyArray<GuestRow>) => {
  const labelOf = (guestId: string) => {
    const guest = guests.find((candidate) => candidate.id === guestId)
    return guest === undefined ? guestId : guestLabel(guest)
  }
  const parts = rows.map((submission): GuestPart => ({
    guest: labelOf(submission.guest_id),
    state: submission.state,
    code: submission.code === null ? null : Number(submission.code),
    reason: submission.last_error
  }))
  const main = rows.find((submission) => submission.role === "main")
  // The TRA may hold something of this round: an accepted guest, or one sent with an unknown outcome.
  const mayHold = rows.some((submission) => submission.state === "accepted" || submission.possible_duplicate)
  return { parts, main: main === undefined ? null : labelOf(main.guest_id), mayHold }
}

export class TraReporting extends Effect.Service<TraReporting>()("compliance/TraReporting", {
  dependencies: [TraSubmissions.Default],
  effect: Effect.gen(function*() {
    const { sql, tra, submissions, reservations } = yield* Effect.all({
      sql: SqlClient.SqlClient, tra: TraClient, submissions: TraSubmissions, reservations: Reservations
    })
    const failpoint = Failpoints.make((yield* AppConfig).failpoints)

    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)

    /** Records one answer on its submission and answers the submission as it now stands. */
    const record = (submission: SubmissionRow, outcome: TraOutcome) =>
      Effect.gen(function*() {
        const { recorded, after } = answerOf(submission, outcome, yield* nowDate)
        yield* submissions.record(submission.id, recorded)
        return after
      })

    /**
     * Posts what is still missing of one round: the main guest, then (once it has a code) its companions.
     * Answers what held the report back, if anything, the counts of this run, and the round's rows as they are
     * now (none when a configuration problem stopped it before the round was read).
     */
    const post = (due: DueReservation, round: number, period: { readonly from: string; readonly to: string }) =>
      Effect.gen(function*() {
        const none = { sent: 0, accepted: 0, rejected: 0, rows: null, notice: null }
        const token = due.property.tra_token
        if (token === null) return { hold: hold(ReportWarnings.traTokenMissing), ...none }
        // The TRA identifies the establishment by its RNT (domain notes §1.3); without it every post is refused.
        if (due.property.rnt_id === null || due.property.rnt_id.trim() === "") return { hold: hold(Warnings.rntMissing), ...none }
        // The run's tables, with the operators' corrections as stored when it started (ReportRuns).
        const built = traBodies(yield* Reference, due, period)
        if (Either.isLeft(built)) return { hold: hold(built.left[0].message), ...none }
        const bodyOf = (guestId: string) => built.right.guests.find((guest) => guest.guestId === guestId)

        const ensured = yield* submissions.ensureRound({
          reservationId: due.row.id,
          round,
          period,
          guestIds: due.guests.map((guest) => guest.id),
          at: yield* nowDate
        })
        // A submission handed to the network by a run that stopped before recording its answer (a crash; its
        // lease ran out): the outcome is unknown, so it is recorded as such — a possible duplicate — and sent
        // again below (design §7).
        const rows = yield* Effect.forEach(ensured, (submission) =>
          submission.state === "pending" && submission.sending_since !== null
            ? record(submission, TraOutcome.Unknown({
              reason: "the run that sent it stopped before its answer was recorded"
            }))
            : Effect.succeed(submission))
        /**
         * These requests are about to leave: marked in flight (`markSending`) and the report marked sent in one
         * transaction, under the reservation's row lock, so `already_reported.tra` turns true exactly when a
         * request may leave, never before (design §6.8). False when a cancel withdrew the report meanwhile: then
         * nothing is sent.
         */
        const inFlight = (ids: ReadonlyArray<string>) =>
          ids.length === 0 ? Effect.succeed(true) : Effect.gen(function*() {
            const { row } = yield* reservations.apply(due.row.id, Command.MarkSent({ authority: "tra" }))
            if (withdrawn(row, "tra")) return false
            yield* submissions.markSending(ids, yield* nowDate)
            return true
          }).pipe(sql.withTransaction, Effect.orDie)

        // What this run's posts came to (companions are posted in parallel).
        const tally: { sent: number; misconfigured: string | null } = { sent: 0, misconfigured: null }
        const sendable = (submission: SubmissionRow) =>
          submission.state === "pending" && bodyOf(submission.guest_id) !== undefined
        /** Posts one guest whose request was marked in flight (`markSending`) and records the answer. */
        const submit = (
          submission: SubmissionRow,
          send: (guest: TraGuestBody) => Effect.Effect<TraOutcome>
        ) =>
          Effect.gen(function*() {
            const guest = bodyOf(submission.guest_id)
            if (!sendable(submission) || guest === undefined) return submission
            yield* failpoint("tra.before_send")
            const outcome = yield* send(guest)
            yield* failpoint("tra.after_answer")
            tally.sent++
            if (outcome._tag === "Misconfigured") tally.misconfigured = refusedToken(outcome.status)
            const recorded = yield* record(submission, outcome)
            yield* failpoint("tra.after_record")
            return recorded
          })

        const mainRow = rows.find((submission) => submission.role === "main")
        if (mainRow === undefined) return { hold: transient("no main guest to report"), ...none }
        const withdrawnMeanwhile = { hold: transient("the reservation was cancelled before the TRA went out"), ...none }
        if (sendable(mainRow) && !(yield* inFlight([mainRow.id]))) return withdrawnMeanwhile
        const main = yield* submit(mainRow, (guest) =>
          guest.role === "main" ? tra.submitMain(token, guest.body) : notTheirRole(guest))
        const waiting = rows.filter((submission) => submission.role === "companion")
        const padre = main.state === "accepted" && main.code !== null ? Number(main.code) : null
        if (padre !== null && !(yield* inFlight(waiting.filter(sendable).map((row) => row.id)))) return withdrawnMeanwhile
        const companions = padre === null ? waiting : yield* Effect.forEach(
          waiting,
          (companion) =>
            submit(companion, (guest) =>
              guest.role === "companion" ? tra.submitCompanion(token, withPadre(guest.body, padre)) : notTheirRole(guest)),
          { concurrency: "unbounded" }
        )

        const all = [main, ...companions]
        const before = new Map(rows.map((submission) => [submission.id, submission.state]))
        const changed = (state: SubmissionState) =>
          all.filter((submission) => submission.state === state && before.get(submission.id) !== state).length
        const stillPending = all.find((submission) => submission.state === "pending")
        const held: Hold = tally.misconfigured !== null
          ? hold(tally.misconfigured)
          : stillPending === undefined
          ? { _tag: "None" }
          : transient(all.find((submission) => submission.last_error !== null)?.last_error ?? "no answer")
        return {
          hold: held,
          sent: tally.sent,
          accepted: changed("accepted"),
          rejected: changed("rejected"),
          rows: all,
          notice: built.right.notice
        }
      })

    /**
     * Each guest's part of a round, for the report's verdict; `main` names the guest whose code is the report's.
     * `rows`: the round as `post` left it, else read.
     */
    const parts = (
      reservationId: string,
      guests: ReadonlyArray<GuestRow>,
      round: number,
      known: ReadonlyArray<SubmissionRow> | null = null
    ) =>
      Effect.map(
        known === null ? submissions.ofRound(reservationId, round) : Effect.succeed(known),
        (rows) => roundParts(rows, guests)
      )

    /** The stay's TRA (round 0): post, then settle the report (design §6.9), giving up 72 h past due. */
    const report = (due: DueReservation) =>
      Effect.gen(function*() {
        const { hold: held, rows, notice, ...counts } = yield* post(due, 0, { from: due.row.check_in, to: due.row.check_out })
        const { parts: guestParts, main, mayHold } = yield* parts(due.row.id, due.guests, 0, rows)
        const verdict = giveUpIfLate(
          verdictOf(guestParts, held, main),
          due.row.check_in,
          yield* nowDate,
          held._tag === "Transient" ? held.reason : ""
        )
        yield* reservations.apply(due.row.id, Command.SettleTra({ verdict, mayHold, notice }))
        return counts satisfies TraCounts
      })

    /**
     * An extension after the TRA was accepted (design §6.8): a new `/one/` for the added nights (old → new
     * `check_out`) and a `/two/` per companion linked to the new code. When every guest is accepted the TRA
     * carries the new code and `tra.reported` is emitted again; a rejection ends it in `error`; anything else
     * waits for the next run, the TRA staying `success` meanwhile.
     */
    const reportExtension = (due: DueReservation, from: string) =>
      Effect.gen(function*() {
        const round = yield* submissions.extensionRound(due.row.id, from)
        const { hold: held, rows, notice, ...counts } = yield* post(due, round, { from, to: due.row.check_out })
        const { parts: guestParts, main } = yield* parts(due.row.id, due.guests, round, rows)
        yield* reservations.apply(
          due.row.id,
          Command.SettleTra({ verdict: verdictOf(guestParts, held, main), extensionUpTo: due.row.check_out, notice })
        )
        return counts satisfies TraCounts
      })

    return { report, reportExtension, parts } as const
  })
}) {}

/** The submissions' roles and the bodies' follow the same registration order (`TraSubmissions.ensureRound`). */
const notTheirRole = (guest: TraGuestBody) =>
  Effect.dieMessage(`guests[${guest.position}] is the ${guest.role} of the TRA bodies but not of its submission`)

const hold = (warning: string): Hold => ({ _tag: "Configuration", warning })
const transient = (reason: string): Hold => ({ _tag: "Transient", reason })
