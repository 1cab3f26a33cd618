import { beforeAll, describe, expect, test } from "bun:test"
import { EVENT_TYPES } from "../../src/webhooks/Webhook.ts"
import { call, seedAccount, startApp } from "../support/app.ts"
import { appOnFreshDatabase } from "../support/fixture.ts"
import { type Json, jsonSchemaOf, lint, operationsOf, problemsOf, resolve } from "../support/openapi.ts"

/**
 * The served OpenAPI documents (issue 14, items 1 and 2), read as a PMS developer's tools read them: from a
 * running app, with its configured base URL.
 */

const BASE_URL = "https://registro.hotel.test"

const f = appOnFreshDatabase({ PUBLIC_BASE_URL: BASE_URL })
let partner: Json
let panel: Json

beforeAll(async () => {
  partner = (await call(f.app, "GET", "/openapi.json")).body
  panel = (await call(f.app, "GET", "/api/panel/openapi.json")).body
})

const documents = (): Array<[string, Json]> => [["partner", partner], ["panel", panel]]

/** The error codes an operation's declared error responses carry, by status. */
const declaredCodes = (doc: Json, operation: Json): Array<string> =>
  Object.entries<Json>(operation.responses).flatMap(([status, response]) => {
    if (!/^[45]/.test(status)) return []
    const schema = response.content?.["application/json"]?.schema
    const members: Array<Json> = schema?.anyOf ?? (schema === undefined ? [] : [schema])
    return members.map((member) => resolve(doc, member)?.properties?.code?.enum?.[0] as string)
  })

describe("lint", () => {
  test("redocly lint (recommended, redocly.yaml) on both served documents: 0 errors, 0 warnings", async () => {
    const result = await lint({ partner, panel })
    expect(result).toEqual({ errors: 0, warnings: 0, problems: [] })
  }, 60_000)
})

describe("servers", () => {
  test("both documents name the configured PUBLIC_BASE_URL, and /docs shows the same document", async () => {
    for (const [, doc] of documents()) expect(doc.servers.map((server: Json) => server.url)).toEqual([BASE_URL])
    // The page loads the served document itself (it no longer inlines a copy), and may call its server.
    const page = await fetch(`${f.app.baseUrl}/docs`)
    expect(await page.text()).toContain(`data-url="/openapi.json"`)
    expect(page.headers.get("content-security-policy")).toContain(`connect-src 'self' ${new URL(BASE_URL).origin}`)
  })

  test("another process with another PUBLIC_BASE_URL serves its own", async () => {
    const other = await startApp({ DATABASE_URL: f.db.url, PUBLIC_BASE_URL: "https://pms-sandbox.hotel.test/" })
    try {
      expect((await call(other, "GET", "/openapi.json")).body.servers[0].url).toBe("https://pms-sandbox.hotel.test")
      expect((await call(other, "GET", "/api/panel/openapi.json")).body.servers[0].url).toBe(
        "https://pms-sandbox.hotel.test"
      )
    } finally {
      await other.stop()
    }
  })
})

describe("parameters", () => {
  test("every path template's parameters are declared, each with a schema and a description", () => {
    for (const [name, doc] of documents()) {
      for (const { method, operation, path } of operationsOf(doc)) {
        const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1])
        const declared = operation.parameters.filter((parameter: Json) => parameter.in === "path")
        expect({ name, method, path, params: declared.map((parameter: Json) => parameter.name) })
          .toEqual({ name, method, path, params: inPath })
        for (const parameter of operation.parameters) {
          expect({ path, parameter: parameter.name, required: parameter.in === "path" ? parameter.required : true })
            .toEqual({ path, parameter: parameter.name, required: true })
          expect(typeof parameter.description).toBe("string")
          expect(parameter.schema).toBeDefined()
        }
      }
    }
  })

  test("the spec's query parameters: endpoints 6, 8 and 15", () => {
    const query = (path: string) =>
      Object.fromEntries(
        (partner.paths[path].get.parameters as Array<Json>)
          .filter((parameter) => parameter.in === "query")
          .map((parameter) => [parameter.name, parameter.required])
      )
    expect(query("/api/partners/registrations")).toEqual({ external_id: true, include: false })
    expect(query("/api/partners/registrations/{external_id}")).toEqual({ include: false })
    expect(query("/api/partners/webhooks/deliveries")).toEqual({
      status: false,
      event: false,
      external_id: false,
      limit: false
    })
    const limit = partner.paths["/api/partners/webhooks/deliveries"].get.parameters.find((p: Json) => p.name === "limit")
    expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 200, default: 50 })
  })

  test("the reference tables' path names the four tables (design §8b)", () => {
    const [table] = partner.paths["/api/partners/reference/{table}"].get.parameters
    expect({ in: table.in, name: table.name, enum: resolve(partner, table.schema)?.enum })
      .toEqual({ in: "path", name: "table", enum: ["countries", "document_types", "motivos", "tipos_acomodacion"] })
  })
})

describe("operations", () => {
  test("every operation has a summary and a description that names every error code it can answer", () => {
    for (const [name, doc] of documents()) {
      for (const { method, operation, path } of operationsOf(doc)) {
        expect({ name, method, path, summary: typeof operation.summary }).toEqual({
          name,
          method,
          path,
          summary: "string"
        })
        const codes = declaredCodes(doc, operation)
        expect(codes.length).toBeGreaterThan(0)
        const missing = codes.filter((code) => !String(operation.description).includes(`\`${code}\``))
        expect({ method, path, missing }).toEqual({ method, path, missing: [] })
      }
    }
  })

  test("the spec's table: codes of endpoints 2, 3, 4 and 8 (from their declared errors)", () => {
    const codes = (path: string, method: string) => declaredCodes(partner, partner.paths[path][method]).sort()
    expect(codes("/api/partners/properties", "patch")).toEqual([
      "external_id_in_use",
      "internal_error",
      "invalid_json",
      "invalid_request",
      "live_property_required",
      "property_out_of_scope",
      "rate_limited",
      "sandbox_property_required",
      "service_unavailable",
      "unauthorized"
    ])
    expect(codes("/api/partners/reservations", "post")).toEqual(expect.arrayContaining([
      "property_not_found",
      "reservation_conflict",
      "creation_in_progress",
      "trm_unavailable"
    ]))
    expect(codes("/api/partners/reservations", "patch")).toEqual(expect.arrayContaining([
      "registration_not_found",
      "reservation_cancelled",
      "already_reported",
      "guests_already_registered"
    ]))
    expect(codes("/api/partners/registrations/{external_id}", "get")).toContain("registration_not_found")
  })

  test("every operation has one example request and one example response, each valid for its schema", () => {
    for (const [name, doc] of documents()) {
      for (const { method, operation, path } of operationsOf(doc)) {
        const label = `${name} ${method.toUpperCase()} ${path}`
        const body = jsonSchemaOf(doc, operation.requestBody)
        if (body !== undefined) {
          expect({ label, request: Array.isArray(body.examples) && body.examples.length > 0 }).toEqual({
            label,
            request: true
          })
          expect({ label, problems: problemsOf(doc, body, body.examples[0]) }).toEqual({ label, problems: [] })
        }
        for (const parameter of operation.parameters) {
          if (parameter.required) expect({ label, param: parameter.name, example: parameter.example !== undefined })
            .toEqual({ label, param: parameter.name, example: true })
        }
        const [status, success] = Object.entries<Json>(operation.responses).find(([code]) => code.startsWith("2"))!
        const schema = jsonSchemaOf(doc, success)!
        expect({ label, status, response: Array.isArray(schema.examples) && schema.examples.length > 0 }).toEqual({
          label,
          status,
          response: true
        })
        expect({ label, problems: problemsOf(doc, schema, schema.examples[0]) }).toEqual({ label, problems: [] })
      }
    }
  })
})

describe("unknown fields", () => {
  /** Every schema reachable from a request body. */
  const requestSchemas = (doc: Json): Array<Json> => {
    const seen = new Set<Json>()
    const visit = (schema: Json | undefined) => {
      const resolved = resolve(doc, schema)
      if (resolved === undefined || typeof resolved !== "object" || seen.has(resolved)) return
      seen.add(resolved)
      for (const child of Object.values<Json>(resolved.properties ?? {})) visit(child)
      if (typeof resolved.items === "object") visit(resolved.items)
      for (const child of [...(resolved.anyOf ?? []), ...(resolved.allOf ?? [])]) visit(child)
    }
    for (const { operation } of operationsOf(doc)) visit(operation.requestBody?.content["application/json"].schema)
    return [...seen]
  }

  test("request bodies never say additionalProperties: false; they say unknown fields are ignored", () => {
    for (const [, doc] of documents()) {
      const objects = requestSchemas(doc).filter((schema) => schema.properties !== undefined)
      expect(objects.length).toBeGreaterThan(5)
      for (const schema of objects) {
        expect({ title: schema.title, additionalProperties: schema.additionalProperties }).toEqual({
          title: schema.title,
          additionalProperties: true
        })
        expect(schema.description).toContain("Unknown fields are ignored.")
      }
    }
  })

  test("…which is what the server does: an unknown field in endpoint 3's body is ignored", async () => {
    const account = await seedAccount(f.app, "Hotel Campos Extra")
    const created = await call(f.app, "POST", "/api/partners/reservations", {
      key: account.testKey,
      json: {
        external_id: "EXTRA-1",
        property_id: account.testProperties[0]!.property_id,
        check_in: "2026-12-18",
        check_out: "2026-12-20",
        guest_name: "Ana Gómez",
        guests_count: 1,
        loyalty_tier: "gold"
      }
    })
    expect(created.status).toBe(201)
    expect(created.body.loyalty_tier).toBeUndefined()
  })
})

describe("security and tags", () => {
  test("the bearer scheme says what a key is: the svc_test_ and svc_live_ prefixes and their environments", () => {
    const bearer = partner.components.securitySchemes.bearer
    expect(bearer).toMatchObject({ type: "http", scheme: "bearer" })
    expect(bearer.description).toContain("svc_test_")
    expect(bearer.description).toContain("svc_live_")
    expect(bearer.description).toContain("environment")
    const session = panel.components.securitySchemes.session
    expect(session).toMatchObject({ type: "apiKey", in: "cookie", name: "panel_session" })
    expect(session.description).toContain("X-Panel-CSRF")
  })

  test("every tag has a description", () => {
    for (const [, doc] of documents()) {
      for (const tag of doc.tags) expect({ tag: tag.name, described: typeof tag.description }).toEqual({ tag: tag.name, described: "string" })
    }
  })
})

describe("webhooks section", () => {
  const eventTypes = EVENT_TYPES.filter((type) => type !== "*")

  test("one entry per event type (the spec's EventType minus *), each with its body schema", () => {
    expect(Object.keys(partner.webhooks).sort()).toEqual([...eventTypes].sort())
    for (const type of eventTypes) {
      const operation = partner.webhooks[type].post
      expect(operation.summary).toContain(type)
      const body = jsonSchemaOf(partner, operation.requestBody)!
      expect(body.required).toEqual(["id", "type", "created_at", "api_version", "sandbox", "data"])
      expect(body.properties.type.enum).toEqual([type])
      const data = resolve(partner, body.properties.data)!
      if (type === "ping") expect(Object.keys(data.properties)).toEqual(["endpoint_id", "message"])
      else {
        expect(data.properties).toMatchObject({
          reservation_id: expect.anything(),
          external_id: expect.anything(),
          tra: expect.anything(),
          sire: expect.anything(),
          metadata: expect.anything()
        })
        // guests travel only in registration.* events (and only to endpoints with include_guests)
        expect({ type, guests: "guests" in data.properties }).toEqual({ type, guests: type.startsWith("registration.") })
      }
    }
  })

  test("each entry lists the headers every delivery carries", () => {
    for (const type of eventTypes) {
      const parameters = partner.webhooks[type].post.parameters as Array<Json>
      expect(parameters.map((parameter) => [parameter.name, parameter.in, parameter.required])).toEqual(
        [
          ...["User-Agent", "X-Service-Event-Id", "X-Service-Event", "X-Service-Timestamp", "X-Service-Signature"],
          ...["webhook-id", "webhook-timestamp", "webhook-signature"] // Standard Webhooks, design §6.14
        ].map((name) => [name, "header", true])
      )
      for (const parameter of parameters) expect(parameter.description.length).toBeGreaterThan(10)
    }
  })
})
