import { Duration, Effect, Option, type Schedule, ScheduleDecision, ScheduleIntervals } from "effect"

/**
 * The delay a `Schedule` puts before retry number `retry` (1 = the first retry), or `None` once the schedule
 * is exhausted. For retries whose attempt counter lives in a database row rather than in a running fiber:
 * the row stores `next_attempt_at = now + delay`, so the schedule survives restarts and any worker can resume it.
 */
export const delayBeforeRetry = <Out, In, R>(
  schedule: Schedule.Schedule<Out, In, R>,
  retry: number,
  input: In
): Effect.Effect<Option.Option<Duration.Duration>, never, R> =>
  Effect.gen(function*() {
    let state = schedule.initial
    let now = 0
    for (let step = 1; step <= retry; step++) {
      const [next, , decision] = yield* schedule.step(now, input, state)
      if (ScheduleDecision.isDone(decision)) return Option.none()
      const start = ScheduleIntervals.start(decision.intervals)
      if (step === retry) return Option.some(Duration.millis(Math.max(0, start - now)))
      state = next
      now = start
    }
    return Option.none()
  })
