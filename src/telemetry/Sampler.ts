import { SqlClient } from "@effect/sql"
import { Clock, Effect, Metric } from "effect"
import { PgPool } from "../db/Database.ts"
import { todayInBogota } from "../shared/Calendar.ts"
import * as Metrics from "../shared/Metrics.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * The gauges read from the database (design §9): job queues by state with the age of their oldest pending row,
 * live reports due, overdue and in error per authority, and this instance's pool. The tables are the truth the
 * operator cares about (rows of every instance), so they are counted, not tracked in memory; every instance
 * answers the same queue figures (aggregate them with `max`, not `sum`).
 */

/**
 * Each queue: its table, the column of its state, the column that gives a row's age (`created_at` for a job; a
 * TRA or SIRE row is re-touched at each try, so `updated_at` is the closest it has), and its states, so a state
 * that empties reads 0 rather than keeping its last value.
 */
const QUEUES = {
  webhook_deliveries: { table: "webhook_deliveries", state: "status", age: "created_at", states: ["pending", "delivered", "failed"] },
  mail: { table: "mail_outbox", state: "state", age: "created_at", states: ["pending", "sent", "failed"] },
  document_fetches: { table: "document_fetches", state: "state", age: "created_at", states: ["pending", "stored", "failed"] },
  tra_submissions: { table: "tra_submissions", state: "state", age: "updated_at", states: ["pending", "accepted", "rejected"] },
  sire_movements: { table: "sire_movements", state: "state", age: "updated_at", states: ["pending", "in_file", "accepted", "rejected"] }
} as const

type Queue = keyof typeof QUEUES

/** Authorities of a live reservation's reports, as `cli reports list` names them. */
const AUTHORITIES = ["tra", "sire_entry", "sire_exit"] as const

interface QueueRow {
  readonly queue: Queue
  readonly state: string
  readonly items: number
  readonly oldest: Date | null
}

interface ReportsRow {
  readonly authority: (typeof AUTHORITIES)[number]
  readonly due: number
  readonly overdue: number
  readonly error: number
}

const queueGauge = (queue: string, state: string) =>
  Metrics.jobQueueItems.pipe(Metric.tagged("queue", queue), Metric.tagged("state", state))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pool = yield* PgPool

  // One statement for every queue: a UNION ALL of one count per table.
  const queues = sql<QueueRow>`${
    sql.join(" UNION ALL ", false)(
      Object.entries(QUEUES).map(([queue, { age, state, table }]) =>
        sql`SELECT ${queue}::text AS queue, ${sql(state)}::text AS state, count(*)::int AS items,
          min(${sql(age)}) FILTER (WHERE ${sql(state)} = 'pending') AS oldest
          FROM ${sql(table)} GROUP BY ${sql(state)}`
      )
    )
  }`

  /**
   * As `ReportOps.listings` counts them: the TRA is due on its `sends_on`, the SIRE entry on `check_in`, the exit
   * on its own `sends_on`; a cancelled stay keeps only its exit. Overdue: due before today and not `success`.
   */
  const reports = (today: string) =>
    sql<ReportsRow>`
      WITH r AS (
        SELECT 'tra' AS authority, tra->>'status' AS status, tra->>'sends_on' AS sends_on
        FROM reservations WHERE environment = 'live' AND reservation_status <> 'cancelled'
          AND (tra->>'status') IN ('pending', 'error')
        UNION ALL
        SELECT 'sire_entry', sire->>'status', check_in::text
        FROM reservations WHERE environment = 'live' AND reservation_status <> 'cancelled'
          AND (sire->>'status') IN ('pending', 'error')
        UNION ALL
        SELECT 'sire_exit', sire->'exit'->>'status', sire->'exit'->>'sends_on'
        FROM reservations WHERE environment = 'live' AND (sire->'exit'->>'status') IN ('pending', 'error'))
      SELECT authority,
        count(*) FILTER (WHERE status = 'pending' AND sends_on <= ${today})::int AS due,
        count(*) FILTER (WHERE sends_on < ${today})::int AS overdue,
        count(*) FILTER (WHERE status = 'error')::int AS error
      FROM r GROUP BY authority`

  const sample = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const rows = yield* queues
    for (const [queue, { states }] of Object.entries(QUEUES)) {
      for (const state of states) {
        const row = rows.find((r) => r.queue === queue && r.state === state)
        yield* Metric.set(queueGauge(queue, state), row?.items ?? 0)
      }
      const oldest = rows.find((r) => r.queue === queue && r.oldest !== null)?.oldest
      yield* Metric.set(
        Metrics.jobQueueOldestPendingAge.pipe(Metric.tagged("queue", queue)),
        oldest == null ? 0 : Math.max(0, (now - oldest.getTime()) / 1000)
      )
    }
    const counted = yield* reports(yield* todayInBogota)
    for (const authority of AUTHORITIES) {
      const row = counted.find((r) => r.authority === authority)
      const gauge = Metrics.complianceReports.pipe(Metric.tagged("authority", authority))
      yield* Metric.set(gauge.pipe(Metric.tagged("state", "due")), row?.due ?? 0)
      yield* Metric.set(gauge.pipe(Metric.tagged("state", "overdue")), row?.overdue ?? 0)
      yield* Metric.set(gauge.pipe(Metric.tagged("state", "error")), row?.error ?? 0)
    }
    yield* samplePool
  }).pipe(TraceContext.withSpan("Telemetry.sample"))

  // node-postgres counts its clients: `totalCount` open, `idleCount` free, `waitingCount` queued queries.
  const samplePool = Effect.all([
    Metric.set(Metrics.dbPoolConnections.pipe(Metric.tagged("state", "in_use")), pool.totalCount - pool.idleCount),
    Metric.set(Metrics.dbPoolConnections.pipe(Metric.tagged("state", "idle")), pool.idleCount),
    Metric.set(Metrics.dbPoolWaiting, pool.waitingCount),
    Metric.set(Metrics.dbPoolMax, pool.options.max ?? 10)
  ], { discard: true })

  return { sample } as const
})
