import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { PartnerApi } from "./PartnerApi.ts"
import { RateLimits } from "../ratelimit/RateLimits.ts"
import type { RateLimited } from "../shared/errors.ts"
import { GuestCheckin } from "../checkin/GuestCheckin.ts"

/** Design §5: writes through one token are limited to 30 per minute (reads are not counted). */
export const CHECKIN_LIMITS = { reads: 120, writes: 30, tests: 10 } as const

export const CheckinLive = HttpApiBuilder.group(PartnerApi, "checkin", (handlers) =>
  Effect.gen(function*() {
    const checkin = yield* GuestCheckin
    const rateLimits = yield* RateLimits

    /** Counts one write of `token`; the rate-limit headers go on the answer, a refusal is 429 rate_limited. */
    const limited = <A, E, R>(token: string, write: Effect.Effect<A, E, R>): Effect.Effect<A, E | RateLimited, R> =>
      Effect.flatMap(rateLimits.consume(`checkin:${token}`, "writes", CHECKIN_LIMITS), (decision) => {
        const headers = HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeaders(response, decision.headers))
        )
        const next: Effect.Effect<A, E | RateLimited, R> = decision.allowed ? write : Effect.fail(decision.error)
        return Effect.zipRight(headers, next)
      })

    return handlers
      .handle("view", ({ path }) => checkin.view(path.token))
      .handle("register", ({ path, payload }) => limited(path.token, checkin.register(path.token, payload)))
      .handle("document", ({ path, payload }) =>
        limited(path.token, checkin.uploadDocument(path.token, path.guest_id, payload.front, payload.back)))
      .handle("sign", ({ path, payload }) => limited(path.token, checkin.sign(path.token, payload.signer_name)))
  }))
