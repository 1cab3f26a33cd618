import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { PartnerAuth } from "../auth/PartnerAuth.ts"
import {
  CreationInProgressBody,
  LivePropertyRequiredBody,
  PropertyNotFoundBody,
  PropertyOutOfScopeBody,
  RegistrationNotFoundBody,
  ReservationConflictBody,
  SandboxPropertyRequiredBody,
  TrmUnavailableBody
} from "../shared/errors.ts"
import {
  CancelReservation,
  CancelResponse,
  CreateReservation,
  IncludeQuery,
  RegistrationDetail,
  RegistrationPath,
  RegistrationQuery,
  ReservationResponse
} from "./Reservation.ts"

/** Endpoints 3, 5, 6 and 8 of the spec (4 and 7 are not built yet). */
export class ReservationsApi extends HttpApiGroup.make("reservations")
  .add(
    HttpApiEndpoint.post("create", "/api/partners/reservations")
      .setPayload(CreateReservation)
      .addSuccess(ReservationResponse, { status: 201 })
      .addSuccess(ReservationResponse.annotations({ identifier: "ReservationReplay" }), { status: 200 })
      .addError(PropertyOutOfScopeBody)
      .addError(SandboxPropertyRequiredBody)
      .addError(LivePropertyRequiredBody)
      .addError(PropertyNotFoundBody)
      .addError(ReservationConflictBody)
      .addError(CreationInProgressBody)
      .addError(TrmUnavailableBody)
      .annotate(OpenApi.Summary, "Create a reservation")
      .annotate(
        OpenApi.Description,
        "201 for a new reservation; 200 with idempotent_replay true for an identical retry of the same external_id."
      )
  )
  .add(
    HttpApiEndpoint.post("cancel", "/api/partners/reservations/cancel")
      .setPayload(CancelReservation)
      .addSuccess(CancelResponse)
      .addError(RegistrationNotFoundBody)
      .annotate(OpenApi.Summary, "Cancel a reservation (idempotent)")
  )
  .add(
    HttpApiEndpoint.get("query", "/api/partners/registrations")
      .setUrlParams(RegistrationQuery)
      .addSuccess(RegistrationDetail)
      .addError(RegistrationNotFoundBody)
      .annotate(OpenApi.Summary, "Get a reservation by external_id (any external_id, also with /)")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/partners/registrations/:external_id")
      .setPath(RegistrationPath)
      .setUrlParams(IncludeQuery)
      .addSuccess(RegistrationDetail)
      .addError(RegistrationNotFoundBody)
      .annotate(OpenApi.Summary, "Get a reservation by external_id (ids without /)")
  )
  .middleware(PartnerAuth)
  .annotate(OpenApi.Title, "Reservations")
{}
