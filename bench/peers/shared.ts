/**
 * What the minimal baseline (bench/baseline.ts) and the two peers (bench/peers/hono.ts, bench/peers/fastify.ts)
 * share for `npm run bench` (docs/performance.md, "The peers"): the service's SQL texts, the data access of the
 * three benchmarked requests with the service's statements, parameters and transaction shape, and the answers'
 * bodies in the service's key order. Only the HTTP layer (routing, validation, serialization) differs per server.
 * No Bun API here: the Fastify peer runs on Node.
 *
 * - `GET /api/partners/properties`: the key lookup of `ApiKeys.verify`, then the listing of `Properties.list`.
 * - `GET /api/partners/registrations/:external_id`: the key lookup, then the reservation by external_id
 *   (`Reservations.get`, without include=guests).
 * - `POST /api/partners/reservations`: the key lookup and the pre-check outside the transaction, then on one
 *   connection BEGIN, the advisory lock, the check again, the property, the reservation INSERT … RETURNING *,
 *   the reservation.created event, COMMIT (`Reservations.create`, only its path for a new reservation on a
 *   usable property in COP or without amount: what bench/create.lua sends).
 * The service's x-request-id and x-ratelimit-* headers are not sent (no rate limiting here).
 */
import { createHash, randomBytes } from "node:crypto"
import Pg from "pg"

// ------------------------------------------------------------------------------------------------ configuration
/** The environment every bench server reads: DATABASE_URL, PORT, PUBLIC_BASE_URL, DB_POOL_SIZE. */
export const benchConfig = () => {
  const databaseUrl = process.env.DATABASE_URL
  if (!databaseUrl) throw new Error("DATABASE_URL is required")
  const port = Number(process.env.PORT ?? 3001)
  return {
    databaseUrl,
    port,
    poolSize: Number(process.env.DB_POOL_SIZE ?? 10),
    publicBaseUrl: (process.env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, "")
  }
}
export type BenchConfig = ReturnType<typeof benchConfig>

// As the service's pool (src/db/Database.ts): `date` columns stay "YYYY-MM-DD" strings.
const DATE_OID = 1082
const types: Pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === DATE_OID ? (value: string) => value : Pg.types.getTypeParser(oid, format)) as never
}

/** A `pg` Pool of the service's size (DB_POOL_SIZE), connected once before it is returned. */
export const makePool = async (config: BenchConfig, applicationName: string): Promise<Pg.Pool> => {
  const pool = new Pg.Pool({
    connectionString: config.databaseUrl,
    max: config.poolSize,
    connectionTimeoutMillis: 10_000,
    application_name: applicationName,
    types
  })
  pool.on("error", () => {})
  await pool.query("SELECT 1")
  return pool
}

/** SIGTERM / SIGINT: stop listening, end the pool, exit. */
export const stopOnSignal = (pool: Pg.Pool, close: () => unknown) => {
  const stop = () => {
    void Promise.resolve(close()).catch(() => {}).finally(() => pool.end().finally(() => process.exit(0)))
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}

// ------------------------------------------------------------------------------------------------ SQL
// The SQL texts below are the service's, whitespace included (compare with log_statement=all: bench/run.sh
// does, before measuring). ApiKeys.verify:
export const VERIFY_SQL = `
            SELECT k.id AS key_id, k.account_id, k.environment,
                   a.reads_per_minute AS reads, a.writes_per_minute AS writes, a.tests_per_minute AS tests
            FROM api_keys k JOIN accounts a ON a.id = k.account_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL`

// Properties.list (PROPERTY_COLUMNS spliced in with sql.literal):
export const LIST_SQL = `
        SELECT id, account_id, environment, name, internal_name, external_id, rnt_id, checkin_enabled,
  reports_tra, reports_sire, requires_contract_signature, requires_document_photos FROM properties
        WHERE account_id = $1 AND environment = $2
        ORDER BY created_at, id`

// Reservations.findByExternalId (without FOR UPDATE: the service splices in an empty fragment, hence the
// trailing blank line), for the pre-check of a creation, the check again under the lock, and the get.
export const FIND_SQL = `
        SELECT * FROM reservations
        WHERE account_id = $1 AND environment = $2 AND external_id = $3
        `

// Reservations.claim: the non-blocking creation claim (design §6.7).
export const LOCK_SQL = `
          SELECT pg_try_advisory_xact_lock($1::bigint) AS locked`

// Reservations.resolveProperty, by property_external_id (what bench/create.lua sends), with the contract setting.
export const PROPERTY_BY_EXTERNAL_ID_SQL = `
              SELECT id, account_id, environment, checkin_enabled, requires_contract_signature FROM properties
              WHERE account_id = $1 AND environment = $2
                AND external_id = $3`

// ReservationRepo.insert: `sql.insert` of the draft without its null columns (Stay.linkDraft's column
// order), RETURNING *: built per request, as the set of null columns depends on the body.
export const insertReservationSql = (columns: ReadonlyArray<string>) =>
  `INSERT INTO reservations (${columns.map((c) => `"${c}"`).join(",")}) VALUES (${
    columns.map((_, i) => `$${i + 1}`).join(",")
  }) RETURNING *`

// Outbox.enqueue of one event, with its deliveries to the subscribed active endpoints in the same statement.
export const INSERT_EVENT_SQL = `
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
const KEY_PATTERN = /^svc_(test|live)_([A-Za-z0-9_-]{43})$/

// ------------------------------------------------------------------------------------------------ rows
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

export interface Verified {
  readonly accountId: string
  readonly environment: "test" | "live"
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

export interface ReservationRow {
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

/** Endpoint 3's body, the fields bench/create-body.json sends (the servers validate it their own way). */
export interface CreateBody {
  readonly external_id: string
  readonly source?: string | undefined
  readonly property_external_id?: string | undefined
  readonly room_number?: string | undefined
  readonly check_in: string
  readonly check_out: string
  readonly guest_name: string
  readonly guests_count: number
  readonly expected_guests?: number | undefined
  readonly total_amount?: number | undefined
  readonly currency?: string | undefined
  readonly guest_email?: string | undefined
  readonly guest_phone?: string | undefined
  readonly notes?: string | undefined
  readonly metadata?: Record<string, unknown> | undefined
  readonly sandbox_simulate?: string | undefined
}

// ------------------------------------------------------------------------------------------------ answers
/** A status and the object to send as JSON: each server encodes it its own way. */
export interface Answer {
  readonly status: number
  readonly body: unknown
}

export const failure = (status: number, code: string, error: string, details: Record<string, unknown> = {}): Answer => ({
  status,
  body: { error, code, details }
})
export const UNAUTHORIZED = failure(
  401,
  "unauthorized",
  "missing, invalid or revoked API key; send Authorization: Bearer svc_test_… or svc_live_…"
)
export const INTERNAL_ERROR = failure(500, "internal_error", "internal server error; retry")
export const NOT_FOUND = failure(404, "not_found", "not found")

// Properties.list's view (PropertyView's key order).
const propertyView = (p: PropertyRow) => ({
  property_id: p.id,
  external_id: p.external_id,
  rnt_id: p.rnt_id,
  name: p.name,
  internal_name: p.internal_name,
  checkin_enabled: p.checkin_enabled,
  compliance: { tra: p.reports_tra, sire: p.reports_sire },
  requires_contract_signature: p.requires_contract_signature,
  requires_document_photos: p.requires_document_photos
})

// SireExitReport's key order.
const encodeExit = (exit: ExitReport) => ({
  status: exit.status,
  sends_on: exit.sends_on,
  reported_at: exit.reported_at,
  ...(exit.warning === undefined ? {} : { warning: exit.warning }),
  ...(exit.simulated === undefined ? {} : { simulated: exit.simulated })
})

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

/** What builds checkin_url: PUBLIC_BASE_URL without its trailing slashes. */
type BaseUrl = string
const checkinUrl = (row: ReservationRow, base: BaseUrl) =>
  row.checkin_token === null ? null : `${base}/checkin/${row.checkin_token}`

// Views.reservationResponse (the service sends it with HttpServerResponse.unsafeJson: this key order).
const reservationResponse = (row: ReservationRow, replay: boolean, base: BaseUrl) => ({
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
  checkin_url: checkinUrl(row, base),
  created_at: row.created_at.toISOString(),
  idempotent_replay: replay
})

// Views.eventData: the webhook `data` of reservation.created.
const eventData = (row: ReservationRow, base: BaseUrl) => ({
  reservation_id: row.id,
  external_id: row.external_id,
  source: row.source,
  property_id: row.property_id,
  reservation_status: row.reservation_status,
  status: row.status,
  check_in: row.check_in,
  check_out: row.check_out,
  guests_count: row.guests_count,
  checkin_url: checkinUrl(row, base),
  checkin_status: row.registration_complete ? "completed" : "pending",
  guests_registered: row.guests_registered,
  contract_signed: row.contract_signed_at !== null,
  tra: encodeReport(row.tra, "tra"),
  sire: encodeReport(row.sire, "sire"),
  departed_on: row.departed_on,
  metadata: row.metadata
})

const registrationDetail = (row: ReservationRow, base: BaseUrl) => ({
  ...reservationResponse(row, false, base),
  property_id: row.property_id,
  check_in: row.check_in,
  check_out: row.check_out,
  guests_count: row.guests_count,
  completed_at: row.completed_at?.toISOString() ?? null
})

// ------------------------------------------------------------------------------------------------ requests
/** The bench's data access: the service's statements on one `pg` Pool; each request returns an `Answer`. */
export const partnerQueries = (pool: Pg.Pool, publicBaseUrl: string) => {
  /** ApiKeys.verify, from the Authorization header (HttpApiSecurity.bearer takes it minus "Bearer "). */
  const verify = async (authorization: string | null | undefined): Promise<Verified | undefined> => {
    const key = (authorization ?? "").slice(7)
    if (!KEY_PATTERN.test(key)) return undefined
    const hash = createHash("sha256").update(key).digest("hex")
    const row = (await pool.query<VerifiedRow>(VERIFY_SQL, [hash])).rows[0]
    return row === undefined ? undefined : { accountId: row.account_id, environment: row.environment }
  }

  const listProperties = async (key: Verified): Promise<Answer> => {
    const listed = await pool.query<PropertyRow>(LIST_SQL, [key.accountId, key.environment])
    return { status: 200, body: { properties: listed.rows.map(propertyView) } }
  }

  const getRegistration = async (key: Verified, externalId: string): Promise<Answer> => {
    const row = (await pool.query<ReservationRow>(FIND_SQL, [key.accountId, key.environment, externalId])).rows[0]
    if (row === undefined) {
      return failure(404, "registration_not_found", `no reservation with external_id ${JSON.stringify(externalId)}`, {
        external_id: externalId
      })
    }
    return { status: 200, body: registrationDetail(row, publicBaseUrl) }
  }

  const replayOrConflict = (row: ReservationRow, fp: string): Answer =>
    row.fingerprint === fp
      ? { status: 200, body: reservationResponse(row, true, publicBaseUrl) }
      : failure(409, "reservation_conflict", "external_id already exists with different data; use PATCH to change it", {
        external_id: row.external_id,
        reservation_id: row.id
      })
  const inProgress = (externalId: string) =>
    failure(409, "creation_in_progress", `another creation of external_id ${JSON.stringify(externalId)} is running; retry`, {
      external_id: externalId
    })

  const createReservation = async (key: Verified, body: CreateBody): Promise<Answer> => {
    if (body.property_external_id === undefined || body.currency === "USD") {
      return failure(400, "invalid_request", "the bench servers only take bench/create-body.json's shape")
    }
    const fp = fingerprint(body)
    const existing = (await pool.query<ReservationRow>(FIND_SQL, [key.accountId, key.environment, body.external_id]))
      .rows[0]
    if (existing !== undefined) return replayOrConflict(existing, fp)

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
        [key.accountId, key.environment, body.property_external_id]
      )).rows[0]
      if (property === undefined || !property.checkin_enabled) {
        await client.query("ROLLBACK")
        return failure(404, "property_not_found", `property ${body.property_external_id} not found`, {
          property: body.property_external_id
        })
      }
      const sent = reservationDraft(key, body, property, fp).filter(([, value]) => value !== null)
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
          data: eventData(row, publicBaseUrl)
        }),
        10, // MAX_ATTEMPTS of src/webhooks/RetryPolicy.ts
        createdAt,
        key.accountId,
        key.environment
      ])
      await client.query("COMMIT")
      return { status: 201, body: reservationResponse(row, false, publicBaseUrl) }
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {})
      if ((error as { code?: string }).code === "23505") return inProgress(body.external_id)
      throw error
    } finally {
      client.release()
    }
  }

  return { verify, listProperties, getRegistration, createReservation }
}
export type PartnerQueries = ReturnType<typeof partnerQueries>

// Stay.linkDraft (src/reservations/machine/Stay.ts): every column of a new reservation, in the service's order
// (nulls are left out).
const reservationDraft = (
  key: Verified,
  body: CreateBody,
  property: { id: string; requires_contract_signature: boolean },
  fp: string
): Array<[string, unknown]> => {
  const simulated = key.environment === "test" ? { simulated: true } : {}
  const amount = body.total_amount === undefined ? null : String(body.total_amount)
  const now = new Date()
  return [
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
    ["total_amount", amount],
    ["currency", body.currency ?? null],
    ["total_amount_cop", amount],
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
    ["contract_required", property.requires_contract_signature],
    ["contract_signed_at", null],
    ["contract_signer", null],
    ["tra", JSON.stringify({ status: "not_applicable", sends_on: null, ...simulated, reported_at: null, mincit_code: null })],
    ["sire", JSON.stringify({
      status: "not_applicable",
      foreign_guests: 0,
      ...simulated,
      reported_at: null,
      exit: { status: "not_applicable", sends_on: null, reported_at: null }
    })],
    ["tra_reported", false],
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
