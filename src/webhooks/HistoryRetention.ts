import { DateTime, Duration, Effect, Layer, Metric, Schedule } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import * as Metrics from "../shared/Metrics.ts"
import { DeliveryStore } from "./DeliveryStore.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/** How often the worker looks for history past its retention (cheap when nothing is due). */
export const HISTORY_EVERY = Duration.hours(6)
/** Events deleted per transaction, so a first run over years of history never holds long locks. */
const BATCH = 1000

const deletedEvents = Metric.tagged(Metrics.webhookHistoryDeleted, "table", "events")
const deletedDeliveries = Metric.tagged(Metrics.webhookHistoryDeleted, "table", "webhook_deliveries")

/**
 * The retention of the webhook delivery history (issue 27 item 4): events and deliveries are about 70 % of what a
 * reservation stores, so delivered events older than `EVENT_RETENTION_DAYS` (default 90) are deleted with their
 * deliveries, in batches — never a pending or failed delivery nor the events of a reservation with a report still
 * pending (`DeliveryStore.deleteHistory`). Answers how many rows went; the `webhook_history_deleted` counter too.
 */
export class HistoryRetention extends Effect.Service<HistoryRetention>()("webhooks/HistoryRetention", {
  dependencies: [DeliveryStore.Default],
  effect: Effect.gen(function*() {
    const store = yield* DeliveryStore
    const { eventRetentionDays } = yield* AppConfig

    const run = Effect.gen(function*() {
      const before = DateTime.toDateUtc(DateTime.subtract(yield* DateTime.now, { days: eventRetentionDays }))
      const total = { events: 0, deliveries: 0 }
      for (;;) {
        const batch = yield* store.deleteHistory(before, BATCH)
        yield* Metric.incrementBy(deletedEvents, batch.events)
        yield* Metric.incrementBy(deletedDeliveries, batch.deliveries)
        total.events += batch.events
        total.deliveries += batch.deliveries
        if (batch.events === 0 && batch.deliveries === 0) return total
      }
    }).pipe(Effect.orDie, TraceContext.withSpan("HistoryRetention.run"))

    return { run } as const
  })
}) {}

/** The retention loop (ROLE=worker|all): at start, then every `HISTORY_EVERY`. */
export const loop = Layer.scopedDiscard(Effect.flatMap(HistoryRetention, (retention) =>
  Effect.forkScoped(Effect.repeat(
    retention.run.pipe(
      Effect.tap(({ deliveries, events }) =>
        events + deliveries > 0
          ? Effect.logInfo(`deleted ${events} webhook events and ${deliveries} deliveries past the retention period`)
          : Effect.void
      ),
      Effect.catchAllCause((cause) => Effect.logError("webhook history retention failed", cause))
    ),
    Schedule.spaced(HISTORY_EVERY)
  ))))
