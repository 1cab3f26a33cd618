import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PartnerAuth } from "../auth/PartnerAuth.ts"
import { PropertyErrors } from "../reservations/Api.ts"
import { SubmitRegistration } from "../reservations/Reservation.ts"
import { DuplicateDocumentBody, RegistrationRejectedBody, TrmUnavailableBody } from "../shared/errors.ts"

/** What would hold or reject a report: the guest (its index in `guests`; null for the stay or the property). */
export const ValidationProblem = Schema.Struct({
  guest_index: Schema.NullOr(Schema.Int),
  field: Schema.String,
  message: Schema.String
}).annotations({ identifier: "ValidationProblem" })

/** Design §8b: what the TRA and SIRE would be sent for a registration, without storing or sending anything. */
export const RegistrationValidation = Schema.Struct({
  valid: Schema.Boolean.annotations({
    description: "false when any problem would hold or reject a report (an unmapped value, a missing field or setting)"
  }),
  tra: Schema.Struct({
    applies: Schema.Boolean,
    would_send: Schema.Array(Schema.Struct({
      guest_index: Schema.Int,
      fields: Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) }).annotations({
        description: "The body as posted to the TRA: /one/ for guests[0], /two/ for each companion, whose padre " +
          "(the main guest's TRA code) is null until the TRA accepts the main guest"
      })
    })),
    problems: Schema.Array(ValidationProblem)
  }).annotations({ identifier: "TraValidation" }),
  sire: Schema.Struct({
    applies: Schema.Boolean,
    would_send: Schema.Array(Schema.Struct({
      guest_index: Schema.Int,
      line: Schema.String.annotations({ description: "The guest's entry line of the SIRE file: 13 TAB-separated columns" })
    })),
    problems: Schema.Array(ValidationProblem)
  }).annotations({ identifier: "SireValidation" })
}).annotations({
  identifier: "RegistrationValidation",
  examples: [{
    valid: true,
    tra: {
      applies: true,
      would_send: [{
        guest_index: 0,
        fields: {
          tipo_identificacion: "Pasaporte",
          numero_identificacion: "X1234567",
          nombres: "John",
          apellidos: "Smith",
          cuidad_residencia: "Miami",
          cuidad_procedencia: "Miami",
          numero_habitacion: "101",
          motivo: "Vacaciones, recreo y ocio",
          numero_acompanantes: "0",
          check_in: "2026-12-18",
          check_out: "2026-12-20",
          tipo_acomodacion: "Hotel",
          costo: "1280000",
          nombre_establecimiento: "Hotel Cartagena Centro",
          rnt_establecimiento: "12345"
        }
      }],
      problems: []
    },
    sire: {
      applies: true,
      would_send: [{ guest_index: 0, line: "2468\t13001\t3\tX1234567\t249\tSMITH\t\tJOHN\tE\t18/12/2026\t249\t169\t12/04/1985" }],
      problems: []
    }
  }]
})

/** Design §8b: endpoint 7's body checked against the reports, beyond the spec. */
const validate = HttpApiEndpoint.post("validate", "/api/partners/registrations/validate")
  .setPayload(SubmitRegistration)
  .addSuccess(RegistrationValidation)
  .addError(PropertyErrors)
  // Endpoint 7's answers to its body (400, 409) and to a USD amount without an exchange rate (503).
  .addError(Schema.Union(RegistrationRejectedBody, DuplicateDocumentBody, TrmUnavailableBody))
  .annotate(OpenApi.Summary, "What the TRA and SIRE would be sent for a registration (stores and sends nothing)")
  .annotate(
    OpenApi.Description,
    "Takes endpoint 7's body and answers, without storing, sending or emitting anything, the TRA bodies and SIRE " +
      "lines the reports would carry and every problem that would hold them, with the operator's corrections " +
      "of the reference tables applied. The body rules of endpoint 7 answer 400 as there. Counts as a read " +
      "for the rate limits; test and live keys alike."
  )

export class ValidationApi extends HttpApiGroup.make("validation")
  .add(validate)
  .middleware(PartnerAuth)
  .annotate(OpenApi.Title, "Validation")
  .annotate(OpenApi.Description, "Check a registration against the authorities' reports before sending it (beyond the spec).")
{}
