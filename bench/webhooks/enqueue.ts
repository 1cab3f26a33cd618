/**
 * The statement of `Outbox.enqueue` (src/webhooks/Outbox.ts) for `rows` events, as @effect/sql-pg compiles it
 * (`sql.insert(rows)` → quoted column list, one `($1,…)` tuple per row; the parameters in the same order), and
 * the event bodies, made from one real `reservation.created` body with a fresh `evt_` id and `created_at`.
 * Shared by seed.ts (batches) and driver.ts (one event per transaction).
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { MAX_ATTEMPTS } from "../../src/webhooks/RetryPolicy.ts"

const COLUMNS = ["id", "account_id", "environment", "reservation_id", "type", "created_at", "body"] as const

export const enqueueSql = (rows: number): string => {
  const tuples: Array<string> = []
  let n = 0
  for (let r = 0; r < rows; r++) tuples.push(`(${COLUMNS.map(() => `$${++n}`).join(",")})`)
  const p = (k: number) => `$${n + k}`
  return `
          WITH ev AS (INSERT INTO events (${COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES ${tuples.join(",")} RETURNING seq, id, type, reservation_id, created_at)
          INSERT INTO webhook_deliveries
            (endpoint_id, event_seq, event_id, event_type, reservation_id, account_id, environment, status,
             max_attempts, next_attempt_at, created_at)
          SELECT e.id, ev.seq, ev.id, ev.type, ev.reservation_id, e.account_id, e.environment, 'pending', ${p(1)},
            ${p(2)}, ev.created_at
          FROM ev JOIN webhook_endpoints e
            ON e.account_id = ${p(3)} AND e.environment = ${p(4)} AND e.is_active
            AND (e.events ? '*' OR e.events ? ev.type)
          ORDER BY ev.seq, e.id`
}

export interface Target {
  readonly accountId: string
  readonly environment: string
  readonly reservationId: string
  /**
   * The reservations events are spread over (RESERVATIONS_FILE, one id a line; default: `reservationId` alone).
   * The ordering rule holds a reservation's later deliveries until the earlier one was attempted, so events all
   * on one reservation would be sent one at a time.
   */
  readonly reservationIds: ReadonlyArray<string>
  /** Events per reservation before moving on to the next (PER_RESERVATION, default 10). */
  readonly perReservation: number
  /** A stored `reservation.created` body (JSON text), used as the template of every event. */
  readonly template: string
}

export const newEventId = () => `evt_${randomBytes(16).toString("hex")}`

/** The reservation of the `index`-th event of a run: `perReservation` events each, round robin. */
export const reservationOf = (target: Target, index: number): string =>
  target.reservationIds[Math.floor(index / target.perReservation) % target.reservationIds.length]!

/**
 * Parameters of `enqueueSql(ids.length)`; every event of one statement shares `createdAt`, as in enqueue. `first`
 * is the run-wide index of the first event (it picks the reservations).
 */
export const enqueueParams = (
  target: Target,
  ids: ReadonlyArray<string>,
  createdAt: Date,
  first = 0
): Array<unknown> => {
  const template = JSON.parse(target.template) as Record<string, unknown>
  const values: Array<unknown> = []
  for (const [k, id] of ids.entries()) {
    const body = JSON.stringify({ ...template, id, created_at: createdAt.toISOString() })
    const reservation = reservationOf(target, first + k)
    values.push(id, target.accountId, target.environment, reservation, template.type, createdAt, body)
  }
  values.push(MAX_ATTEMPTS, createdAt, target.accountId, target.environment)
  return values
}

export const targetFromEnv = (): Target => {
  const need = (name: string) => {
    const v = process.env[name]
    if (!v) throw new Error(`${name} is required`)
    return v
  }
  const reservationId = need("RESERVATION_ID")
  const file = process.env.RESERVATIONS_FILE
  const listed = file ? readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : []
  return {
    accountId: need("ACCOUNT_ID"),
    environment: need("ENVIRONMENT"),
    reservationId,
    reservationIds: listed.length > 0 ? listed : [reservationId],
    perReservation: Number(process.env.PER_RESERVATION ?? 10),
    template: readFileSync(need("TEMPLATE_FILE"), "utf8")
  }
}
