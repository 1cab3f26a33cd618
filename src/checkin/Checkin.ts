import { Multipart } from "@effect/platform"
import { Schema } from "effect"
import { CheckinStatus } from "../reservations/Reservation.ts"
import { SingleLineString } from "../shared/StoredString.ts"

/** Schemas of the guest check-in JSON API (design §5). */

export const CheckinPath = Schema.Struct({ token: Schema.String }).annotations({ identifier: "CheckinPath" })

export const CheckinGuestPath = Schema.Struct({ token: Schema.String, guest_id: Schema.String }).annotations({
  identifier: "CheckinGuestPath"
})

export const CheckinView = Schema.Struct({
  check_in: Schema.String,
  check_out: Schema.String,
  guests_count: Schema.Int,
  guests_registered: Schema.Int,
  checkin_status: CheckinStatus,
  contract_signed: Schema.Boolean,
  property: Schema.Struct({
    name: Schema.String,
    requires_contract_signature: Schema.Boolean,
    requires_document_photos: Schema.Boolean
  }),
  guests: Schema.Array(Schema.Struct({
    guest_id: Schema.String,
    nombre: Schema.String,
    apellido: Schema.String,
    is_primary: Schema.Boolean,
    registered: Schema.Boolean,
    document_uploaded: Schema.NullOr(Schema.Boolean)
  }))
}).annotations({ identifier: "CheckinView" })
export type CheckinView = typeof CheckinView.Type

export const GuestRegistered = Schema.Struct({
  guest_id: Schema.String,
  registered: Schema.Boolean,
  guests_registered: Schema.Int,
  checkin_status: CheckinStatus
}).annotations({ identifier: "CheckinGuestRegistered" })

/** The longest typed signer name (also handed to the check-in page). */
export const SIGNER_NAME_MAX = 255

export const SignContract = Schema.Struct({
  signer_name: SingleLineString.pipe(
    Schema.filter((value) => /\S/.test(value) && value.length <= SIGNER_NAME_MAX, {
      message: () => `must be 1 to ${SIGNER_NAME_MAX} characters`
    })
  ),
  accepted: Schema.Literal(true).annotations({ message: () => "must be true: the contract must be accepted" })
}).annotations({ identifier: "SignContract", parseOptions: { errors: "all" } })

export const ContractSigned = Schema.Struct({
  contract_signed: Schema.Literal(true),
  signed_at: Schema.String
}).annotations({ identifier: "ContractSigned" })

/** `PUT …/document`: multipart `front` (required) and `back` (optional), JPEG/PNG/PDF ≤ 10 MB each (design §5). */
export const DocumentUpload = Schema.Struct({
  front: Multipart.SingleFileSchema,
  back: Schema.optional(Multipart.SingleFileSchema)
}).annotations({ identifier: "DocumentUpload" })

export const DocumentUploaded = Schema.Struct({ document_uploaded: Schema.Literal(true) }).annotations({
  identifier: "DocumentUploaded"
})
