import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../auth/CurrentKey.ts"
import { PartnerApi } from "./PartnerApi.ts"
import { Registrations } from "../reservations/Registrations.ts"
import { Modifications } from "../reservations/Modifications.ts"
import { PartnerReservations } from "../reservations/PartnerReservations.ts"
import type { RegistrationDetail } from "../reservations/Reservation.ts"

export const ReservationsLive = HttpApiBuilder.group(PartnerApi, "reservations", (handlers) =>
  Effect.gen(function*() {
    const partnerReservations = yield* PartnerReservations
    const modifications = yield* Modifications
    const registrations = yield* Registrations
    /**
     * Endpoints 6 and 8. A hot read: without guests the detail is built in the contract's shape from the row (the
     * same fields, in the schema's order, as create's answer) and sent without re-encoding, as properties are
     * (docs/performance.md, issue 28); with include=guests it goes through `RegistrationDetail`'s encoding.
     */
    const detail = (externalId: string, includeGuests: boolean) =>
      Effect.flatMap(CurrentKey, (key) =>
        Effect.map(
          partnerReservations.get(key, externalId, includeGuests),
          (found): RegistrationDetail | HttpServerResponse.HttpServerResponse =>
            includeGuests ? found : HttpServerResponse.unsafeJson(found)
        ))
    return handlers
      // 201 or 200 (replay) with the same body schema: the status is chosen here.
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentKey, (key) =>
          Effect.map(partnerReservations.create(key, payload), ({ created, response }) =>
            HttpServerResponse.unsafeJson(response, { status: created ? 201 : 200 }))))
      .handle("update", ({ payload }) => Effect.flatMap(CurrentKey, (key) => modifications.update(key, payload)))
      .handle("cancel", ({ payload }) =>
        Effect.flatMap(CurrentKey, (key) => partnerReservations.cancel(key, payload.external_id, payload.reason)))
      .handle("departure", ({ payload }) =>
        Effect.flatMap(CurrentKey, (key) => partnerReservations.depart(key, payload.external_id, payload.departed_on)))
      .handle("query", ({ urlParams }) => detail(urlParams.external_id, urlParams.include === "guests"))
      .handle("get", ({ path, urlParams }) => detail(path.external_id, urlParams.include === "guests"))
      // 201 or 200 (identical repeat) with the same body schema: the status is chosen here, as for "create".
      .handle("submit", ({ payload }) =>
        Effect.flatMap(CurrentKey, (key) =>
          Effect.map(registrations.submit(key, payload), ({ created, response }) =>
            HttpServerResponse.unsafeJson(response, { status: created ? 201 : 200 }))))
  }))
