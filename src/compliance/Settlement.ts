import { Duration, Either, Option } from "effect"
import * as Transitions from "../reservations/Transitions.ts"
import { pastGiveUp, retryAfter, type Verdict } from "./Outcomes.ts"

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
  Transitions.plan(`markSent.${authority}`, () =>
    Either.right(Transitions.decision(authority === "tra" ? { tra_reported: true } : { sire_reported: true }, undefined)))

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
    if (extension === undefined && row[authority].status !== "pending") return Either.right(Transitions.unchanged(undefined))
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
    const report = authority === "tra"
      ? { tra: { ...withoutWarning(row.tra), ...outcome, ...code } }
      : { sire: { ...withoutWarning(row.sire), ...outcome } }

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
    const next = options.withdraw === true && verdict.status === "error"
      ? { ...base, status: "not_applicable" as const, warning: verdict.warning }
      : verdict.status === "success"
      ? { ...base, status: "success" as const, reported_at: at.toISOString() }
      : verdict.status === "error"
      ? { ...base, status: "error" as const, warning: verdict.warning, reported_at: at.toISOString() }
      : { ...base, status: "pending" as const, ...(verdict.warning === null ? {} : { warning: verdict.warning }) }
    return Either.right(Transitions.decision({ sire: { ...row.sire, exit: next } }, undefined))
  })
