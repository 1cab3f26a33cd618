/**
 * Peer for `npm run bench` (docs/performance.md, "The peers"): the three benchmarked partner requests written
 * the way a TypeScript team would by default with Fastify 5 on Node: routes with JSON Schema for the path
 * parameter and the create body (Ajv) and response schemas for every answer (fast-json-stringify), a
 * bearer-key preHandler hook, and a `pg` Pool of DB_POOL_SIZE (default 10) running the service's SQL
 * (bench/peers/shared.ts; bench/run.sh checks it against PostgreSQL's log).
 *
 * Node 20 does not run TypeScript: bench/run.sh bundles this file for Node first, then runs the bundle:
 *   bun build --target=node --format=esm --external pg-native bench/peers/fastify.ts --outfile=WORK/fastify.mjs
 *   DATABASE_URL=postgres://… PORT=… PUBLIC_BASE_URL=… node WORK/fastify.mjs
 */
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from "fastify"
import * as bench from "./shared.ts"

const config = bench.benchConfig()
const pool = await bench.makePool(config, "bench-fastify")
const queries = bench.partnerQueries(pool, config.publicBaseUrl)

// ------------------------------------------------------------------------------------------------ schemas
const nullable = (type: string) => ({ type: [type, "null"] })
const error = {
  type: "object",
  properties: {
    error: { type: "string" },
    code: { type: "string" },
    details: { type: "object", additionalProperties: true }
  }
}
const errors = { 400: error, 401: error, 404: error, 409: error, 500: error }

const property = {
  type: "object",
  properties: {
    property_id: { type: "string" },
    external_id: nullable("string"),
    rnt_id: nullable("string"),
    name: { type: "string" },
    internal_name: nullable("string"),
    checkin_enabled: { type: "boolean" },
    compliance: { type: "object", properties: { tra: { type: "boolean" }, sire: { type: "boolean" } } },
    requires_contract_signature: { type: "boolean" },
    requires_document_photos: { type: "boolean" }
  }
}
const reportFlags = { warning: { type: "string" }, simulated: { type: "boolean" } }  // optional, in this order
const reportHead = { status: { type: "string" }, reported_at: nullable("string"), ...reportFlags }
const traReport = {
  type: "object",
  properties: { ...reportHead, sends_on: nullable("string"), mincit_code: nullable("integer") }
}
const sireReport = {
  type: "object",
  properties: {
    ...reportHead,
    foreign_guests: { type: "integer" },
    exit: {
      type: "object",
      properties: { status: { type: "string" }, sends_on: nullable("string"), reported_at: nullable("string"), ...reportFlags }
    }
  }
}
const reservationFields = {
  ok: { type: "boolean" },
  reservation_id: { type: "string" },
  external_id: { type: "string" },
  status: { type: "string" },
  reservation_status: { type: "string" },
  sandbox: { type: "boolean" },
  checkin_token: nullable("string"),
  checkin_status: { type: "string" },
  guests_registered: { type: "integer" },
  tra: traReport,
  sire: sireReport,
  departed_on: nullable("string"),
  source: nullable("string"),
  metadata: { type: "object", additionalProperties: true },
  checkin_url: nullable("string"),
  created_at: { type: "string" },
  idempotent_replay: { type: "boolean" }
}
const reservation = { type: "object", properties: reservationFields }
const registration = {
  type: "object",
  properties: {
    ...reservationFields,
    property_id: { type: "string" },
    check_in: { type: "string" },
    check_out: { type: "string" },
    guests_count: { type: "integer" },
    completed_at: nullable("string")
  }
}

// The service's limits (src/reservations/Reservation.ts).
const externalId = { type: "string", minLength: 1, maxLength: 120 }
const stayDate = { type: "string", format: "date" }
const count = { type: "integer", minimum: 1, maximum: 2_147_483_647 }
const createBody = {
  type: "object",
  required: ["external_id", "check_in", "check_out", "guest_name", "guests_count"],
  properties: {
    external_id: externalId,
    source: { type: "string", maxLength: 50 },
    property_id: { type: "string", format: "uuid" },
    property_external_id: externalId,
    rnt_id: { type: "string", minLength: 1 },
    room_number: { type: "string", maxLength: 50 },
    check_in: stayDate,
    check_out: stayDate,
    guest_name: { type: "string", minLength: 1, maxLength: 255 },
    guests_count: count,
    expected_guests: count,
    total_amount: { type: "number", minimum: 0, maximum: 1e12 },
    currency: { type: "string", enum: ["COP", "USD"] },
    guest_email: { type: "string", format: "email", maxLength: 254 },
    guest_phone: { type: "string", maxLength: 30 },
    notes: { type: "string", maxLength: 2000 },
    metadata: { type: "object", additionalProperties: true },
    sandbox_simulate: { type: "string" }
  }
}

// ------------------------------------------------------------------------------------------------ server
declare module "fastify" {
  interface FastifyRequest {
    key: bench.Verified
  }
}

const app = Fastify({ logger: false })
app.decorateRequest("key", null as unknown as bench.Verified)

// Fastify's own content type, application/json; charset=utf-8 (bench/run.sh's header check ignores the charset).
const send = (reply: FastifyReply, answer: bench.Answer) => reply.code(answer.status).send(answer.body)

const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
  const key = await queries.verify(request.headers.authorization)
  if (key === undefined) return send(reply, bench.UNAUTHORIZED)
  request.key = key
}

app.setNotFoundHandler((_request, reply) => send(reply, bench.NOT_FOUND))
app.setErrorHandler((err: FastifyError, _request, reply) =>
  err.validation === undefined
    ? send(reply, bench.INTERNAL_ERROR)
    : send(reply, { status: 400, body: { error: err.message, code: "invalid_request", details: {} } })
)

app.get("/readyz", async () => ({ status: "ready" }))

app.get("/api/partners/properties", {
  preHandler: authenticate,
  schema: { response: { 200: { type: "object", properties: { properties: { type: "array", items: property } } }, ...errors } }
}, (request, reply) => queries.listProperties(request.key).then((answer) => send(reply, answer)))

app.get<{ Params: { external_id: string } }>("/api/partners/registrations/:external_id", {
  preHandler: authenticate,
  schema: {
    params: { type: "object", required: ["external_id"], properties: { external_id: externalId } },
    response: { 200: registration, ...errors }
  }
}, (request, reply) =>
  queries.getRegistration(request.key, request.params.external_id).then((answer) => send(reply, answer)))

app.post<{ Body: bench.CreateBody }>("/api/partners/reservations", {
  preHandler: authenticate,
  schema: { body: createBody, response: { 200: reservation, 201: reservation, ...errors } }
}, (request, reply) => queries.createReservation(request.key, request.body).then((answer) => send(reply, answer)))

await app.listen({ host: "127.0.0.1", port: config.port })
bench.stopOnSignal(pool, () => app.close())
console.log(`fastify peer listening on http://127.0.0.1:${config.port}`)
