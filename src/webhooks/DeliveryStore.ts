import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { query } from "../db/Database.ts"
import type { Lease } from "../jobs/JobQueue.ts"
import type { Environment } from "../shared/Environment.ts"
import type { DeliveriesQuery, Delivery, DeliveryStatus, StoredAttempt } from "./Webhook.ts"
import { Limits } from "./Webhook.ts"

/**
 * The repository of `events` and `webhook_deliveries` (design §6.14, §7): every statement on them is here — the
 * outbox's writes (a change's events and deliveries, the test ping, the retention job's stripped bodies), the
 * delivery loop's claim and batched record, and what endpoints 15 and 16 and the panel read and change. What an
 * attempt sends and what its outcome means is `Attempt.ts`; when and how often is `Deliveries.ts`.
 */

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

/** One attempt's outcome as the batch record writes it (JSON: one statement records a whole batch). */
export interface OutcomeRow {
  readonly id: string
  readonly http_status: number | null
  readonly error: string | null
  readonly entry: StoredAttempt
  readonly delivered: boolean
  readonly status: DeliveryStatus
  readonly attempted_at: string
  readonly next_attempt_at: string | null
}

/** An event as the outbox writes it (a type, not an interface: `sql.insert` takes it as a record). */
export type EventRow = {
  readonly id: string
  readonly account_id: string
  readonly environment: Environment
  readonly reservation_id: string | null
  readonly type: string
  readonly created_at: Date
  readonly body: string
  readonly trace_parent?: string
}

/** The account, environment and endpoint a ping or a redelivery is for. */
interface Owner {
  readonly accountId: string
  readonly environment: Environment
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
  readonly attempt_log: ReadonlyArray<StoredAttempt>
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
  // Endpoint 15's fields only: the stored answer excerpt is the panel's (`StoredAttempt`).
  attempt_log: row.attempt_log.map(({ attempted_at, http_status, duration_ms, error }) => ({
    attempted_at,
    http_status,
    duration_ms,
    error
  }))
})

/** The panel's statuses of a delivery: `pending` split into waiting for its first attempt and `retrying` (design §8). */
export type PanelDeliveryStatus = "pending" | "retrying" | "delivered" | "failed"

/** How many deliveries are in each panel status. */
export interface DeliveryCounts {
  readonly pending: number
  readonly retrying: number
  readonly delivered: number
  readonly failed: number
}

/** The panel's filters of its delivery log. */
export interface PanelDeliveryFilters {
  readonly status?: PanelDeliveryStatus
  readonly event?: string
  readonly externalId?: string
  readonly endpointId?: string
}

interface PanelDeliveryRow extends DeliveryRow {
  readonly seq: string
  readonly cycle_attempts: number
  readonly endpoint_url: string
  readonly external_id: string | null
}

const PANEL_COLUMNS = `d.seq, d.id, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempts, d.cycle_attempts,
  d.last_http_status, d.last_error, d.next_attempt_at, d.delivered_at, d.created_at, d.attempt_log,
  e.url AS endpoint_url, r.external_id`

/** A delivery as the panel lists it: endpoint 15's fields, its panel status, endpoint URL and reservation. */
export interface PanelDelivery extends Delivery {
  /** Its place in the log, for the next page's cursor. */
  readonly seq: number
  readonly panel_status: PanelDeliveryStatus
  readonly endpoint_url: string
  readonly external_id: string | null
}

const panelDeliveryView = (row: PanelDeliveryRow): PanelDelivery => ({
  ...deliveryView(row),
  seq: Number(row.seq),
  panel_status: row.status === "pending" && row.cycle_attempts > 0 ? "retrying" : row.status,
  endpoint_url: row.endpoint_url,
  external_id: row.external_id
})

/**
 * Each panel status as a condition on a delivery row `d` (design §8): `retrying` is a pending delivery that was
 * tried at least once in its cycle. One table for the log's filter and its counts.
 */
const PANEL_STATUS_CONDITIONS: Record<PanelDeliveryStatus, string> = {
  pending: "d.status = 'pending' AND d.cycle_attempts = 0",
  retrying: "d.status = 'pending' AND d.cycle_attempts > 0",
  delivered: "d.status = 'delivered'",
  failed: "d.status = 'failed'"
}

/** The claim and the data of the attempt in one round trip (a CTE over `FOR UPDATE SKIP LOCKED`). */
const CLAIMED_COLUMNS = `c.id, c.endpoint_id, c.lease_until, c.event_id, c.event_type, c.cycle_attempts, c.max_attempts,
  e.url, e.secret, e.include_guests, e.is_active, ev.body::text AS body, ev.trace_parent`

/** The outbox's statements: a change's events with their deliveries, the test ping, the retention job's bodies. */
const outboxStatements = (sql: SqlClient.SqlClient) => {
  /** The `created_at` of a reservation's latest event, in the caller's transaction. */
  const latestEventAt = (reservationId: string) =>
    Effect.map(
      query(sql<{ created_at: Date }>`
        SELECT created_at FROM events WHERE reservation_id = ${reservationId} ORDER BY seq DESC LIMIT 1`),
      (rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.created_at)
    )

  /**
   * One statement writes the events, in order (seq follows `rows`), and one delivery per (event, active endpoint
   * of the account and environment subscribed to its type), due at `dueAt` — design §6.14, issue 4: deliveries
   * are created in the same transaction as their event, the caller's.
   */
  const insertEvents = (
    rows: ReadonlyArray<EventRow>,
    to: Owner & { readonly dueAt: Date; readonly maxAttempts: number }
  ) =>
    query(sql`
      WITH ev AS (INSERT INTO events ${sql.insert(rows)} RETURNING seq, id, type, reservation_id, created_at)
      INSERT INTO webhook_deliveries
        (endpoint_id, event_seq, event_id, event_type, reservation_id, account_id, environment, status,
         max_attempts, next_attempt_at, created_at)
      SELECT e.id, ev.seq, ev.id, ev.type, ev.reservation_id, e.account_id, e.environment, 'pending', ${to.maxAttempts},
        ${to.dueAt}, ev.created_at
      FROM ev JOIN webhook_endpoints e
        ON e.account_id = ${to.accountId} AND e.environment = ${to.environment} AND e.is_active
        AND (e.events ? '*' OR e.events ? ev.type)
      ORDER BY ev.seq, e.id`)

  /** The endpoint a test ping goes to, if it is the owner's and active. */
  const activeEndpoint = (owner: Owner, endpointId: string) =>
    Effect.map(
      sql<{ url: string; secret: string; include_guests: boolean }>`
        SELECT url, secret, include_guests FROM webhook_endpoints
        WHERE id = ${endpointId} AND account_id = ${owner.accountId} AND environment = ${owner.environment}
          AND is_active`,
      (rows) => Option.fromNullable(rows[0])
    )

  /** A ping event and its one delivery, to `endpointId` whatever it subscribes to, leased until `leaseUntil`. */
  const insertPing = (
    event: EventRow,
    delivery: { readonly endpointId: string; readonly maxAttempts: number; readonly leaseUntil: Date }
  ) =>
    Effect.map(
      sql<{ id: string }>`
        WITH ev AS (INSERT INTO events ${sql.insert(event)} RETURNING seq)
        INSERT INTO webhook_deliveries
          (endpoint_id, event_seq, event_id, event_type, account_id, environment, status, max_attempts,
           next_attempt_at, lease_until, created_at)
        VALUES (${delivery.endpointId}, (SELECT seq FROM ev), ${event.id}, ${event.type}, ${event.account_id},
          ${event.environment}, 'pending', ${delivery.maxAttempts}, ${event.created_at}, ${delivery.leaseUntil},
          ${event.created_at})
        RETURNING id`,
      (rows) => rows[0]!.id
    )

  /** The stored bodies of these reservations' events, locked for the retention job's rewrite. */
  const lockEventBodies = (reservationIds: ReadonlyArray<string>) =>
    sql<{ seq: string; body: string }>`
      SELECT seq, body::text AS body FROM events WHERE reservation_id IN ${sql.in(reservationIds)} FOR UPDATE`

  const setEventBody = (seq: string, body: string) => sql`UPDATE events SET body = ${body}::json WHERE seq = ${seq}`

  return { latestEventAt, insertEvents, activeEndpoint, insertPing, lockEventBodies, setEventBody } as const
}

/** The delivery queue's statements: the claim, the batch record, the next due time. */
const queueStatements = (sql: SqlClient.SqlClient) => {
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
   * Claims under `lease` up to `limit` due deliveries, oldest due first, at most `perEndpoint` per endpoint less
   * what `busy` says this instance already has in flight to it: one slow receiver holds at most its own share
   * (design §7). The endpoints with pending rows are found by a loose scan of the (endpoint, due time) index,
   * then each with room gives its oldest due rows through the same index. The per-endpoint limit is a constant
   * (the room is applied above it): with an expression there, the planner's estimate crossed `jit_above_cost`
   * and JIT compilation made every claim take ~150 ms.
   */
  const claim = (lease: Lease, limit: number, perEndpoint: number, busy: ReadonlyMap<string, number>) => {
    const busyJson = JSON.stringify(Object.fromEntries(busy))
    return sql<ClaimedDelivery>`
      WITH RECURSIVE endpoints AS (
        (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
        UNION ALL
        SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                WHERE d.status = 'pending' AND d.endpoint_id > endpoints.endpoint_id
                ORDER BY d.endpoint_id LIMIT 1)
        FROM endpoints WHERE endpoints.endpoint_id IS NOT NULL),
      rooms AS (
        SELECT endpoint_id, ${perEndpoint} - COALESCE((${busyJson}::jsonb ->> endpoint_id::text)::int, 0) AS room
        FROM endpoints),
      c AS (
        UPDATE webhook_deliveries SET lease_until = ${lease.until}
        WHERE id IN (
          SELECT x.id FROM rooms e CROSS JOIN LATERAL (
            SELECT y.id, y.next_attempt_at, row_number() OVER (ORDER BY y.next_attempt_at) AS n FROM (
              SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
              WHERE d.endpoint_id = e.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= ${lease.at}
                AND (d.lease_until IS NULL OR d.lease_until <= ${lease.at}) AND ${inOrder(lease.at)}
              ORDER BY d.next_attempt_at
              LIMIT ${perEndpoint}
              FOR UPDATE OF d SKIP LOCKED) y) x
          WHERE e.endpoint_id IS NOT NULL AND e.room > 0 AND x.n <= e.room
          ORDER BY x.next_attempt_at
          LIMIT ${limit})
        RETURNING id, endpoint_id, lease_until, event_seq, event_id, event_type, cycle_attempts, max_attempts)
      SELECT ${sql.literal(CLAIMED_COLUMNS)}
      FROM c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN events ev ON ev.seq = c.event_seq`
  }

  /**
   * Records a batch of attempts with one statement (each row as the per-attempt `UPDATE` did it), their leases
   * cleared. The attempt is always logged; its status wins unless the row moved on meanwhile (deactivated or
   * redelivered): a success is a success whatever happened, a failure only updates a pending row.
   */
  const write = (rows: ReadonlyArray<OutcomeRow>) =>
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

  /**
   * When the next delivery falls due (or its lease ends), seen at `at`. One that waits behind an older delivery
   * of its reservation is left out: it falls due when that one is attempted, which the older one's own time (or
   * its lease) already says.
   */
  const nextDueAt = (at: Date) =>
    sql<{ at: Date | null }>`
      SELECT min(GREATEST(d.next_attempt_at, COALESCE(d.lease_until, d.next_attempt_at))) AS at
      FROM webhook_deliveries d WHERE d.status = 'pending' AND ${inOrder(at)}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]?.at))
    )

  return { claim, write, nextDueAt } as const
}

/** The history's statements: endpoints 15 and 16, a deactivation's end of pending deliveries, what the panel reads. */
const historyStatements = (sql: SqlClient.SqlClient) => {
  /** The owner's delivery `id` with whether its endpoint is still active, locked for a redelivery. */
  const lockDelivery = (owner: Owner, id: string) =>
    Effect.map(
      sql<{ endpoint_id: string; is_active: boolean }>`
        SELECT d.endpoint_id, e.is_active FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = ${id} AND d.account_id = ${owner.accountId} AND d.environment = ${owner.environment}
        FOR UPDATE OF d`,
      (rows) => Option.fromNullable(rows[0])
    )

  /** A redelivery: pending again at `at` with a fresh retry cycle; `attempt_log` keeps the history. */
  const pendingAgain = (at: Date) =>
    sql`status = 'pending', cycle_attempts = 0, next_attempt_at = ${at}, delivered_at = NULL, lease_until = NULL`
  // Wake the delivery loops at commit, as a new delivery does (the insert trigger covers only inserts).
  const wakeLoops = sql`SELECT pg_notify('webhook_deliveries', '1')`

  /** Endpoint 16's change: the same row, redelivered. */
  const redeliver = (id: string, at: Date) =>
    Effect.gen(function*() {
      const [row] = yield* sql<{ id: string; event_id: string }>`
        UPDATE webhook_deliveries SET ${pendingAgain(at)} WHERE id = ${id} RETURNING id, event_id`
      yield* wakeLoops
      return row!
    })

  /**
   * Recover's change (design §6.14): every `failed` delivery of the endpoint created in [since, until], each
   * redelivered as endpoint 16 redelivers one. Answers how many.
   */
  const recoverFailed = (endpointId: string, window: { readonly since: Date; readonly until: Date }, at: Date) =>
    Effect.gen(function*() {
      const rows = yield* sql<{ id: string }>`
        UPDATE webhook_deliveries SET ${pendingAgain(at)}
        WHERE endpoint_id = ${endpointId} AND status = 'failed'
          AND created_at >= ${window.since} AND created_at <= ${window.until}
        RETURNING id`
      if (rows.length > 0) yield* wakeLoops
      return rows.length
    })

  /** Endpoint 15: most recent first, deliveries of deactivated endpoints included (design §6.14). */
  const list = (key: AuthenticatedKey, query: DeliveriesQuery, reservation: Option.Option<string>) =>
    Effect.map(
      sql<DeliveryRow>`
        SELECT d.id, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempts, d.last_http_status, d.last_error,
          d.next_attempt_at, d.delivered_at, d.created_at, d.attempt_log
        FROM webhook_deliveries d
        ${Option.isNone(reservation) ? sql`` : sql`JOIN events ev ON ev.seq = d.event_seq`}
        WHERE ${
        sql.and([
          sql`d.account_id = ${key.accountId}`,
          sql`d.environment = ${key.environment}`,
          ...(query.status === undefined ? [] : [sql`d.status = ${query.status}`]),
          ...(query.event === undefined ? [] : [sql`d.event_type = ${query.event}`]),
          ...Option.match(reservation, { onNone: () => [], onSome: (id) => [sql`ev.reservation_id = ${id}`] })
        ])
      }
        ORDER BY d.seq DESC
        LIMIT ${query.limit ?? Limits.deliveriesDefault}`,
      (rows) => rows.map(deliveryView)
    )

  /** The environment of an account's delivery; None when it is not the account's. */
  const environmentOf = (accountId: string, deliveryId: string) =>
    Effect.map(
      sql<{ environment: Environment }>`
        SELECT environment FROM webhook_deliveries WHERE id = ${deliveryId} AND account_id = ${accountId}`,
      (rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.environment)
    )

  /** The counts of each panel status (`PanelDeliveryStatus`) among the rows a statement's `FROM … WHERE` picks. */
  const COUNTS = sql.literal(
    Object.entries(PANEL_STATUS_CONDITIONS)
      .map(([status, condition]) => `count(*) FILTER (WHERE ${condition})::int AS ${status}`)
      .join(",\n    ")
  )

  /** An account's active endpoint: its environment, URL and subscription (what the panel acts in and names). */
  const activeEndpointOf = (accountId: string, id: string) =>
    Effect.map(
      sql<{ environment: Environment; url: string; events: ReadonlyArray<string>; include_guests: boolean }>`
        SELECT environment, url, events, include_guests FROM webhook_endpoints
        WHERE id = ${id} AND account_id = ${accountId} AND is_active`,
      (rows) => Option.fromNullable(rows[0])
    )

  /** Per active endpoint of an (account, environment): its deliveries created since `since`, by panel status. */
  const outcomesSince = (accountId: string, environment: Environment, since: Date) =>
    Effect.map(
      sql<{ endpoint_id: string } & DeliveryCounts>`
        SELECT d.endpoint_id, ${COUNTS}
        FROM webhook_deliveries d
        WHERE d.account_id = ${accountId} AND d.environment = ${environment} AND d.created_at >= ${since}
        GROUP BY d.endpoint_id`,
      (rows) => new Map(rows.map(({ endpoint_id, ...counts }) => [endpoint_id, counts]))
    )

  /** The conditions of the panel's delivery filters (the caller's account and environment first). */
  const panelConditions = (owner: Owner, filters: PanelDeliveryFilters, withStatus: boolean) => [
    sql`d.account_id = ${owner.accountId}`,
    sql`d.environment = ${owner.environment}`,
    ...(filters.endpointId === undefined ? [] : [sql`d.endpoint_id = ${filters.endpointId}`]),
    ...(filters.event === undefined ? [] : [sql`d.event_type = ${filters.event}`]),
    ...(filters.externalId === undefined ? [] : [sql`r.external_id = ${filters.externalId}`]),
    ...(!withStatus || filters.status === undefined ? [] : [statusCondition(filters.status)])
  ]
  const statusCondition = (status: PanelDeliveryStatus) => sql.literal(PANEL_STATUS_CONDITIONS[status])

  /**
   * The panel's delivery log (design §8): most recent first, `limit + 1` rows after the cursor's `seq` (the extra
   * one says a next page exists), each with its endpoint's URL and its reservation's external_id.
   */
  const panelPage = (owner: Owner, filters: PanelDeliveryFilters, before: Option.Option<number>, limit: number) =>
    Effect.map(
      sql<PanelDeliveryRow>`
        SELECT ${sql.literal(PANEL_COLUMNS)}
        FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id
        LEFT JOIN reservations r ON r.id = d.reservation_id
        WHERE ${
        sql.and([
          ...panelConditions(owner, filters, true),
          ...Option.match(before, { onNone: () => [], onSome: (seq) => [sql`d.seq < ${seq}`] })
        ])
      }
        ORDER BY d.seq DESC
        LIMIT ${limit + 1}`,
      (rows) => rows.map(panelDeliveryView)
    )

  /** How many deliveries match the filters but the status, by panel status. */
  const panelCounts = (owner: Owner, filters: PanelDeliveryFilters) =>
    Effect.map(
      sql<DeliveryCounts>`
        SELECT ${COUNTS}
        FROM webhook_deliveries d
        ${filters.externalId === undefined ? sql`` : sql`LEFT JOIN reservations r ON r.id = d.reservation_id`}
        WHERE ${sql.and(panelConditions(owner, filters, false))}`,
      (rows) => rows[0] ?? { pending: 0, retrying: 0, delivered: 0, failed: 0 }
    )

  /** One of the account's deliveries with its event's body as stored and the endpoint's `include_guests`. */
  const panelDetail = (accountId: string, id: string) =>
    Effect.map(
      sql<PanelDeliveryRow & { readonly body: string; readonly include_guests: boolean }>`
        SELECT ${sql.literal(PANEL_COLUMNS)}, ev.body::text AS body, e.include_guests
        FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id
        JOIN events ev ON ev.seq = d.event_seq
        LEFT JOIN reservations r ON r.id = d.reservation_id
        WHERE d.id = ${id} AND d.account_id = ${accountId}`,
      (rows) =>
        Option.map(Option.fromNullable(rows[0]), (row) => ({
          delivery: panelDeliveryView(row),
          attempts: row.attempt_log,
          body: row.body,
          includeGuests: row.include_guests
        }))
    )

  /** An endpoint's pending deliveries end `failed` with `error` (it was deactivated, in the caller's transaction). */
  const failPending = (endpointId: string, error: string) =>
    sql`
      UPDATE webhook_deliveries
      SET status = 'failed', next_attempt_at = NULL, lease_until = NULL, last_error = ${error}
      WHERE endpoint_id = ${endpointId} AND status = 'pending'`

  return {
    lockDelivery,
    redeliver,
    recoverFailed,
    failPending,
    list,
    environmentOf,
    outcomesSince,
    activeEndpointOf,
    panelPage,
    panelCounts,
    panelDetail
  } as const
}

/** The retention of the delivery history (issue 27 item 4; `HistoryRetention`). */
const retentionStatements = (sql: SqlClient.SqlClient) => {
  /**
   * One batch of the history past its retention, in one transaction: events created before `before` whose every
   * delivery was delivered (or that had none), of no reservation with a report still pending, deleted with their
   * deliveries; answers how many rows of each went. Never a pending or failed delivery (a failed one may still be
   * recovered by an operator); a delivery redelivered meanwhile is re-read under its lock and kept, with its event.
   */
  const deleteHistory = (before: Date, limit: number) =>
    Effect.gen(function*() {
      const doomed = yield* sql<{ seq: string }>`
        SELECT ev.seq FROM events ev
        WHERE ev.created_at < ${before}
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = ev.seq AND d.status <> 'delivered')
          AND NOT EXISTS (
            SELECT 1 FROM reservations r
            WHERE r.id = ev.reservation_id
              AND 'pending' IN (r.tra->>'status', r.sire->>'status', r.sire->'exit'->>'status'))
        ORDER BY ev.seq
        LIMIT ${limit}
        FOR UPDATE OF ev SKIP LOCKED`
      if (doomed.length === 0) return { events: 0, deliveries: 0 }
      const seqs = doomed.map((row) => row.seq)
      const deliveries = yield* sql`
        DELETE FROM webhook_deliveries WHERE event_seq IN ${sql.in(seqs)} AND status = 'delivered' RETURNING seq`
      const events = yield* sql`
        DELETE FROM events ev WHERE ev.seq IN ${sql.in(seqs)}
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = ev.seq)
        RETURNING ev.seq`
      return { events: events.length, deliveries: deliveries.length }
    }).pipe(sql.withTransaction)

  return { deleteHistory } as const
}

export const make = Effect.map(SqlClient.SqlClient, (sql) => ({
  ...outboxStatements(sql),
  ...queueStatements(sql),
  ...historyStatements(sql),
  ...retentionStatements(sql),
  withTransaction: sql.withTransaction
}))

export class DeliveryStore extends Effect.Service<DeliveryStore>()("webhooks/DeliveryStore", { effect: make }) {}
