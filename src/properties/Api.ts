import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PartnerAuth } from "../auth/PartnerAuth.ts"
import {
  ExternalIdInUseBody,
  LivePropertyRequiredBody,
  PropertyOutOfScopeBody,
  SandboxPropertyRequiredBody
} from "../shared/errors.ts"
import { MapPropertiesRequest, MapPropertiesResponse, PropertyList } from "./Property.ts"

/**
 * Naming a property the key may not use (403): another account's, or one of the other environment. Every
 * endpoint that takes a property's id answers these: the mapping here and the reservation's creation.
 */
export const PropertyScopeErrors = Schema.Union(PropertyOutOfScopeBody, SandboxPropertyRequiredBody, LivePropertyRequiredBody)

/** Endpoints 1 and 2 of the spec. */
export class PropertiesApi extends HttpApiGroup.make("properties")
  .add(
    HttpApiEndpoint.get("list", "/api/partners/properties")
      .addSuccess(PropertyList)
      .annotate(OpenApi.Summary, "List the properties of the key's account and environment")
  )
  .add(
    HttpApiEndpoint.patch("map", "/api/partners/properties")
      .setPayload(MapPropertiesRequest)
      .addSuccess(MapPropertiesResponse)
      .addError(PropertyScopeErrors)
      .addError(ExternalIdInUseBody)
      .annotate(
        OpenApi.Description,
        "Maps properties to the partner's PMS ids, all-or-nothing; `external_id: null` removes a mapping."
      )
      .annotate(OpenApi.Summary, "Map properties to PMS property ids")
  )
  .middleware(PartnerAuth)
  .annotate(OpenApi.Title, "Properties")
  .annotate(
    OpenApi.Description,
    "Endpoints 1 and 2: the properties of the key's account and environment, and their mapping to the PMS's ids."
  )
{}
