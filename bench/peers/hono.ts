/**
 * Peer for `npm run bench` (docs/performance.md, "The peers"): the three benchmarked partner requests written
 * the way a TypeScript team would by default with Hono 4 on Bun: routes, a bearer-key middleware, zod for the
 * path parameter and the create body, `c.json` for the answers, and a `pg` Pool of DB_POOL_SIZE (default 10)
 * running the service's SQL (bench/peers/shared.ts; bench/run.sh checks it against PostgreSQL's log).
 *
 * Usage: DATABASE_URL=postgres://… PORT=… PUBLIC_BASE_URL=… bun bench/peers/hono.ts
 */
import { type Context, Hono } from "hono"
import type { ContentfulStatusCode } from "hono/utils/http-status"
import { z } from "zod"
import * as bench from "./shared.ts"

const config = bench.benchConfig()
const pool = await bench.makePool(config, "bench-hono")
const queries = bench.partnerQueries(pool, config.publicBaseUrl)

// The service's limits (src/reservations/Reservation.ts), as zod schemas.
const externalId = z.string().min(1).max(120)
const stayDate = z.iso.date()
const count = z.number().int().min(1).max(2_147_483_647)
const CreateReservation = z.object({
  external_id: externalId,
  source: z.string().max(50).optional(),
  property_id: z.uuid().optional(),
  property_external_id: z.string().min(1).max(120).optional(),
  rnt_id: z.string().min(1).optional(),
  room_number: z.string().max(50).optional(),
  check_in: stayDate,
  check_out: stayDate,
  guest_name: z.string().min(1).max(255),
  guests_count: count,
  expected_guests: count.optional(),
  total_amount: z.number().min(0).max(1e12).optional(),
  currency: z.enum(["COP", "USD"]).optional(),
  guest_email: z.email().max(254).optional(),
  guest_phone: z.string().max(30).optional(),
  notes: z.string().max(2000).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  sandbox_simulate: z.string().optional()
})
const RegistrationParams = z.object({ external_id: externalId })

type Env = { Variables: { key: bench.Verified } }
const app = new Hono<Env>()

const send = (c: Context, answer: bench.Answer) => c.json(answer.body as object, answer.status as ContentfulStatusCode)
const invalid = (c: Context, error: z.ZodError) =>
  send(c, bench.failure(400, "invalid_request", "the request does not match the schema", { issues: error.issues }))

app.get("/readyz", (c) => c.json({ status: "ready" }))

app.use("/api/partners/*", async (c, next) => {
  const key = await queries.verify(c.req.header("authorization"))
  if (key === undefined) return send(c, bench.UNAUTHORIZED)
  c.set("key", key)
  return next()
})

app.get("/api/partners/properties", async (c) => send(c, await queries.listProperties(c.get("key"))))

app.get("/api/partners/registrations/:external_id", async (c) => {
  const params = RegistrationParams.safeParse(c.req.param())
  if (!params.success) return invalid(c, params.error)
  return send(c, await queries.getRegistration(c.get("key"), params.data.external_id))
})

app.post("/api/partners/reservations", async (c) => {
  const body = CreateReservation.safeParse(await c.req.json())
  if (!body.success) return invalid(c, body.error)
  return send(c, await queries.createReservation(c.get("key"), body.data))
})

app.notFound((c) => send(c, bench.NOT_FOUND))
app.onError((_error, c) => send(c, bench.INTERNAL_ERROR))

const server = Bun.serve({ hostname: "127.0.0.1", port: config.port, fetch: app.fetch })
bench.stopOnSignal(pool, () => server.stop(true))
console.log(`hono peer listening on http://127.0.0.1:${server.port}`)
