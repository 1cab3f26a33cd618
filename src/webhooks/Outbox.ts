import { SqlClient } from "@effect/sql"
import { DateTime, Effect } from "effect"
import type { LifecycleEvent } from "../reservations/Lifecycle.ts"
import type { Environment } from "../shared/Environment.ts"
import { eventBody, newEventId } from "./Event.ts"

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
 * events commit with the change or not at all. One row per event, in order; delivery is the webhooks issue.
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
        // One statement keeps the events' order (seq) equal to the order of `types`.
        yield* sql`INSERT INTO events ${sql.insert(rows)}`
        return rows.map((row) => row.id)
      }).pipe(Effect.orDie, Effect.withSpan("Outbox.enqueue"))

    return { enqueue } as const
  })
}) {}
