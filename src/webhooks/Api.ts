import { HttpApiEndpoint, HttpApiGroup, type HttpMethod, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PartnerAuth } from "../auth/PartnerAuth.ts"
import {
  DeliveryNotFoundBody,
  InvalidWebhookUrlBody,
  WebhookLimitReachedBody,
  WebhookNotFoundBody
} from "../shared/errors.ts"
import {
  CreateWebhook,
  DeactivateResponse,
  DeliveriesQuery,
  DeliveryList,
  DeliveryPath,
  RecoverDeliveries,
  RecoverResponse,
  RedeliverResponse,
  RotateResponse,
  TestResponse,
  UpdateWebhook,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookList,
  WebhookPath
} from "./Webhook.ts"

/**
 * Sending a delivery again: no such delivery of the caller's, or its endpoint gone since (404). The panel's
 * redelivery answers the same.
 */
export const RedeliveryErrors = Schema.Union(DeliveryNotFoundBody, WebhookNotFoundBody)

/**
 * An endpoint on one of the caller's webhook endpoints, the `:id` of its path: 404 webhook_not_found for none. The
 * panel's webhook routes use it too.
 */
export const onWebhook = <Name extends string, Method extends HttpMethod.HttpMethod>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method>
) => endpoint.setPath(WebhookPath).addError(WebhookNotFoundBody)

/** Design §6.14 Recover at `path`: the partner API's and the panel's. */
export const recoverEndpoint = <Name extends string>(name: Name, path: `/${string}`) =>
  onWebhook(HttpApiEndpoint.post(name, path)).setPayload(RecoverDeliveries).addSuccess(RecoverResponse, { status: 202 })

/** Endpoints 9 to 16 of the spec. */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/api/partners/webhooks")
      .addSuccess(WebhookList)
      .annotate(OpenApi.Summary, "List the active webhook endpoints")
  )
  .add(
    HttpApiEndpoint.post("create", "/api/partners/webhooks")
      .setPayload(CreateWebhook)
      .addSuccess(WebhookEndpointCreated, { status: 201 })
      .addError(InvalidWebhookUrlBody)
      .addError(WebhookLimitReachedBody)
      .annotate(OpenApi.Summary, "Create a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "The url must be public HTTPS. `events` defaults to [\"*\"]. The `secret` (whsec_…) is returned only here."
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/api/partners/webhooks/deliveries")
      .setUrlParams(DeliveriesQuery)
      .addSuccess(DeliveryList)
      .annotate(OpenApi.Summary, "Delivery history, most recent first")
      .annotate(
        OpenApi.Description,
        "Delivered events and their deliveries are kept for `EVENT_RETENTION_DAYS` (90 by default) and then deleted; " +
          "pending, retrying and failed deliveries are kept until they end."
      )
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/api/partners/webhooks/deliveries/:id/redeliver")
      .setPath(DeliveryPath)
      .addSuccess(RedeliverResponse)
      .addError(RedeliveryErrors)
      .annotate(OpenApi.Summary, "Send a delivery again: same event_id, fresh retry cycle")
  )
  .add(
    onWebhook(HttpApiEndpoint.patch("update", "/api/partners/webhooks/:id"))
      .setPayload(UpdateWebhook)
      .addSuccess(WebhookEndpoint)
      .addError(InvalidWebhookUrlBody)
      .annotate(OpenApi.Summary, "Change a webhook endpoint's url, events or include_guests")
  )
  .add(
    onWebhook(HttpApiEndpoint.del("deactivate", "/api/partners/webhooks/:id"))
      .addSuccess(DeactivateResponse)
      .annotate(OpenApi.Summary, "Deactivate a webhook endpoint")
  )
  .add(
    onWebhook(HttpApiEndpoint.post("rotate", "/api/partners/webhooks/:id/rotate-secret"))
      .addSuccess(RotateResponse)
      .annotate(OpenApi.Summary, "Rotate the signing secret (the old one stops at once)")
  )
  .add(
    onWebhook(HttpApiEndpoint.post("test", "/api/partners/webhooks/:id/test"))
      .addSuccess(TestResponse)
      .annotate(OpenApi.Summary, "Send a signed ping now")
  )
  .add(
    recoverEndpoint("recover", "/api/partners/webhooks/:id/recover")
      .annotate(OpenApi.Summary, "Queue the endpoint's failed deliveries of a window again (beyond the spec)")
      .annotate(
        OpenApi.Description,
        "After an outage: every `failed` delivery of this endpoint created between `since` (at most 7 days ago) " +
          "and `until` (default now) is sent again as endpoint 16 redelivers one: same event_id, a fresh retry " +
          "cycle, the attempt log kept. 202 with how many; a write for the rate limits."
      )
  )
  .middleware(PartnerAuth)
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(
    OpenApi.Description,
    "Endpoints 9 to 16: where the service sends its signed events (see the Events section for their bodies and " +
      "headers), and the history of every delivery."
  )
{}
