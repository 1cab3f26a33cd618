import { HttpApp, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, FiberRef, LogLevel, MetricLabel } from "effect"
import { randomUUID } from "node:crypto"
import * as Metrics from "../shared/Metrics.ts"
import type { CompiledRoutes } from "./Routes.ts"

/**
 * The access log and request ids (design §9): one structured line per request — method, route template,
 * status, duration, request id and, for partner requests, the key's display prefix; never the key, a body or
 * personal data — and `X-Request-Id` on every response. A well-formed incoming id is kept, so a partner's or a
 * proxy's id ties its logs to ours; anything else is replaced by a fresh UUID.
 */

/** What is learnt about a request while it runs, for its log line and its response (one mutable record per request). */
export interface RequestFacts {
  readonly requestId: string
  /** The API key's display prefix (`svc_live_AbC123`), once the partner authentication knows it. */
  keyPrefix: string | null
  /**
   * Headers every response of this request carries, errors included (the rate limit's, set by the partner
   * authentication): written on the response by the access log's one pre-response handler, instead of a
   * handler of their own — each pre-response handler is a fiber-ref write per request (docs/performance.md).
   */
  responseHeaders: Readonly<Record<string, string>> | null
}

/** The current request's facts; null outside a request (a background loop). */
export const CurrentRequest = FiberRef.unsafeMake<RequestFacts | null>(null)

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/

/** The request's id: the incoming `X-Request-Id` when it is 1–128 of `A–Z a–z 0–9 . _ : -`, else a new UUID. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && WELL_FORMED.test(incoming) ? incoming : randomUUID()

/** The current request's facts, to note what the request learns (null outside the error middleware). */
export const currentFacts: Effect.Effect<RequestFacts | null> = FiberRef.get(CurrentRequest)

/** Methods a metric label may name; anything else a client invents is `other` (labels are bounded sets). */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/**
 * The metric labels of one (method, route, status), made once: a metric caches its registry entry per labels
 * array (by identity), so reusing the array makes an update a map lookup (the access log runs on every request).
 */
const requestLabels = new Map<
  string,
  { readonly count: ReadonlyArray<MetricLabel.MetricLabel>; readonly duration: ReadonlyArray<MetricLabel.MetricLabel> }
>()

const labelsOf = (rawMethod: string, route: string, status: number) => {
  const method = METHODS.has(rawMethod) ? rawMethod : "other"
  const key = `${method} ${route} ${status}`
  let found = requestLabels.get(key)
  if (found === undefined) {
    const duration = [MetricLabel.make("method", method), MetricLabel.make("route", route)]
    found = { count: [...duration, MetricLabel.make("status", String(status))], duration }
    requestLabels.set(key, found)
  }
  return found
}

/**
 * The logger of one router: `begin` stamps a request with its facts and registers the line that is written,
 * with the final status, when the response leaves (a pre-response handler sees what the API encoded after
 * every middleware, errors included).
 */
export const make = (routes: CompiledRoutes) => {
  const begin = (request: HttpServerRequest.HttpServerRequest, facts: RequestFacts) =>
    Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
      HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const route = routes.templateOf(request.method, request.url.split("?", 1)[0] ?? "/")
          const labels = labelsOf(request.method, route, response.status)
          // Synchronous updates: two more effects per request would cost more than the counting itself.
          Metrics.httpRequests.unsafeUpdate(1, labels.count)
          Metrics.httpRequestDuration.unsafeUpdate((now - startedAt) / 1000, labels.duration)
          // One copy of the response for every header the request adds.
          const answer = facts.responseHeaders === null
            ? HttpServerResponse.setHeader(response, "x-request-id", facts.requestId)
            : HttpServerResponse.setHeaders(response, { ...facts.responseHeaders, "x-request-id": facts.requestId })
          // Below the log level the line is not built at all: its annotations are a map made per request.
          return Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) =>
            LogLevel.greaterThan(minimum, LogLevel.Info) ? Effect.succeed(answer) : Effect.as(
              Effect.annotateLogs(Effect.logInfo("request"), {
                method: request.method,
                route,
                status: response.status,
                duration_ms: now - startedAt,
                request_id: facts.requestId,
                ...(facts.keyPrefix === null ? {} : { key_prefix: facts.keyPrefix })
              }),
              answer
            ))
        })
      ))

  return { begin } as const
}
