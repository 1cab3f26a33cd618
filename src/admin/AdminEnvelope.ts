import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { RpcServer } from "@effect/rpc"
import { Effect, Either, Layer, ParseResult, Schema } from "effect"
import { clip, clipIssueMessage, toBody } from "../shared/errors.ts"
import { isWellFormed } from "../shared/StoredString.ts"
import { AdminRpcs } from "./AdminRpcs.ts"

/**
 * What the admin RPC's HTTP entrance accepts before @effect/rpc sees it: one JSON message, a `Request` of a
 * known tag whose headers are name/value pairs and whose payload its schema accepts (or a `Ping`). The RPC
 * server itself answers anything else with a bare defect or a schema dump, or crashes (a `Request` without
 * `headers` was a 500); here it is a 400 in the Error shape naming what is wrong — the `{error, code}` the CLI
 * and scripts read. The body was already read and checked (size, UTF-8, depth, duplicate keys) by the error
 * middleware's body guard, like every entrance's; the CLI's own requests always pass.
 */

type Field = { readonly field: string; readonly message: string }

const rpcs = AdminRpcs.requests
const TAGS = [...rpcs.keys()]

/** A request id as the RPC client writes it: the digits of a 64-bit integer. */
const REQUEST_ID = /^\d{1,19}$/

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isHeaderPairs = (value: unknown) =>
  Array.isArray(value) &&
  value.every((pair) =>
    Array.isArray(pair) && pair.length === 2 && typeof pair[0] === "string" && typeof pair[1] === "string"
  )

/**
 * Strings PostgreSQL cannot store as sent (U+0000, an unpaired surrogate), wherever they are in a payload:
 * every admin payload string may be stored, and such a value was a database error (a defect) before.
 */
const unstorable = (value: unknown, path: string, out: Array<Field>) => {
  if (typeof value === "string") {
    if (value.includes("\u0000")) out.push({ field: path, message: "must not contain the NUL character (U+0000)" })
    else if (!isWellFormed(value)) {
      out.push({ field: path, message: "must be valid Unicode text (it holds an unpaired UTF-16 surrogate)" })
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => unstorable(item, `${path}[${index}]`, out))
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) unstorable(item, path === "" ? key : `${path}.${key}`, out)
  }
}

const issuesOf = (error: ParseResult.ParseError): Array<Field> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    field: clip(issue.path.length === 0 ? "payload" : issue.path.map(String).join(".")),
    message: clipIssueMessage(issue.message)
  }))

/** What is wrong with one admin RPC message; empty when @effect/rpc may have it. */
export const envelopeIssues = (message: unknown): ReadonlyArray<Field> => {
  if (!isObject(message)) return [{ field: "body", message: "must be one admin RPC message (a JSON object)" }]
  if (message._tag === "Ping") return []
  if (message._tag !== "Request") return [{ field: "_tag", message: "must be \"Request\"" }]
  const issues: Array<Field> = []
  if (typeof message.id !== "string" || !REQUEST_ID.test(message.id)) {
    issues.push({ field: "id", message: "must be a request id: a string of at most 19 digits" })
  }
  if (!isHeaderPairs(message.headers)) {
    issues.push({ field: "headers", message: "must be a list of [name, value] pairs of strings" })
  }
  const rpc = typeof message.tag === "string" ? rpcs.get(message.tag) : undefined
  if (rpc === undefined) {
    issues.push({ field: "tag", message: `must be one of ${TAGS.join(", ")}` })
    return issues
  }
  const stored: Array<Field> = []
  unstorable(message.payload, "", stored)
  if (stored.length > 0) return [...issues, ...stored.map(({ field, message }) => ({ field: clip(field), message }))]
  // Only whether the payload decodes matters here, not what it decodes to: any request's schema will do.
  const payloadSchema: Schema.Schema.AnyNoContext = rpc.payloadSchema
  const decoded = Schema.decodeUnknownEither(payloadSchema, { errors: "all" })(message.payload)
  return Either.isLeft(decoded) ? [...issues, ...issuesOf(decoded.left)] : issues
}

const invalid = (issues: ReadonlyArray<Field>) => {
  const fields = [...new Set(issues.map((issue) => issue.field))].join(", ")
  return HttpServerResponse.unsafeJson(
    toBody("invalid_request", `invalid admin RPC request: ${fields}`, { fields: issues }),
    { status: 400 }
  )
}

/**
 * The admin RPC's protocol on the API's router at `path`, as `RpcServer.layerProtocolHttp` registers it, behind
 * the envelope check. A body that is not JSON fails here like on any JSON route (400 invalid_json, from the
 * error middleware).
 */
export const layerProtocol = (path: `/${string}`) =>
  Layer.effect(
    RpcServer.Protocol,
    Effect.gen(function*() {
      const { httpApp, protocol } = yield* RpcServer.makeProtocolWithHttpApp
      const router = yield* HttpApiBuilder.Router
      yield* router.post(
        path,
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.flatMap(request.json, (message) => {
            const issues = envelopeIssues(message)
            return issues.length === 0 ? httpApp : Effect.succeed(invalid(issues))
          }))
      )
      return protocol
    })
  ).pipe(Layer.provide(HttpApiBuilder.Router.Live))
