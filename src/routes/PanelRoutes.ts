import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig, type AppConfigShape } from "../config/AppConfig.ts"
import * as CompressedAsset from "../http/CompressedAsset.ts"
import * as ApiDocs from "../http/ApiDocs.ts"
import { withServers } from "../http/OpenApiDocument.ts"
import { PartnerApi } from "./PartnerApi.ts"
import { CsrfRejected, RateLimited, Unauthorized } from "../shared/errors.ts"
import { PanelApi, PanelOrigin, PanelSession } from "../panel/Api.ts"
import { PanelAccount } from "../panel/PanelAccount.ts"
import { PanelWebhooks } from "../panel/PanelWebhooks.ts"
import { PanelAuth } from "../panel/PanelAuth.ts"
import { PanelKeys } from "../panel/PanelKeys.ts"
import { CSRF_HEADER, CurrentPanelUser, SESSION_COOKIE, SESSION_HOURS } from "../panel/Panel.ts"
import { sameText } from "../panel/Secrets.ts"

/** The client's address as the socket saw it (no proxy header is trusted; docs/panel.md). */
const clientIp = (request: HttpServerRequest.HttpServerRequest) => Option.getOrNull(request.remoteAddress)

const changesState = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS"

/**
 * The origin a same-origin request comes from (design §8): that of `PUBLIC_BASE_URL`, or, when it is unset,
 * `http://` and the request's `Host`.
 */
const expectedOrigin = (config: AppConfigShape, request: HttpServerRequest.HttpServerRequest) =>
  config.publicBaseUrlSet ? new URL(config.publicBaseUrl).origin : `http://${request.headers["host"] ?? ""}`

const csrfRejected = () =>
  new CsrfRejected({
    message: `this request needs a same-origin Origin header or the ${CSRF_HEADER} header answered by GET /api/panel/account`,
    details: {}
  })

const noSession = () =>
  new Unauthorized({ message: "sign in to the panel first (no session, or it ended)", details: {} })

export const PanelSessionLive = Layer.effect(
  PanelSession,
  Effect.gen(function*() {
    const auth = yield* PanelAuth
    const config = yield* AppConfig
    return PanelSession.of({
      session: (token) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const found = yield* auth.authenticate(Redacted.value(token), clientIp(request))
          if (Option.isNone(found)) return yield* noSession()
          const user = found.value
          if (changesState(request.method)) {
            const origin = request.headers["origin"]
            const header = request.headers[CSRF_HEADER]
            const sameOrigin = origin !== undefined && origin === expectedOrigin(config, request)
            if (!sameOrigin && (header === undefined || !sameText(header, user.csrf))) return yield* csrfRejected()
          }
          return user
        })
    })
  })
)

export const PanelOriginLive = Layer.effect(
  PanelOrigin,
  Effect.map(AppConfig, (config) =>
    PanelOrigin.of(Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // Before a session there is no CSRF token: a browser's cross-site Origin is refused; a client that sends
      // none (a script, curl) is not a browser being tricked.
      const origin = request.headers["origin"]
      return origin === undefined || origin === expectedOrigin(config, request) ? Effect.void : Effect.fail(csrfRejected())
    })))
)

/** The session cookie (design §8): HttpOnly, SameSite=Strict, Path=/, Secure under an https `PUBLIC_BASE_URL`. */
const withSessionCookie = (
  response: HttpServerResponse.HttpServerResponse,
  config: AppConfigShape,
  value: string,
  maxAge: Duration.Duration
) =>
  HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: "strict",
    path: "/",
    secure: config.publicBaseUrl.startsWith("https://"),
    maxAge
  })

/** A 429 says when to come back (spec "Limits": `Retry-After` in seconds). */
const withRetryAfter = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapError(effect, (error) =>
    error instanceof RateLimited
      ? HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(error.details["retry_after"] ?? 60)))
      )
      : Effect.void)

/** The account's language for a new sign-up: English when the browser asks for it first, else Spanish. */
const languageOf = (request: HttpServerRequest.HttpServerRequest) =>
  /^\s*en\b/i.test(request.headers["accept-language"] ?? "") ? "en" as const : "es" as const

export const PanelSignInLive = HttpApiBuilder.group(PartnerApi, "panelSignIn", (handlers) =>
  Effect.gen(function*() {
    const auth = yield* PanelAuth
    const config = yield* AppConfig
    return handlers
      .handle("requestCode", ({ payload }) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.as(withRetryAfter(auth.requestCode(payload.email, clientIp(request))), {})))
      .handle("signIn", ({ payload }) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.map(auth.signIn(payload.email, payload.code, clientIp(request)), (session) =>
            withSessionCookie(
              HttpServerResponse.unsafeJson(session.view, { headers: { [CSRF_HEADER]: session.csrf } }),
              config,
              session.token,
              Duration.hours(SESSION_HOURS)
            ))))
      .handle("signup", ({ payload }) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.as(withRetryAfter(auth.signup(payload.name, payload.email, languageOf(request), clientIp(request))), {})))
  }))

export const PanelAccountLive = HttpApiBuilder.group(PartnerApi, "panelAccount", (handlers) =>
  Effect.gen(function*() {
    const auth = yield* PanelAuth
    const panel = yield* PanelAccount
    const keys = yield* PanelKeys
    const webhooks = yield* PanelWebhooks
    const config = yield* AppConfig
    const as = <A, E, R>(use: (user: typeof CurrentPanelUser.Service) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(CurrentPanelUser, use)
    return handlers
      .handle("signOut", () =>
        as((user) =>
          Effect.as(
            auth.signOut(user),
            withSessionCookie(HttpServerResponse.unsafeJson({ ok: true }), config, "", Duration.zero)
          )))
      .handle("account", () =>
        as((user) =>
          Effect.map(panel.account(user), (view) => HttpServerResponse.unsafeJson(view, { headers: { [CSRF_HEADER]: user.csrf } }))))
      .handle("keys", () => as(keys.listKeys))
      .handle("createKey", ({ payload }) =>
        as((user) =>
          Effect.map(keys.requestKey(user, payload.environment, payload.name), (outcome) =>
            outcome._tag === "Created"
              ? HttpServerResponse.unsafeJson(outcome.key, { status: 201 })
              : HttpServerResponse.unsafeJson({ confirmation_id: outcome.confirmation_id }, { status: 202 }))))
      .handle("confirmKey", ({ payload }) =>
        as((user) =>
          Effect.map(
            keys.confirmLiveKey(user, payload.confirmation_id, payload.code),
            (key) => HttpServerResponse.unsafeJson(key, { status: 201 })
          )))
      .handle("revokeKey", ({ path }) => as((user) => keys.revokeKey(user, path.key_id)))
      .handle("sandbox", () =>
        as((user) => Effect.map(panel.createSandbox(user), (created) => HttpServerResponse.unsafeJson(created, { status: 201 }))))
      .handle("properties", () => as(panel.listProperties))
      .handle("updateProperty", ({ path, payload }) => as((user) => panel.updateSettings(user, path.property_id, payload)))
      .handle("webhooks", ({ urlParams }) => as((user) => webhooks.list(user, urlParams.environment ?? "live")))
      .handle("createWebhook", ({ payload }) =>
        as((user) =>
          Effect.map(webhooks.create(user, payload), (created) => HttpServerResponse.unsafeJson(created, { status: 201 }))))
      .handle("updateWebhook", ({ path, payload }) => as((user) => webhooks.update(user, path.id, payload)))
      .handle("deactivateWebhook", ({ path }) => as((user) => webhooks.deactivate(user, path.id)))
      .handle("rotateWebhookSecret", ({ path }) => as((user) => webhooks.rotate(user, path.id)))
      .handle("deliveries", ({ urlParams }) => as((user) => webhooks.listDeliveries(user, urlParams)))
      .handle("delivery", ({ path }) => as((user) => webhooks.delivery(user, path.id)))
      .handle("redeliver", ({ path }) => as((user) => webhooks.redeliver(user, path.id)))
      .handle("testWebhook", ({ path }) => as((user) => webhooks.test(user, path.id)))
      .handle("recoverWebhook", ({ path, payload }) =>
        as((user) =>
          Effect.map(webhooks.recover(user, path.id, payload), (answer) =>
            HttpServerResponse.unsafeJson(answer, { status: 202 }))))
      .handle("reservations", ({ urlParams }) => as((user) => panel.listReservations(user, urlParams)))
      .handle("recordDeparture", ({ path, payload }) =>
        as((user) => panel.recordDeparture(user, path.reservation_id, payload.departed_on)))
      .handle("members", () => as(panel.listMembers))
      .handle("addMember", ({ payload }) =>
        as((user) =>
          Effect.map(panel.addMember(user, payload.email), (members) => HttpServerResponse.unsafeJson(members, { status: 201 }))))
      .handle("removeMember", ({ path }) => as((user) => panel.removeMember(user, path.email)))
      .handle("audit", ({ urlParams }) => as((user) => panel.auditLog(user, urlParams.limit)))
      .handle("alerts", () => as((user) => panel.alerts(user)))
  }))

/**
 * `GET /api/panel/openapi.json`: the panel's own document, generated from `PanelApi` like `/openapi.json`, with
 * this process's `servers` (generated once, on its first request).
 */
export const openApiRoute = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(AppConfig, (config) =>
    Effect.flatMap(
      CompressedAsset.lazyHandler(
        Effect.suspend(() => ApiDocs.documentAsset(OpenApi.fromApi(withServers(PanelApi, config))))
      ),
      (document) => router.get("/api/panel/openapi.json", document)
    ))
)

/** For `ErrorMiddleware.routesOf`. */
export const routes: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: "/api/panel/openapi.json" }
]

/** The panel's handlers, with their middleware, for `HttpApiBuilder.api(PartnerApi)`. */
export const layer = Layer.mergeAll(PanelSignInLive, PanelAccountLive).pipe(
  Layer.provide([PanelSessionLive, PanelOriginLive])
)
