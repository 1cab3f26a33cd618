import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PartnerAuth } from "../auth/PartnerAuth.ts"
import { PropertyScopeErrors } from "../properties/Api.ts"
import {
  AlreadyReportedBody,
  CreationInProgressBody,
  DuplicateDocumentBody,
  GuestsAlreadyRegisteredBody,
  PropertyNotFoundBody,
  RegistrationNotFoundBody,
  RegistrationOpenBody,
  RegistrationRejectedBody,
  ReservationCancelledBody,
  ReservationConflictBody,
  TrmUnavailableBody
} from "../shared/errors.ts"
import {
  CancelReservation,
  CancelResponse,
  CreateReservation,
  IncludeQuery,
  RecordDeparture,
  RegistrationDetail,
  RegistrationPath,
  RegistrationQuery,
  RegistrationStatus,
  ReservationResponse,
  SubmitRegistration,
  UpdateReservation,
  UpdateResponse
} from "./Reservation.ts"

/** The reservation's `property_id`: not the key's to use (403), or no such property with check-in (404). */
export const PropertyErrors = Schema.Union(PropertyScopeErrors, PropertyNotFoundBody)

/** Storing a new reservation: its external_id taken or being taken (409), no exchange rate for a USD price (503). */
export const CreationErrors = Schema.Union(ReservationConflictBody, CreationInProgressBody, TrmUnavailableBody)

/**
 * Changing a reservation that stands: none of the caller's by that external_id (404), cancelled, or already
 * reported to an authority (409). The panel's departure answers the same.
 */
export const ChangeErrors = Schema.Union(RegistrationNotFoundBody, ReservationCancelledBody, AlreadyReportedBody)

/** Endpoints 3 to 8 of the spec, and the departure (design §6.8). */
export class ReservationsApi extends HttpApiGroup.make("reservations")
  .add(
    HttpApiEndpoint.post("create", "/api/partners/reservations")
      .setPayload(CreateReservation)
      .addSuccess(ReservationResponse, { status: 201 })
      .addSuccess(ReservationResponse.annotations({ identifier: "ReservationReplay" }), { status: 200 })
      .addError(PropertyErrors)
      .addError(CreationErrors)
      .annotate(OpenApi.Summary, "Create a reservation")
      .annotate(
        OpenApi.Description,
        "201 for a new reservation; 200 with idempotent_replay true for an identical retry of the same external_id."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/partners/reservations")
      .setPayload(UpdateReservation)
      .addSuccess(UpdateResponse)
      .addError(ChangeErrors)
      .addError(GuestsAlreadyRegisteredBody)
      .annotate(OpenApi.Summary, "Modify a reservation")
      .annotate(
        OpenApi.Description,
        "`changed` names the fields whose value changed. After the TRA was reported only extending check_out is allowed."
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
    HttpApiEndpoint.post("departure", "/api/partners/reservations/departure")
      .setPayload(RecordDeparture)
      .addSuccess(RegistrationStatus)
      .addError(ChangeErrors)
      .annotate(OpenApi.Summary, "Record the day the guests actually left")
      .annotate(
        OpenApi.Description,
        "`departed_on` must lie within the stay (check_in to check_out) and not after today in Bogotá. It never " +
          "changes check_out or the TRA; the SIRE exit movements of the foreign guests are dated it. The same date " +
          "again changes nothing; another date once the exit was reported to SIRE is 409 `already_reported`. Emits " +
          "`reservation.updated` with `changed: [\"departed_on\"]`."
      )
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
  .add(
    HttpApiEndpoint.post("submit", "/api/partners/registrations")
      .setPayload(SubmitRegistration)
      .addSuccess(RegistrationStatus, { status: 201 })
      .addSuccess(RegistrationStatus.annotations({ identifier: "RegistrationReplay" }), { status: 200 })
      .addError(RegistrationRejectedBody)
      .addError(PropertyErrors)
      .addError(DuplicateDocumentBody)
      .addError(RegistrationOpenBody)
      .addError(CreationErrors)
      .annotate(OpenApi.Summary, "Submit a complete registration (reservation and every guest in one call)")
      .annotate(
        OpenApi.Description,
        "201 for a new registration; 200 with the same registration for an identical repeat of the same external_id."
      )
  )
  .middleware(PartnerAuth)
  .annotate(OpenApi.Title, "Reservations")
  .annotate(
    OpenApi.Description,
    "Endpoints 3 to 8: create a reservation (the guests register through its `checkin_url`) or submit a complete " +
      "registration, then query, modify and cancel it. A reservation is named by the partner's `external_id`."
  )
{}
