import { SqlClient, SqlSchema } from "@effect/sql"
import { Duration, Effect, Exit, Option, Redacted, Schedule, Schema } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ReportingSettingsFields } from "../properties/Property.ts"
import * as ReportQueue from "../reservations/ReportQueue.ts"
import { ReservationRepo } from "../reservations/ReservationRepo.ts"
import type { GuestRow, ReservationRow } from "../reservations/ReservationRow.ts"
import { SecretBox } from "../secrets/SecretBox.ts"

/**
 * The claim and load stages of a report run (design §7): which live reservations a run takes, under a lease,
 * and everything one reservation's reports are built from — the reservation, its registered guests in order
 * (the first is the TRA main guest) and its property's reporting settings.
 */

/** Reservations claimed at a time. */
export const CLAIM_BATCH = 100

/** What a property says about reporting, credentials included (never shown by any API). */
export const ReportingProfile = Schema.Struct({
  tra_token: Schema.NullOr(Schema.Redacted(Schema.String)),
  name: Schema.String,
  rnt_id: Schema.NullOr(Schema.String),
  ...ReportingSettingsFields
}).annotations({ identifier: "ReportingProfile" })
export type ReportingProfile = typeof ReportingProfile.Type

/** One reservation as a report run sees it. */
export interface DueReservation {
  readonly row: ReservationRow
  /** Registered guests in registration order; the first is the primary (the TRA main guest). */
  readonly guests: ReadonlyArray<GuestRow>
  readonly property: ReportingProfile
}

/** `guests[i] (Nombre Apellido)`: how a warning names a guest. */
export const guestLabel = (guest: Pick<GuestRow, "position" | "nombre" | "apellido">) =>
  `guests[${guest.position}] (${guest.nombre} ${guest.apellido})`

export class DueReports extends Effect.Service<DueReports>()("compliance/DueReports", {
  dependencies: [ReservationRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ReservationRepo
    const { reportLease } = yield* AppConfig
    const queue = yield* ReportQueue.make(reportLease)
    const box = yield* SecretBox

    const profileOf = SqlSchema.single({
      Request: Schema.String,
      Result: ReportingProfile,
      execute: (propertyId) =>
        sql`
          SELECT tra_token, name, establishment_name, rnt_id, tipo_acomodacion, default_room, sire_hotel_code, sire_city_code
          FROM properties WHERE id = ${propertyId}`
    })

    /** The next batch of due reservations, leased to this run. */
    const claim = (today: string, force: boolean) => queue.claimDue({ today, force, limit: CLAIM_BATCH })

    /**
     * One reservation with its registered guests and its property; `profiles` caches properties for the length
     * of a run (a run touches few properties and many reservations).
     */
    const load = (id: string, profiles: (propertyId: string) => Effect.Effect<ReportingProfile>) =>
      Effect.gen(function*() {
        const found = yield* repo.findById(id)
        if (Option.isNone(found)) return yield* Effect.dieMessage(`reservation ${id} is gone`)
        const guests = (yield* repo.guests(id)).filter((guest) => guest.registered_at !== null)
        return { row: found.value, guests, property: yield* profiles(found.value.property_id) } satisfies DueReservation
      })

    /** A cache of property profiles for one run. */
    const profiles = Effect.cachedFunction((propertyId: string) =>
      profileOf(propertyId).pipe(
        // The token is stored sealed (design §3): opened here, for the run, and kept Redacted. One that no
        // configured key opens holds this property's TRA reports as a missing token would (setting the token
        // again fixes both), instead of failing the whole run for every property.
        Effect.flatMap((profile) =>
          profile.tra_token === null ? Effect.succeed(profile) : box.open(Redacted.value(profile.tra_token)).pipe(
            Effect.map((token) => ({ ...profile, tra_token: Redacted.make(token) })),
            Effect.catchTag("SecretUnreadable", (error) =>
              Effect.as(
                Effect.logError(`the TRA token of property ${propertyId} cannot be read: ${error.message}`),
                { ...profile, tra_token: null }
              ))
          )
        ),
        Effect.orDie
      ))

    /**
     * Keeps the leases of `claimed` (read at each beat) for as long as `work` runs, renewing them every third
     * of the lease: a run takes as long as the authorities make it, while a crashed one loses its hold within
     * one lease (design §7).
     */
    const holding = <A, E, R>(claimed: ReadonlyArray<string>, work: Effect.Effect<A, E, R>) =>
      Effect.scoped(Effect.gen(function*() {
        const renew = Effect.suspend(() => queue.renew(claimed))
        const every = Option.getOrElse(Duration.divide(reportLease, 3), () => reportLease)
        yield* Effect.forkScoped(Effect.schedule(
          Effect.catchAllCause(renew, (cause) => Effect.logWarning("report lease renewal failed", cause)),
          Schedule.spaced(every)
        ))
        // A run that failed leaves its leases to lapse, as before; one interrupted by a shutdown keeps them noted,
        // and the stopping process gives them back.
        return yield* Effect.onExit(work, (exit) => Exit.isInterrupted(exit) ? Effect.void : queue.settled(claimed))
      }))

    return { claim, load, profiles, holding, release: queue.release } as const
  })
}) {}
