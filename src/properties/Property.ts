import { Either, Schema } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import {
  LivePropertyRequired,
  PropertyNotFound,
  PropertyOutOfScope,
  SandboxPropertyRequired
} from "../shared/errors.ts"
import type { Environment } from "../shared/Environment.ts"
import { StoredString } from "../shared/StoredString.ts"

/**
 * A property's reporting settings as stored (design §6.10), beside its TRA token: what a report run builds the
 * reports from and what the panel shows and edits. One list for both (`DueReports.ReportingProfile`,
 * `panel/Panel.PropertySettings`).
 */
export const ReportingSettingsFields = {
  establishment_name: Schema.NullOr(Schema.String),
  tipo_acomodacion: Schema.NullOr(Schema.String),
  /** `numero_habitacion` when the reservation has no `room_number` (design §6.10). */
  default_room: Schema.NullOr(Schema.String),
  sire_hotel_code: Schema.NullOr(Schema.String),
  sire_city_code: Schema.NullOr(Schema.String)
}

/** Examples for the OpenAPI document, typed by the schemas they illustrate. */
const EXAMPLE_PROPERTY = {
  property_id: "0d6f1c9a-8b3e-4f2a-9c71-5e4b3a2d1f08",
  external_id: "HOTEL-CTG-01",
  rnt_id: "123456",
  name: "Hotel Andino Cartagena",
  internal_name: "Andino CTG",
  checkin_enabled: true,
  compliance: { tra: true, sire: true },
  requires_contract_signature: false,
  requires_document_photos: true
} as const
const EXAMPLE_MAPPINGS = [
  { property_id: "0d6f1c9a-8b3e-4f2a-9c71-5e4b3a2d1f08", external_id: "HOTEL-CTG-01" },
  { property_id: "7a2e9b4c-1d3f-4a5b-8c6d-9e0f1a2b3c4d", external_id: null }
] as const

/** The spec's Property (item of `properties` in endpoint 1). */
export const Property = Schema.Struct({
  property_id: Schema.UUID,
  external_id: Schema.NullOr(Schema.String),
  rnt_id: Schema.NullOr(Schema.String),
  name: Schema.String,
  internal_name: Schema.NullOr(Schema.String),
  checkin_enabled: Schema.Boolean,
  compliance: Schema.Struct({ tra: Schema.Boolean, sire: Schema.Boolean }),
  requires_contract_signature: Schema.Boolean,
  requires_document_photos: Schema.Boolean
}).annotations({ identifier: "Property", examples: [EXAMPLE_PROPERTY] })
export type Property = typeof Property.Type

export const ExternalId = StoredString.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(120, { message: () => "must be at most 120 characters" })
)

export const PropertyMapping = Schema.Struct({
  property_id: Schema.UUID,
  external_id: Schema.NullOr(ExternalId)
}).annotations({ identifier: "PropertyMapping" })
export type PropertyMapping = typeof PropertyMapping.Type

/** Endpoint 2's body: 1 to 500 mappings, all fields required, applied all-or-nothing. */
export const MapPropertiesRequest = Schema.Struct({
  mappings: Schema.Array(PropertyMapping).pipe(
    Schema.minItems(1, { message: () => "must hold at least 1 mapping" }),
    Schema.maxItems(500, { message: () => "must hold at most 500 mappings" })
  )
}).annotations({
  identifier: "MapPropertiesRequest",
  examples: [{ mappings: EXAMPLE_MAPPINGS }],
  parseOptions: { errors: "all" }
})

export const MapPropertiesResponse = Schema.Struct({
  ok: Schema.Boolean,
  mappings: Schema.Array(PropertyMapping)
}).annotations({ identifier: "MapPropertiesResponse", examples: [{ ok: true, mappings: EXAMPLE_MAPPINGS }] })

export const PropertyList = Schema.Struct({ properties: Schema.Array(Property) }).annotations({
  identifier: "PropertyList",
  examples: [{ properties: [EXAMPLE_PROPERTY] }]
})

/** Where a property stands relative to the calling key, as far as access rules care. */
export interface PropertyScope {
  readonly account_id: string
  readonly environment: Environment
  readonly checkin_enabled: boolean
}

export type ScopeError = PropertyOutOfScope | SandboxPropertyRequired | LivePropertyRequired

const outOfScope = (reference: string) =>
  new PropertyOutOfScope({ message: `property ${reference} is not in this account`, details: { property_id: reference } })

/**
 * design §6.1 for a property named by id: another account's (or, for endpoint 2, an unknown) property →
 * property_out_of_scope; the other environment → sandbox_property_required / live_property_required.
 */
export const checkScope = (
  property: PropertyScope | undefined,
  key: Pick<AuthenticatedKey, "accountId" | "environment">,
  reference: string
): Either.Either<void, ScopeError> => {
  if (property === undefined || property.account_id !== key.accountId) return Either.left(outOfScope(reference))
  if (property.environment !== key.environment) {
    return Either.left(
      key.environment === "test"
        ? new SandboxPropertyRequired({
          message: `a test key can only use test properties; ${reference} is a live property`,
          details: { property_id: reference }
        })
        : new LivePropertyRequired({
          message: `a live key can only use live properties; ${reference} is a test property`,
          details: { property_id: reference }
        })
    )
  }
  return Either.right(undefined)
}

/**
 * design §6.1 for a property a reservation is created on (endpoints 3 and 7): the scope rules first, then
 * unknown or check-in disabled → property_not_found.
 */
export const checkUsable = (
  property: PropertyScope | undefined,
  key: Pick<AuthenticatedKey, "accountId" | "environment">,
  reference: string
): Either.Either<void, ScopeError | PropertyNotFound> => {
  if (property === undefined) {
    return Either.left(new PropertyNotFound({ message: `property ${reference} not found`, details: { property: reference } }))
  }
  return Either.flatMap(checkScope(property, key, reference), () =>
    property.checkin_enabled
      ? Either.right(undefined)
      : Either.left(
        new PropertyNotFound({ message: `property ${reference} has check-in disabled`, details: { property: reference } })
      ))
}
