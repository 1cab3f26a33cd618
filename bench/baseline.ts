/**
 * Baseline for `npm run bench` (docs/performance.md): the least a server can do to answer the benchmarked
 * partner requests the way the service does. A plain `Bun.serve` and a `pg` Pool of the same size as the
 * service's (DB_POOL_SIZE, default 10) run exactly the statements of the service, with the same text and
 * parameters, in the same transaction shape: bench/peers/shared.ts holds them, the bodies and statuses, for
 * this baseline and the two peers (bench/peers/hono.ts, bench/peers/fastify.ts).
 * Not part of the service: no Effect, no validation beyond the few checks the bench body needs (anything else
 * answers 400 or 500 here, and bench/run.sh stops on a wrong status).
 *
 * Usage: DATABASE_URL=postgres://… PORT=… PUBLIC_BASE_URL=… bun bench/baseline.ts
 */
import {
  type Answer,
  benchConfig,
  type CreateBody,
  failure,
  INTERNAL_ERROR,
  makePool,
  partnerQueries,
  stopOnSignal,
  UNAUTHORIZED,
  type Verified
} from "./peers/shared.ts"

const config = benchConfig()
const pool = await makePool(config, "bench-baseline")
const queries = partnerQueries(pool, config.publicBaseUrl)

const JSON_HEADERS = { "content-type": "application/json" }
const respond = (answer: Answer) =>
  new Response(JSON.stringify(answer.body), { status: answer.status, headers: JSON_HEADERS })

// Every partner request: the key first, then the handler; any failure answers the service's 500.
const partner = (request: Request, handler: (key: Verified) => Promise<Answer>): Promise<Response> =>
  queries.verify(request.headers.get("authorization"))
    .then((key) => key === undefined ? UNAUTHORIZED : handler(key))
    .then(respond, () => respond(INTERNAL_ERROR))

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: config.port,
  routes: {
    "/readyz": () => Response.json({ status: "ready" }),
    "/api/partners/properties": {
      GET: (request) => partner(request, queries.listProperties)
    },
    "/api/partners/registrations/:external_id": {
      GET: (request) => partner(request, (key) => queries.getRegistration(key, request.params.external_id))
    },
    "/api/partners/reservations": {
      POST: (request) =>
        partner(request, async (key) => {
          const body = (await request.json()) as CreateBody
          if (typeof body?.external_id !== "string") {
            return failure(400, "invalid_request", "the baseline only takes bench/create-body.json's shape")
          }
          return queries.createReservation(key, body)
        })
    }
  },
  fetch: () => new Response(JSON.stringify({ error: "not found", code: "not_found", details: {} }), { status: 404 })
})

stopOnSignal(pool, () => server.stop(true))
console.log(`baseline listening on http://127.0.0.1:${server.port}`)
