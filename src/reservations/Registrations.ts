import { DateTime, Effect } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import {
  DuplicateDocument,
  InvalidRequest,
  RegistrationOpen,
  RegistrationRejected,
  type ReservationConflict
} from "../shared/errors.ts"
import { todayInBogota } from "../shared/Calendar.ts"
import {
  bornAfter,
  duplicateDocuments,
  guestCountMismatch,
  type RegistrationStatus,
  type SubmitRegistration
} from "./Reservation.ts"
import type { ReservationRow } from "./ReservationRow.ts"
import { PartnerReservations } from "./PartnerReservations.ts"
import { fingerprint, replayOrConflict, Reservations, testKeyOnly } from "./Reservations.ts"
import { registrationDraft } from "./machine/Stay.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * Endpoint 7 (design §6.5): the partner's own form sends every guest at once; the reservation is created with
 * registration closed, its reports become due at once (test keys: simulated outcome), and its events —
 * reservation.created, registration.completed, then the report events — commit with it.
 */
export class Registrations extends Effect.Service<Registrations>()("reservations/Registrations", {
  dependencies: [Reservations.Default, PartnerReservations.Default],
  effect: Effect.gen(function*() {
    const reservations = yield* Reservations
    const partnerReservations = yield* PartnerReservations
    const { views } = reservations


    /** An existing reservation with this external_id: link flow → 409 registration_open; else replay or conflict. */
    const replayOrRefuse = (
      row: ReservationRow,
      fp: string
    ): Effect.Effect<{ readonly created: boolean; readonly response: RegistrationStatus }, RegistrationOpen | ReservationConflict> => {
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
      return replayOrConflict(row, fp, views.registrationStatus)
    }

    /**
     * Rules on the body that need no database: sandbox_simulate, guest count, duplicates, birth dates. The
     * validate endpoint (design §8b) answers them as endpoint 7 does.
     */
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
        // The same frame and claim as endpoint 3 (one namespace of external_ids per account and environment).
        return yield* partnerReservations.creating(key, body, (row) => replayOrRefuse(row, fp), (money) =>
          Effect.gen(function*() {
            const property = yield* partnerReservations.resolveProperty(key, body)
            const { draft, guests } = registrationDraft({
              key,
              body,
              propertyId: property.id,
              money,
              fingerprint: fp,
              at: DateTime.toDateUtc(yield* DateTime.now)
            })
            const { row } = yield* reservations.insert(draft, guests)
            return { created: true, response: views.registrationStatus(row) }
          }))
      }).pipe(TraceContext.withSpan("Registrations.submit"))

    return { submit, validate } as const
  })
}) {}
