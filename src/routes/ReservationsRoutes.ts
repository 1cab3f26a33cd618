import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../auth/CurrentKey.ts"
import { PartnerApi } from "./PartnerApi.ts"
import { Registrations } from "../reservations/Registrations.ts"
import { Modifications } from "../reservations/Modifications.ts"
import { PartnerReservations } from "../reservations/PartnerReservations.ts"

export const ReservationsLive = HttpApiBuilder.group(PartnerApi, "reservations", (handlers) =>
  Effect.gen(function*() {
    const partnerReservations = yield* PartnerReservations
    const modifications = yield* Modifications
    const registrations = yield* Registrations
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
      .handle("query", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (key) =>
          partnerReservations.get(key, urlParams.external_id, urlParams.include === "guests")))
      .handle("get", ({ path, urlParams }) =>
        Effect.flatMap(CurrentKey, (key) =>
          partnerReservations.get(key, path.external_id, urlParams.include === "guests")))
      // 201 or 200 (identical repeat) with the same body schema: the status is chosen here, as for "create".
      .handle("submit", ({ payload }) =>
        Effect.flatMap(CurrentKey, (key) =>
          Effect.map(registrations.submit(key, payload), ({ created, response }) =>
            HttpServerResponse.unsafeJson(response, { status: created ? 201 : 200 }))))
  }))
