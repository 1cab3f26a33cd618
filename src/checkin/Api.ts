import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { CheckinGuestInput } from "../reservations/Reservation.ts"
import {
  DuplicateDocumentBody,
  RateLimitedBody,
  RegistrationNotFoundBody,
  RegistrationOpenBody,
  RegistrationRejectedBody,
  ReservationCancelledBody
} from "../shared/errors.ts"
import {
  CheckinGuestPath,
  CheckinPath,
  CheckinView,
  ContractSigned,
  DocumentUpload,
  DocumentUploaded,
  GuestRegistered,
  SignContract
} from "./Checkin.ts"

/**
 * The token-scoped JSON API of the check-in page (design §5). The token in the path is the credential; the
 * group is served by the same process but kept out of the partner OpenAPI document.
 */
export class CheckinApi extends HttpApiGroup.make("checkin")
  .add(
    HttpApiEndpoint.get("view", "/api/checkin/:token")
      .setPath(CheckinPath)
      .addSuccess(CheckinView)
      .addError(RegistrationNotFoundBody)
      .addError(ReservationCancelledBody)
  )
  .add(
    HttpApiEndpoint.post("register", "/api/checkin/:token/guests")
      .setPath(CheckinPath)
      .setPayload(CheckinGuestInput)
      .addSuccess(GuestRegistered, { status: 201 })
      .addError(RateLimitedBody)
      .addError(RegistrationNotFoundBody)
      .addError(ReservationCancelledBody)
      .addError(DuplicateDocumentBody)
      .addError(RegistrationRejectedBody)
  )
  .add(
    HttpApiEndpoint.put("document", "/api/checkin/:token/guests/:guest_id/document")
      .setPath(CheckinGuestPath)
      .setPayload(HttpApiSchema.Multipart(DocumentUpload))
      .addSuccess(DocumentUploaded)
      .addError(RateLimitedBody)
      .addError(RegistrationNotFoundBody)
      .addError(ReservationCancelledBody)
      .addError(RegistrationRejectedBody)
  )
  .add(
    HttpApiEndpoint.post("sign", "/api/checkin/:token/contract")
      .setPath(CheckinPath)
      .setPayload(SignContract)
      .addSuccess(ContractSigned)
      .addError(RateLimitedBody)
      .addError(RegistrationNotFoundBody)
      .addError(ReservationCancelledBody)
      .addError(RegistrationOpenBody)
  )
  .annotate(OpenApi.Exclude, true)
{}
