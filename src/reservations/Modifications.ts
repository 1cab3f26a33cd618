import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import type { UpdateReservation, UpdateResponse } from "./Reservation.ts"
import { PartnerReservations } from "./PartnerReservations.ts"
import { Reservations } from "./Reservations.ts"
import { Command } from "./machine/Machine.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/** Endpoint 4 (spec rule 6, design §6.6–6.7): the rules are the machine's `Modify` (`Stay.modify`); this is the entrance. */
export class Modifications extends Effect.Service<Modifications>()("reservations/Modifications", {
  dependencies: [Reservations.Default, PartnerReservations.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reservations = yield* Reservations
    const { idOf } = yield* PartnerReservations

    const update = (key: AuthenticatedKey, body: UpdateReservation) =>
      Effect.gen(function*() {
        const id = yield* idOf(key, body.external_id)
        const { row, result } = yield* reservations.apply(id, Command.Modify({ body }))
        const response: UpdateResponse = { ...reservations.views.reservationResponse(row, false), changed: result.changed }
        return response
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("Modifications.update"))

    return { update } as const
  })
}) {}
