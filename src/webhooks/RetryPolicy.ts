import { Duration, Effect, Option, Schedule } from "effect"
import { delayBeforeRetry } from "../shared/DurableRetry.ts"

/**
 * Design §6.14: the gaps between delivery attempts — 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h
 * (10 attempts over about 3 days) — each ±20 % (`Schedule.jittered`'s default range); then `failed`.
 */
export const DELIVERY_RETRIES = Schedule.fromDelays(
  "1 minute",
  "5 minutes",
  "30 minutes",
  "2 hours",
  "5 hours",
  "10 hours",
  "14 hours",
  "20 hours",
  "24 hours"
).pipe(Schedule.jittered)

/** Attempts in one cycle: the first plus one per gap. A ping is attempted once (design §6.14). */
export const MAX_ATTEMPTS = 10
export const PING_MAX_ATTEMPTS = 1

/** Success is a 2xx answer within this time (design §6.14). */
export const DELIVERY_TIMEOUT = Duration.seconds(10)

/**
 * `Retry-After` of an answer, as a duration from `now`: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 * `None` when absent or unreadable.
 */
export const retryAfter = (header: string | undefined, now: Date): Option.Option<Duration.Duration> => {
  if (header === undefined) return Option.none()
  const value = header.trim()
  if (/^\d+$/.test(value)) return Option.some(Duration.seconds(Number(value)))
  const at = Date.parse(value)
  return Number.isNaN(at) ? Option.none() : Option.some(Duration.millis(Math.max(0, at - now.getTime())))
}

/**
 * When to try again after failed attempt number `attempt` of the current cycle (1-based), or `None` when the
 * cycle is over. `Retry-After` is honoured, capped at the scheduled gap (design §6.14): a receiver may ask to
 * be retried sooner, never to be left alone longer than the schedule says.
 */
export const nextRetry = (
  attempt: number,
  maxAttempts: number,
  requested: Option.Option<Duration.Duration>
): Effect.Effect<Option.Option<Duration.Duration>> =>
  attempt >= maxAttempts
    ? Effect.succeed(Option.none())
    : Effect.map(delayBeforeRetry(DELIVERY_RETRIES, attempt, undefined), (gap) =>
      Option.map(gap, (scheduled) =>
        Option.match(requested, {
          onNone: () => scheduled,
          onSome: (asked) => Duration.min(asked, scheduled)
        })))
