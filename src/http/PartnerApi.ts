import { HttpApi, OpenApi } from "@effect/platform"
import { CheckinApi } from "../checkin/Api.ts"
import { HealthApi } from "../health/Api.ts"
import { PropertiesApi } from "../properties/Api.ts"
import { ReservationsApi } from "../reservations/Api.ts"
import { API_VERSION } from "../shared/ApiVersion.ts"
import { InternalErrorBody, InvalidJsonBody, InvalidRequestBody } from "../shared/errors.ts"
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
  .add(WebhooksApi)
  .add(CheckinApi)
  .add(HealthApi)
  .addError(InvalidRequestBody)
  .addError(InvalidJsonBody)
  .addError(InternalErrorBody)
  .annotate(OpenApi.Title, "Partner Reservation Registration Service")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(OpenApi.Description, description)
  // Decode failures never leave as HttpApiDecodeError: the error middleware rewrites them to invalid_request.
  .annotate(OpenApi.Transform, (spec) => {
    const text = JSON.stringify(spec)
      .replaceAll("{\"$ref\":\"#/components/schemas/HttpApiDecodeError\"},", "")
      .replaceAll(",{\"$ref\":\"#/components/schemas/HttpApiDecodeError\"}", "")
    const cleaned = JSON.parse(text)
    for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete cleaned.components?.schemas?.[name]
    return cleaned
  })
{}

/** What a `ROLE=worker` process serves: health only. */
export class WorkerApi extends HttpApi.make("worker").add(HealthApi).addError(InternalErrorBody) {}
