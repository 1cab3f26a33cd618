/**
 * Seeds the webhook backlog of `bench/scale.sh`'s worker runs: N `reservation.created` events and their delivery
 * rows, written by the statement of `Outbox.enqueue` (bench/webhooks/enqueue.ts) BATCH events per statement, as
 * bench/webhooks/seed.ts does — but each event on a reservation of its own (the ids in RESERVATIONS_FILE, one a
 * line), so that design §6.14's ordering rule (one delivery at a time per reservation and endpoint) does not
 * serialise the backlog, and with every delivery held until HOLD_UNTIL (its `next_attempt_at`), so that the
 * workers under test are all up before the script releases the backlog with one UPDATE.
 *
 * Env: DATABASE_URL, N (10000), BATCH (500), ACCOUNT_ID, ENVIRONMENT, TEMPLATE_FILE, RESERVATIONS_FILE,
 * HOLD_UNTIL (ISO time). Prints {events, deliveries, seconds}.
 */
import Pg from "pg"
import { readFileSync } from "node:fs"
import { enqueueParams, enqueueSql, newEventId, targetFromEnv } from "../webhooks/enqueue.ts"

const COLUMNS_PER_EVENT = 7 // id, account_id, environment, reservation_id, type, created_at, body

const n = Number(process.env.N ?? 10000)
const batch = Number(process.env.BATCH ?? 500)
const holdUntil = new Date(process.env.HOLD_UNTIL ?? "2100-01-01T00:00:00Z")
const reservations = readFileSync(process.env.RESERVATIONS_FILE ?? "", "utf8").split("\n").filter(Boolean)
if (reservations.length < n) throw new Error(`${reservations.length} reservations for ${n} events`)
const target = targetFromEnv()

const client = new Pg.Client({ connectionString: process.env.DATABASE_URL, application_name: "bench-scale-seed" })
await client.connect()

const started = performance.now()
let deliveries = 0
for (let done = 0; done < n; done += batch) {
  const ids = Array.from({ length: Math.min(batch, n - done) }, newEventId)
  const params = enqueueParams(target, ids, new Date())
  // enqueueParams gives every event the template's reservation and due time: re-point each event at its own
  // reservation (column and body) and hold the deliveries. Checked, so that a change of its layout fails here.
  const tail = ids.length * COLUMNS_PER_EVENT
  if (params.length !== tail + 4 || !(params[tail + 1] instanceof Date)) {
    throw new Error("bench/webhooks/enqueue.ts changed its parameter layout; update bench/scale/seed.ts")
  }
  ids.forEach((_, i) => {
    const reservationId = reservations[done + i]!
    const at = i * COLUMNS_PER_EVENT
    params[at + 3] = reservationId
    const body = JSON.parse(params[at + 6] as string) as { data: { reservation_id: string } }
    body.data.reservation_id = reservationId
    params[at + 6] = JSON.stringify(body)
  })
  params[tail + 1] = holdUntil
  await client.query("BEGIN")
  const result = await client.query(enqueueSql(ids.length), params)
  await client.query("COMMIT")
  deliveries += result.rowCount ?? 0
}
await client.end()
console.log(JSON.stringify({ events: n, deliveries, seconds: (performance.now() - started) / 1000 }))
