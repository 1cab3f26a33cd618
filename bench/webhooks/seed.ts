/**
 * Seeds N pending deliveries for `bench/webhooks.sh`'s throughput rounds: N `reservation.created` events and
 * their delivery rows, written by the statement of `Outbox.enqueue` (see enqueue.ts), BATCH events per
 * statement and transaction, so that every active endpoint of the account gets one delivery per event. Events
 * are spread over the reservations of RESERVATIONS_FILE, PER_RESERVATION consecutive events each (enqueue.ts).
 *
 * Env: DATABASE_URL, N (20000), BATCH (500), ACCOUNT_ID, ENVIRONMENT, RESERVATION_ID, TEMPLATE_FILE,
 * RESERVATIONS_FILE, PER_RESERVATION (10).
 * Prints {events, deliveries, body_bytes, seconds}.
 */
import Pg from "pg"
import { enqueueParams, enqueueSql, newEventId, targetFromEnv } from "./enqueue.ts"

const n = Number(process.env.N ?? 20000)
const batch = Number(process.env.BATCH ?? 500)
const target = targetFromEnv()
const client = new Pg.Client({ connectionString: process.env.DATABASE_URL, application_name: "bench-seed" })
await client.connect()

const started = performance.now()
let deliveries = 0
let bodyBytes = 0
for (let done = 0; done < n; done += batch) {
  const ids = Array.from({ length: Math.min(batch, n - done) }, newEventId)
  const params = enqueueParams(target, ids, new Date(), done)
  bodyBytes = Buffer.byteLength(params[6] as string)
  await client.query("BEGIN")
  const result = await client.query(enqueueSql(ids.length), params)
  await client.query("COMMIT")
  deliveries += result.rowCount ?? 0
}
await client.end()
console.log(JSON.stringify({ events: n, deliveries, body_bytes: bodyBytes, seconds: (performance.now() - started) / 1000 }))
