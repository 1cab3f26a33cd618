import { SqlClient, SqlError } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { query } from "../db/Database.ts"
import { isUniqueViolation } from "../db/SqlErrors.ts"
import { checkUsable, type PropertyScope } from "../properties/Property.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { RegistrationNotFound } from "../shared/errors.ts"
import { todayInBogota } from "../shared/Calendar.ts"
import { TrmProvider, usdToCop } from "../trm/Trm.ts"
import * as Machine from "./machine/Machine.ts"
import { linkDraft } from "./machine/Stay.ts"
import { SireFiles } from "./Ports.ts"
import type { CancelResponse, CreateReservation, RegistrationDetail, SubmitRegistration } from "./Reservation.ts"
import { ReservationRepo } from "./ReservationRepo.ts"
import type { ReservationRow } from "./ReservationRow.ts"
import {
  type Amounts,
  creationInProgress,
  fingerprint,
  lockKey,
  refOf,
  replayOrConflict,
  Reservations,
  testKeyOnly
} from "./Reservations.ts"

const notFound = (externalId: string) =>
  new RegistrationNotFound({
    message: `no reservation with external_id ${JSON.stringify(externalId)}`,
    details: { external_id: externalId }
  })

/**
 * The partner API's reservation endpoints 3, 5, 6 and 8 over the owner of a reservation's state (`Reservations`),
 * and the creation frame endpoint 7 shares with endpoint 3 (`creating`, `resolveProperty`): finding the
 * property, the creation claim, the amounts in COP (`amounts`, also endpoint 7's validate), replay or conflict. `departById` is the departure's rule
 * for the panel too.
 */
export class PartnerReservations extends Effect.Service<PartnerReservations>()("reservations/PartnerReservations", {
  dependencies: [ReservationRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ReservationRepo
    const { apply, insert, guestsOf, views } = yield* Reservations
    const sireFiles = yield* SireFiles
    const trm = yield* TrmProvider

    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)

    /**
     * design §6.1: property_id, else property_external_id in the key's (account, environment), else rnt_id.
     * One statement also reads the contract setting.
     */
    const resolveProperty = (key: AuthenticatedKey, body: CreateReservation | SubmitRegistration) =>
      Effect.gen(function*() {
        type Found = PropertyScope & { id: string; requires_contract_signature: boolean }
        const [reference, rows] = body.property_id !== undefined
          ? [body.property_id, yield* query(sql<Found>`
              SELECT id, account_id, environment, checkin_enabled, requires_contract_signature FROM properties
              WHERE id = ${body.property_id}`)]
          : body.property_external_id !== undefined
          ? [body.property_external_id, yield* query(sql<Found>`
              SELECT id, account_id, environment, checkin_enabled, requires_contract_signature FROM properties
              WHERE account_id = ${key.accountId} AND environment = ${key.environment}
                AND external_id = ${body.property_external_id}`)]
          : [body.rnt_id ?? "", yield* query(sql<Found>`
              SELECT id, account_id, environment, checkin_enabled, requires_contract_signature FROM properties
              WHERE account_id = ${key.accountId} AND rnt_id = ${body.rnt_id ?? ""}
              ORDER BY (environment = ${key.environment}) DESC, created_at LIMIT 1`)]
        const property = rows[0]
        yield* checkUsable(property, key, reference)
        return property === undefined
          ? yield* Effect.dieMessage("checkUsable accepted a missing property")
          : { id: property.id, contractRequired: property.requires_contract_signature }
      })

    /**
     * The creation claim of endpoints 3 and 7, inside their transaction: non-blocking, so the loser of two
     * concurrent creations answers at once instead of waiting on the winner (design §6.7).
     */
    const claim = (key: AuthenticatedKey, externalId: string) =>
      Effect.flatMap(
        query(sql<{ locked: boolean }>`
          SELECT pg_try_advisory_xact_lock(${lockKey(key.accountId, key.environment, externalId)}::bigint) AS locked`),
        (rows) => rows[0]?.locked === true ? Effect.void : Effect.fail(creationInProgress(externalId))
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

    /**
     * The frame of endpoints 3 and 7: an existing reservation is a replay or a conflict (decided by `existing`,
     * checked outside and then again under the claim); otherwise `create` writes the new one. A unique
     * violation means a concurrent creation won (design §6.7).
     */
    const creating = <A, E1, E2>(
      key: AuthenticatedKey,
      body: CreateReservation | SubmitRegistration,
      existing: (row: ReservationRow) => Effect.Effect<{ readonly created: boolean; readonly response: A }, E1>,
      create: (money: Amounts) => Effect.Effect<{ readonly created: boolean; readonly response: A }, E2>
    ) =>
      Effect.gen(function*() {
        const found = yield* repo.findCommitted(refOf(key, body.external_id))
        if (Option.isSome(found)) return yield* existing(found.value)
        const money = yield* amounts(body)
        return yield* Effect.gen(function*() {
          yield* claim(key, body.external_id)
          const raced = yield* repo.findByExternalId(refOf(key, body.external_id), { lock: false })
          if (Option.isSome(raced)) return yield* existing(raced.value)
          return yield* create(money)
        }).pipe(sql.withTransaction)
      }).pipe(
        Effect.catchIf(
          (error): error is SqlError.SqlError => error instanceof SqlError.SqlError,
          (error) => isUniqueViolation(error) ? Effect.fail(creationInProgress(body.external_id)) : Effect.die(error)
        )
      )

    // ------------------------------------------------------------------------------------------- endpoints

    /** Endpoint 3. Identical retries replay (200); a concurrent creation loses at once (design §6.7). */
    const create = (key: AuthenticatedKey, body: CreateReservation) =>
      Effect.gen(function*() {
        yield* testKeyOnly(key, body)
        const fp = fingerprint(body)
        const replay = (row: ReservationRow) => views.reservationResponse(row, true)
        return yield* creating(key, body, (row) => replayOrConflict(row, fp, replay), (money) =>
          Effect.gen(function*() {
            const property = yield* resolveProperty(key, body)
            const draft = linkDraft({
              key,
              body,
              propertyId: property.id,
              contractRequired: property.contractRequired,
              money,
              fingerprint: fp,
              at: yield* nowDate
            })
            const { row } = yield* insert(draft, [])
            return { created: true, response: views.reservationResponse(row, false) }
          }))
      }).pipe(TraceContext.withSpan("Reservations.create"))

    /** Endpoints 6 and 8. Without include=guests the answer carries no personal data. */
    const get = (key: AuthenticatedKey, externalId: string, includeGuests: boolean) =>
      Effect.flatMap(repo.findCommitted(refOf(key, externalId)), (found) => {
        if (Option.isNone(found)) return Effect.fail(notFound(externalId))
        const row = found.value
        const detail: RegistrationDetail = {
          ...views.reservationResponse(row, false),
          property_id: row.property_id,
          check_in: row.check_in,
          check_out: row.check_out,
          guests_count: row.guests_count,
          completed_at: row.completed_at?.toISOString() ?? null
        }
        return includeGuests
          ? Effect.map(guestsOf(row), (guests): RegistrationDetail => ({ ...detail, guests }))
          : Effect.succeed(detail)
      })

    /** The reservation of a partner's external_id, or 404 registration_not_found. */
    const idOf = (key: AuthenticatedKey, externalId: string) =>
      Effect.flatMap(
        repo.findByExternalId(refOf(key, externalId), { lock: false }),
        Option.match({ onNone: () => Effect.fail(notFound(externalId)), onSome: (row) => Effect.succeed(row.id) })
      )

    /** Endpoint 5: idempotent; reports already out are not undone (spec rule 7). */
    const cancel = (key: AuthenticatedKey, externalId: string, reason: string | undefined) =>
      Effect.gen(function*() {
        const { row, result } = yield* apply(yield* idOf(key, externalId), Machine.Command.Cancel({ reason }))
        const { already_reported } = result
        // design §6.8: once in a generated or posted SIRE file a movement is sent; the warning names the file(s).
        const files = already_reported.sire ? yield* sireFiles.fileNames(row.id) : []
        const reported = [
          ...(already_reported.tra ? ["the TRA"] : []),
          ...(already_reported.sire ? [`SIRE${files.length > 0 ? ` (in ${files.join(", ")})` : ""}`] : [])
        ]
        const response: CancelResponse = {
          ...views.registrationStatus(row),
          already_cancelled: result.already_cancelled,
          already_reported,
          ...(reported.length === 0
            ? {}
            : { warning: `already reported to ${reported.join(" and ")}; the report is not undone automatically` })
        }
        return response
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("Reservations.cancel"))

    /**
     * The departure (design §6.8) of the reservation `id`: the rules are the machine's `Depart`; an exit movement
     * already in a SIRE file counts as sent. Answers the reservation as stored.
     */
    const departById = (id: string, departedOn: string) =>
      Effect.gen(function*() {
        const today = yield* todayInBogota
        const exitInFile = yield* sireFiles.exitInFile(id)
        const { row } = yield* apply(id, Machine.Command.Depart({ departedOn, today, exitInFile }))
        return row
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("Reservations.depart"))

    /** `POST /api/partners/reservations/departure`: answers RegistrationStatus. */
    const depart = (key: AuthenticatedKey, externalId: string, departedOn: string) =>
      Effect.flatMap(idOf(key, externalId), (id) => Effect.map(departById(id, departedOn), views.registrationStatus))

    return { create, get, cancel, depart, departById, idOf, creating, resolveProperty, amounts } as const
  })
}) {}
