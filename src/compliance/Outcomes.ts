import { Duration, Effect, type Option, Schedule } from "effect"
import { startOfDayInBogota } from "../shared/Calendar.ts"
import { delayBeforeRetry } from "../shared/DurableRetry.ts"

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
  return { status: "pending", warning: null, transient: true }
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
