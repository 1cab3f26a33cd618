import { describe, expect, test } from "bun:test"
import { call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"

const f = appFixture()

describe("framework errors use the spec's Error shape", () => {
  test("unknown route → 404 not_found", async () => {
    const res = await call(f.app, "GET", "/api/partners/nothing-here", { key: f.account.testKey })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: expect.any(String), code: "not_found", details: {} })
  })

  test("wrong method on a known route → 405 method_not_allowed with Allow", async () => {
    const res = await call(f.app, "DELETE", "/api/partners/properties", { key: f.account.testKey })
    expect(res.status).toBe(405)
    expect(res.body.code).toBe("method_not_allowed")
    expect(res.headers.get("allow")).toBe("GET, PATCH")
  })

  test("a body over 1 MB → 400 invalid_request, nothing changed", async () => {
    const res = await call(f.app, "PATCH", "/api/partners/properties", {
      key: f.account.testKey,
      json: { mappings: [{ property_id: f.account.testProperties[0]!.property_id, external_id: "BIG" }], pad: "x".repeat(1_100_000) }
    })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_request")
    const rows = await f.db.query("SELECT 1 FROM properties WHERE external_id = 'BIG'")
    expect(rows).toHaveLength(0)
  })

  test("an unexpected failure → 500 internal_error with a request id and nothing internal", async () => {
    await f.db.query("ALTER TABLE properties RENAME TO properties_moved")
    try {
      const res = await call(f.app, "GET", "/api/partners/properties", { key: f.account.testKey })
      expect(res.status).toBe(500)
      expect(res.body.code).toBe("internal_error")
      expect(Object.keys(res.body).sort()).toEqual(["code", "details", "error"])
      expect(res.body.details.request_id).toMatch(/^[0-9a-f-]{36}$/)
      expect(res.body.details.request_id).toBe(res.headers.get("x-request-id"))
      const echoed = await call(f.app, "GET", "/api/partners/properties", {
        key: f.account.testKey,
        headers: { "x-request-id": "pms-42" }
      })
      expect(echoed.status).toBe(500)
      expect(echoed.body.details.request_id).toBe("pms-42")
      const text = JSON.stringify(res.body)
      expect(text).not.toMatch(/properties|SELECT|relation|SqlError|stack|at /i)
    } finally {
      await f.db.query("ALTER TABLE properties_moved RENAME TO properties")
    }
    expect((await call(f.app, "GET", "/api/partners/properties", { key: f.account.testKey })).status).toBe(200)
  })

})

describe("public documents", () => {
  test("/openapi.json is generated from the contract, without authentication", async () => {
    const res = await call(f.app, "GET", "/openapi.json")
    expect(res.status).toBe(200)
    expect(res.body.openapi).toBe("3.1.0")
    expect(res.body.info.version).toBe("2026-10-01")
    expect(Object.keys(res.body.paths["/api/partners/properties"]).sort()).toEqual(["get", "patch"])
    const patch = res.body.paths["/api/partners/properties"].patch
    expect(Object.keys(patch.responses).sort()).toEqual(["200", "400", "401", "403", "409", "429", "500", "503"])
    expect(patch.security).toEqual([{ bearer: [] }])
    expect(JSON.stringify(res.body).includes("HttpApiDecodeError")).toBe(false)
  })

  test("/openapi.json documents the 16 partner endpoints and the departure, with their methods", async () => {
    const res = await call(f.app, "GET", "/openapi.json")
    const methods = Object.fromEntries(
      Object.entries(res.body.paths as Record<string, object>).map(([path, ops]) => [path, Object.keys(ops).sort()])
    )
    expect(methods).toEqual({
      "/api/partners/properties": ["get", "patch"],
      "/api/partners/reservations": ["patch", "post"],
      "/api/partners/reservations/cancel": ["post"],
      "/api/partners/reservations/departure": ["post"],
      "/api/partners/registrations": ["get", "post"],
      "/api/partners/registrations/{external_id}": ["get"],
      "/api/partners/registrations/validate": ["post"],
      "/api/partners/reference/{table}": ["get"],
      "/api/partners/webhooks": ["get", "post"],
      "/api/partners/webhooks/{id}": ["delete", "patch"],
      "/api/partners/webhooks/{id}/recover": ["post"],
      "/api/partners/webhooks/{id}/rotate-secret": ["post"],
      "/api/partners/webhooks/{id}/test": ["post"],
      "/api/partners/webhooks/deliveries": ["get"],
      "/api/partners/webhooks/deliveries/{id}/redeliver": ["post"],
      "/healthz": ["get"],
      "/readyz": ["get"]
    })
    const create = res.body.paths["/api/partners/reservations"].post
    expect(Object.keys(create.responses).sort()).toEqual(["200", "201", "400", "401", "403", "404", "409", "429", "500", "503"])
  })

  test("/docs serves the documentation page without authentication", async () => {
    const res = await fetch(`${f.app.baseUrl}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/html")
    const page = await res.text()
    // a small shell: the generated document and the script are fetched from this service (docs-page.test.ts)
    expect(page).toContain("<title>Partner Reservation Registration Service</title>")
    expect(page).toContain('data-url="/openapi.json"')
    expect(page).toMatch(/<script src="\/docs\/assets\/scalar-[\w-]+\.js"><\/script>/)
    expect(page.length).toBeLessThan(2000)
  })

  test("/healthz and /readyz", async () => {
    expect((await call(f.app, "GET", "/healthz")).body).toEqual({ status: "ok" })
    expect((await call(f.app, "GET", "/readyz")).body).toEqual({ status: "ready", database: "postgres", role: "all" })
  })
})
