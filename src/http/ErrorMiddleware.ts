import {
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpApiGroup,
  HttpMethod,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  Multipart
} from "@effect/platform"
import { Cause, Context, Effect, Option, Schema } from "effect"
import { isUnavailable } from "../db/SqlErrors.ts"
import {
  clip,
  clipError,
  clipIssueMessage,
  InternalErrorBody,
  InvalidJsonBody,
  InvalidRequestBody,
  ServiceUnavailable,
  ServiceUnavailableBody,
  toBody
} from "../shared/errors.ts"
import * as FiberClock from "../shared/FiberClock.ts"
import * as AccessLog from "./AccessLog.ts"
import * as BodyGuard from "./BodyGuard.ts"
import { RequestDrain } from "./RequestDrain.ts"
import * as Routes from "./Routes.ts"
import type { BodyKind, Route } from "./Routes.ts"

/** Request bodies above this are refused with invalid_request (design §6.2). */
export const MAX_BODY_BYTES = 1024 * 1024
/** The check-in page's photo upload: two files of at most 10 MB each, plus the multipart framing (design §6.2). */
export const MAX_DOCUMENT_BODY_BYTES = 21 * 1024 * 1024

export type { Route } from "./Routes.ts"

/**
 * What any route of an API served through this middleware may answer, declared once on each `HttpApi`: an
 * unreadable request (400 invalid_request, invalid_json), internal_error, and the database away
 * (service_unavailable, docs/reliability.md).
 */
export const AnyRouteErrors = Schema.Union(InvalidRequestBody, InvalidJsonBody, InternalErrorBody, ServiceUnavailableBody)

/** The body an endpoint reads, from the content types of its payload (none for a GET's query "payload"). */
const bodyOf = (method: HttpMethod.HttpMethod, contentTypes: Iterable<string>): BodyKind | undefined => {
  if (!HttpMethod.hasBody(method)) return undefined
  const types = [...contentTypes]
  return types.includes("multipart/form-data") ? "multipart" : types.includes("application/json") ? "json" : undefined
}

/**
 * Routes of an `HttpApi` plus the non-API ones, with the body each reads: to tell 404 `not_found` from 405
 * `method_not_allowed`, and to guard bodies before the route runs.
 */
export const routesOf = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  extra: ReadonlyArray<Route>
): ReadonlyArray<Route> => {
  const routes: Array<Route> = [...extra]
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, payloads }) => {
      const body = bodyOf(endpoint.method, payloads.keys())
      const route = { method: endpoint.method, path: endpoint.path }
      routes.push(body === undefined ? route : { ...route, body })
    }
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
const encodeUnavailable = Schema.encodeSync(ServiceUnavailableBody)

const tooLargeFor = (limit: number) =>
  json(
    400,
    toBody("invalid_request", `request body is larger than ${limit} bytes`, {
      fields: [{ field: "body", message: `must be at most ${limit} bytes` }]
    })
  )
const tooLarge = tooLargeFor(MAX_BODY_BYTES)
const tooLargeDocument = tooLargeFor(MAX_DOCUMENT_BODY_BYTES)
const tooLargeOf = (body: BodyKind | undefined) => body === "multipart" ? tooLargeDocument : tooLarge

const invalidJson = (why: string) => json(400, toBody("invalid_json", `request body is not valid JSON: ${why}`))
const notJson = json(400, toBody("invalid_json", "request body is not valid JSON"))
const notUtf8 = invalidJson("it is not valid UTF-8")
const tooDeep = invalidJson(`it nests arrays and objects deeper than ${BodyGuard.MAX_JSON_DEPTH} levels`)
const unreadable = invalidJson("it could not be read to its end")

/**
 * design §6.2: 415 `unsupported_media_type` (`UnsupportedMediaTypeBody`), naming what to send (and what was
 * sent, clipped).
 */
const unsupportedMediaType = (expected: string, received: string | undefined) =>
  json(
    415,
    toBody(
      "unsupported_media_type",
      received === undefined || received.trim() === ""
        ? `Content-Type is missing: send the body as ${expected}`
        : `Content-Type ${clip(received, 100)} is not accepted here: send the body as ${expected}`,
      { expected }
    )
  )
const notJsonType = (received: string | undefined) => unsupportedMediaType("application/json", received)

const refused = (refusal: BodyGuard.Refusal, body: BodyKind | undefined) => {
  switch (refusal._tag) {
    case "TooLarge":
      return tooLargeOf(body)
    case "NotUtf8":
      return notUtf8
    case "TooDeep":
      return tooDeep
    case "DuplicateKey":
      return invalidJson(`the key ${JSON.stringify(clip(refusal.key, 100))} appears twice in one object`)
    case "Unreadable":
      return unreadable
  }
}

const invalidBody = (message: string) =>
  json(400, toBody("invalid_request", `invalid request: body ${message}`, { fields: [{ field: "body", message }] }))

/** The photo upload's body, as the multipart parser found it; a failure to store a file stays a 500. */
const multipartRefusal = (error: Multipart.MultipartError) => {
  switch (error.reason) {
    case "BodyTooLarge":
      return tooLargeDocument
    case "FileTooLarge":
      return invalidBody("holds a file larger than allowed")
    case "FieldTooLarge":
      return invalidBody("holds a field larger than allowed")
    case "TooManyParts":
      return invalidBody("has too many parts")
    case "Parse":
      return invalidBody("is not a valid multipart/form-data body")
    case "InternalError":
      return undefined
  }
}

/** A union reports one issue per member (`Expected string` / `Expected null`): one entry per field. */
const invalidRequest = (error: HttpApiError.HttpApiDecodeError) => {
  const byField = new Map<string, Array<string>>()
  for (const issue of error.issues) {
    const field = clip(fieldPath(issue.path) || "body")
    byField.set(field, [...(byField.get(field) ?? []), clipIssueMessage(issue.message)])
  }
  const fields = [...byField].map(([field, messages]) => ({ field, message: messages.join("; or ") }))
  return json(400, toBody("invalid_request", `invalid request: ${[...byField.keys()].join(", ")}`, { fields }))
}

/**
 * The one place framework failures become the spec's Error shape, and the one guard of every entrance's
 * body (partner API, check-in API and its upload, panel API, admin RPC: they all pass through this router):
 * bodies over the limit → 400 invalid_request (chunked or not, while reading), a JSON route sent another
 * content type → 415 unsupported_media_type, invalid UTF-8, nesting over 64 or a key twice → 400
 * invalid_json (`BodyGuard`); decode failures → 400 invalid_request naming every field, malformed JSON → 400
 * invalid_json, unknown routes → 404 not_found / 405 method_not_allowed, and defects → 500 internal_error with
 * a request id (logged, never leaked). No error body repeats more than 200 characters of input (`clip`).
 * It wraps the whole router, so it also sees what `HttpApiMiddleware`s cannot (stack-notes §3).
 *
 * It is also the one pass every request makes before its route: the request's facts and access-log line
 * (`AccessLog`, with the headers of the pages `covered` names), and the drain's count of requests in flight
 * (`RequestDrain`) — in one step and one handler, where separate middlewares cost ~15 % of a read's Effect
 * steps (docs/performance.md, "Effect steps per request"). A request without a body pays one method test for
 * the guard.
 */
export const layer = (routes: ReadonlyArray<Route>, covered: ReadonlyArray<AccessLog.CoveredHeaders> = []) => {
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
        json(405, toBody("method_not_allowed", `${request.method} is not allowed on ${clip(path)}`, { allowed })),
        "allow",
        allowed.join(", ")
      )
      : json(404, toBody("not_found", `no route ${request.method} ${clip(path)}`))
  }

  /** The request id ties the 500 answer to its log lines (the error's and the access log's). */
  const internalError = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<unknown>, requestId: string) =>
    Effect.logError("request failed with an unexpected error", cause).pipe(
      Effect.annotateLogs({ request_id: requestId, method: request.method, route: compiled.templateOf(request.method, request.url.split("?", 1)[0] ?? "/") }),
      Effect.as(json(500, toBody("internal_error", "internal server error; retry", { request_id: requestId })))
    )

  /**
   * PostgreSQL away (docs/reliability.md): 503 `service_unavailable` at once, whichever route — not a 500, since
   * nothing is wrong with the request or the service; one warning line per request, without the stack.
   */
  const unavailable = (request: HttpServerRequest.HttpServerRequest, error: unknown, requestId: string) =>
    Effect.logWarning("request answered 503: the database is unavailable").pipe(
      Effect.annotateLogs({
        request_id: requestId,
        method: request.method,
        reason: clip(error instanceof Error ? String(error.cause ?? error.message) : String(error), 200)
      }),
      Effect.as(
        HttpServerResponse.setHeader(
          json(503, encodeUnavailable(new ServiceUnavailable({
            message: "the service cannot reach its database right now; nothing was changed; retry in a few seconds",
            details: { request_id: requestId }
          }))),
          "retry-after",
          "5"
        )
      )
    )

  const recover = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<never>, requestId: string) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const failure = Cause.failureOption(cause)
    const error: unknown = Option.getOrElse(failure, () => Cause.squash(cause))
    if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(invalidRequest(error))
    if (HttpServerError.isServerError(error)) {
      if (error._tag === "RequestError" && error.reason === "Decode") return Effect.succeed(notJson)
      if (error._tag === "RouteNotFound") return Effect.succeed(routeNotFound(request))
    }
    if (error instanceof Multipart.MultipartError) {
      const answer = multipartRefusal(BodyGuard.unwrapPlatformMultipart(error))
      if (answer !== undefined) return Effect.succeed(answer)
    }
    const away = Cause.find(cause, (reason) => {
      const error = reason._tag === "Die" ? reason.defect : reason._tag === "Fail" ? reason.error : undefined
      return error !== undefined && isUnavailable(error) ? Option.some(error) : Option.none()
    })
    if (Option.isSome(away)) return unavailable(request, away.value, requestId)
    // Typed failures of the contract (our TaggedErrors) are encoded by HttpApi right after this middleware,
    // with the input they quote clipped.
    if (Option.isSome(failure)) {
      const clipped = clipError(failure.value)
      // Cast: `HttpApiBuilder.middleware` types the app it wraps as failing with `never`, yet at run time its
      // failures are the contract's errors, and the clipped copy goes on as one of them.
      return clipped === failure.value ? Effect.failCause(cause) : Effect.fail(clipped as never)
    }
    return internalError(request, cause, requestId)
  }

  /**
   * The body guard, before the route runs: the `Content-Length` limit for every request; then, by what the
   * request's route reads, the content type (415), and the body itself, read here once (held to the limit
   * while reading) and handed on.
   */
  const guarded = <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    request: HttpServerRequest.HttpServerRequest
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
    const length = request.headers["content-length"]
    const chunked = request.headers["transfer-encoding"] !== undefined
    // No body and no content type (every GET, most DELETEs and action POSTs): three header lookups, nothing
    // else. The route reads an empty body as JSON, its `invalid_json`. With a content type, even an empty body
    // is guarded: a route picks its parser by content type (an empty multipart one was a 500).
    if (!chunked && (length === undefined || length === "0")) {
      if (request.headers["content-type"] === undefined || !HttpMethod.hasBody(request.method)) return app
    }
    const body = HttpMethod.hasBody(request.method)
      ? compiled.bodyOf(request.method, request.url.split("?", 1)[0]!)
      : undefined
    const limit = body === "multipart" ? MAX_DOCUMENT_BODY_BYTES : MAX_BODY_BYTES
    if (Number(length ?? 0) > limit) return Effect.succeed(tooLargeOf(body))
    if (body === undefined) return app
    const contentType = request.headers["content-type"]
    if (body === "multipart" && !BodyGuard.isMultipart(contentType)) {
      return Effect.succeed(unsupportedMediaType("multipart/form-data", contentType))
    }
    if (body === "json" && !BodyGuard.isJson(contentType)) return Effect.succeed(notJsonType(contentType))
    const read = body === "json" ? BodyGuard.readJson(request, limit) : BodyGuard.readMultipart(request, limit)
    return Effect.matchEffect(read, {
      onFailure: (refusal) => Effect.succeed(refused(refusal, body)),
      onSuccess: (read) => Effect.provideService(app, HttpServerRequest.HttpServerRequest, read)
    })
  }

  const accessLog = AccessLog.make(compiled, covered)

  return HttpApiBuilder.middleware(Effect.map(RequestDrain, (drain) => (app) =>
    Effect.withFiberRuntime((fiber) => {
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      const facts = accessLog.start(request, FiberClock.currentTimeMillis(fiber))
      drain.enter(request)
      // Counted out whichever way the request ends: a client that hangs up interrupts only the route's handler
      // (the router runs it interruptible), and this match runs in platform's uninterruptible request region —
      // what `Effect.ensuring` would add a mask for (test/main.test.ts holds it).
      const handled = Effect.matchCauseEffect(guarded(app, request), {
        onFailure: (cause) => {
          drain.leave()
          return recover(request, cause, facts.requestId)
        },
        onSuccess: (response) => {
          drain.leave()
          return Effect.succeed(response)
        }
      })
      // Each request runs in a fiber of its own: the facts are set for the rest of it, not scoped with
      // `Effect.locally` (an acquire/release around every request; docs/performance.md).
      return Effect.zipRight(accessLog.begin(request, facts), handled)
    })))
}
