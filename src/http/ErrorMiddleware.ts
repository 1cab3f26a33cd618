import {
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { toBody } from "../shared/errors.ts"
import * as AccessLog from "./AccessLog.ts"
import * as Routes from "./Routes.ts"
import type { Route } from "./Routes.ts"

/** Request bodies above this are refused with invalid_request (design §6.2). */
export const MAX_BODY_BYTES = 1024 * 1024
/** The check-in page's photo upload: two files of at most 10 MB each, plus the multipart framing (design §6.2). */
export const MAX_DOCUMENT_BODY_BYTES = 21 * 1024 * 1024
const DOCUMENT_UPLOAD = /^\/api\/checkin\/[^/?]+\/guests\/[^/?]+\/document(\?|$)/

export type { Route } from "./Routes.ts"

/** Routes of an `HttpApi` plus the non-API ones, to tell 404 `not_found` from 405 `method_not_allowed`. */
export const routesOf = (api: HttpApi.HttpApi.Any, extra: ReadonlyArray<Route>): ReadonlyArray<Route> => {
  const routes: Array<Route> = [...extra]
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => routes.push({ method: endpoint.method, path: endpoint.path })
  })
  return routes
}

/** `["guests", 1, "nacionalidad"]` → `guests[1].nacionalidad`. */
export const fieldPath = (path: ReadonlyArray<PropertyKey>) =>
  path.reduce<string>(
    (out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`,
    ""
  )

const isDecodable = (path: string) => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

const json = (status: number, body: unknown) => HttpServerResponse.unsafeJson(body, { status })

const tooLarge = json(
  400,
  toBody("invalid_request", `request body is larger than ${MAX_BODY_BYTES} bytes`, {
    fields: [{ field: "body", message: `must be at most ${MAX_BODY_BYTES} bytes` }]
  })
)

/** A union reports one issue per member (`Expected string` / `Expected null`): one entry per field. */
const invalidRequest = (error: HttpApiError.HttpApiDecodeError) => {
  const byField = new Map<string, Array<string>>()
  for (const issue of error.issues) {
    const field = fieldPath(issue.path) || "body"
    byField.set(field, [...(byField.get(field) ?? []), issue.message])
  }
  const fields = [...byField].map(([field, messages]) => ({ field, message: messages.join("; or ") }))
  return json(400, toBody("invalid_request", `invalid request: ${[...byField.keys()].join(", ")}`, { fields }))
}

/**
 * The one place framework failures become the spec's Error shape: decode failures → 400 invalid_request
 * naming every field, malformed JSON → 400 invalid_json, unknown routes → 404 not_found / 405
 * method_not_allowed, and defects → 500 internal_error with a request id (logged, never leaked).
 * It wraps the whole router, so it also sees what `HttpApiMiddleware`s cannot (stack-notes §3). It runs on
 * every request, so the success path is one `flatMap` and one `catchAllCause` (docs/performance.md).
 */
export const layer = (routes: ReadonlyArray<Route>) => {
  const compiled = Routes.compile(routes)

  const routeNotFound = (request: HttpServerRequest.HttpServerRequest) => {
    const path = request.url.split("?", 1)[0]!
    if (!isDecodable(path)) {
      return json(
        400,
        toBody("invalid_request", "the path has malformed percent-encoding", {
          fields: [{ field: "path", message: "has malformed percent-encoding" }]
        })
      )
    }
    const allowed = compiled.allowed(path)
    return allowed.length > 0
      ? HttpServerResponse.setHeader(
        json(405, toBody("method_not_allowed", `${request.method} is not allowed on ${path}`, { allowed })),
        "allow",
        allowed.join(", ")
      )
      : json(404, toBody("not_found", `no route ${request.method} ${path}`))
  }

  /** The request id ties the 500 answer to its log lines (the error's and the access log's). */
  const internalError = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<unknown>, requestId: string) =>
    Effect.logError("request failed with an unexpected error", cause).pipe(
      Effect.annotateLogs({ request_id: requestId, method: request.method, route: compiled.templateOf(request.method, request.url.split("?", 1)[0] ?? "/") }),
      Effect.as(json(500, toBody("internal_error", "internal server error; retry", { request_id: requestId })))
    )

  const recover = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<never>, requestId: string) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const failure = Cause.failureOption(cause)
    const error: unknown = Option.getOrElse(failure, () => Cause.squash(cause))
    if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(invalidRequest(error))
    if (HttpServerError.isServerError(error)) {
      if (error._tag === "RequestError" && error.reason === "Decode") {
        return Effect.succeed(json(400, toBody("invalid_json", "request body is not valid JSON")))
      }
      if (error._tag === "RouteNotFound") return Effect.succeed(routeNotFound(request))
    }
    // Typed failures of the contract (our TaggedErrors) are encoded by HttpApi right after this middleware.
    if (Option.isSome(failure)) return Effect.failCause(cause)
    return internalError(request, cause, requestId)
  }

  const accessLog = AccessLog.make(compiled)

  return HttpApiBuilder.middleware((app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const facts: AccessLog.RequestFacts = { requestId: AccessLog.requestIdOf(request.headers["x-request-id"]), keyPrefix: null }
      const handled = Number(request.headers["content-length"] ?? 0) >
          (DOCUMENT_UPLOAD.test(request.url) ? MAX_DOCUMENT_BODY_BYTES : MAX_BODY_BYTES)
        ? Effect.succeed(tooLarge)
        : Effect.catchAllCause(app, (cause) => recover(request, cause, facts.requestId))
      return Effect.zipRight(accessLog.begin(request, facts), Effect.locally(handled, AccessLog.CurrentRequest, facts))
    })
  )
}
