import { type HttpApi, type HttpApiGroup, OpenApi } from "@effect/platform"
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

type Json = Record<string, any>

const SCHEMA_REF = "#/components/schemas/"

const resolve = (doc: Json, schema: Json | undefined): Json | undefined => {
  const ref: unknown = schema?.["$ref"]
  return typeof ref === "string" && ref.startsWith(SCHEMA_REF)
    ? doc.components?.schemas?.[ref.slice(SCHEMA_REF.length)]
    : schema
}

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

const operationsOf = (doc: Json): Array<Json> =>
  Object.values<Json>(doc.paths ?? {}).flatMap((item) =>
    HTTP_METHODS.flatMap((method) => item[method] === undefined ? [] : [item[method] as Json])
  )

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
const codesOf = (doc: Json, schema: Json | undefined): Array<ErrorCode> => {
  const members: Array<Json> = schema?.["anyOf"] ?? schema?.["oneOf"] ?? (schema === undefined ? [] : [schema])
  return members.flatMap((member) => {
    const resolved = resolve(doc, member)
    const code: unknown = resolved?.["properties"]?.["code"]?.["enum"]?.[0]
    if (typeof code !== "string") return []
    return [{ code, description: typeof resolved?.["description"] === "string" ? resolved["description"] : code }]
  })
}

/**
 * Each error response describes its codes, and the operation's description ends with the list of every code it
 * can answer, by status: derived from the declared errors, so the list cannot drift from what is served.
 */
const describeErrors = (doc: Json): void => {
  for (const operation of operationsOf(doc)) {
    const lines: Array<string> = []
    for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
      if (!/^[45]\d\d$/.test(status)) continue
      const codes = codesOf(doc, response.content?.["application/json"]?.schema)
      if (codes.length === 0) continue
      response.description = codes.map((code) => code.description).join("; or ")
      lines.push(`- ${status}: ${codes.map((code) => `\`${code.code}\``).join(", ")}`)
    }
    if (lines.length === 0) continue
    const errors = `Error codes (the \`code\` of the Error body), by HTTP status:\n${lines.join("\n")}`
    operation.description = operation.description === undefined ? errors : `${operation.description}\n\n${errors}`
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
const acceptUnknownFields = (doc: Json): void => {
  const seen = new Set<Json>()
  const visit = (schema: Json | undefined): void => {
    const resolved = resolve(doc, schema)
    if (resolved === undefined || typeof resolved !== "object" || seen.has(resolved)) return
    seen.add(resolved)
    if (resolved["additionalProperties"] === false) {
      resolved["additionalProperties"] = true
      resolved["description"] = resolved["description"] === undefined ? IGNORED : `${resolved["description"]} ${IGNORED}`
    }
    for (const child of Object.values<Json>(resolved["properties"] ?? {})) visit(child)
    for (const key of ["items", "additionalProperties"]) {
      if (typeof resolved[key] === "object") visit(resolved[key])
    }
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      for (const child of resolved[key] ?? []) visit(child)
    }
  }
  for (const operation of operationsOf(doc)) {
    for (const media of Object.values<Json>(operation.requestBody?.content ?? {})) visit(media.schema)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Parameters

/** A parameter shows its schema's first example (set on the path and query structs) as its own `example`. */
const parameterExamples = (doc: Json): void => {
  for (const operation of operationsOf(doc)) {
    for (const parameter of operation.parameters ?? []) {
      const example = resolve(doc, parameter.schema)?.["examples"]?.[0]
      if (parameter.example === undefined && example !== undefined) parameter.example = example
    }
  }
}

/** What both documents get. */
export const documented = (spec: Json): Json => {
  const doc = withoutDecodeErrors(spec)
  describeErrors(doc)
  acceptUnknownFields(doc)
  parameterExamples(doc)
  return doc
}
