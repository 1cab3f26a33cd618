import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Schema } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { registrationDraft } from "../reservations/machine/Stay.ts"
import { PartnerReservations } from "../reservations/PartnerReservations.ts"
import type { SubmitRegistration } from "../reservations/Reservation.ts"
import { Registrations } from "../reservations/Registrations.ts"
import { ReferenceStore } from "./ReferenceStore.ts"
import { type Enrolment, wouldSend } from "./WouldSend.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * The validate endpoint (design §8b): endpoint 7's body, its rules and its property as endpoint 7 finds them,
 * then the reservation endpoint 7 would store — never stored — through the builders a report run sends with
 * (`wouldSend`), over the reference tables with the operators' overrides in effect. Nothing is written, sent or
 * emitted: a read.
 */

/** The property's reporting settings and enrolment, as a live run reads them (`DueReports`, `Reservations`). */
const ReportingSettings = Schema.Struct({
  reports_tra: Schema.Boolean,
  reports_sire: Schema.Boolean,
  has_tra_token: Schema.Boolean,
  sire_hotel_code: Schema.NullOr(Schema.String),
  sire_city_code: Schema.NullOr(Schema.String),
  name: Schema.String,
  establishment_name: Schema.NullOr(Schema.String),
  rnt_id: Schema.NullOr(Schema.String),
  tipo_acomodacion: Schema.NullOr(Schema.String),
  default_room: Schema.NullOr(Schema.String)
})

/**
 * A test key's reports are answered by the simulated authorities, which need no enrolment (design §6.12): its
 * absence holds nothing, so it is no problem, and a SIRE code the test property lacks is written `0`.
 */
const sandboxEnrolment = (settings: Enrolment): Enrolment => ({
  ...settings,
  has_tra_token: true,
  sire_hotel_code: settings.sire_hotel_code ?? "0",
  sire_city_code: settings.sire_city_code ?? "0"
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const registrations = yield* Registrations
  const partnerReservations = yield* PartnerReservations
  const reference = yield* ReferenceStore
  const { sirePlaces } = yield* AppConfig

  const settingsOf = SqlSchema.single({
    Request: Schema.String,
    Result: ReportingSettings,
    execute: (propertyId) =>
      sql`
        SELECT reports_tra, reports_sire, tra_token IS NOT NULL AS has_tra_token, sire_hotel_code, sire_city_code,
               name, establishment_name, rnt_id, tipo_acomodacion, default_room
        FROM properties WHERE id = ${propertyId}`
  })

  const validate = (key: AuthenticatedKey, body: SubmitRegistration) =>
    Effect.gen(function*() {
      yield* registrations.validate(key, body)
      const property = yield* partnerReservations.resolveProperty(key, body)
      const settings = yield* Effect.orDie(settingsOf(property.id))
      const { draft, guests } = registrationDraft({
        key,
        body,
        propertyId: property.id,
        money: yield* partnerReservations.amounts(body),
        fingerprint: "",
        at: DateTime.toDateUtc(yield* DateTime.now)
      })
      const { tra, sire } = wouldSend(
        yield* reference.effective,
        // The guests are not stored: the builders know them by their place in `guests`.
        { row: draft, guests: guests.map((guest) => ({ ...guest, id: `guests[${guest.position}]` })), property: settings },
        key.environment === "test" ? sandboxEnrolment(settings) : settings,
        sirePlaces
      )
      return {
        valid: tra.problems.length === 0 && sire.problems.length === 0,
        tra: { applies: tra.applies, would_send: tra.would_send, problems: tra.problems },
        sire
      }
    }).pipe(Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("Validation.validate"))

  return { validate } as const
})
