import { HttpApiMiddleware, HttpApiSecurity, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { bucketFor, RateLimits } from "../ratelimit/RateLimits.ts"
import { RateLimitedBody, Unauthorized, UnauthorizedBody } from "../shared/errors.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { CurrentKey } from "./CurrentKey.ts"

/**
 * Bearer-key authentication of every partner endpoint, with the per-key rate limit. Rate limiting lives here
 * because an `HttpApiMiddleware` cannot read another middleware's `provides` (style.md §1).
 */
export class PartnerAuth extends HttpApiMiddleware.Tag<PartnerAuth>()("auth/PartnerAuth", {
  failure: Schema.Union(UnauthorizedBody, RateLimitedBody),
  provides: CurrentKey,
  security: { bearer: HttpApiSecurity.bearer }
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
      bearer: (token) =>
        Effect.gen(function*() {
          const key = yield* keys.verify(Redacted.value(token))
          if (Option.isNone(key)) return yield* unauthorized
          const request = yield* HttpServerRequest.HttpServerRequest
          const path = request.url.split("?", 1)[0]!
          const decision = yield* rateLimits.consume(
            key.value.keyId,
            bucketFor(request.method, path),
            key.value.limits
          )
          // Headers go on every partner response of this request, successes and errors alike.
          yield* HttpApp.appendPreResponseHandler((_request, response) =>
            Effect.succeed(HttpServerResponse.setHeaders(response, decision.headers))
          )
          if (!decision.allowed) return yield* decision.error
          return key.value
        })
    })
  })
)
