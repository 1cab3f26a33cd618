/**
 * Baseline of `bench/webhooks.sh`: the least a sender can do to deliver the stored webhooks the way the
 * service does. Untimed: it reads every delivery of the bench database with its endpoint and stored event
 * body (what `Deliveries.claim` reads), then closes its connection. Timed (by the receiver, first to last
 * arrival): CONCURRENCY loops POST them with plain `fetch` — the body as the endpoint receives it (`bodyFor`)
 * and every header of `deliveryHeaders` (HMAC-SHA256 signature computed per request, the timestamp taken at
 * send time), `redirect: "manual"`, the answer read in full, success = 2xx. It never touches the database
 * while sending: no claim, no lease, no recording of the attempt, no URL check, no retries.
 *
 * Env: DATABASE_URL, CONCURRENCY (the service's DELIVERY_CONCURRENCY). Prints {deliveries, failures, seconds, rate}.
 */
import Pg from "pg"
import { bodyFor, deliveryHeaders } from "../../src/webhooks/Signature.ts"

interface Job {
  readonly event_id: string
  readonly event_type: string
  readonly url: string
  readonly secret: string
  readonly include_guests: boolean
  readonly body: string
}

const concurrency = Number(process.env.CONCURRENCY ?? 32)
const client = new Pg.Client({ connectionString: process.env.DATABASE_URL, application_name: "bench-webhook-baseline" })
await client.connect()
const { rows: jobs } = await client.query<Job>(`
  SELECT d.event_id, d.event_type, e.url, e.secret, e.include_guests, ev.body::text AS body
  FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN events ev ON ev.seq = d.event_seq
  ORDER BY d.seq`)
await client.end()

let next = 0
let failures = 0
const send = async (job: Job) => {
  const body = bodyFor(job.body, job.include_guests)
  const url = new URL(job.url)
  const headers = deliveryHeaders({
    secret: job.secret,
    eventId: job.event_id,
    eventType: job.event_type,
    timestamp: Math.floor(Date.now() / 1000),
    body
  })
  try {
    const response = await fetch(url, { method: "POST", headers: { ...headers, host: url.host }, body, redirect: "manual" })
    await response.arrayBuffer()
    if (response.status < 200 || response.status >= 300) failures++
  } catch {
    failures++
  }
}
const loop = async () => {
  while (next < jobs.length) await send(jobs[next++]!)
}

const started = performance.now()
await Promise.all(Array.from({ length: concurrency }, loop))
const seconds = (performance.now() - started) / 1000
console.log(JSON.stringify({ deliveries: jobs.length, failures, seconds, rate: jobs.length / seconds }))
