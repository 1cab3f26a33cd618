import { Duration, Effect, type Option, Schedule } from "effect"
import { startOfDayInBogota } from "../../shared/Calendar.ts"
import { delayBeforeRetry } from "../../shared/DurableRetry.ts"

/**
 * Pure rules of a report run (design §6.9, §7): how the per-guest outcomes of one reservation become its
 * `tra`/`sire` report, and when a report that is still waiting is tried again.
 */

export type SubmissionState = "pending" | "accepted" | "rejected"

/** One guest's part of a report, as a run left it. */
export interface GuestPart {
  /** `guests[i]` of the reservation, for the warning. */
  readonly guest: string
  readonly state: SubmissionState
  readonly code: number | null
  readonly reason: string | null
}

/** What held a report back in this run, if anything: a configuration problem or a transient failure. */
export type Hold =
  | { readonly _tag: "None" }
  | { readonly _tag: "Configuration"; readonly warning: string }
  | { readonly _tag: "Transient"; readonly reason: string }

export type Verdict =
  | { readonly status: "success"; readonly code: number | null }
  | { readonly status: "error"; readonly warning: string }
  | { readonly status: "pending"; readonly warning: string | null; readonly transient: boolean }

/**
 * A report over several guests: `success` when every guest is accepted, `error` as soon as one is rejected
 * (the warning names it), otherwise `pending` — with a configuration warning, or as a transient wait.
 * `main` is the guest whose code is the report's code (the TRA main guest); null for SIRE.
 */
export const verdictOf = (parts: ReadonlyArray<GuestPart>, hold: Hold, main: string | null): Verdict => {
  const rejected = parts.filter((part) => part.state === "rejected")
  if (rejected.length > 0) {
    return {
      status: "error",
      warning: rejected.map((part) => `${part.guest} was rejected: ${part.reason ?? "no reason given"}`).join("; ")
    }
  }
  if (hold._tag === "Configuration") return { status: "pending", warning: hold.warning, transient: false }
  if (hold._tag === "None" && parts.length > 0 && parts.every((part) => part.state === "accepted")) {
    return { status: "success", code: main === null ? null : parts.find((part) => part.guest === main)?.code ?? null }
  }
  const reason = hold._tag === "Transient" ? hold.reason : "no answer yet"
  return { status: "pending", warning: waitingWarning(reason), transient: true }
}

/**
 * The warning of a report still waiting for an answer (design §6.8: every report pending past its due date says
 * why). It holds nothing an operator must fix, so it raises no alert (`isWaiting`).
 */
const WAITING = "waiting: "
export const waitingWarning = (reason: string) => `${WAITING}${reason}; tried again at the next report run`
export const isWaiting = (warning: string) => warning.startsWith(WAITING)
/** A report that became due after its date (a late registration, a late entry's exit): it goes at the next run. */
export const lateWarning = (dueOn: string) => `${WAITING}due on ${dueOn} and not sent yet; sent at the next report run`

// ---------------------------------------------------------------------------------------------------------------
// Exits follow entries (design §6.8)

/** One SIRE movement as the exit rule reads it. */
export interface MovementFacts {
  readonly guest_id: string
  readonly movement: "E" | "S"
  readonly state: "pending" | "in_file" | "accepted" | "rejected"
  readonly possible_duplicate: boolean
}

/**
 * Migración holds, or may hold, this entry: accepted, in a generated (manual) or uploading file, or sent with an
 * unknown outcome at least once (a possible duplicate, whatever came after).
 */
export const entryMayBeHeld = (entry: MovementFacts): boolean =>
  entry.state === "accepted" || entry.state === "in_file" || entry.possible_duplicate

/**
 * The entry is settled enough for its exit to go out: accepted or in a file; or held possibly (an unknown
 * outcome) and never to be sent again — its report ended (`entryFinal`: an error, the 72-h give-up, or the
 * reservation cancelled). While a possibly-held entry is still being retried its exit waits, so Migración never
 * sees the exit before a re-sent entry.
 */
export const entryReadyForExit = (entry: MovementFacts, entryFinal: boolean): boolean =>
  entry.state === "accepted" || entry.state === "in_file" || (entryFinal && entryMayBeHeld(entry))

/**
 * Which guests an exit is owed to and which wait (design §6.8, "An exit follows its guest's entry"): `owed`, the
 * guests whose entry is ready and who have no exit in a file, accepted or refused yet — one exit per entry,
 * never withdrawn; `waiting`, the guests whose entry may be held but is still being retried.
 */
export const exitsOwed = (
  movements: ReadonlyArray<MovementFacts>,
  entryFinal: boolean
): { readonly owed: ReadonlyArray<string>; readonly waiting: ReadonlyArray<string> } => {
  const exitDone = new Set(
    movements.filter((found) => found.movement === "S" && found.state !== "pending").map((found) => found.guest_id)
  )
  const owed: Array<string> = []
  const waiting: Array<string> = []
  for (const entry of movements) {
    if (entry.movement !== "E" || exitDone.has(entry.guest_id)) continue
    if (entryReadyForExit(entry, entryFinal)) owed.push(entry.guest_id)
    else if (entryMayBeHeld(entry)) waiting.push(entry.guest_id)
  }
  return { owed, waiting }
}

/**
 * Design §6.9: transient failures retry at 5 min, 15 min, 1 h, then at every run. Read step by step through
 * `delayBeforeRetry`, like the webhook and photo retries: the failure count lives in the report's row.
 */
export const REPORT_RETRIES = Schedule.fromDelays("5 minutes", "15 minutes", "1 hour")

/** Design §6.9: a report still failing transiently 72 h past its due date becomes `error`. */
export const GIVE_UP_AFTER = Duration.hours(72)

/** When a report that failed transiently `failures` times in a row is tried again; None = at the next run. */
export const nextRetry = (failures: number): Effect.Effect<Option.Option<Duration.Duration>> =>
  delayBeforeRetry(REPORT_RETRIES, failures, undefined)

/**
 * `nextRetry` for synchronous callers. `runSync` is safe here: the schedule needs no service and every step of
 * `fromDelays` is computed from its arguments, without sleeping or reading the clock, so it never suspends.
 */
export const retryAfter = (failures: number): Option.Option<Duration.Duration> => Effect.runSync(nextRetry(failures))

/** The instant a report became due: the arrival date at 00:00 in Bogotá (UTC−5, no daylight saving). */
export const dueAt = (checkIn: string): Date => startOfDayInBogota(checkIn)

/** True once `now` is more than 72 h past the due instant of `checkIn`. */
export const pastGiveUp = (checkIn: string, now: Date): boolean =>
  now.getTime() - dueAt(checkIn).getTime() > Duration.toMillis(GIVE_UP_AFTER)
