import {
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { toBody } from "../shared/errors.ts"

/** Request bodies above this are refused with invalid_request (design §6.2). */
export const MAX_BODY_BYTES = 1024 * 1024
/** The check-in page's photo upload: two files of at most 10 MB each, plus the multipart framing (design §6.2). */
export const MAX_DOCUMENT_BODY_BYTES = 21 * 1024 * 1024
const DOCUMENT_UPLOAD = /^\/api\/checkin\/[^/?]+\/guests\/[^/?]+\/document(\?|$)/

export interface Route {
  readonly method: string
  readonly path: string
}

/** Routes of an `HttpApi` plus the non-API ones, to tell 404 `not_found` from 405 `method_not_allowed`. */
export const routesOf = (api: HttpApi.HttpApi.Any, extra: ReadonlyArray<Route>): ReadonlyArray<Route> => {
  const routes: Array<Route> = [...extra]
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => routes.push({ method: endpoint.method, path: endpoint.path })
  })
  return routes
}

const matcher = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\?:[A-Za-z_]\w*/g, "[^/]+")}/?$`)

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
  const compiled = routes.map((route) => ({ method: route.method, regex: matcher(route.path) }))

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
    const allowed = [...new Set(compiled.filter((route) => route.regex.test(path)).map((route) => route.method))]
    return allowed.length > 0
      ? HttpServerResponse.setHeader(
        json(405, toBody("method_not_allowed", `${request.method} is not allowed on ${path}`, { allowed })),
        "allow",
        allowed.join(", ")
      )
      : json(404, toBody("not_found", `no route ${request.method} ${path}`))
  }

  /** The request id ties the 500 answer to its log line: the caller's X-Request-Id if it sent one. */
  const internalError = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<unknown>) => {
    const requestId = request.headers["x-request-id"]?.slice(0, 100) || randomUUID()
    return Effect.logError("request failed with an unexpected error", cause).pipe(
      Effect.annotateLogs({ request_id: requestId, method: request.method, url: request.url }),
      Effect.as(HttpServerResponse.setHeader(
        json(500, toBody("internal_error", "internal server error; retry", { request_id: requestId })),
        "x-request-id",
        requestId
      ))
    )
  }

  const recover = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<never>) => {
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
    return internalError(request, cause)
  }

  return HttpApiBuilder.middleware((app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Number(request.headers["content-length"] ?? 0) >
          (DOCUMENT_UPLOAD.test(request.url) ? MAX_DOCUMENT_BODY_BYTES : MAX_BODY_BYTES)
        ? Effect.succeed(tooLarge)
        : Effect.catchAllCause(app, (cause) => recover(request, cause)))
  )
}
