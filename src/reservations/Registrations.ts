import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { DuplicateDocument, InvalidRequest, RegistrationOpen, RegistrationRejected } from "../shared/errors.ts"
import { todayInBogota } from "../trm/Trm.ts"
import { enqueuePhotoFetches } from "../documents/PhotoFetcher.ts"
import { Outbox } from "../webhooks/Outbox.ts"
import { storedReports } from "../compliance/Simulated.ts"
import * as Lifecycle from "./Lifecycle.ts"
import { bornAfter, duplicateDocuments, guestCountMismatch, type SubmitRegistration } from "./Reservation.ts"
import type { ReservationRow } from "./ReservationRow.ts"
import {
  creationColumns,
  creationInProgress,
  fingerprint,
  isUniqueViolation,
  reservationConflict,
  Reservations,
  testKeyOnly
} from "./Reservations.ts"

/**
 * Endpoint 7 (design §6.5): the partner's own form sends every guest at once; the reservation is created with
 * registration closed, its reports become due at once (test keys: simulated outcome), and its events —
 * reservation.created, registration.completed, then the report events — commit with it.
 */
export class Registrations extends Effect.Service<Registrations>()("reservations/Registrations", {
  dependencies: [Outbox.Default, Reservations.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const reservations = yield* Reservations
    const { findByExternalId, guestsOf, resolveProperty, amounts, views } = reservations
    const { eventData, registrationStatus } = views


    /** An existing reservation with this external_id: link flow → 409 registration_open; else replay or conflict. */
    const replayOrRefuse = (row: ReservationRow, fp: string) => {
      if (row.flow === "link") {
        return Effect.fail(
          new RegistrationOpen({
            message: `external_id ${
              JSON.stringify(row.external_id)
            } was created without guests; they register through the check-in link`,
            details: { external_id: row.external_id, reservation_id: row.id }
          })
        )
      }
      return row.fingerprint === fp
        ? Effect.succeed({ created: false, response: registrationStatus(row) })
        : Effect.fail(
          reservationConflict(row)
        )
    }

    /** Rules on the body that need no database: sandbox_simulate, guest count, duplicates, birth dates. */
    const validate = (key: AuthenticatedKey, body: SubmitRegistration) =>
      Effect.gen(function*() {
        yield* testKeyOnly(key, body)
        const mismatch = guestCountMismatch(body)
        if (mismatch !== undefined) {
          return yield* new RegistrationRejected({
            message:
              `guests_count is ${mismatch.guests_count} but ${mismatch.guests} guests were sent; they must be equal`,
            details: mismatch
          })
        }
        const duplicates = duplicateDocuments(body.guests)
        if (duplicates.length > 0) {
          const first = duplicates[0]!
          return yield* new DuplicateDocument({
            message: `numero_documento ${JSON.stringify(first.numero_documento)} repeats among guests ${
              first.indexes.map((i) => `guests[${i}]`).join(", ")
            }`,
            details: {
              duplicates: duplicates.map((d) => ({
                numero_documento: d.numero_documento,
                guests: d.indexes.map((i) => `guests[${i}]`),
                positions: d.indexes
              }))
            }
          })
        }
        const unborn = bornAfter(body.guests, yield* todayInBogota)
        if (unborn.length > 0) {
          return yield* new InvalidRequest({
            message: `invalid request: ${unborn.map((i) => `guests[${i}].fecha_nacimiento`).join(", ")}`,
            details: {
              fields: unborn.map((i) => ({ field: `guests[${i}].fecha_nacimiento`, message: "must not be in the future" }))
            }
          })
        }
      })

    /** Endpoint 7. 201 new; 200 for an identical repeat (same registration); a concurrent one loses at once. */
    const submit = (key: AuthenticatedKey, body: SubmitRegistration) =>
      Effect.gen(function*() {
        yield* validate(key, body)
        const fp = fingerprint(body)
        const existing = yield* findByExternalId(key, body.external_id, false)
        if (Option.isSome(existing)) return yield* replayOrRefuse(existing.value, fp)
        const money = yield* amounts(body)

        return yield* Effect.gen(function*() {
          // The same claim as endpoint 3 (one namespace of external_ids per account and environment).
          yield* reservations.claim(key, body.external_id)
          const raced = yield* findByExternalId(key, body.external_id, false)
          if (Option.isSome(raced)) return yield* replayOrRefuse(raced.value, fp)

          const property = yield* resolveProperty(key, body)
          const settings = yield* reservations.reportingSettings(property.id)
          const now = DateTime.toDateUtc(yield* DateTime.now)
          const nowIso = now.toISOString()

          // Registration closes at once whatever the property requires (design §6.5): no contract step.
          const closed: Lifecycle.LifecycleSnapshot = {
            ...Lifecycle.newReservation({
              guests_count: body.guests_count,
              contract_required: false,
              check_in: body.check_in,
              check_out: body.check_out
            }),
            guests_registered: body.guests.length,
            registration_complete: true
          }
          const due = Lifecycle.reportsWhenDue({
            environment: key.environment,
            property: settings,
            nationalities: body.guests.map((guest) => guest.nacionalidad),
            check_in: body.check_in,
            sandbox_simulate: body.sandbox_simulate
          })
          const { tra, sire } = storedReports(due, nowIso)
          const snapshot = Lifecycle.withReports(closed, due)

          const [row] = yield* sql<ReservationRow>`
            INSERT INTO reservations ${
            sql.insert({
              ...creationColumns(key, body, property.id, money, fp, now),
              flow: "registration",
              motivo: body.motivo,
              tipo_acomodacion: body.tipo_acomodacion,
              status: Lifecycle.deriveStatus(snapshot),
              checkin_token: null,
              guests_registered: body.guests.length,
              registration_complete: true,
              completed_at: now,
              contract_required: false,
              tra: JSON.stringify(tra),
              tra_reported: snapshot.tra.reported,
              sire: JSON.stringify(sire),
              sire_reported: snapshot.sire.reported
            })
          } RETURNING *`
          const guestIds = yield* sql<{ readonly id: string; readonly position: number }>`INSERT INTO guests ${
            sql.insert(body.guests.map((guest, position) => ({
              reservation_id: row!.id,
              position,
              is_primary: position === 0,
              tipo_documento: guest.tipo_documento,
              numero_documento: guest.numero_documento,
              nombre: guest.nombre,
              apellido: guest.apellido,
              nacionalidad: guest.nacionalidad,
              fecha_nacimiento: guest.fecha_nacimiento ?? null,
              pais_procedencia: guest.pais_procedencia,
              ciudad_procedencia: guest.ciudad_procedencia,
              pais_residencia: guest.pais_residencia,
              ciudad_residencia: guest.ciudad_residencia,
              email: guest.email ?? null,
              phone: guest.phone ?? null,
              address: guest.address ?? null,
              // Kept as sent; the photos themselves are fetched in the background (design §6.5).
              doc_photo_front_url: guest.doc_photo_front_url ?? null,
              doc_photo_back_url: guest.doc_photo_back_url ?? null,
              document_uploaded: false,
              registered_at: now
            })))
          } RETURNING id, position`
          yield* enqueuePhotoFetches(guestIds.flatMap(({ id, position }) => {
            const guest = body.guests[position]!
            return [
              ...(guest.doc_photo_front_url === undefined ? [] : [{ guestId: id, side: "front" as const, url: guest.doc_photo_front_url }]),
              ...(guest.doc_photo_back_url === undefined ? [] : [{ guestId: id, side: "back" as const, url: guest.doc_photo_back_url }])
            ]
          }))
          yield* outbox.enqueue({
            accountId: key.accountId,
            environment: key.environment,
            reservationId: row!.id,
            types: Lifecycle.eventsBetween(null, snapshot),
            data: eventData(row!),
            guests: yield* guestsOf(row!)
          })
          return { created: true, response: registrationStatus(row!) }
        }).pipe(sql.withTransaction)
      }).pipe(
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error) ? Effect.fail(creationInProgress(body.external_id)) : Effect.die(error)),
        Effect.withSpan("Registrations.submit")
      )

    return { submit } as const
  })
}) {}
