import { Duration, Either, Option } from "effect"
import { NothingToRetry } from "../../shared/errors.ts"
import { dateInBogota } from "../../shared/Calendar.ts"
import type { Environment } from "../../shared/Environment.ts"
import type { ReportStatus, SandboxSimulate, SireExitReport } from "../Reservation.ts"
import type { ReservationRow } from "../ReservationRow.ts"
import { type Decided, decision, unchanged } from "./Decision.ts"
import {
  exitsOwed,
  lateWarning,
  type MovementFacts,
  pastGiveUp,
  retryAfter,
  type Verdict,
  waitingWarning
} from "./Outcomes.ts"
import { isForeign, type State } from "./State.ts"

/**
 * The report half of the reservation machine (design §6.8, §6.9, §6.12, §7): the TRA report, the SIRE entry and
 * the SIRE exit of a reservation — when they become due, what a run's verdict, a cancellation in flight or an
 * operator's retry makes of them, and when an exit is owed. The state table is in docs/compliance.md ("A
 * reservation's reports: states and transitions"); `Machine.decide` is the entry point.
 */

export type Authority = "tra" | "sire"

/** Warning texts of report objects; stable enough for tests, human-readable, not a contract. */
export const Warnings = {
  traNotReported: "the property does not report to the TRA; enable TRA reporting in the property settings",
  sireNotReported: "the property does not report to SIRE; enable SIRE reporting in the property settings",
  traTokenMissing: "the property has no TRA token; configure it so the TRA can be sent",
  sireHotelCodeMissing: "the property has no SIRE hotel code; configure it so the SIRE report can be sent",
  simulatedTraRejection: "simulated rejection (sandbox_simulate: tra_failed)",
  simulatedSireRejection: "simulated rejection (sandbox_simulate: sire_failed)",
  cancelledBeforeSending: "the reservation was cancelled before this report went out; it will not be sent",
  noEntrySent: "no guest's entry was accepted, so there is no exit to report",
  entryUnconfirmed: "the entry of a guest went out with an unknown outcome and is being sent again; its exit follows it"
} as const

// ---------------------------------------------------------------------------------------------------------------
// Reports becoming due (design §6.9, §6.12)

/** What a property's settings say about reporting. */
export interface ReportingSettings {
  readonly reports_tra: boolean
  readonly reports_sire: boolean
  readonly has_tra_token: boolean
  readonly has_sire_hotel_code: boolean
}

/**
 * The simulated answer of one authority to a test key's report (design §6.12): `success`, except the report
 * named by `sandbox_simulate`, which ends in `error`. The simulated authorities themselves are
 * `compliance/Simulated.ts`; this is the rule they follow.
 */
export const simulatedOutcome = (
  report: Authority,
  sandboxSimulate: SandboxSimulate | null | undefined
): "success" | "error" => sandboxSimulate === `${report}_failed` ? "error" : "success"

export interface ReportsDueInput {
  readonly environment: Environment
  readonly property: ReportingSettings
  /** Each guest's `nacionalidad` (ISO 3166-1 alpha-2). */
  readonly nationalities: ReadonlyArray<string>
  readonly check_in: string
  /** Ignored with a live key (endpoint validation refuses it there, design §6.12). */
  readonly sandbox_simulate?: SandboxSimulate | null | undefined
}

/** The spec's `tra`/`sire` objects as far as `reportsWhenDue` decides them. */
export interface DueReports {
  readonly tra: {
    readonly status: ReportStatus
    readonly sends_on: string | null
    readonly warning?: string
    readonly simulated?: boolean
  }
  readonly sire: {
    readonly status: ReportStatus
    readonly foreign_guests: number
    readonly warning?: string
    readonly simulated?: boolean
  }
}

/**
 * The report objects at the moment reports become due (`reportsDue` turns true). Live: an applicable report is
 * `pending` (TRA with `sends_on` = `check_in`), with a warning when a configuration gap will hold it back.
 * Test: an applicable report is at once `success` (or `error` for the one named by `sandbox_simulate`). A report
 * that does not apply stays `not_applicable`; it carries a warning only when the property does not report to that
 * authority (a stay without foreign guests needs no SIRE and no warning).
 */
export const reportsWhenDue = (input: ReportsDueInput): DueReports => {
  const test = input.environment === "test"
  const simulated = test ? { simulated: true } : {}
  const foreign_guests = input.nationalities.filter(isForeign).length
  const traApplies = input.property.reports_tra
  const sireApplies = input.property.reports_sire && foreign_guests > 0

  const outcome = (report: Authority, applies: boolean, configWarning: string | undefined) => {
    if (!applies) return { status: "not_applicable" as const }
    if (!test) return { status: "pending" as const, ...(configWarning === undefined ? {} : { warning: configWarning }) }
    // Test keys: the simulated authorities answer at once (src/compliance/Simulated.ts).
    return { status: simulatedOutcome(report, input.sandbox_simulate) }
  }

  const traOutcome = outcome("tra", traApplies, input.property.has_tra_token ? undefined : Warnings.traTokenMissing)
  const sireOutcome = outcome(
    "sire",
    sireApplies,
    input.property.has_sire_hotel_code ? undefined : Warnings.sireHotelCodeMissing
  )
  return {
    tra: {
      ...traOutcome,
      sends_on: traApplies ? input.check_in : null,
      ...(!traApplies ? { warning: Warnings.traNotReported } : {}),
      ...(traOutcome.status === "error" ? { warning: Warnings.simulatedTraRejection } : {}),
      ...simulated
    },
    sire: {
      ...sireOutcome,
      foreign_guests,
      ...(!input.property.reports_sire ? { warning: Warnings.sireNotReported } : {}),
      ...(sireOutcome.status === "error" ? { warning: Warnings.simulatedSireRejection } : {}),
      ...simulated
    }
  }
}

/** What the due reports are decided from, loaded by `Reservations` when they become due. */
export interface DueInput {
  readonly settings: ReportingSettings
  /** `nacionalidad` of each registered guest. */
  readonly nationalities: ReadonlyArray<string>
  /** The code a simulated TRA acceptance carries (test keys, design §6.12). */
  readonly simulatedCode: number
  /** What a live run would say about each report (test keys, design §6.12): carried by the simulated answer. */
  readonly simulatedWarnings?: { readonly tra: string | null; readonly sire: string | null } | undefined
}

/** A simulated report with the warning a live run would give beside its own (design §6.12). */
const withLiveWarning = <R extends { readonly status: string; readonly warning?: string }>(
  report: R,
  warning: string | null | undefined
): R =>
  warning === null || warning === undefined || report.status === "not_applicable"
    ? report
    : { ...report, warning: report.warning === undefined ? warning : `${report.warning}; ${warning}` }

/**
 * The reports at the moment they become due (design §6.9): live ones wait for the report runs (`pending`), a
 * test key's are answered at once by the simulated authorities (design §6.12).
 */
export const withDueReports = <S extends State>(state: S, input: DueInput, at: Date): S => {
  const due = reportsWhenDue({
    environment: state.environment,
    property: input.settings,
    nationalities: input.nationalities,
    check_in: state.check_in,
    sandbox_simulate: state.sandbox_simulate
  })
  const decided = (status: ReportStatus) => status === "success" || status === "error"
  // design §6.8: a report pending past its due date says why — here, that it became due late (registered after
  // check_in); the next run sends it.
  const late = state.check_in < dateInBogota(at) ? lateWarning(state.check_in) : null
  const saysWhy = <T extends { readonly status: string; readonly warning?: string }>(report: T): T =>
    report.status === "pending" && report.warning === undefined && late !== null ? { ...report, warning: late } : report
  return {
    ...state,
    tra: {
      ...saysWhy(withLiveWarning(due.tra, input.simulatedWarnings?.tra)),
      reported_at: decided(due.tra.status) ? at.toISOString() : null,
      mincit_code: due.tra.status === "success" ? input.simulatedCode : null
    },
    sire: {
      ...saysWhy(withLiveWarning(due.sire, input.simulatedWarnings?.sire)),
      reported_at: decided(due.sire.status) ? at.toISOString() : null,
      exit: state.sire.exit
    },
    // design §6.12: a (simulated) success counts as reported.
    tra_reported: due.tra.status === "success",
    sire_reported: due.sire.status === "success"
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Exits (design §6.8)

/**
 * The day the exit movements are due (design §6.8): the recorded departure; else `check_out`, or the
 * cancellation's Bogotá date when earlier.
 */
export const exitDate = (state: Pick<State, "check_out" | "cancelled_at" | "departed_on">): string => {
  if (state.departed_on !== null) return state.departed_on
  if (state.cancelled_at === null) return state.check_out
  const cancelled = dateInBogota(state.cancelled_at)
  return cancelled < state.check_out ? cancelled : state.check_out
}

/**
 * Once the entry went out (`sire_reported`), the foreign guests' exit is due on its date — a live one waits for
 * the report run of that day, a test key's is answered at once by the simulated authority — and while it waits it
 * follows `check_out`, a cancellation and a recorded departure. An entry never sent has no exit.
 */
export const withExit = <S extends State>(state: S, at: Date): S => {
  const exit = state.sire.exit
  if (exit.status === "pending") {
    const sends_on = exitDate(state)
    return sends_on === exit.sends_on ? state : { ...state, sire: { ...state.sire, exit: { ...exit, sends_on } } }
  }
  if (
    exit.status !== "not_applicable" || exit.sends_on !== null || !state.sire_reported || state.sire.foreign_guests === 0
  ) {
    return state
  }
  const next: SireExitReport = state.environment === "test"
    ? { status: "success", sends_on: exitDate(state), reported_at: at.toISOString(), simulated: true }
    : { status: "pending", sends_on: exitDate(state), reported_at: null }
  return { ...state, sire: { ...state.sire, exit: next } }
}

/**
 * Whether the exit is armed again (design §6.8): a guest is owed one and the exit is not already waiting. An exit
 * that ended in `error` — no answer 72 hours past its date (the give-up, design §6.9) — is an operator's
 * (`cli reports retry`): its movements stay `pending` as possible duplicates, so they still count as owed, yet only a
 * guest whose exit was never built (an entry accepted since) arms it again. Re-arming the exit it gave up on would
 * turn an operator's alert back into "sent at the next report run" without a run ever collecting it.
 */
const exitToArm = (exit: State["sire"]["exit"], movements: ReadonlyArray<MovementFacts>, entryFinal: boolean) => {
  if (exit.status === "pending") return false
  const { owed } = exitsOwed(movements, entryFinal)
  if (exit.status !== "error") return owed.length > 0
  const built = new Set(movements.filter((found) => found.movement === "S").map((found) => found.guest_id))
  return owed.some((guest) => !built.has(guest))
}

/** The exit armed again for the guests still owed one: pending on its date, at once when past (a late entry). */
const armedExit = (state: State, sire: State["sire"], at: Date): State["sire"] => {
  if (sire.exit.status === "pending") return sire
  const sends_on = exitDate(state)
  const late = sends_on < dateInBogota(at) ? { warning: lateWarning(sends_on) } : {}
  return { ...sire, exit: { status: "pending", sends_on, reported_at: null, ...late } }
}

// ---------------------------------------------------------------------------------------------------------------
// Extensions of a test key (design §6.8, §6.12)

/** A test key's extension after its TRA was accepted is accepted again at once, with a new code. */
export const extensionToSimulate = (state: State): boolean =>
  state.environment === "test" && state.tra_extension_from !== null && state.tra.status === "success"

export const simulateExtension = <S extends State>(state: S, code: number, at: Date): S => ({
  ...state,
  tra: { ...state.tra, mincit_code: code, reported_at: at.toISOString() },
  tra_extension_from: null
})

// ---------------------------------------------------------------------------------------------------------------
// Commands of a report run

/**
 * A cancellation withdrew this report while a run was building it (design §6.8: a report still waiting never goes
 * out once cancelled): the run must not send it. Checked under the row lock of the transaction that marks it
 * sent, so a cancel either comes first and the report stays unsent, or after and answers `already_reported`.
 */
export const withdrawn = (state: Pick<State, "reservation_status" | "tra" | "sire">, authority: Authority) =>
  state.reservation_status === "cancelled" && state[authority].status !== "pending"

/**
 * MarkSent: the authority may hold the report from now on (a submission is about to leave): a cancellation
 * answers `already_reported` for it and date changes are judged as "after reported" (design §6.6, §6.9).
 */
export const markSent = (row: ReservationRow, authority: Authority): Decided<void, never> =>
  Either.right(
    withdrawn(row, authority)
      ? unchanged(undefined)
      : decision(authority === "tra" ? { tra_reported: true } : { sire_reported: true }, undefined)
  )

/** A report still failing transiently 72 h past due ends in `error` (design §6.9). */
export const giveUpIfLate = (verdict: Verdict, checkIn: string, now: Date, reason: string): Verdict =>
  verdict.status === "pending" && verdict.transient && pastGiveUp(checkIn, now)
    ? { status: "error", warning: `no answer for 72 hours past the due date (${reason})` }
    : verdict

/** A report object without its previous warning: a new verdict says its own. */
const withoutWarning = <R extends { readonly warning?: string }>(report: R): Omit<R, "warning"> => {
  const { warning: _, ...rest } = report
  return rest
}

export interface SettleOptions {
  /**
   * Whether the authority may hold the report after this run — something accepted, or sent with an unknown
   * outcome — which is what `already_reported` answers (design §6.9). Refused credentials registered nothing.
   * Default: a success, or a report still pending that was already marked sent.
   */
  readonly mayHold?: boolean | undefined
  /**
   * TRA: the verdict is about an extension's added nights up to this `check_out` (design §6.8), not the stay's
   * report: the TRA stays `success` while they wait, and the nights after this date (a later extension) are
   * still owed afterwards.
   */
  readonly extensionUpTo?: string | undefined
  /**
   * Something the report says even when it is accepted (design §6.10: the room number was sent blank): kept in
   * `warning`, after the verdict's own warning when it has one.
   */
  readonly notice?: string | null | undefined
  /**
   * SIRE: the reservation's movements as recorded after the run. From them the machine decides whether an exit is
   * owed (`Outcomes.exitsOwed`): armed again if it had ended or been withdrawn, on its date, which is at once when
   * that date has passed (design §6.8, "An exit follows its guest's entry") — an exit given up only for a guest whose
   * exit was never built (`exitToArm`).
   */
  readonly movements?: ReadonlyArray<MovementFacts> | undefined
}

/**
 * The report ended in `error` because its reservation was cancelled while it was in flight (`settleCancelled`):
 * the authority may hold it, so an operator's later confirmation (`cli sire confirm` of the kept file) makes it a
 * success.
 */
const endedByCancellation = (row: ReservationRow, authority: Authority) =>
  row.reservation_status === "cancelled" && row[authority].status === "error" && row[`${authority}_reported`]

/**
 * One report's verdict after a run (SettleTra, SettleSireEntry). The stay's report: `success` (with the TRA main
 * guest's code), `error` with the reason, or still `pending` — with a configuration warning, or after a transient
 * failure, which counts towards the backoff (5 min, 15 min, 1 h, then every run). An extension: accepted again with
 * the new code, or `error`; while it waits, only its warning is kept. A SIRE entry settled with an exit owed arms
 * the exit.
 */
export const settle = (
  row: ReservationRow,
  authority: Authority,
  verdict: Verdict,
  options: SettleOptions,
  at: Date
): Decided<void, never> => {
  const extension = authority === "tra" ? options.extensionUpTo : undefined
  // The entry is sent no more once its report ends (or the reservation was cancelled: `settleCancelled`).
  const exitOwed = authority === "sire" && options.movements !== undefined &&
    exitToArm(row.sire.exit, options.movements, verdict.status !== "pending")
  const confirmedAfterCancel = verdict.status === "success" && endedByCancellation(row, authority)
  if (extension === undefined && row[authority].status !== "pending" && !confirmedAfterCancel) {
    return Either.right(
      exitOwed
        ? decision({ sire: armedExit(row, row.sire, at) }, undefined)
        : unchanged(undefined)
    )
  }
  const noted = (warning: string | null): { readonly warning?: string } => {
    const said = [warning, options.notice ?? null].filter((text): text is string => text !== null)
    return said.length === 0 ? {} : { warning: said.join("; ") }
  }
  if (extension !== undefined && verdict.status === "pending") {
    return Either.right(decision(verdict.warning === null ? {} : { tra: { ...row.tra, ...noted(verdict.warning) } }, undefined))
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
    : { sire: exitOwed ? armedExit(row, sire, at) : sire }

  if (extension !== undefined) {
    // A later extension may have moved check_out again meanwhile: the nights after this round are still owed.
    return Either.right(decision({ ...report, tra_extension_from: row.check_out > extension ? extension : null }, undefined))
  }
  const transient = verdict.status === "pending" && verdict.transient
  const failures = transient ? row.report_failures + 1 : 0
  const reported = verdict.status === "success" ||
    (options.mayHold ?? (verdict.status === "pending" && row[`${authority}_reported`]))
  return Either.right(decision({
    ...report,
    ...(authority === "tra" ? { tra_reported: reported } : { sire_reported: reported }),
    report_failures: failures,
    report_retry_at: Option.match(transient ? retryAfter(failures) : Option.none(), {
      onNone: () => null,
      onSome: (gap) => new Date(at.getTime() + Duration.toMillis(gap))
    })
  }, undefined))
}

/**
 * SettleSireExit: the exit movements' verdict after a run (design §6.8): `success`, `error` with the reason (an
 * operator alert, design §9), or still `pending` with its warning. No event and no `status` change follow from it.
 */
export const settleExit = (row: ReservationRow, verdict: Verdict, at: Date): Decided<void, never> => {
  const exit = row.sire.exit
  if (exit.status !== "pending") return Either.right(unchanged(undefined))
  const base = withoutWarning(exit)
  const next = verdict.status === "success"
    ? { ...base, status: "success" as const, reported_at: at.toISOString() }
    : verdict.status === "error"
    ? { ...base, status: "error" as const, warning: verdict.warning, reported_at: at.toISOString() }
    : { ...base, status: "pending" as const, ...(verdict.warning === null ? {} : { warning: verdict.warning }) }
  return Either.right(decision({ sire: { ...row.sire, exit: next } }, undefined))
}

/**
 * SireExitUnbuilt: a run built no exit line for a reservation whose exit is due (design §6.8, "An exit follows its
 * guest's entry"). An entry accepted in the run whose exit lines were built before it keeps the exit due, for the
 * next run (past its date it says so); an entry that may be held and is still being sent again keeps it waiting;
 * only when no guest's entry is held or may be held is there no exit: withdrawn without a date, an entry accepted
 * later arms it again.
 */
export const exitUnbuilt = (
  row: ReservationRow,
  movements: ReadonlyArray<MovementFacts>,
  at: Date
): Decided<void, never> => {
  const exit = row.sire.exit
  if (exit.status !== "pending") return Either.right(unchanged(undefined))
  const { owed, waiting } = exitsOwed(movements, false)
  if (owed.length > 0) {
    if (exit.sends_on === null || exit.sends_on >= dateInBogota(at)) return Either.right(unchanged(undefined))
    return Either.right(decision({ sire: { ...row.sire, exit: { ...exit, warning: lateWarning(exit.sends_on) } } }, undefined))
  }
  if (waiting.length > 0) {
    return settleExit(row, { status: "pending", warning: waitingWarning(Warnings.entryUnconfirmed), transient: false }, at)
  }
  const next = { ...withoutWarning(exit), status: "not_applicable" as const, sends_on: null, warning: Warnings.noEntrySent }
  return Either.right(decision({ sire: { ...row.sire, exit: next } }, undefined))
}

/** The warning of a report cancelled while its submission was in flight or of unknown outcome (design §6.8). */
export const cancelledInFlightWarning = (authority: Authority) =>
  `the reservation was cancelled while this report was being sent or waiting for an answer: ${
    authority === "tra" ? "the TRA" : "Migración (SIRE)"
  } may hold it; check the authority's portal`

/**
 * SettleCancelled — design §6.8, "Nothing stays pending for ever": a cancelled reservation's TRA or SIRE entry
 * still `pending` was in flight or of unknown outcome at the cancellation (a waiting one was withdrawn by the
 * cancel), and will never be sent again: it ends in `error` saying the authority may hold it (an alert, listed by
 * `reports list`), and its `already_reported` stays true. No event follows (nothing follows
 * `reservation.cancelled`). The exit of every guest whose entry may be held becomes due, on the cancellation's date.
 */
export const settleCancelled = (
  row: ReservationRow,
  movements: ReadonlyArray<MovementFacts>,
  at: Date
): Decided<void, never> => {
  if (row.reservation_status !== "cancelled") return Either.right(unchanged(undefined))
  const ended = <R extends { readonly status: string; readonly warning?: string; readonly reported_at: string | null }>(
    report: R,
    authority: Authority
  ) =>
    report.status === "pending"
      ? { ...report, status: "error" as const, reported_at: at.toISOString(), warning: cancelledInFlightWarning(authority) }
      : report
  const sire = ended(row.sire, "sire")
  return Either.right(decision({
    tra: ended(row.tra, "tra"),
    sire: exitToArm(sire.exit, movements, true) ? armedExit(row, sire, at) : sire,
    report_failures: 0,
    report_retry_at: null
  }, undefined))
}

// ---------------------------------------------------------------------------------------------------------------
// An operator's retry (design §9)

/** Which of a reservation's reports an operator re-queued (`cli reports retry`). */
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
 * Requeue (`cli reports retry`): the reports in `error` go back to `pending`, with the backoff reset, to be sent
 * again by the next run once the cause is fixed. The caller puts the rejected guests' rows back to pending in the
 * same transaction (`TraSubmissions.requeue`, `SireRecords.requeue`); the accepted ones stay accepted and are not
 * sent twice. A cancelled reservation's TRA and SIRE entry are not sent any more, so only its exit is retried; a
 * test key's reports are simulated, never sent. Nothing to retry is a refusal.
 *
 * `traExtensionFrom`: the rejected TRA guests belong to an extension's round (design §6.8) starting that day, so
 * the run posts that round again (`tra_extension_from`) rather than the stay.
 */
export const requeue = (row: ReservationRow, traExtensionFrom: string | null): Decided<Requeued, NothingToRetry> => {
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
  return Either.right(decision({
    ...tra,
    ...sire,
    ...(requeued.tra && traExtensionFrom !== null ? { tra_extension_from: traExtensionFrom } : {}),
    report_failures: 0,
    report_retry_at: null
  }, requeued))
}
