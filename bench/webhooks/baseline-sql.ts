/**
 * Second, informational reference of `bench/webhooks.sh` (not the one of the ratio): a minimal Bun loop that
 * runs the service's delivery SQL around plain `fetch`. It claims with the statement of `Deliveries.claim`
 * (lease, `FOR UPDATE SKIP LOCKED`, endpoint and body in the same round trip) up to the free slots of
 * CONCURRENCY, sends exactly as baseline.ts does, and records every attempt with the UPDATE of
 * `Deliveries.attempt` (one statement and commit per delivery), on a `pg` Pool of DB_POOL_SIZE (10, the
 * service's default). No Effect, no URL check, no `nextDueAt`: it stops when a claim finds nothing and nothing
 * is in flight (every bench delivery succeeds at its first attempt). The gap between it and baseline.ts is
 * the price of the SQL design; the gap between the service and it, the price of the service's code.
 *
 * Env: DATABASE_URL, CONCURRENCY, DB_POOL_SIZE. Prints {deliveries, failures, claims, seconds, rate}.
 */
import Pg from "pg"
import { bodyFor, deliveryHeaders } from "../../src/webhooks/Signature.ts"

interface Claimed {
  readonly id: string
  readonly event_id: string
  readonly event_type: string
  readonly cycle_attempts: number
  readonly max_attempts: number
  readonly url: string
  readonly secret: string
  readonly include_guests: boolean
  readonly is_active: boolean
  readonly body: string
}

const CLAIM = `
          WITH c AS (
            UPDATE webhook_deliveries SET lease_until = $1
            WHERE id IN (
              SELECT d.id FROM webhook_deliveries d
              WHERE d.status = 'pending' AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until <= $3)
                AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries o
        WHERE o.endpoint_id = d.endpoint_id AND o.reservation_id = d.reservation_id AND o.event_seq < d.event_seq
          AND o.status = 'pending' AND (o.cycle_attempts = 0 OR o.lease_until > $4))
              ORDER BY d.next_attempt_at
              LIMIT $5
              FOR UPDATE SKIP LOCKED)
            RETURNING id, endpoint_id, event_seq, event_id, event_type, cycle_attempts, max_attempts)
          SELECT c.id, c.event_id, c.event_type, c.cycle_attempts, c.max_attempts,
  e.url, e.secret, e.include_guests, e.is_active, ev.body::text AS body
          FROM c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN events ev ON ev.seq = c.event_seq`

const RECORD = `
          UPDATE webhook_deliveries SET
            attempts = attempts + 1,
            cycle_attempts = cycle_attempts + 1,
            last_http_status = $1,
            last_error = $2,
            attempt_log = attempt_log || $3::jsonb,
            lease_until = NULL,
            status = CASE WHEN $4 THEN 'delivered' WHEN status = 'pending' THEN $5 ELSE status END,
            delivered_at = CASE WHEN $6 THEN $7 ELSE delivered_at END,
            next_attempt_at = CASE WHEN $8 OR status = 'pending' THEN $9::timestamptz
              ELSE next_attempt_at END
          WHERE id = $10`

const LEASE_MS = 15_000 // DELIVERY_LEASE
const concurrency = Number(process.env.CONCURRENCY ?? 32)
const pool = new Pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  application_name: "bench-webhook-baseline-sql"
})
pool.on("error", () => {})

let inFlight = 0
let failures = 0
let delivered = 0
let claims = 0
let wakeUp: (() => void) | undefined
let woken = false
const wake = () => {
  woken = true
  wakeUp?.()
}
const sleepUntilWoken = () =>
  woken ? Promise.resolve() : new Promise<void>((resolve) => {
    wakeUp = resolve
  })

const attempt = async (job: Claimed) => {
  const attemptedAt = new Date()
  const body = bodyFor(job.body, job.include_guests)
  const url = new URL(job.url)
  const headers = deliveryHeaders({
    secret: job.secret,
    eventId: job.event_id,
    eventType: job.event_type,
    timestamp: Math.floor(attemptedAt.getTime() / 1000),
    body
  })
  let status: number | null = null
  let error: string | null = null
  try {
    const response = await fetch(url, { method: "POST", headers: { ...headers, host: url.host }, body, redirect: "manual" })
    await response.arrayBuffer()
    status = response.status
    if (status < 200 || status >= 300) error = `HTTP ${status}`
  } catch (e) {
    error = String(e)
  }
  const ok = error === null
  if (ok) delivered++
  else failures++
  const entry = { attempted_at: attemptedAt.toISOString(), http_status: status, duration_ms: Date.now() - attemptedAt.getTime(), error }
  // A failure would be retried in a minute: the bench expects none, so the retry schedule is not computed here.
  const next = ok ? null : new Date(attemptedAt.getTime() + 60_000)
  await pool.query(RECORD, [status, error, JSON.stringify([entry]), ok, ok ? "delivered" : "pending", ok, attemptedAt, ok, next, job.id])
}

const started = performance.now()
for (;;) {
  const free = concurrency - inFlight
  if (free > 0) {
    const now = new Date()
    const { rows } = await pool.query<Claimed>(CLAIM, [new Date(now.getTime() + LEASE_MS), now, now, now, free])
    claims++
    if (rows.length === 0 && inFlight === 0) break
    for (const job of rows) {
      inFlight++
      attempt(job).catch(() => failures++).finally(() => {
        inFlight--
        wake()
      })
    }
    if (rows.length === free) continue
  }
  await sleepUntilWoken()
  woken = false
  wakeUp = undefined
}
const seconds = (performance.now() - started) / 1000
await pool.end()
console.log(JSON.stringify({ deliveries: delivered, failures, claims, seconds, rate: delivered / seconds }))
