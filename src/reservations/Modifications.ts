import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { RegistrationNotFound } from "../shared/errors.ts"
import { Outbox } from "../webhooks/Outbox.ts"
import * as Lifecycle from "./Lifecycle.ts"
import type { UpdateReservation, UpdateResponse } from "./Reservation.ts"
import { newCheckinToken } from "./CheckinToken.ts"
import { simulatedMincitCode, storedReports } from "../compliance/Simulated.ts"
import { type ReservationRow, snapshotOf } from "./ReservationRow.ts"
import { Reservations } from "./Reservations.ts"

/** The fields of UpdateReservation that are not judged by the lifecycle rules, in the spec's order. */
const PLAIN_FIELDS = ["guest_name", "guest_email", "guest_phone", "notes", "metadata"] as const


const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** Endpoint 4 (spec rule 6, design §6.6–6.7). */
export class Modifications extends Effect.Service<Modifications>()("reservations/Modifications", {
  dependencies: [Reservations.Default, Outbox.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reservations = yield* Reservations
    const outbox = yield* Outbox

    const update = (key: AuthenticatedKey, body: UpdateReservation) =>
      Effect.gen(function*() {
        const found = yield* reservations.findByExternalId(key, body.external_id, true)
        if (Option.isNone(found)) {
          return yield* new RegistrationNotFound({
            message: `no reservation with external_id ${JSON.stringify(body.external_id)}`,
            details: { external_id: body.external_id }
          })
        }
        const row = found.value
        const before = snapshotOf(row)
        const plan = yield* Lifecycle.checkModification(before, {
          check_in: body.check_in,
          check_out: body.check_out,
          guests_count: body.guests_count
        })
        const current = {
          guest_name: row.guest_name,
          guest_email: row.guest_email,
          guest_phone: row.guest_phone,
          notes: row.notes,
          metadata: row.metadata
        }
        const plainChanged = PLAIN_FIELDS.filter((field) =>
          body[field] !== undefined && !same(body[field], current[field])
        )
        const changed = [...plan.changed, ...plainChanged]
        if (changed.length === 0) return { ...reservations.views.reservationResponse(row, false), changed }

        const now = DateTime.toDateUtc(yield* DateTime.now)
        const nowIso = now.toISOString()
        let next = plan.next
        let tra = { ...row.tra }
        let sire = { ...row.sire }
        const reportEvents: Array<Lifecycle.LifecycleEvent> = []

        if (plan.reopens_registration) {
          const initial = Lifecycle.initialReports(key.environment)
          tra = { ...initial.tra, reported_at: null, mincit_code: null }
          sire = { ...initial.sire, reported_at: null }
        }
        // A pending TRA goes out on the (possibly moved) arrival date.
        if (tra.sends_on !== null) tra = { ...tra, sends_on: next.check_in }

        if (plan.reports_become_due) {
          const settings = yield* reservations.reportingSettings(row.property_id)
          const nationalities = yield* sql<{ nacionalidad: string | null }>`
            SELECT nacionalidad FROM guests WHERE reservation_id = ${row.id} ORDER BY position`
          const due = Lifecycle.reportsWhenDue({
            environment: key.environment,
            property: settings,
            nationalities: nationalities.map((g) => g.nacionalidad ?? "CO"),
            check_in: next.check_in,
            sandbox_simulate: row.sandbox_simulate
          })
          const stored = storedReports(due, nowIso)
          tra = stored.tra
          sire = stored.sire
          next = Lifecycle.withReports(next, due)
          reportEvents.push(...due.events)
        } else if (plan.tra_extension !== null && key.environment === "test" && tra.status === "success") {
          // design §6.12: an extension is simulated again: a new code, and tra.reported again.
          tra = { ...tra, mincit_code: simulatedMincitCode(), reported_at: nowIso }
          reportEvents.push("tra.reported")
        }

        const status = Lifecycle.deriveStatus(next)
        const issueToken = plan.reopens_registration && row.checkin_token === null
        const [updated] = yield* sql<ReservationRow>`
          UPDATE reservations SET
            check_in = ${next.check_in},
            check_out = ${next.check_out},
            guests_count = ${next.guests_count},
            registration_complete = ${next.registration_complete},
            completed_at = ${
          plan.reopens_registration ? null : plan.completes_registration ? now : sql`completed_at`
        },
            checkin_token = ${issueToken ? sql`${newCheckinToken()}` : sql`checkin_token`},
            guest_name = ${body.guest_name ?? current.guest_name},
            guest_email = ${body.guest_email === undefined ? current.guest_email : body.guest_email},
            guest_phone = ${body.guest_phone === undefined ? current.guest_phone : body.guest_phone},
            notes = ${body.notes === undefined ? current.notes : body.notes},
            metadata = ${JSON.stringify(body.metadata ?? row.metadata)}::json,
            tra = ${JSON.stringify(tra)}::jsonb,
            tra_reported = ${next.tra.reported},
            sire = ${JSON.stringify(sire)}::jsonb,
            sire_reported = ${next.sire.reported},
            status = ${status},
            tra_extension_from = ${
          // design §6.8: a live extension after the TRA was reported is due at once: the next report run posts
          // the added nights (from the first unreported night to the new check_out).
          plan.tra_extension !== null && key.environment === "live" && tra.status === "success"
            ? sql`COALESCE(tra_extension_from, ${plan.tra_extension.from}::date)`
            : sql`tra_extension_from`
        },
            updated_at = ${now}
          WHERE id = ${row.id}
          RETURNING *`
        yield* outbox.enqueue({
          accountId: key.accountId,
          environment: key.environment,
          reservationId: row.id,
          types: [...plan.events, ...reportEvents],
          data: reservations.views.eventData(updated!),
          guests: yield* reservations.guestsOf(updated!)
        })
        const response: UpdateResponse = { ...reservations.views.reservationResponse(updated!, false), changed }
        return response
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Modifications.update"))

    return { update } as const
  })
}) {}
