import { AlertList } from "../alerts/Alert.ts"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AnyRouteErrors } from "../http/ErrorMiddleware.ts"
import { documented } from "../http/OpenApiDocument.ts"
import { ChangeErrors } from "../reservations/Api.ts"
import {
  CsrfRejectedBody,
  DeliveryNotFoundBody,
  InvalidCodeBody,
  InvalidWebhookUrlBody,
  KeyLimitReachedBody,
  KeyNotFoundBody,
  LiveNotEnabledBody,
  MemberNotFoundBody,
  NotFoundBody,
  OwnerRequiredBody,
  PropertyNotFoundBody,
  RateLimitedBody,
  SandboxExistsBody,
  UnauthorizedBody,
  WebhookLimitReachedBody
} from "../shared/errors.ts"
import { API_VERSION } from "../shared/ApiVersion.ts"
import { onWebhook, recoverEndpoint, RedeliveryErrors } from "../webhooks/Api.ts"
import {
  DeactivateResponse,
  RedeliverResponse,
  RotateResponse,
  TestResponse,
  UpdateWebhook,
  WebhookEndpoint,
  WebhookEndpointCreated
} from "../webhooks/Webhook.ts"
import {
  Accepted,
  AccountView,
  AddMember,
  AuditLog,
  AuditQuery,
  CodeRequest,
  Confirmation,
  ConfirmKey,
  CreateKey,
  CreatePanelWebhook,
  CurrentPanelUser,
  DeliveriesQuery,
  DeliveryDetail,
  DeliveryIdPath,
  DeliveryList,
  EnvironmentQuery,
  KeyList,
  KeyPath,
  MemberList,
  MemberPath,
  NewKey,
  PanelProperty,
  PropertyList,
  PropertyPath,
  RecordDeparture,
  ReservationIdPath,
  ReservationPage,
  ReservationSummary,
  ReservationsQuery,
  Revoked,
  SandboxCreated,
  SessionView,
  SESSION_COOKIE,
  SignedOut,
  SignIn,
  Signup,
  UpdateSettings,
  WebhookSummaryList
} from "./Panel.ts"

/**
 * The account panel's JSON API (design §8), under `/api/panel/`: the contract of the page at `/panel`, served by
 * the same process as the partner API and kept out of its OpenAPI document; `/api/panel/openapi.json` is this
 * one's own, generated from `PanelApi` the same way.
 */

/**
 * The session (cookie `panel_session`) on every route but the sign-in ones; on a state-changing request also a
 * same-origin `Origin` or the session's `X-Panel-CSRF` (403 csrf_rejected).
 */
export class PanelSession extends HttpApiMiddleware.Tag<PanelSession>()("panel/PanelSession", {
  failure: Schema.Union(UnauthorizedBody, CsrfRejectedBody),
  provides: CurrentPanelUser,
  security: {
    session: HttpApiSecurity.apiKey({ in: "cookie", key: SESSION_COOKIE }).pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "The session cookie set by `POST /api/panel/session` (HttpOnly, SameSite=Strict; 30 minutes idle, 12 hours " +
          "at most). A missing or ended session is 401 `unauthorized`. A state-changing request also needs a " +
          "same-origin `Origin` or the `X-Panel-CSRF` header that `GET /api/panel/account` answers (403 `csrf_rejected`)."
      )
    )
  }
}) {}

/** Before a session exists: a browser's cross-site `Origin` is refused (login CSRF), 403 csrf_rejected. */
export class PanelOrigin extends HttpApiMiddleware.Tag<PanelOrigin>()("panel/PanelOrigin", {
  failure: CsrfRejectedBody
}) {}

export class PanelSignInApi extends HttpApiGroup.make("panelSignIn")
  .add(
    HttpApiEndpoint.post("requestCode", "/api/panel/session/code")
      .setPayload(CodeRequest)
      .addSuccess(Accepted, { status: 202 })
      .addError(RateLimitedBody)
      .annotate(OpenApi.Summary, "E-mail a sign-in code")
      .annotate(
        OpenApi.Description,
        "Always 202 {}: if the e-mail belongs to an account (its own or a member's), a 6-digit code valid 10 minutes is e-mailed. At most 5 codes per e-mail and 30 per client address per hour (429 rate_limited)."
      )
  )
  .add(
    HttpApiEndpoint.post("signIn", "/api/panel/session")
      .setPayload(SignIn)
      .addSuccess(SessionView)
      .addError(InvalidCodeBody)
      .annotate(OpenApi.Summary, "Sign in with the e-mailed code")
      .annotate(
        OpenApi.Description,
        "Sets the `panel_session` cookie (HttpOnly, SameSite=Strict; 30 minutes idle, 12 hours at most). A wrong, expired or spent code is 401 invalid_code; 5 wrong tries burn it."
      )
  )
  .add(
    HttpApiEndpoint.post("signup", "/api/panel/signup")
      .setPayload(Signup)
      .addSuccess(Accepted, { status: 202 })
      .addError(RateLimitedBody)
      .addError(NotFoundBody)
      .annotate(OpenApi.Summary, "Sign up (when PANEL_SIGNUP=open)")
      .annotate(
        OpenApi.Description,
        "Always 202 {}: e-mails the code that creates the account on sign-in (test environment only until an operator enables live). 404 not_found when sign-up is closed."
      )
  )
  .middleware(PanelOrigin)
  .annotate(OpenApi.Title, "Sign-in")
  .annotate(OpenApi.Description, "Passwordless sign-in with e-mailed codes.")
{}

/** Issuing a key: the account already has 3 active of that type (409), or live keys not enabled yet (403). */
const KeyIssueErrors = Schema.Union(KeyLimitReachedBody, LiveNotEnabledBody)

export class PanelAccountApi extends HttpApiGroup.make("panelAccount")
  .add(
    HttpApiEndpoint.del("signOut", "/api/panel/session")
      .addSuccess(SignedOut)
      .annotate(OpenApi.Summary, "Sign out: the session is dead at once")
  )
  .add(
    HttpApiEndpoint.get("account", "/api/panel/account")
      .addSuccess(AccountView)
      .annotate(OpenApi.Summary, "The account, its members and whether its test environment exists")
      .annotate(OpenApi.Description, "Answers the session's CSRF token in the `X-Panel-CSRF` response header.")
  )
  .add(HttpApiEndpoint.get("keys", "/api/panel/keys").addSuccess(KeyList).annotate(OpenApi.Summary, "API keys"))
  .add(
    HttpApiEndpoint.post("createKey", "/api/panel/keys")
      .setPayload(CreateKey)
      .addSuccess(NewKey, { status: 201 })
      .addSuccess(Confirmation, { status: 202 })
      .addError(KeyIssueErrors)
      .annotate(OpenApi.Summary, "Create a key: test at once (201), live after an e-mailed code (202)")
  )
  .add(
    HttpApiEndpoint.post("confirmKey", "/api/panel/keys/confirm")
      .setPayload(ConfirmKey)
      .addSuccess(NewKey, { status: 201 })
      .addError(InvalidCodeBody)
      .addError(KeyIssueErrors)
      .annotate(OpenApi.Summary, "Confirm a live key with the code e-mailed to the account's e-mail")
  )
  .add(
    HttpApiEndpoint.del("revokeKey", "/api/panel/keys/:key_id")
      .setPath(KeyPath)
      .addSuccess(Revoked)
      .addError(KeyNotFoundBody)
      .annotate(OpenApi.Summary, "Revoke a key: it answers 401 at once")
  )
  .add(
    HttpApiEndpoint.post("sandbox", "/api/panel/sandbox")
      .addSuccess(SandboxCreated, { status: 201 })
      .addError(SandboxExistsBody)
      .addError(KeyLimitReachedBody)
      .annotate(OpenApi.Summary, "Create the test environment: two test properties and a first test key, once")
  )
  .add(
    HttpApiEndpoint.get("properties", "/api/panel/properties")
      .addSuccess(PropertyList)
      .annotate(OpenApi.Summary, "Properties of both environments with their reporting settings")
  )
  .add(
    HttpApiEndpoint.patch("updateProperty", "/api/panel/properties/:property_id")
      .setPath(PropertyPath)
      .setPayload(UpdateSettings)
      .addSuccess(PanelProperty)
      .addError(PropertyNotFoundBody)
      .annotate(OpenApi.Summary, "Change a property's reporting settings (the TRA token is write-only)")
  )
  .add(
    HttpApiEndpoint.get("webhooks", "/api/panel/webhooks")
      .setUrlParams(EnvironmentQuery)
      .addSuccess(WebhookSummaryList)
      .annotate(OpenApi.Summary, "Webhook endpoints with their last 7 days' deliveries by status")
  )
  .add(
    HttpApiEndpoint.post("createWebhook", "/api/panel/webhooks")
      .setPayload(CreatePanelWebhook)
      .addSuccess(WebhookEndpointCreated, { status: 201 })
      .addError(InvalidWebhookUrlBody)
      .addError(WebhookLimitReachedBody)
      .addError(LiveNotEnabledBody)
      .annotate(OpenApi.Summary, "Add a webhook endpoint (as endpoint 10; the secret is shown only here)")
  )
  .add(
    onWebhook(HttpApiEndpoint.patch("updateWebhook", "/api/panel/webhooks/:id"))
      .setPayload(UpdateWebhook)
      .addSuccess(WebhookEndpoint)
      .addError(InvalidWebhookUrlBody)
      .annotate(OpenApi.Summary, "Change a webhook endpoint's url, events or include_guests (as endpoint 11)")
  )
  .add(
    onWebhook(HttpApiEndpoint.del("deactivateWebhook", "/api/panel/webhooks/:id"))
      .addSuccess(DeactivateResponse)
      .annotate(OpenApi.Summary, "Deactivate a webhook endpoint (as endpoint 12)")
  )
  .add(
    onWebhook(HttpApiEndpoint.post("rotateWebhookSecret", "/api/panel/webhooks/:id/rotate-secret"))
      .addSuccess(RotateResponse)
      .annotate(OpenApi.Summary, "Rotate a webhook endpoint's signing secret (as endpoint 13)")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/api/panel/deliveries")
      .setUrlParams(DeliveriesQuery)
      .addSuccess(DeliveryList)
      .annotate(OpenApi.Summary, "The delivery log: filtered, most recent first, by pages, with counts by status")
  )
  .add(
    HttpApiEndpoint.get("delivery", "/api/panel/deliveries/:id")
      .setPath(DeliveryIdPath)
      .addSuccess(DeliveryDetail)
      .addError(DeliveryNotFoundBody)
      .annotate(OpenApi.Summary, "One delivery: the payload sent and each attempt with the receiver's answer")
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/api/panel/deliveries/:id/redeliver")
      .setPath(DeliveryIdPath)
      .addSuccess(RedeliverResponse)
      .addError(RedeliveryErrors)
      .annotate(OpenApi.Summary, "Re-send a delivery with a fresh retry cycle (as endpoint 16)")
  )
  .add(
    onWebhook(HttpApiEndpoint.post("testWebhook", "/api/panel/webhooks/:id/test"))
      .addSuccess(TestResponse)
      .annotate(OpenApi.Summary, "Send a signed ping now (as endpoint 14)")
  )
  .add(
    recoverEndpoint("recoverWebhook", "/api/panel/webhooks/:id/recover").annotate(OpenApi.Summary, "Queue the endpoint's failed deliveries of a window again (as the partner recover)")
  )
  .add(
    HttpApiEndpoint.get("reservations", "/api/panel/reservations")
      .setUrlParams(ReservationsQuery)
      .addSuccess(ReservationPage)
      .annotate(OpenApi.Summary, "Reservations with their TRA and SIRE status; no guest personal data")
  )
  .add(
    HttpApiEndpoint.post("recordDeparture", "/api/panel/reservations/:reservation_id/departure")
      .setPath(ReservationIdPath)
      .setPayload(RecordDeparture)
      .addSuccess(ReservationSummary)
      .addError(ChangeErrors)
      .annotate(OpenApi.Summary, "Record the day the guests left (as the partner API's departure)")
  )
  .add(HttpApiEndpoint.get("members", "/api/panel/members").addSuccess(MemberList).annotate(OpenApi.Summary, "Members"))
  .add(
    HttpApiEndpoint.post("addMember", "/api/panel/members")
      .setPayload(AddMember)
      .addSuccess(MemberList, { status: 201 })
      .addError(OwnerRequiredBody)
      .annotate(OpenApi.Summary, "Add a member (the account's own e-mail only)")
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/api/panel/members/:email")
      .setPath(MemberPath)
      .addSuccess(MemberList)
      .addError(OwnerRequiredBody)
      .addError(MemberNotFoundBody)
      .annotate(OpenApi.Summary, "Remove a member; their sessions end (the account's own e-mail only)")
  )
  .add(
    HttpApiEndpoint.get("alerts", "/api/panel/alerts")
      .addSuccess(AlertList)
      .annotate(OpenApi.Summary, "Alerts sent to the account holder, newest first (design §9)")
  )
  .add(
    HttpApiEndpoint.get("audit", "/api/panel/audit")
      .setUrlParams(AuditQuery)
      .addSuccess(AuditLog)
      .annotate(OpenApi.Summary, "The audit log, newest first")
  )
  .middleware(PanelSession)
  .annotate(OpenApi.Title, "Account")
  .annotate(OpenApi.Description, "Everything behind the panel's session.")
{}

/** The panel's own contract: its routes and `/api/panel/openapi.json`. */
export class PanelApi extends HttpApi.make("panel")
  .add(PanelSignInApi)
  .add(PanelAccountApi)
  .addError(AnyRouteErrors)
  .annotate(OpenApi.Title, "Partner Reservation Registration Service — account panel")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(
    OpenApi.Description,
    "The JSON API of the account panel (`/panel`): sign-in by e-mailed code, API keys, the test environment, property settings, webhooks, reservations, members and the audit log. Errors are `{error, code, details}`."
  )
  .annotate(OpenApi.Transform, documented)
{}
