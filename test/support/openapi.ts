import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { ROOT } from "./process.ts"

/**
 * Reading served OpenAPI documents as an integrator's tools would: resolve `$ref`s, walk operations, check a
 * JSON value against a response schema, run `redocly lint` on a document.
 */

export type Json = Record<string, any>

const SCHEMA_REF = "#/components/schemas/"

export const resolve = (doc: Json, schema: Json | undefined): Json | undefined => {
  const ref: unknown = schema?.["$ref"]
  if (typeof ref !== "string") return schema
  if (!ref.startsWith(SCHEMA_REF)) throw new Error(`unexpected $ref ${ref}`)
  const target = doc.components?.schemas?.[ref.slice(SCHEMA_REF.length)]
  if (target === undefined) throw new Error(`unresolved $ref ${ref}`)
  return target
}

export interface Operation {
  readonly method: string
  readonly path: string
  readonly operation: Json
}

const METHODS = ["get", "put", "post", "delete", "patch"]

export const operationsOf = (doc: Json): Array<Operation> =>
  Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => item[method] === undefined ? [] : [{ method, path, operation: item[method] as Json }])
  )

/** The media-type schema of a response or request body, resolved. */
export const jsonSchemaOf = (doc: Json, holder: Json | undefined): Json | undefined =>
  resolve(doc, holder?.content?.["application/json"]?.schema)

const typeOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : Number.isInteger(value) ? "integer" : typeof value

/**
 * The ways `value` fails `schema`: the subset of JSON Schema the generated documents use (`$ref`, `type`,
 * `enum`, `required`, `properties`, `additionalProperties`, `items`, `anyOf`, `allOf`, `minItems`, `pattern`,
 * `minLength`, `maxLength`, `minimum`, `maximum`). Empty when it conforms.
 */
export const problemsOf = (doc: Json, schema: Json | boolean | undefined, value: unknown, at = "$"): Array<string> => {
  if (typeof schema === "boolean") return schema ? [] : [`${at}: not allowed`]
  const resolved = resolve(doc, schema)
  if (resolved === undefined) return []
  const problems: Array<string> = []
  if (Array.isArray(resolved["allOf"])) {
    for (const member of resolved["allOf"]) problems.push(...problemsOf(doc, member, value, at))
  }
  if (Array.isArray(resolved["anyOf"])) {
    const failures = resolved["anyOf"].map((member: Json) => problemsOf(doc, member, value, at))
    if (failures.every((failure: Array<string>) => failure.length > 0)) {
      problems.push(`${at}: matches no member of anyOf (${failures.map((f: Array<string>) => f[0]).join(" | ")})`)
    }
  }
  const type: unknown = resolved["type"]
  const actual = typeOf(value)
  if (typeof type === "string") {
    const fits = type === actual || (type === "number" && actual === "integer")
    if (!fits) return [...problems, `${at}: expected ${type}, got ${actual}`]
  }
  if (Array.isArray(resolved["enum"]) && !resolved["enum"].includes(value)) {
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(resolved["enum"])}`)
  }
  if (typeof value === "string") {
    if (typeof resolved["pattern"] === "string" && !new RegExp(resolved["pattern"], "u").test(value)) {
      problems.push(`${at}: ${JSON.stringify(value)} does not match ${resolved["pattern"]}`)
    }
    if (typeof resolved["minLength"] === "number" && [...value].length < resolved["minLength"]) {
      problems.push(`${at}: shorter than ${resolved["minLength"]}`)
    }
    if (typeof resolved["maxLength"] === "number" && [...value].length > resolved["maxLength"]) {
      problems.push(`${at}: longer than ${resolved["maxLength"]}`)
    }
  }
  if (typeof value === "number") {
    if (typeof resolved["minimum"] === "number" && value < resolved["minimum"]) problems.push(`${at}: below minimum`)
    if (typeof resolved["maximum"] === "number" && value > resolved["maximum"]) problems.push(`${at}: above maximum`)
  }
  if (Array.isArray(value)) {
    if (typeof resolved["minItems"] === "number" && value.length < resolved["minItems"]) {
      problems.push(`${at}: fewer than ${resolved["minItems"]} items`)
    }
    if (resolved["items"] !== undefined) {
      value.forEach((item, index) => problems.push(...problemsOf(doc, resolved["items"], item, `${at}[${index}]`)))
    }
  }
  if (actual === "object" && resolved["properties"] !== undefined) {
    const object = value as Record<string, unknown>
    for (const name of resolved["required"] ?? []) {
      if (!(name in object)) problems.push(`${at}.${name}: required by the document, missing from the answer`)
    }
    for (const [name, field] of Object.entries(object)) {
      const property = resolved["properties"][name]
      if (property !== undefined) problems.push(...problemsOf(doc, property, field, `${at}.${name}`))
      else if (resolved["additionalProperties"] === false) {
        problems.push(`${at}.${name}: sent by the server, not in the document`)
      }
    }
  }
  return problems
}

/** One HTTP exchange, as a client middleware recorded it. */
export interface Exchange {
  readonly method: string
  /** The document's path template (`/api/partners/webhooks/{id}`). */
  readonly schemaPath: string
  readonly status: number
  readonly body: unknown
}

/** What is wrong with each exchange's answer, read against the document's response schema for its status. */
export const responseProblems = (doc: Json, exchanges: ReadonlyArray<Exchange>): Array<string> =>
  exchanges.flatMap((exchange) => {
    const operation = doc.paths[exchange.schemaPath]?.[exchange.method.toLowerCase()]
    const label = `${exchange.method} ${exchange.schemaPath} → ${exchange.status}`
    if (operation === undefined) return [`${label}: no such operation in the document`]
    const response = operation.responses[String(exchange.status)]
    if (response === undefined) return [`${label}: the document declares no such status`]
    const schema = response.content?.["application/json"]?.schema
    return schema === undefined ? [] : problemsOf(doc, schema, exchange.body).map((problem) => `${label}: ${problem}`)
  })

export interface LintResult {
  readonly errors: number
  readonly warnings: number
  /** Every problem, one line each (`file: rule: message at pointer`), for failure messages. */
  readonly problems: ReadonlyArray<string>
}

const lintOne = async (file: string): Promise<LintResult> => {
  const child = Bun.spawn(
    [`${ROOT}node_modules/.bin/redocly`, "lint", "--config", `${ROOT}redocly.yaml`, "--format", "json", file],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/tmp",
        REDOCLY_TELEMETRY: "off",
        REDOCLY_SUPPRESS_UPDATE_NOTICE: "true"
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe"
    }
  )
  const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()])
  await child.exited
  let report: Json
  try {
    report = JSON.parse(stdout.slice(stdout.indexOf("{")))
  } catch {
    throw new Error(`redocly lint gave no JSON report (exit ${child.exitCode}):\n${stdout}\n${stderr}`)
  }
  const name = NodePath.basename(file)
  const problems = (report.problems as Array<Json>).map((problem) =>
    `${name}: ${problem.severity} ${problem.ruleId}: ${problem.message} at ${
      (problem.location as Array<Json>).map((location) => location.pointer).join(", ")
    }`
  )
  return { errors: report.totals.errors, warnings: report.totals.warnings, problems }
}

/** `redocly lint` with the repository's `redocly.yaml`, one run per document, on files in a temporary directory. */
export const lint = async (documents: Readonly<Record<string, unknown>>): Promise<LintResult> => {
  const dir = await NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "openapi-lint-"))
  try {
    const results = await Promise.all(Object.entries(documents).map(async ([name, document]) => {
      const file = NodePath.join(dir, `${name}.json`)
      await NodeFs.writeFile(file, JSON.stringify(document, null, 2))
      return lintOne(file)
    }))
    return {
      errors: results.reduce((sum, result) => sum + result.errors, 0),
      warnings: results.reduce((sum, result) => sum + result.warnings, 0),
      problems: results.flatMap((result) => result.problems)
    }
  } finally {
    await NodeFs.rm(dir, { recursive: true, force: true })
  }
}
