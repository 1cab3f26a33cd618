import { type HttpApi, type HttpApiGroup, OpenApi } from "@effect/platform"
import { Array as Arr, Predicate } from "effect"
import type { AppConfigShape } from "../config/AppConfig.ts"
import { withoutDecodeErrors } from "./OpenApiCleanup.ts"

/**
 * What turns `OpenApi.fromApi`'s output into the documents we serve (design §1: generated, never hand-written).
 * Every addition is derived from the `HttpApi` definitions or from the schemas the code runs on:
 * - `servers`: this process's `PUBLIC_BASE_URL` (`withServers`, applied at start-up);
 * - each operation's description lists the error codes it can answer, read from its declared error responses;
 * - request bodies say what the server does with unknown fields (ignores them, design §6.2);
 * - parameters show their schema's first example.
 * It knows no module: the partner document's `webhooks` section is added on top by `routes/PartnerDocument.ts`.
 */

/**
 * A JSON object of a document. `OpenApi.fromApi` makes plain JSON but types it loosely (`Record<string, any>`):
 * every value is read here as `unknown` and narrowed where it is used.
 */
export type JsonObject = { [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject => Predicate.isRecord(value)

/** The value at `path` inside `value`, through objects; undefined where the path ends early. */
const at = (value: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((current, key) => Predicate.isRecord(current) ? current[key] : undefined, value)

/** The object at `path` inside `value`, if it is one. */
export const objectAt = (value: unknown, ...path: ReadonlyArray<string>): JsonObject | undefined => {
  const found = at(value, ...path)
  return Predicate.isRecord(found) ? found : undefined
}

/** The list at `path` inside `value`; none where there is no list. */
export const listAt = (value: unknown, ...path: ReadonlyArray<string>): ReadonlyArray<unknown> => {
  const found = at(value, ...path)
  return Arr.isArray(found) ? found : []
}

/** The values of the object at `path` inside `value`, each that is an object. */
const objectsAt = (value: unknown, ...path: ReadonlyArray<string>): Array<JsonObject> =>
  Object.values(objectAt(value, ...path) ?? {}).filter(isObject)

const SCHEMA_REF = "#/components/schemas/"

const resolve = (doc: JsonObject, schema: unknown): unknown => {
  const ref = at(schema, "$ref")
  return typeof ref === "string" && ref.startsWith(SCHEMA_REF)
    ? at(doc, "components", "schemas", ref.slice(SCHEMA_REF.length))
    : schema
}

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

const operationsOf = (doc: JsonObject): Array<JsonObject> =>
  objectsAt(doc, "paths").flatMap((item) => HTTP_METHODS.map((method) => item[method]).filter(isObject))

// ---------------------------------------------------------------------------------------------------------------
// Servers

/** The document's `servers`: the base URL this process is configured with. */
export const servers = (config: Pick<AppConfigShape, "publicBaseUrl">) => [{
  url: config.publicBaseUrl,
  description: "This service (PUBLIC_BASE_URL). The same address serves both environments: the key decides."
}]

/** `api` with this process's `servers` (design §1): the served documents name the configured base URL. */
export const withServers = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  config: Pick<AppConfigShape, "publicBaseUrl">
): HttpApi.HttpApi<Id, Groups, E, R> => api.annotate(OpenApi.Servers, servers(config))

// ---------------------------------------------------------------------------------------------------------------
// Error codes

interface ErrorCode {
  readonly code: string
  /** The wire schema's description: `code: meaning` (`shared/errors.ts`). */
  readonly description: string
}

/** The codes an error response's schema can carry: each member's `code` literal. */
const codesOf = (doc: JsonObject, schema: unknown): Array<ErrorCode> => {
  const union = at(schema, "anyOf") ?? at(schema, "oneOf")
  const members = Arr.isArray(union) ? union : schema === undefined ? [] : [schema]
  return members.flatMap((member) => {
    const resolved = resolve(doc, member)
    const code = listAt(resolved, "properties", "code", "enum")[0]
    if (typeof code !== "string") return []
    const description = at(resolved, "description")
    return [{ code, description: typeof description === "string" ? description : code }]
  })
}

/**
 * Each error response describes its codes, and the operation's description ends with the list of every code it
 * can answer, by status: derived from the declared errors, so the list cannot drift from what is served.
 */
const describeErrors = (doc: JsonObject): void => {
  for (const operation of operationsOf(doc)) {
    const lines: Array<string> = []
    for (const [status, response] of Object.entries(objectAt(operation, "responses") ?? {})) {
      if (!/^[45]\d\d$/.test(status) || !Predicate.isRecord(response)) continue
      const codes = codesOf(doc, at(response, "content", "application/json", "schema"))
      if (codes.length === 0) continue
      response["description"] = codes.map((code) => code.description).join("; or ")
      lines.push(`- ${status}: ${codes.map((code) => `\`${code.code}\``).join(", ")}`)
    }
    if (lines.length === 0) continue
    const errors = `Error codes (the \`code\` of the Error body), by HTTP status:\n${lines.join("\n")}`
    const description = operation["description"]
    operation["description"] = description === undefined ? errors : `${description}\n\n${errors}`
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Unknown fields

const IGNORED = "Unknown fields are ignored."

/**
 * Request bodies: the server ignores unknown fields at every level (design §6.2; Schema's default
 * `onExcessProperty: "ignore"`), so the document must not say `additionalProperties: false` there — a
 * generated validator would refuse what the server accepts. Objects reachable from a request body say so.
 */
const acceptUnknownFields = (doc: JsonObject): void => {
  const seen = new Set<JsonObject>()
  const visit = (schema: unknown): void => {
    const resolved = resolve(doc, schema)
    if (!Predicate.isRecord(resolved) || seen.has(resolved)) return
    seen.add(resolved)
    if (resolved["additionalProperties"] === false) {
      resolved["additionalProperties"] = true
      resolved["description"] = resolved["description"] === undefined ? IGNORED : `${resolved["description"]} ${IGNORED}`
    }
    for (const child of Object.values(objectAt(resolved, "properties") ?? {})) visit(child)
    for (const key of ["items", "additionalProperties"]) visit(resolved[key])
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      for (const child of listAt(resolved, key)) visit(child)
    }
  }
  for (const operation of operationsOf(doc)) {
    for (const media of objectsAt(operation, "requestBody", "content")) visit(media["schema"])
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Parameters

/** A parameter shows its schema's first example (set on the path and query structs) as its own `example`. */
const parameterExamples = (doc: JsonObject): void => {
  for (const operation of operationsOf(doc)) {
    for (const parameter of listAt(operation, "parameters").filter(isObject)) {
      const example = listAt(resolve(doc, parameter["schema"]), "examples")[0]
      if (parameter["example"] === undefined && example !== undefined) parameter["example"] = example
    }
  }
}

/** What both documents get. */
export const documented = (spec: JsonObject): JsonObject => {
  const doc = withoutDecodeErrors(spec)
  describeErrors(doc)
  acceptUnknownFields(doc)
  parameterExamples(doc)
  return doc
}
