/**
 * Latency driver of `bench/webhooks.sh`: commits `reservation.created` events at a steady RATE per second,
 * each in its own transaction (BEGIN, the statement of `Outbox.enqueue` for one event, COMMIT) on a pool of
 * POOL connections, and takes the time right after COMMIT returns, keyed by event id. Sends are scheduled by
 * the wall clock (event k is due at start + k / RATE, whatever happened to the previous ones), so a slow commit
 * does not lower the rate. The first WARMUP seconds are sent the same way and left out of the figures.
 * Then it waits for the receiver to have seen every event and reports arrival − commit.
 *
 * Env: DATABASE_URL, RECEIVER (http://127.0.0.1:port), RATE (200), DURATION (30 s), WARMUP (3 s), POOL (8),
 * ACCOUNT_ID, ENVIRONMENT, RESERVATION_ID, TEMPLATE_FILE, RESERVATIONS_FILE, PER_RESERVATION (enqueue.ts).
 * Prints one JSON document.
 */
import Pg from "pg"
import { enqueueParams, enqueueSql, newEventId, targetFromEnv } from "./enqueue.ts"

const rate = Number(process.env.RATE ?? 200)
const duration = Number(process.env.DURATION ?? 30)
const warmup = Number(process.env.WARMUP ?? 3)
const receiver = process.env.RECEIVER ?? ""
const target = targetFromEnv()
const now = () => performance.timeOrigin + performance.now() // as in receiver.ts

const pool = new Pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL ?? 8),
  application_name: "bench-webhook-driver"
})
pool.on("error", () => {})
// Open every connection before the clock starts.
const warm = await Promise.all(Array.from({ length: Number(process.env.POOL ?? 8) }, () => pool.connect()))
for (const c of warm) c.release()

const SQL = enqueueSql(1)
interface Sent {
  readonly id: string
  readonly due: number
  committed: number
  readonly measured: boolean
}
const sent: Array<Sent> = []
let errors = 0

const commit = async (entry: Sent, index: number) => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    await client.query(SQL, enqueueParams(target, [entry.id], new Date(), index))
    await client.query("COMMIT")
    entry.committed = now()
  } catch (e) {
    errors++
    await client.query("ROLLBACK").catch(() => {})
    console.error(String(e))
  } finally {
    client.release()
  }
}

const warmupCount = Math.round(warmup * rate)
const total = warmupCount + Math.round(duration * rate)
const interval = 1000 / rate
const start = now() + 50
const inflight: Array<Promise<void>> = []
for (let k = 0; k < total; k++) {
  const due = start + k * interval
  const wait = due - now()
  if (wait > 0) await Bun.sleep(wait)
  const entry: Sent = { id: newEventId(), due, committed: 0, measured: k >= warmupCount }
  sent.push(entry)
  inflight.push(commit(entry, k))
}
await Promise.all(inflight)
await pool.end()

// Every committed event should reach the receiver; wait for the stragglers (bounded).
const committed = sent.filter((s) => s.committed > 0)
const deadline = now() + 30_000
let arrivals: Record<string, number> = {}
for (;;) {
  const stats = (await (await fetch(`${receiver}/__stats`)).json()) as { distinct: number }
  if (stats.distinct >= committed.length || now() > deadline) {
    arrivals = (await (await fetch(`${receiver}/__arrivals`)).json()) as Record<string, number>
    break
  }
  await Bun.sleep(200)
}

const measured = committed.filter((s) => s.measured)
const latencies: Array<number> = []
let missing = 0
for (const s of measured) {
  const at = arrivals[s.id]
  if (at === undefined) missing++
  else latencies.push(at - s.committed)
}
latencies.sort((a, b) => a - b)
const lags = measured.map((s) => s.committed - s.due).sort((a, b) => a - b)
const pct = (xs: ReadonlyArray<number>, p: number) =>
  xs.length === 0 ? NaN : xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!
const round = (x: number) => Math.round(x * 100) / 100
const firstCommit = Math.min(...measured.map((s) => s.committed))
const lastCommit = Math.max(...measured.map((s) => s.committed))
console.log(JSON.stringify({
  rate_target: rate,
  seconds: duration,
  warmup_events: warmupCount,
  events: measured.length,
  errors,
  missing,
  achieved_rate: round((measured.length - 1) / ((lastCommit - firstCommit) / 1000)),
  schedule_span_s: round((measured[measured.length - 1]!.due - measured[0]!.due) / 1000),
  commit_lag_ms: { p50: round(pct(lags, 50)), p99: round(pct(lags, 99)), max: round(lags[lags.length - 1] ?? NaN) },
  latency_ms: {
    min: round(latencies[0] ?? NaN),
    p50: round(pct(latencies, 50)),
    p95: round(pct(latencies, 95)),
    p99: round(pct(latencies, 99)),
    max: round(latencies[latencies.length - 1] ?? NaN),
    mean: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length))
  }
}))
