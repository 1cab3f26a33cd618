import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer } from "effect"
import { inTransaction } from "../db/Database.ts"
import { type PublishedEvents, ReservationEvents } from "../reservations/Ports.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { eventBody, newEventId } from "./Event.ts"
import { bodyFor } from "./Signature.ts"
import { MAX_ATTEMPTS } from "./RetryPolicy.ts"

/**
 * The event outbox (design §7). `enqueue` must run inside the transaction of the change it reports: the
 * events and their deliveries commit with the change or not at all. One row per event, in order.
 */
export class Outbox extends Effect.Service<Outbox>()("webhooks/Outbox", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const enqueue = (entry: PublishedEvents) =>
      Effect.gen(function*() {
        if (entry.types.length === 0) return [] as ReadonlyArray<string>
        const now = DateTime.toDateUtc(yield* DateTime.now)
        // The deliveries' attempts continue this trace (design §9): they are the request's work, done later.
        const traceParent = yield* TraceContext.current
        // `created_at` is strictly increasing per reservation (design §6.14 "Order"): a millisecond after the
        // reservation's latest event, and a millisecond apart within one change. The caller holds the
        // reservation's row lock, so no other change of it writes events meanwhile.
        const [latest] = entry.isNew === true ? [] : yield* inTransaction(sql<{ created_at: Date }>`
          SELECT created_at FROM events WHERE reservation_id = ${entry.reservationId} ORDER BY seq DESC LIMIT 1`)
        const first = Math.max(now.getTime(), latest === undefined ? 0 : latest.created_at.getTime() + 1)
        const rows = entry.types.map((type, index) => {
          const id = newEventId()
          const createdAt = new Date(first + index)
          const body = eventBody({
            id,
            type,
            createdAt,
            sandbox: entry.environment === "test",
            data: entry.data,
            guests: entry.guests,
            changed: entry.changed
          })
          return {
            id,
            account_id: entry.accountId,
            environment: entry.environment,
            reservation_id: entry.reservationId,
            type,
            created_at: createdAt,
            body: JSON.stringify(body),
            ...TraceContext.column(traceParent)
          }
        })
        // One statement writes the events, in order (seq follows `types`), and one delivery per (event, active
        // endpoint of the account and environment subscribed to its type) — design §6.14, issue 4: deliveries
        // are created in the same transaction as their event.
        yield* inTransaction(sql`
          WITH ev AS (INSERT INTO events ${sql.insert(rows)} RETURNING seq, id, type, reservation_id, created_at)
          INSERT INTO webhook_deliveries
            (endpoint_id, event_seq, event_id, event_type, reservation_id, account_id, environment, status,
             max_attempts, next_attempt_at, created_at)
          SELECT e.id, ev.seq, ev.id, ev.type, ev.reservation_id, e.account_id, e.environment, 'pending', ${MAX_ATTEMPTS},
            ${now}, ev.created_at
          FROM ev JOIN webhook_endpoints e
            ON e.account_id = ${entry.accountId} AND e.environment = ${entry.environment} AND e.is_active
            AND (e.events ? '*' OR e.events ? ev.type)
          ORDER BY ev.seq, e.id`)
        return rows.map((row) => row.id)
      }).pipe(Effect.orDie, Effect.withSpan("Outbox.enqueue"))

    return { enqueue } as const
  })
}) {}

/** The reservations' port for their events (`reservations/Ports.ts`), written by the outbox. */
export const reservationEvents = Layer.effect(
  ReservationEvents,
  Effect.map(Outbox, (outbox) => ({ publish: (events) => Effect.asVoid(outbox.enqueue(events)) }))
).pipe(Layer.provide(Outbox.Default))

/**
 * The retention job (design §3): the guests leave the stored bodies of these reservations' events, which are also
 * what every delivery sends and redelivers. `bodyFor` is what a delivery to an endpoint without include_guests
 * sends: the body minus `data.guests`, in its own key order; an event without guests is left byte for byte. Runs in
 * the caller's transaction.
 */
export const stripGuests = (reservationIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* sql<{ seq: string; body: string }>`
      SELECT seq, body::text AS body FROM events WHERE reservation_id IN ${sql.in(reservationIds)} FOR UPDATE`
    for (const event of events) {
      const stripped = bodyFor(event.body, false)
      if (stripped !== event.body) yield* sql`UPDATE events SET body = ${stripped}::json WHERE seq = ${event.seq}`
    }
  })
