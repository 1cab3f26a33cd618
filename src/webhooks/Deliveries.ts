import { HttpClientRequest } from "@effect/platform"
import { SqlClient, type SqlError } from "@effect/sql"
import { Chunk, Clock, Context, DateTime, Deferred, Duration, Effect, Either, Exit, Metric, Option, Queue, Runtime, type Tracer } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { JobLeases } from "../jobs/JobLeases.ts"
import type { Environment } from "../shared/Environment.ts"
import { type OutboundFailed, type PlainRequest, type PlainTrace, SafeHttp, type SafeResponse, type UnsafeUrl } from "../net/SafeHttp.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { ReservationRepo } from "../reservations/ReservationRepo.ts"
import { DeliveryNotFound } from "../shared/errors.ts"
import * as Metrics from "../shared/Metrics.ts"
import { newEventId, pingBody } from "./Event.ts"
import { DELIVERY_TIMEOUT, nextRetry, PING_MAX_ATTEMPTS, retryAfter } from "./RetryPolicy.ts"
import { bodyFor, deliveryHeaders } from "./Signature.ts"
import type { AttemptLogEntry, DeliveriesQuery, Delivery, DeliveryStatus } from "./Webhook.ts"
import { Limits } from "./Webhook.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { isUuid } from "../shared/Uuid.ts"
import { webhookNotFound } from "./WebhookEndpoints.ts"

/**
 * A claim outlives the longest attempt (the 10 s delivery timeout) with a margin; a worker that dies mid-call
 * leaves its rows to be taken over when the lease ends (design §7).
 */
export const DELIVERY_LEASE = Duration.sum(DELIVERY_TIMEOUT, Duration.seconds(5))

/** The receiver's answer is read only up to this size: its status is what counts. */
const MAX_ANSWER_BYTES = 1024 * 1024

/**
 * Outcomes recorded by one statement at most (the recorder takes whatever is waiting, up to this): a batch is
 * one transaction, one WAL flush, instead of one per attempt (docs/performance.md, "Batched deliveries").
 */
const RECORD_BATCH = 1000

/** One attempt's outcome as the recorder writes it (JSON: one statement records a whole batch). */
interface RecordRow {
  readonly id: string
  readonly http_status: number | null
  readonly error: string | null
  readonly entry: AttemptLogEntry
  readonly delivered: boolean
  readonly status: DeliveryStatus
  readonly attempted_at: string
  readonly next_attempt_at: string | null
}

interface PendingRecord {
  readonly job: ClaimedDelivery
  readonly sent: Sent
  /** The attempt's span: the batch's statement is traced under the first one's. */
  readonly span: Option.Option<Tracer.AnySpan>
  /** Called once the outcome is recorded (with the status written) or could not be. */
  readonly done: (exit: Exit.Exit<DeliveryStatus, SqlError.SqlError>) => void
}

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

/** What one request to the receiver gave. */
interface Sent {
  readonly attemptedAt: Date
  readonly httpStatus: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly retryAfter: string | undefined
}

/** What an attempt needs, read in the same statement that claims it. */
export interface ClaimedDelivery {
  readonly id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  readonly cycle_attempts: number
  readonly max_attempts: number
  readonly url: string
  /** As stored: sealed (`SecretBox`); opened only to sign the attempt. */
  readonly secret: string
  readonly include_guests: boolean
  readonly is_active: boolean
  readonly body: string
  /** The `traceparent` of the change that queued the event (design §9): the attempt continues its trace. */
  readonly trace_parent: string | null
  /** The lease this claim holds it under. */
  readonly lease_until: Date
}

/** The outcome of one attempt, as recorded and as endpoint 14 answers it. */
export interface AttemptOutcome {
  readonly delivered: boolean
  readonly httpStatus: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly status: DeliveryStatus
}

interface DeliveryRow {
  readonly id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly last_http_status: number | null
  readonly last_error: string | null
  readonly next_attempt_at: Date | null
  readonly delivered_at: Date | null
  readonly created_at: Date
  readonly attempt_log: ReadonlyArray<AttemptLogEntry>
}

const deliveryView = (row: DeliveryRow): Delivery => ({
  id: row.id,
  endpoint_id: row.endpoint_id,
  event_id: row.event_id,
  event: row.event_type,
  status: row.status,
  attempts: row.attempts,
  last_http_status: row.last_http_status,
  last_error: row.last_error,
  next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
  delivered_at: row.delivered_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
  attempt_log: row.attempt_log
})

/** The claim and the data of the attempt in one round trip (a CTE over `FOR UPDATE SKIP LOCKED`). */
const CLAIMED_COLUMNS = `c.id, c.endpoint_id, c.lease_until, c.event_id, c.event_type, c.cycle_attempts, c.max_attempts,
  e.url, e.secret, e.include_guests, e.is_active, ev.body::text AS body, ev.trace_parent`

/**
 * Webhook deliveries (design §6.14, §7): one attempt at a time, made outside any transaction through
 * `SafeHttp` (URL policy at every attempt, pinned address, no redirects), signed at send time with the
 * endpoint's current secret, and recorded in `attempt_log`; plus the history (endpoint 15), redelivery
 * (endpoint 16) and the test ping (endpoint 14).
 */
export class Deliveries extends Effect.Service<Deliveries>()("webhooks/Deliveries", {
  dependencies: [ReservationRepo.Default],
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const http = yield* SafeHttp
    const reservations = yield* ReservationRepo
    const leases = yield* (yield* JobLeases).register("webhook delivery", (ids, until) =>
      sql<{ id: string }>`
        UPDATE webhook_deliveries SET lease_until = NULL
        WHERE id IN ${sql.in(ids)} AND lease_until = ${until} RETURNING id`
        .pipe(Effect.map((rows) => rows.length), Effect.orDie))
    const box = yield* SecretBox
    // Runs what `deliver` needs of Effect from its promise (opening a secret not yet memoised).
    const runtime = yield* Effect.runtime<never>()

    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)

    // The counter per outcome, tagged once: a tagged metric made per attempt is hashed and compared at every
    // increment (measurable in a backlog's profile).
    const attemptsBy = {
      endpoint_inactive: Metric.tagged(Metrics.webhookAttempts, "outcome", "endpoint_inactive"),
      delivered: Metric.tagged(Metrics.webhookAttempts, "outcome", "delivered"),
      network_error: Metric.tagged(Metrics.webhookAttempts, "outcome", "network_error"),
      http_error: Metric.tagged(Metrics.webhookAttempts, "outcome", "http_error")
    }

    /**
     * Opened endpoint secrets by their sealed text: a backlog to one endpoint opens its secret once, not once per
     * attempt (an AES-GCM decryption each). The sealed text changes with the secret and with the key, so an entry
     * is never stale; the memo is emptied when it grows past a bound.
     */
    const opened = new Map<string, string>()
    const openSecret = (sealed: string) =>
      Effect.suspend(() => {
        const known = opened.get(sealed)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.tap(box.open(sealed), (plain) =>
          Effect.sync(() => {
            if (opened.size >= 1000) opened.clear()
            opened.set(sealed, plain)
          }))
      })

    /**
     * Design §6.14 "Order": a delivery `d` is not attempted while an older delivery of the same reservation to
     * the same endpoint still waits for its first attempt (of its cycle) or is in flight. Once that one waits
     * for a retry, later ones go on. Deliveries of no reservation (pings) are never held.
     */
    const inOrder = (at: Date) =>
      sql`NOT EXISTS (
        SELECT 1 FROM webhook_deliveries o
        WHERE o.endpoint_id = d.endpoint_id AND o.reservation_id = d.reservation_id AND o.event_seq < d.event_seq
          AND o.status = 'pending' AND (o.cycle_attempts = 0 OR o.lease_until > ${at}))`

    /**
     * Claims up to `limit` due deliveries under a lease, oldest due first, at most `perEndpoint` per endpoint less
     * what `busy` says this instance already has in flight to it: one slow receiver holds at most its own share
     * (design §7). The endpoints with pending rows are found by a loose scan of the (endpoint, due time) index,
     * then each with room gives its oldest due rows through the same index. The per-endpoint limit is a constant
     * (the room is applied above it): with an expression there, the planner's estimate crossed `jit_above_cost`
     * and JIT compilation made every claim take ~150 ms.
     */
    const claim = (
      limit: number,
      options?: { readonly perEndpoint?: number; readonly busy?: ReadonlyMap<string, number> }
    ) =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        const at = DateTime.toDateUtc(now)
        const leaseUntil = DateTime.toDateUtc(DateTime.addDuration(now, DELIVERY_LEASE))
        const perEndpoint = options?.perEndpoint ?? limit
        const busy = JSON.stringify(Object.fromEntries(options?.busy ?? []))
        return yield* leases.claimed(sql<ClaimedDelivery>`
          WITH RECURSIVE endpoints AS (
            (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
            UNION ALL
            SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                    WHERE d.status = 'pending' AND d.endpoint_id > endpoints.endpoint_id
                    ORDER BY d.endpoint_id LIMIT 1)
            FROM endpoints WHERE endpoints.endpoint_id IS NOT NULL),
          rooms AS (
            SELECT endpoint_id, ${perEndpoint} - COALESCE((${busy}::jsonb ->> endpoint_id::text)::int, 0) AS room
            FROM endpoints),
          c AS (
            UPDATE webhook_deliveries SET lease_until = ${leaseUntil}
            WHERE id IN (
              SELECT x.id FROM rooms e CROSS JOIN LATERAL (
                SELECT y.id, y.next_attempt_at, row_number() OVER (ORDER BY y.next_attempt_at) AS n FROM (
                  SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
                  WHERE d.endpoint_id = e.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= ${at}
                    AND (d.lease_until IS NULL OR d.lease_until <= ${at}) AND ${inOrder(at)}
                  ORDER BY d.next_attempt_at
                  LIMIT ${perEndpoint}
                  FOR UPDATE OF d SKIP LOCKED) y) x
              WHERE e.endpoint_id IS NOT NULL AND e.room > 0 AND x.n <= e.room
              ORDER BY x.next_attempt_at
              LIMIT ${limit})
            RETURNING id, endpoint_id, lease_until, event_seq, event_id, event_type, cycle_attempts, max_attempts)
          SELECT ${sql.literal(CLAIMED_COLUMNS)}
          FROM c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN events ev ON ev.seq = c.event_seq`,
          leaseUntil,
          (job) => job.id
        )
      })

    /** The signed request of one attempt at `job`, sent at `nowMillis`. */
    const deliveryRequest = (job: ClaimedDelivery, secret: string, nowMillis: number): PlainRequest => {
      const body = bodyFor(job.body, job.include_guests)
      return {
        method: "POST",
        url: job.url,
        headers: deliveryHeaders({
          secret,
          eventId: job.event_id,
          eventType: job.event_type,
          timestamp: Math.floor(nowMillis / 1000),
          body
        }),
        body
      }
    }

    /** What the receiver's answer (or the failure) means for the attempt. */
    const sentOf = (
      result: Either.Either<SafeResponse, UnsafeUrl | OutboundFailed>,
      attemptedAt: Date,
      durationMs: number
    ): Sent =>
      Either.match(result, {
        onLeft: (error) => ({ attemptedAt, httpStatus: null, durationMs, error: error.message, retryAfter: undefined }),
        onRight: (response) => ({
          attemptedAt,
          httpStatus: response.status,
          durationMs,
          error: response.status >= 200 && response.status < 300
            ? null
            : response.status >= 300 && response.status < 400
            ? `HTTP ${response.status}: redirects are not followed`
            : `HTTP ${response.status}`,
          retryAfter: response.headers["retry-after"]
        })
      })

    const inactive = (attemptedAt: Date): Sent => ({
      attemptedAt,
      httpStatus: null,
      durationMs: 0,
      error: "the webhook endpoint was deactivated",
      retryAfter: undefined
    })

    const sendOptions = { timeout: DELIVERY_TIMEOUT, maxBodyBytes: MAX_ANSWER_BYTES } as const

    /** Sends one claimed delivery (in the current span) and answers what happened; records nothing. */
    const send = (job: ClaimedDelivery): Effect.Effect<Sent> =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        if (!job.is_active) return inactive(new Date(started))
        // A secret no configured key opens is a configuration fault (a wrong SECRETS_KEY): loud, not a failed attempt.
        const secret = yield* Effect.orDie(openSecret(job.secret))
        const plain = deliveryRequest(job, secret, started)
        const request = HttpClientRequest.post(plain.url).pipe(
          HttpClientRequest.bodyText(plain.body!, "application/json"),
          HttpClientRequest.setHeaders(plain.headers)
        )
        const result = yield* Effect.either(http.execute(request, sendOptions))
        return sentOf(result, new Date(started), Math.max(0, (yield* Clock.currentTimeMillis) - started))
      })

    /**
     * Records a batch of attempts with one statement (each row as the per-attempt `UPDATE` did it). The attempt
     * is always logged; its status wins unless the row moved on meanwhile (deactivated or redelivered): a
     * success is a success whatever happened, a failure only updates a pending row.
     */
    const write = (rows: ReadonlyArray<RecordRow>) =>
      sql`
        UPDATE webhook_deliveries d SET
          attempts = d.attempts + 1,
          cycle_attempts = d.cycle_attempts + 1,
          last_http_status = u.http_status,
          last_error = u.error,
          attempt_log = d.attempt_log || jsonb_build_array(u.entry),
          lease_until = NULL,
          status = CASE WHEN u.delivered THEN 'delivered' WHEN d.status = 'pending' THEN u.status ELSE d.status END,
          delivered_at = CASE WHEN u.delivered THEN u.attempted_at ELSE d.delivered_at END,
          next_attempt_at = CASE WHEN u.delivered OR d.status = 'pending' THEN u.next_attempt_at
            ELSE d.next_attempt_at END
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS u(id uuid, http_status int, error text,
          entry jsonb, delivered boolean, status text, attempted_at timestamptz, next_attempt_at timestamptz)
        WHERE d.id = u.id`

    /** The outcome's counter. */
    const counterOf = (record: PendingRecord) =>
      !record.job.is_active
        ? attemptsBy.endpoint_inactive
        : record.sent.error === null
        ? attemptsBy.delivered
        : record.sent.httpStatus === null
        ? attemptsBy.network_error
        : attemptsBy.http_error

    /** The row an attempt's outcome writes: its status, and when a failed one is tried again. */
    const rowOf = ({ job, sent }: PendingRecord) =>
      Effect.gen(function*() {
        const delivered = sent.error === null
        const retry = delivered || !job.is_active
          ? Option.none()
          : yield* nextRetry(job.cycle_attempts + 1, job.max_attempts, retryAfter(sent.retryAfter, sent.attemptedAt))
        const status: DeliveryStatus = delivered ? "delivered" : Option.isSome(retry) ? "pending" : "failed"
        const entry: AttemptLogEntry = {
          attempted_at: sent.attemptedAt.toISOString(),
          http_status: sent.httpStatus,
          duration_ms: sent.durationMs,
          error: sent.error
        }
        return {
          id: job.id,
          http_status: sent.httpStatus,
          error: sent.error,
          entry,
          delivered,
          status,
          attempted_at: entry.attempted_at,
          next_attempt_at: Option.match(retry, {
            onNone: () => null,
            onSome: (delay) => new Date(sent.attemptedAt.getTime() + Duration.toMillis(delay)).toISOString()
          })
        } satisfies RecordRow
      })

    /**
     * The recorder: one fiber takes every outcome waiting and writes them together, so a backlog is recorded in
     * batches while a lone attempt is written at once; the recorded rows' leases are settled. A row attempted
     * twice in one batch (redelivered while its first attempt was in flight) is written by a second statement:
     * one `UPDATE … FROM` changes a row once. The statement runs in the first attempt's trace.
     */
    const pending = yield* Queue.unbounded<PendingRecord>()
    const recordBatch = (batch: ReadonlyArray<PendingRecord>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const seen = new Set<string>()
        const now: Array<PendingRecord> = []
        const later: Array<PendingRecord> = []
        for (const record of batch) {
          if (seen.has(record.job.id)) later.push(record)
          else {
            seen.add(record.job.id)
            now.push(record)
          }
        }
        const rows = yield* Effect.forEach(now, rowOf)
        const counts = new Map<Metric.Metric.Counter<number>, number>()
        for (const record of now) counts.set(counterOf(record), (counts.get(counterOf(record)) ?? 0) + 1)
        for (const [counter, n] of counts) yield* Metric.incrementBy(counter, n)
        const first = now[0]!.span
        const statement = write(rows)
        const exit = yield* Effect.exit(Option.isSome(first) ? Effect.withParentSpan(statement, first.value) : statement)
        if (Exit.isSuccess(exit)) yield* leases.settled(rows.map((row) => row.id))
        else yield* Effect.logError("webhook delivery outcomes not recorded; their leases lapse", exit.cause)
        rows.forEach((row, index) => now[index]!.done(Exit.as(exit, row.status)))
        if (later.length > 0) yield* recordBatch(later)
      })
    yield* Queue.takeBetween(pending, 1, RECORD_BATCH).pipe(
      // Once taken, a batch is written and answered whatever happens: its attempts wait for it.
      Effect.flatMap((batch) => Effect.uninterruptible(recordBatch(Chunk.toReadonlyArray(batch)))),
      Effect.forever,
      Effect.forkScoped
    )

    /**
     * One attempt of a claimed delivery in its own span (a child of the change that queued the event), recorded;
     * the lease is released. Endpoint 14's ping and the tests' rounds; the delivery loop uses `deliver`.
     */
    const attempt = (job: ClaimedDelivery) =>
      Effect.gen(function*() {
        const sent = yield* send(job)
        const recorded = yield* Deferred.make<DeliveryStatus, SqlError.SqlError>()
        yield* pending.offer({
          job,
          sent,
          span: yield* Effect.option(Effect.currentSpan),
          done: (exit) => Deferred.unsafeDone(recorded, exit)
        })
        const status = yield* Deferred.await(recorded)
        const delivered = sent.error === null
        return { delivered, httpStatus: sent.httpStatus, durationMs: sent.durationMs, error: sent.error, status }
      }).pipe(Effect.withSpan("Deliveries.attempt", {
        attributes: { "webhook.event": job.event_type, "webhook.delivery_id": job.id },
        ...TraceContext.parentOf(job.trace_parent)
      }))

    /**
     * The delivery loop's attempt, without a fiber of its own (docs/performance.md, "Deliveries without a fiber
     * each"): the same request, outcome and record as `attempt`, as a plain promise that settles once the receiver
     * answered (`onSent` has run); `onRecorded` follows when the recorder wrote it. Rejects on a defect (a secret
     * no key opens) or when `signal` aborted the request: nothing is recorded then, and the lease lapses.
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
      const started = clock.unsafeCurrentTimeMillis()
      const attemptedAt = new Date(started)
      let sent: Sent
      try {
        if (!job.is_active) sent = inactive(attemptedAt)
        else {
          const secret = opened.get(job.secret) ?? await Runtime.runPromise(runtime)(Effect.orDie(openSecret(job.secret)))
          const result = await http.send(deliveryRequest(job, secret, started), {
            ...sendOptions,
            signal: hooks.signal,
            ...(span === undefined ? {} : { trace: { ...trace!, parent: span } })
          })
          sent = sentOf(result, attemptedAt, Math.max(0, clock.unsafeCurrentTimeMillis() - started))
        }
      } catch (cause) {
        span?.end(clock.unsafeCurrentTimeNanos(), Exit.die(cause))
        throw cause
      }
      hooks.onSent()
      pending.unsafeOffer({
        job,
        sent,
        span: Option.fromNullable(span),
        done: (exit) => {
          span?.end(clock.unsafeCurrentTimeNanos(), exit)
          hooks.onRecorded(exit)
        }
      })
    }

    /**
     * Extends the lease of a claimed delivery that waited for a lane of its endpoint, so that it outlives the attempt
     * (design §7); a row no longer leased under `until` (redelivered meanwhile) is left as it is.
     */
    const renew = (job: ClaimedDelivery) =>
      Effect.gen(function*() {
        const leaseUntil = DateTime.toDateUtc(DateTime.addDuration(yield* DateTime.now, DELIVERY_LEASE))
        const rows = yield* sql<{ id: string }>`
          UPDATE webhook_deliveries SET lease_until = ${leaseUntil}
          WHERE id = ${job.id} AND lease_until = ${job.lease_until} RETURNING id`
        if (rows.length > 0) yield* leases.held([job.id], leaseUntil)
      })

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
        const filters = [
          sql`d.account_id = ${key.accountId}`,
          sql`d.environment = ${key.environment}`,
          ...(query.status === undefined ? [] : [sql`d.status = ${query.status}`]),
          ...(query.event === undefined ? [] : [sql`d.event_type = ${query.event}`]),
          ...Option.match(reservation, { onNone: () => [], onSome: (id) => [sql`ev.reservation_id = ${id}`] })
        ]
        const rows = yield* sql<DeliveryRow>`
          SELECT d.id, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempts, d.last_http_status, d.last_error,
            d.next_attempt_at, d.delivered_at, d.created_at, d.attempt_log
          FROM webhook_deliveries d
          ${Option.isNone(reservation) ? sql`` : sql`JOIN events ev ON ev.seq = d.event_seq`}
          WHERE ${sql.and(filters)}
          ORDER BY d.seq DESC
          LIMIT ${query.limit ?? Limits.deliveriesDefault}`
        return { deliveries: rows.map(deliveryView) }
      }).pipe(Effect.orDie)

    const deliveryNotFound = (id: string) =>
      new DeliveryNotFound({ message: `No delivery ${id} for this key.`, details: { id } })

    /** Endpoint 16: the same row, pending again with a fresh retry cycle; `attempt_log` keeps the history. */
    const redeliver = (key: AuthenticatedKey, id: string) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* deliveryNotFound(id)
        const at = yield* nowDate
        return yield* Effect.gen(function*() {
          const [found] = yield* sql<{ endpoint_id: string; is_active: boolean }>`
            SELECT d.endpoint_id, e.is_active FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE d.id = ${id} AND d.account_id = ${key.accountId} AND d.environment = ${key.environment}
            FOR UPDATE OF d`
          if (found === undefined) return yield* deliveryNotFound(id)
          if (!found.is_active) return yield* webhookNotFound(found.endpoint_id)
          const [row] = yield* sql<{ id: string; event_id: string }>`
            UPDATE webhook_deliveries
            SET status = 'pending', cycle_attempts = 0, next_attempt_at = ${at}, delivered_at = NULL, lease_until = NULL
            WHERE id = ${id}
            RETURNING id, event_id`
          // Wake the delivery loops at commit, as a new delivery does (the insert trigger covers only inserts).
          yield* sql`SELECT pg_notify('webhook_deliveries', '1')`
          return { ok: true, id: row!.id, event_id: row!.event_id, status: "pending" as const }
        }).pipe(sql.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * Endpoint 14: a signed `ping` sent at once to that endpoint, whatever it subscribes to, attempted once and
     * recorded in the history like any delivery (design §6.14). The row is created leased to this request, so
     * no delivery loop sends it too; if this process dies before recording, the lease ends and a loop sends it.
     */
    const ping = (key: AuthenticatedKey, endpointId: string) =>
      Effect.gen(function*() {
        if (!isUuid(endpointId)) return yield* webhookNotFound(endpointId)
        const now = yield* DateTime.now
        const at = DateTime.toDateUtc(now)
        const leaseUntil = DateTime.toDateUtc(DateTime.addDuration(now, DELIVERY_LEASE))
        const eventId = newEventId()
        const body = JSON.stringify(
          pingBody({ id: eventId, createdAt: at, sandbox: key.environment === "test", endpointId })
        )
        const job = yield* Effect.gen(function*() {
          const [endpoint] = yield* sql<{ url: string; secret: string; include_guests: boolean }>`
            SELECT url, secret, include_guests FROM webhook_endpoints
            WHERE id = ${endpointId} AND account_id = ${key.accountId} AND environment = ${key.environment} AND is_active`
          if (endpoint === undefined) return yield* webhookNotFound(endpointId)
          const [event] = yield* sql<{ seq: string }>`
            INSERT INTO events (id, account_id, environment, reservation_id, type, created_at, body)
            VALUES (${eventId}, ${key.accountId}, ${key.environment}, NULL, 'ping', ${at}, ${body})
            RETURNING seq`
          const [delivery] = yield* sql<{ id: string }>`
            INSERT INTO webhook_deliveries ${
            sql.insert({
              endpoint_id: endpointId,
              event_seq: event!.seq,
              event_id: eventId,
              event_type: "ping",
              account_id: key.accountId,
              environment: key.environment,
              status: "pending",
              max_attempts: PING_MAX_ATTEMPTS,
              next_attempt_at: at,
              lease_until: leaseUntil,
              created_at: at
            })
          } RETURNING id`
          return {
            id: delivery!.id,
            endpoint_id: endpointId,
            event_id: eventId,
            event_type: "ping",
            cycle_attempts: 0,
            max_attempts: PING_MAX_ATTEMPTS,
            url: endpoint.url,
            secret: endpoint.secret,
            include_guests: endpoint.include_guests,
            is_active: true,
            body,
            // Attempted right here, inside the request's own span.
            trace_parent: null,
            lease_until: leaseUntil
          } satisfies ClaimedDelivery
        }).pipe(sql.withTransaction)
        yield* leases.held([job.id], leaseUntil)
        const outcome = yield* attempt(job)
        return {
          event_id: eventId,
          delivered: outcome.delivered,
          http_status: outcome.httpStatus,
          duration_ms: outcome.durationMs,
          error: outcome.error ?? ""
        }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /** When the next pending delivery becomes due (or its lease ends), if any. */
    /**
     * When the next delivery falls due. One that waits behind an older delivery of its reservation is left out:
     * it falls due when that one is attempted, which the older one's own time (or its lease) already says.
     */
    const nextDueAt = Effect.flatMap(nowDate, (at) =>
      sql<{ at: Date | null }>`
        SELECT min(GREATEST(d.next_attempt_at, COALESCE(d.lease_until, d.next_attempt_at))) AS at
        FROM webhook_deliveries d WHERE d.status = 'pending' AND ${inOrder(at)}`).pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]?.at))
      )

    /**
     * The environment of an account's delivery or active endpoint, for entrances that name them by id alone
     * (the panel's redeliver and test ping); None when it is not the account's.
     */
    const environmentOf = (accountId: string, what: { readonly delivery: string } | { readonly endpoint: string }) =>
      Effect.gen(function*() {
        const id = "delivery" in what ? what.delivery : what.endpoint
        if (!isUuid(id)) return Option.none<Environment>()
        const rows = "delivery" in what
          ? yield* sql<{ environment: Environment }>`
              SELECT environment FROM webhook_deliveries WHERE id = ${id} AND account_id = ${accountId}`
          : yield* sql<{ environment: Environment }>`
              SELECT environment FROM webhook_endpoints WHERE id = ${id} AND account_id = ${accountId} AND is_active`
        return Option.map(Option.fromNullable(rows[0]), (row) => row.environment)
      }).pipe(Effect.orDie)

    /** Per active endpoint of an (account, environment): deliveries delivered and failed since `since`. */
    const outcomesSince = (accountId: string, environment: Environment, since: Date) =>
      Effect.map(
        sql<{ endpoint_id: string; delivered: number; failed: number }>`
          SELECT endpoint_id, count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
                 count(*) FILTER (WHERE status = 'failed')::int AS failed
          FROM webhook_deliveries
          WHERE account_id = ${accountId} AND environment = ${environment} AND created_at >= ${since}
          GROUP BY endpoint_id`,
        (rows) => new Map(rows.map((row) => [row.endpoint_id, { delivered: row.delivered, failed: row.failed }]))
      ).pipe(Effect.orDie)

    return { claim, attempt, deliver, renew, runDue, list, redeliver, ping, nextDueAt, environmentOf, outcomesSince } as const
  })
}) {}

