import { DateTime, Effect, Layer, Option } from "effect"
import type { Lease } from "../jobs/JobQueue.ts"
import { type PublishedEvents, ReservationEvents } from "../reservations/Ports.ts"
import type { Environment } from "../shared/Environment.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { type ClaimedDelivery, DeliveryStore, type EventRow, make as makeStore } from "./DeliveryStore.ts"
import { eventBody, newEventId, pingBody } from "./Event.ts"
import { bodyFor } from "./Signature.ts"
import { MAX_ATTEMPTS, PING_MAX_ATTEMPTS } from "./RetryPolicy.ts"

/**
 * The event outbox (design §7): every event is written here, with its deliveries. `enqueue` must run inside the
 * transaction of the change it reports: the events and their deliveries commit with the change or not at all.
 * One row per event, in order. `ping` writes endpoint 14's test event and its one delivery.
 */
export class Outbox extends Effect.Service<Outbox>()("webhooks/Outbox", {
  dependencies: [DeliveryStore.Default],
  effect: Effect.gen(function*() {
    const store = yield* DeliveryStore

    const enqueue = (entry: PublishedEvents) =>
      Effect.gen(function*() {
        if (entry.types.length === 0) return [] as ReadonlyArray<string>
        const now = DateTime.toDateUtc(yield* DateTime.now)
        // The deliveries' attempts continue this trace (design §9): they are the request's work, done later.
        const traceParent = yield* TraceContext.current
        // `created_at` is strictly increasing per reservation (design §6.14 "Order"): a millisecond after the
        // reservation's latest event, and a millisecond apart within one change. The caller holds the
        // reservation's row lock, so no other change of it writes events meanwhile.
        const latest = entry.isNew === true ? Option.none() : yield* store.latestEventAt(entry.reservationId)
        const after = Option.match(latest, { onNone: () => 0, onSome: (at) => at.getTime() + 1 })
        const first = Math.max(now.getTime(), after)
        const rows = entry.types.map((type, index): EventRow => {
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
        yield* store.insertEvents(rows, {
          accountId: entry.accountId,
          environment: entry.environment,
          dueAt: now,
          maxAttempts: MAX_ATTEMPTS
        })
        return rows.map((row) => row.id)
      }).pipe(Effect.orDie, TraceContext.withSpan("Outbox.enqueue"))

    /**
     * Endpoint 14's test event: a `ping` and its one delivery to that endpoint, whatever it subscribes to, created
     * under `lease` (the request's own: no delivery loop sends it too; if the process dies before recording, the
     * lease ends and a loop sends it). Answers the delivery as claimed, or None when the endpoint is not the
     * owner's active one.
     */
    const ping = (
      to: { readonly accountId: string; readonly environment: Environment },
      endpointId: string,
      lease: Lease
    ) =>
      Effect.gen(function*() {
        const endpoint = yield* store.activeEndpoint(to, endpointId)
        if (Option.isNone(endpoint)) return Option.none()
        const id = newEventId()
        const body = JSON.stringify(
          pingBody({ id, createdAt: lease.at, sandbox: to.environment === "test", endpointId })
        )
        const event: EventRow = {
          id,
          account_id: to.accountId,
          environment: to.environment,
          reservation_id: null,
          type: "ping",
          created_at: lease.at,
          body
        }
        const deliveryId = yield* store.insertPing(event, {
          endpointId,
          maxAttempts: PING_MAX_ATTEMPTS,
          leaseUntil: lease.until
        })
        const claimed: ClaimedDelivery = {
          id: deliveryId,
          endpoint_id: endpointId,
          event_id: id,
          event_type: "ping",
          cycle_attempts: 0,
          max_attempts: PING_MAX_ATTEMPTS,
          url: endpoint.value.url,
          secret: endpoint.value.secret,
          include_guests: endpoint.value.include_guests,
          is_active: true,
          body,
          // Attempted right away, inside the request's own span.
          trace_parent: null,
          lease_until: lease.until
        }
        return Option.some(claimed)
      }).pipe(store.withTransaction, Effect.orDie)

    return { enqueue, ping } as const
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
    const store = yield* makeStore
    for (const event of yield* store.lockEventBodies(reservationIds)) {
      const stripped = bodyFor(event.body, false)
      if (stripped !== event.body) yield* store.setEventBody(event.seq, stripped)
    }
  })
