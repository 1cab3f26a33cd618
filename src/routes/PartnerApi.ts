import { HttpApi, OpenApi } from "@effect/platform"
import { partnerDocument } from "./PartnerDocument.ts"
import { CheckinApi } from "../checkin/Api.ts"
import { HealthApi } from "../health/Api.ts"
import { AnyRouteErrors } from "../http/ErrorMiddleware.ts"
import { PanelAccountApi, PanelSignInApi } from "../panel/Api.ts"
import { PropertiesApi } from "../properties/Api.ts"
import { ReservationsApi } from "../reservations/Api.ts"
import { ReferenceApi } from "../compliance/ReferenceApi.ts"
import { ValidationApi } from "../compliance/ValidationApi.ts"
import { API_VERSION } from "../shared/ApiVersion.ts"
import { InternalErrorBody } from "../shared/errors.ts"
import { WebhooksApi } from "../webhooks/Api.ts"

/** Re-exported beside the contract it versions; defined in `shared/ApiVersion.ts` for the webhook code. */
export { API_VERSION }

const description = `Partner Reservation Registration Service. Every partner endpoint takes
\`Authorization: Bearer <API_KEY>\`; the key prefix (\`svc_test_\` / \`svc_live_\`) decides the environment.
Errors are \`{error, code, details}\`: program against \`code\`. Responses of partner endpoints carry
\`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`.`

/**
 * The single source of the REST surface: the server, `/openapi.json`, `/docs` and the typed test client all
 * derive from this class.
 */
export class PartnerApi extends HttpApi.make("partner")
  .add(PropertiesApi)
  .add(ReservationsApi)
  .add(ValidationApi)
  .add(ReferenceApi)
  .add(WebhooksApi)
  .add(CheckinApi)
  // The account panel is served here too, but documented in its own `/api/panel/openapi.json` (design §8).
  .add(PanelSignInApi.annotate(OpenApi.Exclude, true))
  .add(PanelAccountApi.annotate(OpenApi.Exclude, true))
  .add(HealthApi)
  .addError(AnyRouteErrors)
  .annotate(OpenApi.Title, "Partner Reservation Registration Service")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(OpenApi.Description, description)
  .annotate(OpenApi.Transform, partnerDocument)
{}

/** What a `ROLE=worker` process serves: health only. */
export class WorkerApi extends HttpApi.make("worker").add(HealthApi).addError(InternalErrorBody) {}
