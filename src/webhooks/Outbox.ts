import { SqlClient } from "@effect/sql"
import { DateTime, Effect } from "effect"
import type { LifecycleEvent } from "../reservations/Lifecycle.ts"
import type { Environment } from "../shared/Environment.ts"
import { eventBody, newEventId } from "./Event.ts"
import { MAX_ATTEMPTS } from "./RetryPolicy.ts"

export interface OutboxEntry {
  readonly accountId: string
  readonly environment: Environment
  readonly reservationId: string
  readonly types: ReadonlyArray<LifecycleEvent>
  /** The reservation as the webhook `data` shows it at this moment (without guests). */
  readonly data: Readonly<Record<string, unknown>>
  readonly guests: ReadonlyArray<unknown>
}

/**
 * The event outbox (design §7). `enqueue` must run inside the transaction of the change it reports: the
 * events and their deliveries commit with the change or not at all. One row per event, in order.
 */
export class Outbox extends Effect.Service<Outbox>()("webhooks/Outbox", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const enqueue = (entry: OutboxEntry) =>
      Effect.gen(function*() {
        if (entry.types.length === 0) return [] as ReadonlyArray<string>
        const createdAt = DateTime.toDateUtc(yield* DateTime.now)
        const rows = entry.types.map((type) => {
          const id = newEventId()
          const body = eventBody({
            id,
            type,
            createdAt,
            sandbox: entry.environment === "test",
            data: entry.data,
            guests: entry.guests
          })
          return {
            id,
            account_id: entry.accountId,
            environment: entry.environment,
            reservation_id: entry.reservationId,
            type,
            created_at: createdAt,
            body: JSON.stringify(body)
          }
        })
        // One statement writes the events, in order (seq follows `types`), and one delivery per (event, active
        // endpoint of the account and environment subscribed to its type) — design §6.14, issue 4: deliveries
        // are created in the same transaction as their event.
        yield* sql`
          WITH ev AS (INSERT INTO events ${sql.insert(rows)} RETURNING seq, id, type)
          INSERT INTO webhook_deliveries
            (endpoint_id, event_seq, event_id, event_type, account_id, environment, status, max_attempts,
             next_attempt_at, created_at)
          SELECT e.id, ev.seq, ev.id, ev.type, e.account_id, e.environment, 'pending', ${MAX_ATTEMPTS}, ${createdAt},
            ${createdAt}
          FROM ev JOIN webhook_endpoints e
            ON e.account_id = ${entry.accountId} AND e.environment = ${entry.environment} AND e.is_active
            AND (e.events ? '*' OR e.events ? ev.type)
          ORDER BY ev.seq, e.id`
        return rows.map((row) => row.id)
      }).pipe(Effect.orDie, Effect.withSpan("Outbox.enqueue"))

    return { enqueue } as const
  })
}) {}
