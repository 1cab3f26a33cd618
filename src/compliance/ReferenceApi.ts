import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PartnerAuth } from "../auth/PartnerAuth.ts"
import { PartnerTableName } from "./PartnerReference.ts"

export const ReferenceTableEntry = Schema.Struct({
  key: Schema.String.annotations({ description: "A value the partner API accepts (or, for tipos_acomodacion, one known to the TRA)" }),
  tra: Schema.NullOr(Schema.String).annotations({
    description: "What the TRA is sent for it; null: the TRA takes no such field (countries)"
  }),
  sire: Schema.NullOr(Schema.String).annotations({
    description: "What the SIRE file carries for it; null: no code (a Colombian document, a country no source has) " +
      "or SIRE takes no such field (motivos, tipos_acomodacion)"
  }),
  source: Schema.String.annotations({
    description: "The public sources of the mapping (file, version, sources' repositories), preceded by " +
      "\"override by the operator\" where an operator's correction is in effect"
  })
}).annotations({ identifier: "ReferenceTableEntry" })

export const ReferenceTable = Schema.Struct({
  table: PartnerTableName,
  entries: Schema.Array(ReferenceTableEntry)
}).annotations({
  identifier: "ReferenceTable",
  examples: [{
    table: "document_types",
    entries: [{
      key: "Pasaporte",
      tra: "Pasaporte",
      sire: "3",
      source: "documents.json 2026-11-22: TRA 'Pasaporte': C2, C3, C5 (its TRA factory), C8 agree (C4's undotted 'PA' " +
        "is alone). SIRE 3: C11, C13, C14, C5, C4 agree. (C11 toneill57/innpilot … @5b0b58a; …)"
    }]
  }]
})

export const ReferencePath = Schema.Struct({
  table: Schema.propertySignature(PartnerTableName).annotations({
    description: "countries (ISO 3166-1 alpha-2 → SIRE country code), document_types (tipo_documento → TRA label and " +
      "SIRE code), motivos (motivo → TRA wording) or tipos_acomodacion (sent to the TRA as written)",
    examples: ["countries"]
  })
})

const tableDescription = "One of the reference tables the reports are built with, the operator's corrections " +
  "applied: per value, the TRA value, the SIRE code and the cited public sources. Another table name answers 400 " +
  "invalid_request naming the four. Counts as a read for the rate limits; test and live keys alike."

/** Design §8b: what the service maps each value to, beyond the spec. */
export class ReferenceApi extends HttpApiGroup.make("reference")
  .add(
    HttpApiEndpoint.get("table", "/api/partners/reference/:table")
      .setPath(ReferencePath)
      .addSuccess(ReferenceTable)
      .annotate(OpenApi.Summary, "What the TRA and SIRE are sent for each value, with the public sources")
      .annotate(OpenApi.Description, tableDescription)
  )
  .middleware(PartnerAuth)
  .annotate(OpenApi.Title, "Reference tables")
  .annotate(OpenApi.Description, "What the service maps countries, documents, motivos and accommodation types to (beyond the spec).")
{}
