/**
 * Baseline for `npm run bench` (docs/performance.md): the least a server can do to answer
 * `GET /api/partners/properties` the way the service does. A plain `Bun.serve` and a `pg` Pool of the same
 * size as the service's (DB_POOL_SIZE, default 10) run exactly the statements of the service, with the same
 * text and parameters: the key lookup of `ApiKeys.verify`, then the listing of `Properties.list`.
 * The body and status are the service's; the service's x-request-id and x-ratelimit-* headers are not sent
 * (no rate limiting here). Not part of the service: no Effect, no validation beyond what the service does.
 *
 * Usage: DATABASE_URL=postgres://… PORT=… bun bench/baseline.ts
 */
import { createHash } from "node:crypto"
import Pg from "pg"

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) throw new Error("DATABASE_URL is required")
const port = Number(process.env.PORT ?? 3001)

const pool = new Pg.Pool({
  connectionString: databaseUrl,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  connectionTimeoutMillis: 10_000,
  application_name: "bench-baseline"
})
pool.on("error", () => {})
await pool.query("SELECT 1")

// The SQL texts below are the service's, whitespace included (compare with log_statement=all: bench/run.sh
// does, before measuring). ApiKeys.verify:
const VERIFY_SQL = `
            SELECT k.id AS key_id, k.account_id, k.environment,
                   a.reads_per_minute AS reads, a.writes_per_minute AS writes, a.tests_per_minute AS tests
            FROM api_keys k JOIN accounts a ON a.id = k.account_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL`

// Properties.list (PROPERTY_COLUMNS spliced in with sql.literal):
const LIST_SQL = `
        SELECT id, account_id, environment, name, internal_name, external_id, rnt_id, checkin_enabled,
  reports_tra, reports_sire, requires_contract_signature, requires_document_photos FROM properties
        WHERE account_id = $1 AND environment = $2
        ORDER BY created_at, id`

const KEY_PATTERN = /^svc_(test|live)_([A-Za-z0-9_-]{43})$/

interface VerifiedRow {
  key_id: string
  account_id: string
  environment: "test" | "live"
  reads: number
  writes: number
  tests: number
}

interface PropertyRow {
  id: string
  account_id: string
  environment: string
  name: string
  internal_name: string | null
  external_id: string | null
  rnt_id: string | null
  checkin_enabled: boolean
  reports_tra: boolean
  reports_sire: boolean
  requires_contract_signature: boolean
  requires_document_photos: boolean
}

const JSON_HEADERS = { "content-type": "application/json" }

const unauthorized = () =>
  new Response(
    JSON.stringify({
      error: "missing, invalid or revoked API key; send Authorization: Bearer svc_test_… or svc_live_…",
      code: "unauthorized",
      details: {}
    }),
    { status: 401, headers: JSON_HEADERS }
  )

const listProperties = async (request: Request): Promise<Response> => {
  // HttpApiSecurity.bearer takes the header minus its first 7 characters ("Bearer ").
  const key = (request.headers.get("authorization") ?? "").slice(7)
  if (!KEY_PATTERN.test(key)) return unauthorized()
  const hash = createHash("sha256").update(key).digest("hex")
  const verified = await pool.query<VerifiedRow>(VERIFY_SQL, [hash])
  const row = verified.rows[0]
  if (row === undefined) return unauthorized()
  const listed = await pool.query<PropertyRow>(LIST_SQL, [row.account_id, row.environment])
  const properties = listed.rows.map((p) => ({
    property_id: p.id,
    external_id: p.external_id,
    rnt_id: p.rnt_id,
    name: p.name,
    internal_name: p.internal_name,
    checkin_enabled: p.checkin_enabled,
    compliance: { tra: p.reports_tra, sire: p.reports_sire },
    requires_contract_signature: p.requires_contract_signature,
    requires_document_photos: p.requires_document_photos
  }))
  return new Response(JSON.stringify({ properties }), { status: 200, headers: JSON_HEADERS })
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  routes: {
    "/readyz": () => Response.json({ status: "ready" }),
    "/api/partners/properties": {
      GET: (request) =>
        listProperties(request).catch(() =>
          new Response(JSON.stringify({ error: "internal server error; retry", code: "internal_error", details: {} }), {
            status: 500,
            headers: JSON_HEADERS
          })
        )
    }
  },
  fetch: () => new Response(JSON.stringify({ error: "not found", code: "not_found", details: {} }), { status: 404 })
})

const stop = () => {
  server.stop(true)
  void pool.end().finally(() => process.exit(0))
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
console.log(`baseline listening on http://127.0.0.1:${server.port}`)
