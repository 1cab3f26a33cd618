import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { PgPool, rawQuery } from "../db/Database.ts"
import { checkUsable, type PropertyScope } from "../properties/Property.ts"
import {
  CreationInProgress,
  InvalidRequest,
  RegistrationNotFound,
  ReservationConflict
} from "../shared/errors.ts"
import type { Environment } from "../shared/Environment.ts"
import { TrmProvider, todayInBogota, usdToCop } from "../trm/Trm.ts"
import { Outbox } from "../webhooks/Outbox.ts"
import { newCheckinToken } from "./CheckinToken.ts"
import * as Lifecycle from "./Lifecycle.ts"
import { type GuestRow, photosRetained, type ReservationRow, snapshotOf } from "./ReservationRow.ts"
import { makeViews } from "./Views.ts"
import type { CancelResponse, CreateReservation, Guest, RegistrationDetail, SubmitRegistration } from "./Reservation.ts"

/**
 * design §6.7: the known fields as sent (unknown ones already dropped by the schema), keys sorted at every
 * depth, array order kept, no defaults filled in.
 */
export const fingerprint = (body: unknown): string => {
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

/** Both halves of a 64-bit advisory-lock key for one (account, environment, external_id). */
export const lockKey = (accountId: string, environment: Environment, externalId: string) =>
  createHash("sha256").update(`${accountId}\u0000${environment}\u0000${externalId}`).digest().readBigInt64BE(0)
    .toString()

// The reservation by external_id, on the raw pool (`rawQuery`, docs/performance.md): the pre-check of a creation
// and the read of endpoints 6 and 8, never inside a transaction. The text is the one `findByExternalId` sends
// (whitespace included, with the empty FOR UPDATE fragment), so bench/run.sh's same-SQL check covers both.
const FIND_SQL = `
        SELECT * FROM reservations
        WHERE account_id = $1 AND environment = $2 AND external_id = $3
        `

/** The stored amounts of a creation: as sent, and in COP with the rate used (design §6.11). */
export interface Amounts {
  readonly cop: string | null
  readonly rate: string | null
  readonly date: string | null
}

/** The columns endpoints 3 and 7 fill alike from the fields their bodies share. */
export const creationColumns = (
  key: AuthenticatedKey,
  body: CreateReservation | SubmitRegistration,
  propertyId: string,
  money: Amounts,
  fp: string,
  now: Date
) => ({
  account_id: key.accountId,
  environment: key.environment,
  property_id: propertyId,
  external_id: body.external_id,
  source: body.source ?? null,
  room_number: body.room_number ?? null,
  check_in: body.check_in,
  check_out: body.check_out,
  guest_name: body.guest_name,
  guests_count: body.guests_count,
  expected_guests: body.expected_guests ?? null,
  total_amount: body.total_amount === undefined ? null : String(body.total_amount),
  currency: body.currency ?? null,
  total_amount_cop: money.cop,
  trm_rate: money.rate,
  trm_date: money.date,
  metadata: JSON.stringify(body.metadata ?? {}),
  sandbox_simulate: body.sandbox_simulate ?? null,
  reservation_status: "confirmed" as const,
  fingerprint: fp,
  created_at: now,
  updated_at: now
})

export const reservationConflict = (row: Pick<ReservationRow, "id" | "external_id">) =>
  new ReservationConflict({
    message: `external_id ${JSON.stringify(row.external_id)} already exists with different data; use PATCH to change it`,
    details: { external_id: row.external_id, reservation_id: row.id }
  })

/** `sandbox_simulate` is for test keys only (design §6.12). */
export const testKeyOnly = (key: AuthenticatedKey, body: { readonly sandbox_simulate?: unknown }) =>
  key.environment === "live" && body.sandbox_simulate !== undefined
    ? Effect.fail(
      new InvalidRequest({
        message: "invalid request: sandbox_simulate",
        details: { fields: [{ field: "sandbox_simulate", message: "is only accepted with a test key" }] }
      })
    )
    : Effect.void

export const creationInProgress = (externalId: string) =>
  new CreationInProgress({
    message: `another creation of external_id ${JSON.stringify(externalId)} is running; retry`,
    details: { external_id: externalId }
  })

const UNIQUE_VIOLATION = "23505"
export const isUniqueViolation = (error: SqlError.SqlError) =>
  (error.cause as { code?: string } | undefined)?.code === UNIQUE_VIOLATION

/** Endpoints 3, 5, 6 and 8: create, cancel and read reservations; every change writes its events with it. */
export class Reservations extends Effect.Service<Reservations>()("reservations/Reservations", {
  dependencies: [Outbox.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool
    const outbox = yield* Outbox
    const trm = yield* TrmProvider
    const { publicBaseUrl } = yield* AppConfig

    const views = makeViews(publicBaseUrl)
    const { eventData, registrationStatus, reservationResponse } = views

    const findByExternalId = (key: AuthenticatedKey, externalId: string, forUpdate: boolean) =>
      sql<ReservationRow>`
        SELECT * FROM reservations
        WHERE account_id = ${key.accountId} AND environment = ${key.environment} AND external_id = ${externalId}
        ${forUpdate ? sql`FOR UPDATE` : sql``}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

    /** `findByExternalId(key, externalId, false)` outside any transaction, on the raw pool. */
    const findCommitted = (key: AuthenticatedKey, externalId: string) =>
      Effect.map(
        rawQuery<ReservationRow>(pool, FIND_SQL, [key.accountId, key.environment, externalId]),
        (rows) => Option.fromNullable(rows[0])
      )

    const guestsOf = (row: ReservationRow) =>
      Effect.gen(function*() {
        const rows = yield* sql<GuestRow>`
          SELECT is_primary, tipo_documento, numero_documento, nombre, apellido, nacionalidad, fecha_nacimiento,
                 email, phone, address, ciudad_residencia, pais_residencia, registered_at, document_uploaded
          FROM guests WHERE reservation_id = ${row.id} ORDER BY position`
        const retained = photosRetained(row.check_out, yield* todayInBogota)
        return rows.map((guest): Guest => ({
          ...guest,
          registered_at: guest.registered_at?.toISOString() ?? null,
          document_uploaded: retained ? guest.document_uploaded : null
        }))
      })

    /**
     * design §6.1: property_id, else property_external_id in the key's (account, environment), else rnt_id.
     * One statement also reads the contract setting.
     */
    const resolveProperty = (key: AuthenticatedKey, body: CreateReservation) =>
      Effect.gen(function*() {
        type Found = PropertyScope & { id: string; requires_contract_signature: boolean }
        const [reference, rows] = body.property_id !== undefined
          ? [body.property_id, yield* sql<Found>`
              SELECT id, account_id, environment, checkin_enabled, requires_contract_signature FROM properties
              WHERE id = ${body.property_id}`]
          : body.property_external_id !== undefined
          ? [body.property_external_id, yield* sql<Found>`
              SELECT id, account_id, environment, checkin_enabled, requires_contract_signature FROM properties
              WHERE account_id = ${key.accountId} AND environment = ${key.environment}
                AND external_id = ${body.property_external_id}`]
          : [body.rnt_id!, yield* sql<Found>`
              SELECT id, account_id, environment, checkin_enabled, requires_contract_signature FROM properties
              WHERE account_id = ${key.accountId} AND rnt_id = ${body.rnt_id!}
              ORDER BY (environment = ${key.environment}) DESC, created_at LIMIT 1`]
        const property = rows[0]
        yield* checkUsable(property, key, reference)
        return { id: property!.id, contractRequired: property!.requires_contract_signature }
      })

    /**
     * The creation claim of endpoints 3 and 7, inside their transaction: non-blocking, so the loser of two
     * concurrent creations answers at once instead of waiting on the winner (design §6.7).
     */
    const claim = (key: AuthenticatedKey, externalId: string) =>
      Effect.flatMap(
        sql<{ locked: boolean }>`
          SELECT pg_try_advisory_xact_lock(${lockKey(key.accountId, key.environment, externalId)}::bigint) AS locked`,
        (rows) => rows[0]?.locked === true ? Effect.void : Effect.fail(creationInProgress(externalId))
      )

    /** What a property's settings say about reporting (design §6.9). */
    const reportingSettings = (propertyId: string) =>
      Effect.map(
        sql<Lifecycle.ReportingSettings>`
          SELECT reports_tra, reports_sire, tra_token IS NOT NULL AS has_tra_token,
                 sire_hotel_code IS NOT NULL AS has_sire_hotel_code
          FROM properties WHERE id = ${propertyId}`,
        (rows) => rows[0]!
      )

    /** USD is converted at creation with the TRM of the request's Bogotá date (design §6.11). */
    const amounts = (body: CreateReservation | SubmitRegistration) =>
      Effect.gen(function*() {
        if (body.total_amount === undefined) return { cop: null, rate: null, date: null } satisfies Amounts
        if (body.currency !== "USD") return { cop: String(body.total_amount), rate: null, date: null } satisfies Amounts
        const date = yield* todayInBogota
        const { rate } = yield* trm.rateFor(date)
        return { cop: usdToCop(body.total_amount, rate), rate, date } satisfies Amounts
      })

    const replayOrConflict = (row: ReservationRow, fp: string) =>
      row.fingerprint === fp
        ? Effect.succeed({ created: false, response: reservationResponse(row, true) })
        : Effect.fail(
          reservationConflict(row)
        )

    /** Endpoint 3. Identical retries replay (200); a concurrent creation loses at once (design §6.7). */
    const create = (key: AuthenticatedKey, body: CreateReservation) =>
      Effect.gen(function*() {
        yield* testKeyOnly(key, body)
        const fp = fingerprint(body)
        const existing = yield* findCommitted(key, body.external_id)
        if (Option.isSome(existing)) return yield* replayOrConflict(existing.value, fp)
        const money = yield* amounts(body)

        return yield* Effect.gen(function*() {
          yield* claim(key, body.external_id)
          const raced = yield* findByExternalId(key, body.external_id, false)
          if (Option.isSome(raced)) return yield* replayOrConflict(raced.value, fp)

          const property = yield* resolveProperty(key, body)
          const now = DateTime.toDateUtc(yield* DateTime.now)
          const snapshot = Lifecycle.newReservation({
            guests_count: body.guests_count,
            contract_required: property.contractRequired,
            check_in: body.check_in,
            check_out: body.check_out
          })
          const reports = Lifecycle.initialReports(key.environment)
          const [row] = yield* sql<ReservationRow>`
            INSERT INTO reservations ${
            sql.insert({
              ...creationColumns(key, body, property.id, money, fp, now),
              flow: "link",
              guest_email: body.guest_email ?? null,
              guest_phone: body.guest_phone ?? null,
              notes: body.notes ?? null,
              status: Lifecycle.deriveStatus(snapshot),
              checkin_token: newCheckinToken(),
              contract_required: property.contractRequired,
              tra: JSON.stringify({ ...reports.tra, reported_at: null, mincit_code: null }),
              sire: JSON.stringify({ ...reports.sire, reported_at: null })
            })
          } RETURNING *`
          yield* outbox.enqueue({
            accountId: key.accountId,
            environment: key.environment,
            reservationId: row!.id,
            types: Lifecycle.eventsBetween(null, snapshot),
            data: eventData(row!),
            guests: []
          })
          return { created: true, response: reservationResponse(row!, false) }
        }).pipe(sql.withTransaction)
      }).pipe(
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(creationInProgress(body.external_id))
            : Effect.die(error)),
        Effect.withSpan("Reservations.create")
      )

    const notFound = (externalId: string) =>
      new RegistrationNotFound({
        message: `no reservation with external_id ${JSON.stringify(externalId)}`,
        details: { external_id: externalId }
      })

    /** Endpoints 6 and 8. Without include=guests the answer carries no personal data. */
    const get = (key: AuthenticatedKey, externalId: string, includeGuests: boolean) =>
      Effect.flatMap(findCommitted(key, externalId), (found) => {
        if (Option.isNone(found)) return Effect.fail(notFound(externalId))
        const row = found.value
        const detail: RegistrationDetail = {
          ...reservationResponse(row, false),
          property_id: row.property_id,
          check_in: row.check_in,
          check_out: row.check_out,
          guests_count: row.guests_count,
          completed_at: row.completed_at?.toISOString() ?? null
        }
        return includeGuests
          ? Effect.map(Effect.orDie(guestsOf(row)), (guests): RegistrationDetail => ({ ...detail, guests }))
          : Effect.succeed(detail)
      })

    /** Endpoint 5: idempotent; reports already out are not undone (spec rule 7). */
    const cancel = (key: AuthenticatedKey, externalId: string, reason: string | undefined) =>
      Effect.gen(function*() {
        const found = yield* findByExternalId(key, externalId, true)
        if (Option.isNone(found)) return yield* notFound(externalId)
        const row = found.value
        const plan = Lifecycle.cancel(snapshotOf(row))
        // design §6.8: once in a generated or posted SIRE file a movement is sent; the warning names the file(s).
        const sireFiles = plan.already_reported.sire
          ? (yield* sql<{ name: string }>`
              SELECT DISTINCT f.name FROM sire_movements m JOIN sire_files f ON f.id = m.file_id
              WHERE m.reservation_id = ${row.id} ORDER BY f.name`).map((file) => file.name)
          : []
        const warning = plan.already_reported.tra || plan.already_reported.sire
          ? `already reported to ${
            [
              plan.already_reported.tra ? "the TRA" : null,
              plan.already_reported.sire ? `SIRE${sireFiles.length > 0 ? ` (in ${sireFiles.join(", ")})` : ""}` : null
            ].filter((x) => x !== null).join(" and ")
          }; the report is not undone automatically`
          : undefined
        let current = row
        if (!plan.already_cancelled) {
          const now = DateTime.toDateUtc(yield* DateTime.now)
          const tra = plan.withdrawn.tra
            ? { ...row.tra, status: "not_applicable" as const, warning: Lifecycle.Warnings.cancelledBeforeSending }
            : row.tra
          const sire = plan.withdrawn.sire
            ? { ...row.sire, status: "not_applicable" as const, warning: Lifecycle.Warnings.cancelledBeforeSending }
            : row.sire
          const [updated] = yield* sql<ReservationRow>`
            UPDATE reservations SET
              reservation_status = 'cancelled', status = 'cancelled',
              tra = ${JSON.stringify(tra)}::jsonb, sire = ${JSON.stringify(sire)}::jsonb,
              cancelled_at = ${now}, cancel_reason = ${reason ?? null}, updated_at = ${now}
            WHERE id = ${row.id} RETURNING *`
          current = updated!
          yield* outbox.enqueue({
            accountId: key.accountId,
            environment: key.environment,
            reservationId: row.id,
            types: Lifecycle.eventsBetween(snapshotOf(row), plan.next),
            data: eventData(current),
            guests: []
          })
        }
        const response: CancelResponse = {
          ...registrationStatus(current),
          already_cancelled: plan.already_cancelled,
          already_reported: plan.already_reported,
          ...(warning === undefined ? {} : { warning })
        }
        return response
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Reservations.cancel"))

    return { create, get, cancel, findByExternalId, guestsOf, resolveProperty, amounts, views, claim, reportingSettings } as const
  })
}) {}

