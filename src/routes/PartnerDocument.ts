import { OpenApiJsonSchema } from "@effect/platform"
import { Duration, type Schema } from "effect"
import { documented, type JsonObject, listAt, objectAt } from "../http/OpenApiDocument.ts"
import { EVENT_SENT_WHEN, eventBodySchemas } from "../webhooks/Event.ts"
import { DELIVERY_TIMEOUT, MAX_ATTEMPTS } from "../webhooks/RetryPolicy.ts"
import { DeliveryHeaders } from "../webhooks/Signature.ts"
import { EVENT_TYPES } from "../webhooks/Webhook.ts"

/**
 * The partner document (`/openapi.json`, design §1): what every document gets (`http/OpenApiDocument.ts`:
 * error codes, unknown fields, parameter examples), then the `webhooks` section — one entry per event type, from
 * the delivery engine's body schemas. It sits with `PartnerApi`, above the modules it reads (`webhooks/`), so that
 * `http/` stays below every module.
 */

const EVENTS_TAG = "Events"

const bodySchema = (schema: Schema.Schema.AnyNoContext, defs: JsonObject) => OpenApiJsonSchema.makeWithDefs(schema, { defs })

const deliveryRules = `The service POSTs this body to every active endpoint of the account and environment that
subscribes to this event type (or \`*\`). Verify \`X-Service-Signature\` on the raw body, before parsing it.
Success is any 2xx answer within ${Duration.toSeconds(DELIVERY_TIMEOUT)} s; anything else (a redirect, a
time-out) is retried with growing gaps, from 1 minute up to 24 hours, ${MAX_ATTEMPTS} attempts over about 3 days
(\`Retry-After\` is honoured), then the delivery is \`failed\`; a redelivery (endpoint 16) keeps the event id.
Events of one reservation are first attempted in the order they were emitted; \`created_at\` orders them.`

/**
 * The `webhooks` section: one entry per event type (the spec's EventType minus `*`), each with the body schema
 * the delivery engine's bodies decode with (`webhooks/Event.ts`) and the headers it sends
 * (`webhooks/Signature.ts`).
 */
const withWebhooks = (doc: JsonObject): JsonObject => {
  // `OpenApi.fromApi` always makes `components.schemas`: the definitions the schemas below refer to join it.
  const defs = objectAt(doc, "components", "schemas") ?? {}
  const headers = OpenApiJsonSchema.makeWithDefs(DeliveryHeaders, { defs })
  const required = "required" in headers ? headers.required : []
  const parameters = Object.entries("properties" in headers ? headers.properties : {}).map(([name, schema]) => ({
    name,
    in: "header",
    required: required.includes(name),
    description: schema.description,
    schema,
    example: schema.examples?.[0]
  }))
  const webhooks: JsonObject = {}
  for (const type of EVENT_TYPES) {
    if (type === "*") continue
    webhooks[type] = {
      post: {
        tags: [EVENTS_TAG],
        operationId: `events.${type}`,
        summary: `${type}: ${EVENT_SENT_WHEN[type]}`,
        description: deliveryRules.replaceAll("\n", " "),
        security: [],
        parameters,
        requestBody: {
          required: true,
          content: { "application/json": { schema: bodySchema(eventBodySchemas[type], defs) } }
        },
        responses: {
          "2XX": { description: "Delivered." },
          "4XX": {
            description:
              "Not delivered: retried on the schedule above (answer 401 on a signature mismatch and discard the event)."
          }
        }
      }
    }
  }
  return {
    ...doc,
    tags: [
      ...listAt(doc, "tags"),
      {
        name: EVENTS_TAG,
        description:
          "Webhooks: what the service sends to the partner's endpoints (spec \"Events\"), one entry per event type."
      }
    ],
    webhooks
  }
}

/** The partner document (`/openapi.json`). */
export const partnerDocument = (spec: JsonObject): JsonObject => withWebhooks(documented(spec))
