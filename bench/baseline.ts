/**
 * Baseline for `npm run bench` (docs/performance.md): the least a server can do to answer the benchmarked
 * partner requests the way the service does. A plain `Bun.serve` and a `pg` Pool of the same size as the
 * service's (DB_POOL_SIZE, default 10) run exactly the statements of the service, with the same text and
 * parameters, in the same transaction shape:
 * - `GET /api/partners/properties`: the key lookup of `ApiKeys.verify`, then the listing of `Properties.list`.
 * - `GET /api/partners/registrations/:external_id`: the key lookup, then the reservation by external_id
 *   (`Reservations.get`, without include=guests).
 * - `POST /api/partners/reservations`: the key lookup and the pre-check outside the transaction, then on one
 *   connection BEGIN, the advisory lock, the check again, the property, the reservation INSERT … RETURNING *,
 *   the reservation.created event, COMMIT (`Reservations.create`, only its path for a new reservation on a
 *   usable property in COP or without amount: what bench/create.lua sends).
 * The bodies and statuses are the service's; the service's x-request-id and x-ratelimit-* headers are not sent
 * (no rate limiting here). Not part of the service: no Effect, no validation beyond the few checks the bench
 * body needs (anything else answers 400 or 500 here, and bench/run.sh stops on a wrong status).
 *
 * Usage: DATABASE_URL=postgres://… PORT=… PUBLIC_BASE_URL=… bun bench/baseline.ts
 */
import { createHash, randomBytes } from "node:crypto"
import Pg from "pg"

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) throw new Error("DATABASE_URL is required")
const port = Number(process.env.PORT ?? 3001)
const publicBaseUrl = (process.env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, "")

// As the service's pool (src/db/Database.ts): `date` columns stay "YYYY-MM-DD" strings.
const DATE_OID = 1082
const types: Pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === DATE_OID ? (value: string) => value : Pg.types.getTypeParser(oid, format)) as never
}

const pool = new Pg.Pool({
  connectionString: databaseUrl,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  connectionTimeoutMillis: 10_000,
  application_name: "bench-baseline",
  types
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


// ------------------------------------------------------------------------------------------------ reservations
// Reservations.findByExternalId (without FOR UPDATE: the service splices in an empty fragment, hence the
// trailing blank line), for the pre-check of a creation, the check again under the lock, and the get.
const FIND_SQL = `
        SELECT * FROM reservations
        WHERE account_id = $1 AND environment = $2 AND external_id = $3
        `

// Reservations.claim: the non-blocking creation claim (design §6.7).
const LOCK_SQL = `
          SELECT pg_try_advisory_xact_lock($1::bigint) AS locked`

// Reservations.resolveProperty, by property_external_id (what bench/create.lua sends), with the contract setting.
const PROPERTY_BY_EXTERNAL_ID_SQL = `
              SELECT id, account_id, environment, checkin_enabled, requires_contract_signature FROM properties
              WHERE account_id = $1 AND environment = $2
                AND external_id = $3`

// ReservationRepo.insert: `sql.insert` of the draft without its null columns (Transitions.linkDraft's column
// order), RETURNING *: built per request, as the set of null columns depends on the body.
const insertReservationSql = (columns: ReadonlyArray<string>) =>
  `INSERT INTO reservations (${columns.map((c) => `"${c}"`).join(",")}) VALUES (${
    columns.map((_, i) => `$${i + 1}`).join(",")
  }) RETURNING *`

// Outbox.enqueue of one event, with its deliveries to the subscribed active endpoints in the same statement.
const INSERT_EVENT_SQL = `
      WITH ev AS (INSERT INTO events ("id","account_id","environment","reservation_id","type","created_at","body") VALUES ($1,$2,$3,$4,$5,$6,$7) RETURNING seq, id, type, reservation_id, created_at)
      INSERT INTO webhook_deliveries
        (endpoint_id, event_seq, event_id, event_type, reservation_id, account_id, environment, status,
         max_attempts, next_attempt_at, created_at)
      SELECT e.id, ev.seq, ev.id, ev.type, ev.reservation_id, e.account_id, e.environment, 'pending', $8,
        $9, ev.created_at
      FROM ev JOIN webhook_endpoints e
        ON e.account_id = $10 AND e.environment = $11 AND e.is_active
        AND (e.events ? '*' OR e.events ? ev.type)
      ORDER BY ev.seq, e.id`

const API_VERSION = "2026-10-01"

interface Verified {
  readonly accountId: string
  readonly environment: "test" | "live"
}

const verify = async (request: Request): Promise<Verified | undefined> => {
  const key = (request.headers.get("authorization") ?? "").slice(7)
  if (!KEY_PATTERN.test(key)) return undefined
  const hash = createHash("sha256").update(key).digest("hex")
  const row = (await pool.query<VerifiedRow>(VERIFY_SQL, [hash])).rows[0]
  return row === undefined ? undefined : { accountId: row.account_id, environment: row.environment }
}

interface Report {
  readonly status: string
  readonly reported_at: string | null
  readonly warning?: string
  readonly simulated?: boolean
  readonly sends_on?: string | null
  readonly mincit_code?: number | null
  readonly foreign_guests?: number
  readonly exit?: ExitReport
}

interface ExitReport {
  readonly status: string
  readonly sends_on: string | null
  readonly reported_at: string | null
  readonly warning?: string
  readonly simulated?: boolean
}

// SireExitReport's key order.
const encodeExit = (exit: ExitReport) => ({
  status: exit.status,
  sends_on: exit.sends_on,
  reported_at: exit.reported_at,
  ...(exit.warning === undefined ? {} : { warning: exit.warning }),
  ...(exit.simulated === undefined ? {} : { simulated: exit.simulated })
})

interface ReservationRow {
  readonly id: string
  readonly environment: string
  readonly property_id: string
  readonly external_id: string
  readonly source: string | null
  readonly check_in: string
  readonly check_out: string
  readonly guests_count: number
  readonly metadata: Record<string, unknown>
  readonly reservation_status: string
  readonly status: string
  readonly checkin_token: string | null
  readonly guests_registered: number
  readonly registration_complete: boolean
  readonly completed_at: Date | null
  readonly contract_signed_at: Date | null
  readonly tra: Report
  readonly sire: Report
  readonly departed_on: string | null
  readonly fingerprint: string
  readonly created_at: Date
}

const checkinUrl = (row: ReservationRow) =>
  row.checkin_token === null ? null : `${publicBaseUrl}/checkin/${row.checkin_token}`

// Report objects as the service decodes them (ReservationRow: the TraReport/SireReport schemas' key order,
// optional fields only when present), in every answer and event.
const encodeReport = (report: Report, tail: "tra" | "sire") => ({
  status: report.status,
  reported_at: report.reported_at,
  ...(report.warning === undefined ? {} : { warning: report.warning }),
  ...(report.simulated === undefined ? {} : { simulated: report.simulated }),
  ...(tail === "tra"
    ? { sends_on: report.sends_on, mincit_code: report.mincit_code }
    : { foreign_guests: report.foreign_guests, exit: encodeExit(report.exit!) })
})
// Views.reservationResponse (the service sends it with HttpServerResponse.unsafeJson: this key order).
const reservationResponse = (row: ReservationRow, replay: boolean) => ({
  ok: true,
  reservation_id: row.id,
  external_id: row.external_id,
  status: row.status,
  reservation_status: row.reservation_status,
  sandbox: row.environment === "test",
  checkin_token: row.checkin_token,
  checkin_status: row.registration_complete ? "completed" : "pending",
  guests_registered: row.guests_registered,
  tra: encodeReport(row.tra, "tra"),
  sire: encodeReport(row.sire, "sire"),
  departed_on: row.departed_on,
  source: row.source,
  metadata: row.metadata,
  checkin_url: checkinUrl(row),
  created_at: row.created_at.toISOString(),
  idempotent_replay: replay
})

// Views.eventData: the webhook `data` of reservation.created.
const eventData = (row: ReservationRow) => ({
  reservation_id: row.id,
  external_id: row.external_id,
  source: row.source,
  property_id: row.property_id,
  reservation_status: row.reservation_status,
  status: row.status,
  check_in: row.check_in,
  check_out: row.check_out,
  guests_count: row.guests_count,
  checkin_url: checkinUrl(row),
  checkin_status: row.registration_complete ? "completed" : "pending",
  guests_registered: row.guests_registered,
  contract_signed: row.contract_signed_at !== null,
  tra: encodeReport(row.tra, "tra"),
  sire: encodeReport(row.sire, "sire"),
  departed_on: row.departed_on,
  metadata: row.metadata
})

const registrationDetail = (row: ReservationRow) => {
  const response = reservationResponse(row, false)
  return {
    ...response,
    property_id: row.property_id,
    check_in: row.check_in,
    check_out: row.check_out,
    guests_count: row.guests_count,
    completed_at: row.completed_at?.toISOString() ?? null
  }
}

// Reservations.fingerprint and Reservations.lockKey.
const fingerprint = (body: unknown): string => {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === "object"
      ? Object.fromEntries(
        Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])])
      )
      : value
  return createHash("sha256").update(JSON.stringify(canonical(body))).digest("hex")
}
const lockKey = (accountId: string, environment: string, externalId: string) =>
  createHash("sha256").update(`${accountId}\u0000${environment}\u0000${externalId}`).digest().readBigInt64BE(0)
    .toString()

const json = (body: unknown, status: number) =>
  new Response(JSON.stringify(body), { status, headers: JSON_HEADERS })
const failure = (status: number, code: string, error: string, details: Record<string, unknown> = {}) =>
  json({ error, code, details }, status)

const getRegistration = async (request: Request, externalId: string): Promise<Response> => {
  const key = await verify(request)
  if (key === undefined) return unauthorized()
  const row = (await pool.query<ReservationRow>(FIND_SQL, [key.accountId, key.environment, externalId])).rows[0]
  if (row === undefined) {
    return failure(404, "registration_not_found", `no reservation with external_id ${JSON.stringify(externalId)}`, {
      external_id: externalId
    })
  }
  return json(registrationDetail(row), 200)
}

interface CreateBody {
  readonly external_id: string
  readonly source?: string
  readonly property_external_id?: string
  readonly room_number?: string
  readonly check_in: string
  readonly check_out: string
  readonly guest_name: string
  readonly guests_count: number
  readonly expected_guests?: number
  readonly total_amount?: number
  readonly currency?: string
  readonly guest_email?: string
  readonly guest_phone?: string
  readonly notes?: string
  readonly metadata?: Record<string, unknown>
  readonly sandbox_simulate?: string
}

const replayOrConflict = (row: ReservationRow, fp: string) =>
  row.fingerprint === fp
    ? json(reservationResponse(row, true), 200)
    : failure(409, "reservation_conflict", "external_id already exists with different data; use PATCH to change it", {
      external_id: row.external_id,
      reservation_id: row.id
    })
const inProgress = (externalId: string) =>
  failure(409, "creation_in_progress", `another creation of external_id ${JSON.stringify(externalId)} is running; retry`, {
    external_id: externalId
  })

const createReservation = async (request: Request): Promise<Response> => {
  const key = await verify(request)
  if (key === undefined) return unauthorized()
  const body = (await request.json()) as CreateBody
  if (typeof body?.external_id !== "string" || body.property_external_id === undefined || body.currency === "USD") {
    return failure(400, "invalid_request", "the baseline only takes bench/create-body.json's shape")
  }
  const fp = fingerprint(body)
  const existing = (await pool.query<ReservationRow>(FIND_SQL, [key.accountId, key.environment, body.external_id]))
    .rows[0]
  if (existing !== undefined) return replayOrConflict(existing, fp)
  const cop = body.total_amount === undefined ? null : String(body.total_amount)

  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const claim = await client.query<{ locked: boolean }>(LOCK_SQL, [
      lockKey(key.accountId, key.environment, body.external_id)
    ])
    if (claim.rows[0]?.locked !== true) {
      await client.query("ROLLBACK")
      return inProgress(body.external_id)
    }
    const raced = (await client.query<ReservationRow>(FIND_SQL, [key.accountId, key.environment, body.external_id]))
      .rows[0]
    if (raced !== undefined) {
      await client.query("ROLLBACK")
      return replayOrConflict(raced, fp)
    }
    const property = (await client.query<{ id: string; checkin_enabled: boolean; requires_contract_signature: boolean }>(
      PROPERTY_BY_EXTERNAL_ID_SQL,
      [
      key.accountId,
      key.environment,
        body.property_external_id
      ]
    )).rows[0]
    if (property === undefined || !property.checkin_enabled) {
      await client.query("ROLLBACK")
      return failure(404, "property_not_found", `property ${body.property_external_id} not found`, {
        property: body.property_external_id
      })
    }
    const contract = property.requires_contract_signature
    const simulated = key.environment === "test" ? { simulated: true } : {}
    const now = new Date()
    const draft: Array<[string, unknown]> = [
      ["account_id", key.accountId],
      ["environment", key.environment],
      ["property_id", property.id],
      ["external_id", body.external_id],
      ["flow", "link"],
      ["source", body.source ?? null],
      ["room_number", body.room_number ?? null],
      ["check_in", body.check_in],
      ["check_out", body.check_out],
      ["guest_name", body.guest_name],
      ["guests_count", body.guests_count],
      ["expected_guests", body.expected_guests ?? null],
      ["total_amount", body.total_amount === undefined ? null : String(body.total_amount)],
      ["currency", body.currency ?? null],
      ["total_amount_cop", cop],
      ["trm_rate", null],
      ["trm_date", null],
      ["guest_email", body.guest_email ?? null],
      ["guest_phone", body.guest_phone ?? null],
      ["notes", body.notes ?? null],
      ["metadata", JSON.stringify(body.metadata ?? {})],
      ["sandbox_simulate", body.sandbox_simulate ?? null],
      ["motivo", null],
      ["tipo_acomodacion", null],
      ["reservation_status", "confirmed"],
      ["status", "pending_checkin"],
      ["checkin_token", randomBytes(24).toString("base64url")],
      ["guests_registered", 0],
      ["registration_complete", false],
      ["completed_at", null],
      ["contract_required", contract],
      ["contract_signed_at", null],
      ["contract_signer", null],
      ["tra", JSON.stringify({ status: "not_applicable", sends_on: null, ...simulated, reported_at: null, mincit_code: null })],
      ["tra_reported", false],
      ["sire", JSON.stringify({
        status: "not_applicable",
        foreign_guests: 0,
        ...simulated,
        reported_at: null,
        exit: { status: "not_applicable", sends_on: null, reported_at: null }
      })],
      ["sire_reported", false],
      ["fingerprint", fp],
      ["cancelled_at", null],
      ["cancel_reason", null],
      ["created_at", now],
      ["updated_at", now],
      ["report_lease_until", null],
      ["report_retry_at", null],
      ["report_failures", 0],
      ["tra_extension_from", null]
    ]
    const sent = draft.filter(([, value]) => value !== null)
    const row = (await client.query<ReservationRow>(
      insertReservationSql(sent.map(([column]) => column)),
      sent.map(([, value]) => value)
    )).rows[0]!
    const eventId = `evt_${randomBytes(16).toString("hex")}`
    const createdAt = new Date()
    await client.query(INSERT_EVENT_SQL, [
      eventId,
      key.accountId,
      key.environment,
      row.id,
      "reservation.created",
      createdAt,
      JSON.stringify({
        id: eventId,
        type: "reservation.created",
        created_at: createdAt.toISOString(),
        api_version: API_VERSION,
        sandbox: key.environment === "test",
        data: eventData(row)
      }),
      10, // MAX_ATTEMPTS of src/webhooks/RetryPolicy.ts
      createdAt,
      key.accountId,
      key.environment
    ])
    await client.query("COMMIT")
    return json(reservationResponse(row, false), 201)
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {})
    if ((error as { code?: string }).code === "23505") return inProgress(body.external_id)
    throw error
  } finally {
    client.release()
  }
}

const internalError = () =>
  new Response(JSON.stringify({ error: "internal server error; retry", code: "internal_error", details: {} }), {
    status: 500,
    headers: JSON_HEADERS
  })

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  routes: {
    "/readyz": () => Response.json({ status: "ready" }),
    "/api/partners/properties": {
      GET: (request) => listProperties(request).catch(internalError)
    },
    "/api/partners/registrations/:external_id": {
      GET: (request) => getRegistration(request, request.params.external_id).catch(internalError)
    },
    "/api/partners/reservations": {
      POST: (request) => createReservation(request).catch(internalError)
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
