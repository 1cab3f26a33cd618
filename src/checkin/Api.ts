import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
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

/** The link's reservation: none for the token (404 registration_not_found), or cancelled (409). */
const LinkErrors = Schema.Union(RegistrationNotFoundBody, ReservationCancelledBody)

/** What every write through the link answers: too many from the client's address (429), and the link's errors. */
const WriteErrors = Schema.Union(RateLimitedBody, LinkErrors)

/**
 * The token-scoped JSON API of the check-in page (design §5). The token in the path is the credential; the
 * group is served by the same process but kept out of the partner OpenAPI document.
 */
export class CheckinApi extends HttpApiGroup.make("checkin")
  .add(
    HttpApiEndpoint.get("view", "/api/checkin/:token")
      .setPath(CheckinPath)
      .addSuccess(CheckinView)
      .addError(LinkErrors)
  )
  .add(
    HttpApiEndpoint.post("register", "/api/checkin/:token/guests")
      .setPath(CheckinPath)
      .setPayload(CheckinGuestInput)
      .addSuccess(GuestRegistered, { status: 201 })
      .addError(WriteErrors)
      .addError(DuplicateDocumentBody)
      .addError(RegistrationRejectedBody)
  )
  .add(
    HttpApiEndpoint.put("document", "/api/checkin/:token/guests/:guest_id/document")
      .setPath(CheckinGuestPath)
      .setPayload(HttpApiSchema.Multipart(DocumentUpload))
      .addSuccess(DocumentUploaded)
      .addError(WriteErrors)
      .addError(RegistrationRejectedBody)
  )
  .add(
    HttpApiEndpoint.post("sign", "/api/checkin/:token/contract")
      .setPath(CheckinPath)
      .setPayload(SignContract)
      .addSuccess(ContractSigned)
      .addError(WriteErrors)
      .addError(RegistrationOpenBody)
  )
  .annotate(OpenApi.Exclude, true)
{}
