import { Headers } from "@effect/platform"
import type { SqlError } from "@effect/sql"
import { type Clock, Context, DateTime, Deferred, Duration, Effect, Exit, FiberRef, Option, Runtime, type Tracer } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import * as JobQueue from "../jobs/JobQueue.ts"
import type { Environment } from "../shared/Environment.ts"
import { type PlainTrace, SafeHttp } from "../net/SafeHttp.ts"
import { SecretBox, type SecretBoxShape } from "../secrets/SecretBox.ts"
import { ReservationRepo } from "../reservations/ReservationRepo.ts"
import { DeliveryNotFound } from "../shared/errors.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { isUuid } from "../shared/Uuid.ts"
import { deliveryRequest, inactive, outcomeOf, sendLimits, type Sent, sentOf } from "./Attempt.ts"
import * as DeliveryRecorder from "./DeliveryRecorder.ts"
import { type ClaimedDelivery, DeliveryStore } from "./DeliveryStore.ts"
import { Outbox } from "./Outbox.ts"
import { DELIVERY_TIMEOUT } from "./RetryPolicy.ts"
import type { DeliveriesQuery, DeliveryStatus } from "./Webhook.ts"
import { webhookNotFound } from "./WebhookEndpoints.ts"

/**
 * A claim outlives the longest attempt (the 10 s delivery timeout) with a margin; a worker that dies mid-call
 * leaves its rows to be taken over when the lease ends (design §7).
 */
export const DELIVERY_LEASE = Duration.sum(DELIVERY_TIMEOUT, Duration.seconds(5))

/**
 * What the delivery loop hands to `deliver`, taken once from its fiber rather than per attempt (docs/
 * performance.md, "Deliveries without a fiber each").
 */
export interface DeliverHooks {
  readonly clock: Clock.Clock
  /** Present when spans are exported: the attempt is traced as `attempt` traces it. */
  readonly trace: Omit<PlainTrace, "parent"> | undefined
  /** Aborts the request (the loop's last resort at shutdown): nothing is recorded then. */
  readonly signal: AbortSignal
  /** The receiver answered, or the request failed: the endpoint's lane is free. */
  readonly onSent: () => void
  /** The outcome was recorded (or could not be: the lease then lapses and the attempt is made again). */
  readonly onRecorded: (exit: Exit.Exit<DeliveryStatus, SqlError.SqlError>) => void
}

/**
 * Opened endpoint secrets by their sealed text: a backlog to one endpoint opens its secret once, not once per
 * attempt (an AES-GCM decryption each). The sealed text changes with the secret and with the key, so an entry
 * is never stale; the memo is emptied when it grows past a bound.
 */
const memoisedSecrets = (box: SecretBoxShape) => {
  const opened = new Map<string, string>()
  return {
    /** The secret if it is already open. */
    known: (sealed: string) => opened.get(sealed),
    open: (sealed: string) =>
      Effect.suspend(() => {
        const known = opened.get(sealed)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.tap(box.open(sealed), (plain) =>
          Effect.sync(() => {
            if (opened.size >= 1000) opened.clear()
            opened.set(sealed, plain)
          }))
      })
  }
}

/**
 * Webhook deliveries (design §6.14, §7): one attempt at a time, made outside any transaction through
 * `SafeHttp` (URL policy at every attempt, pinned address, no redirects), signed at send time with the
 * endpoint's current secret (`Attempt.ts`), and recorded in `attempt_log` in batches (`DeliveryRecorder.ts`);
 * claims and leases through the one job queue; plus the history (endpoint 15), redelivery (endpoint 16) and the
 * test ping (endpoint 14). Every statement is `DeliveryStore`'s.
 */
export class Deliveries extends Effect.Service<Deliveries>()("webhooks/Deliveries", {
  dependencies: [ReservationRepo.Default, DeliveryStore.Default, Outbox.Default],
  scoped: Effect.gen(function*() {
    const { store, outbox, http, reservations } = yield* Effect.all({
      store: DeliveryStore, outbox: Outbox, http: SafeHttp, reservations: ReservationRepo
    })
    const secrets = memoisedSecrets(yield* SecretBox)
    const queue = yield* JobQueue.make({ kind: "webhook delivery", table: "webhook_deliveries", lease: DELIVERY_LEASE })
    const record = yield* DeliveryRecorder.make(store.write, queue.settled)
    // Runs what `deliver` needs of Effect from its promise (opening a secret not yet memoised).
    const runtime = yield* Effect.runtime<never>()

    /**
     * The one path of an attempt, `attempt`'s and `deliver`'s, as a plain promise: the signed request (its
     * `http.client` span a child of `span` when traced), its outcome handed to the recorder. Settles with what
     * was sent once the receiver answered (`onSent` has run); `onRecorded` follows when the recorder wrote it.
     * Rejects on a defect (a secret no key opens) or when `signal` aborted the request: nothing is recorded then.
     */
    const sendThenRecord = async (
      job: ClaimedDelivery,
      span: Tracer.AnySpan | undefined,
      hooks: DeliverHooks
    ): Promise<Sent> => {
      const { clock, trace } = hooks
      const started = clock.unsafeCurrentTimeMillis()
      const attemptedAt = new Date(started)
      let sent: Sent
      if (!job.is_active) sent = inactive(attemptedAt)
      else {
        const secret = secrets.known(job.secret) ??
          await Runtime.runPromise(runtime)(Effect.orDie(secrets.open(job.secret)))
        const result = await http.send(deliveryRequest(job, secret, started), {
          ...sendLimits,
          signal: hooks.signal,
          ...(span === undefined || trace === undefined ? {} : { trace: { ...trace, parent: span } })
        })
        sent = sentOf(result, attemptedAt, Math.max(0, clock.unsafeCurrentTimeMillis() - started))
      }
      hooks.onSent()
      record({ job, sent, span: Option.fromNullable(span), done: hooks.onRecorded })
      return sent
    }

    /**
     * One attempt of a claimed delivery in its own span (a child of the change that queued the event), recorded;
     * the lease is released. Endpoint 14's ping and the tests' rounds; the delivery loop uses `deliver`.
     */
    const attempt = (job: ClaimedDelivery) =>
      Effect.gen(function*() {
        // A secret no configured key opens is a configuration fault (a wrong SECRETS_KEY): loud, not a failed
        // attempt. Opened here, it is memoised for the shared path.
        if (job.is_active) yield* Effect.orDie(secrets.open(job.secret))
        const span = yield* Effect.orDie(Effect.currentSpan)
        const clock = yield* Effect.clock
        const redactedNames = yield* FiberRef.get(Headers.currentRedactedNames)
        const trace = { tracer: yield* Effect.tracer, clock, redactedNames }
        const recorded = yield* Deferred.make<DeliveryStatus, SqlError.SqlError>()
        const sent = yield* Effect.promise((signal) =>
          sendThenRecord(job, span, {
            clock,
            trace,
            signal,
            onSent: () => {},
            onRecorded: (exit) => Deferred.unsafeDone(recorded, exit)
          })
        )
        return outcomeOf(sent, yield* Deferred.await(recorded))
      }).pipe(Effect.withSpan("Deliveries.attempt", {
        attributes: { "webhook.event": job.event_type, "webhook.delivery_id": job.id },
        ...TraceContext.parentOf(job.trace_parent)
      }))

    /**
     * The delivery loop's attempt, without a fiber of its own (docs/performance.md, "Deliveries without a fiber
     * each"): `attempt`'s path, its span made here when spans are exported and ended once the outcome is recorded.
     * Settles once the receiver answered; rejects as `sendThenRecord` does, and the lease then lapses.
     */
    const deliver = async (job: ClaimedDelivery, hooks: DeliverHooks): Promise<void> => {
      const { clock, trace } = hooks
      const span = trace?.tracer.span(
        "Deliveries.attempt",
        TraceContext.parse(job.trace_parent),
        Context.empty(),
        [],
        clock.unsafeCurrentTimeNanos(),
        "internal"
      )
      span?.attribute("webhook.event", job.event_type)
      span?.attribute("webhook.delivery_id", job.id)
      try {
        await sendThenRecord(job, span, {
          ...hooks,
          onRecorded: (exit) => {
            span?.end(clock.unsafeCurrentTimeNanos(), exit)
            hooks.onRecorded(exit)
          }
        })
      } catch (cause) {
        span?.end(clock.unsafeCurrentTimeNanos(), Exit.die(cause))
        throw cause
      }
    }

    /**
     * Claims up to `limit` due deliveries under a lease (`DeliveryStore.claim`: oldest due first, at most
     * `perEndpoint` per endpoint less what `busy` says this instance already has in flight to it).
     */
    const claim = (
      limit: number,
      options?: { readonly perEndpoint?: number; readonly busy?: ReadonlyMap<string, number> }
    ) => queue.claim((lease) => store.claim(lease, limit, options?.perEndpoint ?? limit, options?.busy ?? new Map()))

    /**
     * Extends the lease of a claimed delivery that waited for a lane of its endpoint, so that it outlives the attempt
     * (design §7); a row no longer leased under its claim's lease (redelivered meanwhile) is left as it is.
     */
    const renew = (job: ClaimedDelivery) => Effect.asVoid(queue.renew([job.id], { heldUntil: job.lease_until }))

    /** Claims up to `limit` due deliveries and attempts them concurrently; answers how many were claimed. */
    const runDue = (limit: number) =>
      Effect.gen(function*() {
        const jobs = yield* claim(limit)
        yield* Effect.forEach(jobs, attempt, { concurrency: "unbounded", discard: true })
        return jobs.length
      })

    /** Endpoint 15: most recent first, deliveries of deactivated endpoints included (design §6.14). */
    const list = (key: AuthenticatedKey, query: DeliveriesQuery) =>
      Effect.gen(function*() {
        const reservation = query.external_id === undefined
          ? Option.none()
          : yield* reservations.idByExternalId({ ...key, externalId: query.external_id })
        // An unknown external_id has no deliveries.
        if (query.external_id !== undefined && Option.isNone(reservation)) return { deliveries: [] }
        return { deliveries: yield* store.list(key, query, reservation) }
      }).pipe(Effect.orDie)

    const deliveryNotFound = (id: string) =>
      new DeliveryNotFound({ message: `No delivery ${id} for this key.`, details: { id } })

    /** Endpoint 16: the same row, pending again with a fresh retry cycle; `attempt_log` keeps the history. */
    const redeliver = (key: AuthenticatedKey, id: string) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* deliveryNotFound(id)
        const at = DateTime.toDateUtc(yield* DateTime.now)
        return yield* Effect.gen(function*() {
          const found = yield* store.lockDelivery(key, id)
          if (Option.isNone(found)) return yield* deliveryNotFound(id)
          if (!found.value.is_active) return yield* webhookNotFound(found.value.endpoint_id)
          const row = yield* store.redeliver(id, at)
          return { ok: true, id: row.id, event_id: row.event_id, status: "pending" as const }
        }).pipe(store.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * Endpoint 14: a signed `ping` sent at once to that endpoint, whatever it subscribes to, attempted once and
     * recorded in the history like any delivery (design §6.14). `Outbox.ping` writes it leased to this request
     * (a claim of the job queue), so no delivery loop sends it too; if this process dies before recording, the
     * lease ends and a loop sends it.
     */
    const ping = (key: AuthenticatedKey, endpointId: string) =>
      Effect.gen(function*() {
        if (!isUuid(endpointId)) return yield* webhookNotFound(endpointId)
        const [job] = yield* queue.claim((lease) => Effect.map(outbox.ping(key, endpointId, lease), Option.toArray))
        if (job === undefined) return yield* webhookNotFound(endpointId)
        const outcome = yield* attempt(job)
        return {
          event_id: job.event_id,
          delivered: outcome.delivered,
          http_status: outcome.httpStatus,
          duration_ms: outcome.durationMs,
          error: outcome.error ?? ""
        }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /** When the next delivery falls due (`DeliveryStore.nextDueAt`), if any. */
    const nextDueAt = Effect.flatMap(DateTime.now, (now) => store.nextDueAt(DateTime.toDateUtc(now)))

    /**
     * The environment of an account's delivery, for an entrance that names it by id alone (the panel's redeliver);
     * None when it is not the account's. (An endpoint's is `DeliveryStore.activeEndpointOf`'s.)
     */
    const environmentOf = (accountId: string, deliveryId: string) =>
      isUuid(deliveryId) ? Effect.orDie(store.environmentOf(accountId, deliveryId)) : Effect.succeed(Option.none<Environment>())

    /** Per active endpoint of an (account, environment): deliveries delivered and failed since `since`. */
    const outcomesSince = (accountId: string, environment: Environment, since: Date) =>
      Effect.orDie(store.outcomesSince(accountId, environment, since))

    return { claim, attempt, deliver, renew, runDue, list, redeliver, ping, nextDueAt, environmentOf, outcomesSince } as const
  })
}) {}
