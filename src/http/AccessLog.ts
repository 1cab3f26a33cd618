import { HttpApp, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef, LogLevel, MetricLabel } from "effect"
import { randomUUID } from "node:crypto"
import * as FiberClock from "../shared/FiberClock.ts"
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
  /** When the request reached the router (`Clock`, milliseconds). */
  readonly startedAt: number
  /** The API key's display prefix (`svc_live_AbC123`), once the partner authentication knows it. */
  keyPrefix: string | null
  /**
   * Headers every response of this request carries, errors included — a page's security headers, the rate
   * limit's (set by the partner authentication through {@link addResponseHeaders}): written on the response by
   * the access log's one pre-response handler, instead of a handler each — every handler is a fiber-ref write
   * and more steps per request (docs/performance.md).
   */
  responseHeaders: Readonly<Record<string, string>> | null
}

/** Headers every answer to the request URLs (path and query) `covers` names carries: a page's security headers. */
export interface CoveredHeaders {
  readonly covers: (url: string) => boolean
  readonly headers: Readonly<Record<string, string>>
}

/** The current request's facts; null outside a request (a background loop). */
export const CurrentRequest = FiberRef.unsafeMake<RequestFacts | null>(null)

/** Adds headers to every response of the request, over any of the same name. */
export const addResponseHeaders = (facts: RequestFacts, headers: Readonly<Record<string, string>>) => {
  facts.responseHeaders = facts.responseHeaders === null ? headers : { ...facts.responseHeaders, ...headers }
}

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/

/** The request's id: the incoming `X-Request-Id` when it is 1–128 of `A–Z a–z 0–9 . _ : -`, else a new UUID. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && WELL_FORMED.test(incoming) ? incoming : randomUUID()

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
 * The logger of one router: `start` makes a request's facts, `begin` stamps the request with them and registers
 * the line that is written, with the final status, when the response leaves (a pre-response handler sees what
 * the API encoded after every middleware, errors included). `covered`: the pages' headers (`StaticPage`).
 */
export const make = (routes: CompiledRoutes, covered: ReadonlyArray<CoveredHeaders>) => {
  const start = (request: HttpServerRequest.HttpServerRequest, startedAt: number): RequestFacts => ({
    requestId: requestIdOf(request.headers["x-request-id"]),
    startedAt,
    keyPrefix: null,
    responseHeaders: covered.find((rule) => rule.covers(request.url))?.headers ?? null
  })

  // One step: the clock and the log level read from the fiber, as `Clock.currentTimeMillis` and
  // `FiberRef.get` would with two steps each (docs/performance.md, "Effect steps per request").
  const logLine = (request: HttpServerRequest.HttpServerRequest, facts: RequestFacts) =>
  (
    _request: HttpServerRequest.HttpServerRequest,
    response: HttpServerResponse.HttpServerResponse
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
    Effect.withFiberRuntime((fiber) => {
      const now = FiberClock.currentTimeMillis(fiber)
      const route = routes.templateOf(request.method, request.url.split("?", 1)[0] ?? "/")
      const labels = labelsOf(request.method, route, response.status)
      // Synchronous updates: two more effects per request would cost more than the counting itself.
      Metrics.httpRequests.unsafeUpdate(1, labels.count)
      Metrics.httpRequestDuration.unsafeUpdate((now - facts.startedAt) / 1000, labels.duration)
      // One copy of the response for every header the request adds.
      const answer = facts.responseHeaders === null
        ? HttpServerResponse.setHeader(response, "x-request-id", facts.requestId)
        : HttpServerResponse.setHeaders(response, { ...facts.responseHeaders, "x-request-id": facts.requestId })
      // Below the log level the line is not built at all: its annotations are a map made per request.
      if (LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)) {
        return Effect.succeed(answer)
      }
      return Effect.as(
        Effect.annotateLogs(Effect.logInfo("request"), {
          method: request.method,
          route,
          status: response.status,
          duration_ms: now - facts.startedAt,
          request_id: facts.requestId,
          ...(facts.keyPrefix === null ? {} : { key_prefix: facts.keyPrefix })
        }),
        answer
      )
    })

  const begin = (request: HttpServerRequest.HttpServerRequest, facts: RequestFacts) =>
    Effect.zipRight(FiberRef.set(CurrentRequest, facts), HttpApp.appendPreResponseHandler(logLine(request, facts)))

  return { start, begin } as const
}
