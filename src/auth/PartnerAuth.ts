import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest, OpenApi } from "@effect/platform"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { bucketFor, RateLimits } from "../ratelimit/RateLimits.ts"
import { type RateLimited, RateLimitedBody, Unauthorized, UnauthorizedBody } from "../shared/errors.ts"
import { addResponseHeaders, CurrentRequest } from "../http/AccessLog.ts"
import { displayPrefix } from "./ApiKey.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { type AuthenticatedKey, CurrentKey } from "./CurrentKey.ts"

/**
 * Bearer-key authentication of every partner endpoint, with the per-key rate limit. Rate limiting lives here
 * because an `HttpApiMiddleware` cannot read another middleware's `provides` (style.md §1).
 */
export class PartnerAuth extends HttpApiMiddleware.Tag<PartnerAuth>()("auth/PartnerAuth", {
  failure: Schema.Union(UnauthorizedBody, RateLimitedBody),
  provides: CurrentKey,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Format, "svc_test_… | svc_live_…"),
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "An API key, created in the account panel and shown once: `Authorization: Bearer <API_KEY>`. The prefix " +
          "decides the environment: `svc_test_` works on the account's test properties, with TRA and SIRE " +
          "simulated; `svc_live_` works on its real properties and reports for real. Same base URL for both. A " +
          "missing, invalid or revoked key is 401 `unauthorized`. Keys belong on the partner's server only."
      )
    )
  }
}) {}

const unauthorized = new Unauthorized({
  message: "missing, invalid or revoked API key; send Authorization: Bearer svc_test_… or svc_live_…"
})

export const layer = Layer.effect(
  PartnerAuth,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const rateLimits = yield* RateLimits
    return PartnerAuth.of({
      // Runs on every partner request: a flat pipeline, no generator (docs/performance.md).
      bearer: (token) =>
        Effect.flatMap(keys.verify(Redacted.value(token)), (found): Effect.Effect<
          AuthenticatedKey,
          Unauthorized | RateLimited,
          HttpServerRequest.HttpServerRequest
        > => {
          if (Option.isNone(found)) return Effect.fail(unauthorized)
          const key = found.value
          // The request and its facts read from the fiber in one step (docs/performance.md, "Effect steps per request").
          return Effect.withFiberRuntime((fiber) => {
            const facts = fiber.getFiberRef(CurrentRequest)
            const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
            // The key's display prefix (never the key) for the request's log line.
            if (facts !== null) facts.keyPrefix = displayPrefix(Redacted.value(token))
            return Effect.flatMap(
              rateLimits.consume(key.keyId, bucketFor(request.method, request.url.split("?", 1)[0]!), key.limits),
              (decision) => {
                // Headers go on every partner response of this request, successes and errors alike: the access
                // log's pre-response handler writes them (the error middleware serves every partner route).
                if (facts !== null) addResponseHeaders(facts, decision.headers)
                return decision.allowed ? Effect.succeed(key) : Effect.fail(decision.error)
              }
            )
          })
        })
    })
  })
)
