import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { PartnerAuth } from "../auth/PartnerAuth.ts"
import {
  ExternalIdInUseBody,
  LivePropertyRequiredBody,
  PropertyOutOfScopeBody,
  SandboxPropertyRequiredBody
} from "../shared/errors.ts"
import { MapPropertiesRequest, MapPropertiesResponse, PropertyList } from "./Property.ts"

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
      .addError(PropertyOutOfScopeBody)
      .addError(SandboxPropertyRequiredBody)
      .addError(LivePropertyRequiredBody)
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
