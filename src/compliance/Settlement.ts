import { Duration, Either, Option } from "effect"
import * as Transitions from "../reservations/Transitions.ts"
import { NothingToRetry } from "../shared/errors.ts"
import { dateInBogota } from "../shared/Calendar.ts"
import { lateWarning, pastGiveUp, retryAfter, type Verdict } from "./Outcomes.ts"

/**
 * What a report run's outcomes do to a reservation, as plans for `Reservations.apply` (design §6.8, §6.9, §7):
 * the one place where a report's state, its `*_reported` flag and the run's retry bookkeeping change. The events
 * follow from the change (`Transitions.finalize`): `tra.reported`/`tra.failed`/`sire.*`, none after a
 * cancellation.
 */

export type Authority = "tra" | "sire"

/**
 * The authority may hold the report from now on (a submission is about to leave): a cancellation answers
 * `already_reported` for it and date changes are judged as "after reported" (design §6.6, §6.9).
 */
export const markSent = (authority: Authority) =>
  Transitions.plan(`markSent.${authority}`, ({ row }) =>
    Either.right(
      withdrawn(row, authority)
        ? Transitions.unchanged(undefined)
        : Transitions.decision(authority === "tra" ? { tra_reported: true } : { sire_reported: true }, undefined)
    ))

/**
 * A cancellation withdrew this report while a run was building it (design §6.8: a report still waiting never goes
 * out once cancelled): the run must not send it. Checked under the row lock of the transaction that marks it
 * sent, so a cancel either comes first and the report stays unsent, or after and answers `already_reported`.
 */
export const withdrawn = (row: Pick<Transitions.ReservationDraft, "reservation_status" | "tra" | "sire">, authority: Authority) =>
  row.reservation_status === "cancelled" && row[authority].status !== "pending"

/** A report still failing transiently 72 h past due ends in `error` (design §6.9). */
export const giveUpIfLate = (verdict: Verdict, checkIn: string, now: Date, reason: string): Verdict =>
  verdict.status === "pending" && verdict.transient && pastGiveUp(checkIn, now)
    ? { status: "error", warning: `no answer for 72 hours past the due date (${reason})` }
    : verdict

export interface SettleOptions {
  /**
   * Whether the authority may hold the report after this run — something accepted, or sent with an unknown
   * outcome — which is what `already_reported` answers (design §6.9). Refused credentials registered nothing.
   * Default: a success, or a report still pending that was already marked sent.
   */
  readonly mayHold?: boolean
  /**
   * The verdict is about an extension's added nights up to this `check_out` (design §6.8), not the stay's
   * report: the TRA stays `success` while they wait, and the nights after this date (a later extension) are
   * still owed afterwards.
   */
  readonly extensionUpTo?: string
  /**
   * Something the report says even when it is accepted (design §6.10: the room number was sent blank): kept in
   * `warning`, after the verdict's own warning when it has one.
   */
  readonly notice?: string | null
  /**
   * SIRE: some guest's entry is held (or may be) and has no exit yet (`Outcomes.exitsOwed`): the exit is due —
   * armed again if it had ended or been withdrawn, on its date, which is at once when that date has passed
   * (design §6.8, "An exit follows its guest's entry").
   */
  readonly exitOwed?: boolean
}

/** The exit armed again for the guests still owed one: pending on its date (design §6.8). */
const armedExit = (row: Transitions.ReservationDraft, sire: Transitions.ReservationDraft["sire"], at: Date) => {
  if (sire.exit.status === "pending") return sire
  const sends_on = Transitions.exitDate(row)
  // Past its date (a late entry): due at once, and it says so until the next run sends it.
  const late = sends_on < dateInBogota(at) ? { warning: lateWarning(sends_on) } : {}
  return { ...sire, exit: { status: "pending" as const, sends_on, reported_at: null, ...late } }
}

/**
 * One report's verdict after a run. The stay's report: `success` (with the TRA main guest's code), `error`
 * with the reason, or still `pending` — with a configuration warning, or after a transient failure, which
 * counts towards the backoff (5 min, 15 min, 1 h, then every run). An extension: accepted again with the new
 * code, or `error`; while it waits, only its warning is kept.
 */
export const settle = (authority: Authority, verdict: Verdict, options: SettleOptions = {}) =>
  Transitions.plan(`settle.${authority}`, ({ row }, at) => {
    const extension = options.extensionUpTo
    // A report that ended in error because its reservation was cancelled in flight may still be confirmed by the
    // authority (an operator uploads the kept file after all, `cli sire confirm`): then it is a success.
    const confirmedAfterCancel = verdict.status === "success" && row[authority].status === "error" &&
      row[authority].warning === cancelledInFlightWarning(authority)
    if (extension === undefined && row[authority].status !== "pending" && !confirmedAfterCancel) {
      return Either.right(
        authority === "sire" && options.exitOwed === true && row.sire.exit.status !== "pending"
          ? Transitions.decision({ sire: armedExit(row, row.sire, at) }, undefined)
          : Transitions.unchanged(undefined)
      )
    }
    const noted = (warning: string | null): { readonly warning?: string } => {
      const said = [warning, options.notice ?? null].filter((text): text is string => text !== null)
      return said.length === 0 ? {} : { warning: said.join("; ") }
    }
    if (extension !== undefined && verdict.status === "pending") {
      const set = verdict.warning === null ? {} : { tra: { ...row.tra, ...noted(verdict.warning) } }
      return Either.right(Transitions.decision(set, undefined))
    }

    const outcome = verdict.status === "success"
      ? { status: verdict.status, reported_at: at.toISOString(), ...noted(null) }
      : verdict.status === "error"
      ? { status: verdict.status, ...noted(verdict.warning), reported_at: at.toISOString() }
      : { status: verdict.status, ...noted(verdict.warning) }
    const code = verdict.status === "success" ? { mincit_code: verdict.code } : {}
    const sire = { ...withoutWarning(row.sire), ...outcome }
    const report = authority === "tra"
      ? { tra: { ...withoutWarning(row.tra), ...outcome, ...code } }
      : { sire: options.exitOwed === true ? armedExit(row, sire, at) : sire }

    if (extension !== undefined) {
      // A later extension may have moved check_out again meanwhile: the nights after this round are still owed.
      return Either.right(Transitions.decision({ ...report, tra_extension_from: row.check_out > extension ? extension : null }, undefined))
    }
    const transient = verdict.status === "pending" && verdict.transient
    const failures = transient ? row.report_failures + 1 : 0
    const reported = verdict.status === "success" ||
      (options.mayHold ?? (verdict.status === "pending" && row[`${authority}_reported`]))
    return Either.right(Transitions.decision({
      ...report,
      ...(authority === "tra" ? { tra_reported: reported } : { sire_reported: reported }),
      report_failures: failures,
      report_retry_at: Option.match(transient ? retryAfter(failures) : Option.none(), {
        onNone: () => null,
        onSome: (gap) => new Date(at.getTime() + Duration.toMillis(gap))
      })
    }, undefined))
  })

/** A report object without its previous warning: a new verdict says its own. */
const withoutWarning = <R extends { readonly warning?: string }>(report: R): Omit<R, "warning"> => {
  const { warning: _, ...rest } = report
  return rest
}

/**
 * The exit movements' verdict after a run (design §6.8): `success`, `error` with the reason (an operator alert,
 * design §9), or still `pending` with its warning. No event and no `status` change follow from it.
 * `withdraw`: there is no exit to report after all (no guest's entry was accepted).
 */
export const settleExit = (verdict: Verdict, options: { readonly withdraw?: boolean } = {}) =>
  Transitions.plan("settle.exit", ({ row }, at) => {
    const exit = row.sire.exit
    if (exit.status !== "pending") return Either.right(Transitions.unchanged(undefined))
    const base = withoutWarning(exit)
    // Withdrawn without a date: an entry accepted later arms it again (`exitOwed`).
    const next = options.withdraw === true && verdict.status === "error"
      ? { ...base, status: "not_applicable" as const, sends_on: null, warning: verdict.warning }
      : verdict.status === "success"
      ? { ...base, status: "success" as const, reported_at: at.toISOString() }
      : verdict.status === "error"
      ? { ...base, status: "error" as const, warning: verdict.warning, reported_at: at.toISOString() }
      : { ...base, status: "pending" as const, ...(verdict.warning === null ? {} : { warning: verdict.warning }) }
    return Either.right(Transitions.decision({ sire: { ...row.sire, exit: next } }, undefined))
  })

/** The warning of a report cancelled while its submission was in flight or of unknown outcome (design §6.8). */
export const cancelledInFlightWarning = (authority: Authority) =>
  `the reservation was cancelled while this report was being sent or waiting for an answer: ${
    authority === "tra" ? "the TRA" : "Migración (SIRE)"
  } may hold it; check the authority's portal`

/**
 * Design §6.8, "Nothing stays pending for ever": a cancelled reservation's TRA or SIRE entry still `pending` was in
 * flight or of unknown outcome at the cancellation (a waiting one was withdrawn by the cancel), and will never be
 * sent again: it ends in `error` saying the authority may hold it (an alert, listed by `reports list`), and its
 * `already_reported` stays true. No event follows (nothing follows `reservation.cancelled`). The exit of every
 * guest whose entry may be held becomes due (`exitOwed`), on the cancellation's date.
 */
export const settleCancelled = (options: { readonly exitOwed: boolean }) =>
  Transitions.plan("settle.cancelled", ({ row }, at) => {
    if (row.reservation_status !== "cancelled") return Either.right(Transitions.unchanged(undefined))
    const ended = <R extends { readonly status: string; readonly warning?: string; readonly reported_at: string | null }>(
      report: R,
      authority: Authority
    ) =>
      report.status === "pending"
        ? { ...report, status: "error" as const, reported_at: at.toISOString(), warning: cancelledInFlightWarning(authority) }
        : report
    const sire = ended(row.sire, "sire")
    return Either.right(Transitions.decision({
      tra: ended(row.tra, "tra"),
      sire: options.exitOwed ? armedExit(row, sire, at) : sire,
      report_failures: 0,
      report_retry_at: null
    }, undefined))
  })

/**
 * The exit stays due and goes at the next run: an entry accepted in the run that could not yet build its exit line
 * (design §6.8, "the same run or the next one"). Past its date it says so.
 */
export const exitDueAtOnce = Transitions.plan("settle.exitDueAtOnce", ({ row }, at) => {
  const exit = row.sire.exit
  if (exit.status !== "pending" || exit.sends_on === null || exit.sends_on >= dateInBogota(at)) {
    return Either.right(Transitions.unchanged(undefined))
  }
  return Either.right(Transitions.decision({ sire: { ...row.sire, exit: { ...exit, warning: lateWarning(exit.sends_on) } } }, undefined))
})

/** Which of a reservation's reports an operator re-queued (`cli reports retry`, design §9). */
export interface Requeued {
  readonly tra: boolean
  readonly sire_entry: boolean
  readonly sire_exit: boolean
}

const REQUEUED = "re-queued by an operator"

/** The warning of a re-queued report: what happened, and the failure it had (the reason is not lost). */
export const requeuedWarning = (previous: string | undefined) =>
  `${REQUEUED}; sent again at the next report run${previous === undefined ? "" : ` (it had failed: ${previous})`}`

/** A re-queued report's warning says what happened, not what to fix: it holds nothing (alerts, design §9). */
export const isRequeued = (warning: string) => warning.startsWith(REQUEUED)

/**
 * `cli reports retry` (design §9): the reports in `error` go back to `pending`, with the backoff reset, to be
 * sent again by the next run once the cause is fixed. The caller puts the rejected guests' rows back to
 * pending in the same transaction (`TraSubmissions.requeue`, `SireRecords.requeue`); the accepted ones stay
 * accepted and are not sent twice. A cancelled reservation's TRA and SIRE entry are not sent any more, so only
 * its exit is retried; a test key's reports are simulated, never sent. Nothing to retry is a refusal.
 *
 * `traExtensionFrom`: the rejected TRA guests belong to an extension's round (design §6.8) starting that day, so
 * the run posts that round again (`tra_extension_from`) rather than the stay.
 */
export const requeue = (options: { readonly traExtensionFrom: string | null }) =>
  Transitions.plan("requeue", ({ row }) => {
    if (row.environment !== "live") {
      return Either.left(new NothingToRetry({ message: "a test reservation's reports are simulated, never sent: nothing to retry" }))
    }
    const open = row.reservation_status !== "cancelled"
    const requeued: Requeued = {
      tra: open && row.tra.status === "error",
      sire_entry: open && row.sire.status === "error",
      sire_exit: row.sire.exit.status === "error"
    }
    if (!requeued.tra && !requeued.sire_entry && !requeued.sire_exit) {
      const states = `tra ${row.tra.status}, sire ${row.sire.status}, sire exit ${row.sire.exit.status}`
      return Either.left(new NothingToRetry({
        message: row.reservation_status === "cancelled" && (row.tra.status === "error" || row.sire.status === "error")
          ? `reservation ${row.id} is cancelled: its TRA and SIRE entry are not sent any more (${states}); nothing to retry`
          : `no report of reservation ${row.id} is in error (${states}); nothing to retry`
      }))
    }
    const again = <R extends { readonly status: string; readonly warning?: string; readonly reported_at: string | null }>(
      report: R
    ) => ({ ...withoutWarning(report), status: "pending" as const, reported_at: null, warning: requeuedWarning(report.warning) })
    const tra = requeued.tra ? { tra: again(row.tra) } : {}
    const sire = requeued.sire_entry || requeued.sire_exit
      ? {
        sire: {
          ...(requeued.sire_entry ? again(row.sire) : row.sire),
          exit: requeued.sire_exit ? again(row.sire.exit) : row.sire.exit
        }
      }
      : {}
    return Either.right(Transitions.decision({
      ...tra,
      ...sire,
      ...(requeued.tra && options.traExtensionFrom !== null ? { tra_extension_from: options.traExtensionFrom } : {}),
      report_failures: 0,
      report_retry_at: null
    }, requeued))
  })
