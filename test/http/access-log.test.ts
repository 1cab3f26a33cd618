import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { admin, type RunningApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { reservationBody } from "../support/guests.ts"
import { type ServiceProcess, spawnService } from "../support/process.ts"

/**
 * The access log and request ids (design §9) on a real service process writing JSON logs: one line per
 * request with method, route template, status, duration, request id and the key's display prefix — never
 * the key, a body or personal data — and `X-Request-Id` on every response.
 */
let db: TestDatabase
let service: ServiceProcess
let baseUrl: string
let key: string
let property: string
const ADMIN_TOKEN = "admin-access-log-test"

interface Line {
  readonly message: string
  readonly logLevel: string
  readonly annotations: Record<string, unknown>
}

const requestLines = (): Array<Line> =>
  service.output().split("\n").flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as Line
      return parsed.message === "request" ? [parsed] : []
    } catch {
      return []
    }
  })

/** The access-log line of the request that answered `requestId` (it is written as the response leaves). */
const lineOf = async (requestId: string) => {
  for (let i = 0; i < 100; i++) {
    const found = requestLines().find((line) => line.annotations.request_id === requestId)
    if (found !== undefined) return found
    await Bun.sleep(20)
  }
  throw new Error(`no access-log line for ${requestId}:\n${service.output().slice(-2000)}`)
}

beforeAll(async () => {
  db = await freshDatabase()
  service = spawnService({ DATABASE_URL: db.url, PORT: "0", HOST: "127.0.0.1", LOG_FORMAT: "json", ADMIN_TOKEN })
  baseUrl = await service.ready()
  const app: Pick<RunningApp, "baseUrl" | "adminToken"> = { baseUrl, adminToken: ADMIN_TOKEN }
  const account = await admin(app, (c) => c.CreateAccount({ name: "Hotel Registro", email: "log@example.co" }))
  const sandbox = await admin(app, (c) => c.CreateSandbox({ account_id: account.account_id }))
  key = sandbox.api_key
  property = sandbox.properties[0]!.property_id
}, 60_000)

afterAll(async () => {
  await service?.stop()
  await db?.drop()
})

describe("access log (design §9)", () => {
  test("a partner request: route template, status, duration, request id and the key's prefix, nothing else", async () => {
    const body = reservationBody(property, { guest_name: "Secreta Personal", metadata: { folio: "F-SECRET" } })
    const res = await fetch(`${baseUrl}/api/partners/reservations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    expect(res.status).toBe(201)
    const id = res.headers.get("x-request-id")
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    const line = await lineOf(id!)
    expect(line.logLevel).toBe("INFO")
    expect(line.annotations).toEqual({
      method: "POST",
      route: "/api/partners/reservations",
      status: 201,
      duration_ms: expect.any(Number),
      request_id: id,
      key_prefix: key.slice(0, 15)
    })
    const get = await fetch(`${baseUrl}/api/partners/registrations/${encodeURIComponent(String(body.external_id))}`, {
      headers: { authorization: `Bearer ${key}` }
    })
    const getLine = await lineOf(get.headers.get("x-request-id")!)
    expect(getLine.annotations.route).toBe("/api/partners/registrations/:external_id")
    // Neither the key, nor the body, nor the external_id of the path, nor personal data.
    const all = service.output()
    for (const secret of [key, "Secreta Personal", "F-SECRET", String(body.external_id)]) expect(all).not.toContain(secret)
  })

  test("a well-formed incoming X-Request-Id is kept; a malformed one is replaced", async () => {
    const kept = await fetch(`${baseUrl}/healthz`, { headers: { "x-request-id": "pms-42:abc.DEF_9-x" } })
    expect(kept.headers.get("x-request-id")).toBe("pms-42:abc.DEF_9-x")
    expect((await lineOf("pms-42:abc.DEF_9-x")).annotations).toMatchObject({ route: "/healthz", status: 200 })
    for (const bad of ["has space", "x".repeat(129), "semi;colon", ""]) {
      const res = await fetch(`${baseUrl}/healthz`, { headers: { "x-request-id": bad } })
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    }
    const long = "a".repeat(128)
    expect((await fetch(`${baseUrl}/healthz`, { headers: { "x-request-id": long } })).headers.get("x-request-id")).toBe(long)
  })

  test("errors too: 401, 404, 405 and the typed 4xx carry the id and their line", async () => {
    const cases: Array<[string, RequestInit, number, string]> = [
      ["/api/partners/properties", {}, 401, "/api/partners/properties"],
      ["/no/such/route", {}, 404, "(unknown route)"],
      ["/api/partners/properties", { method: "DELETE" }, 405, "/api/partners/properties"],
      [
        "/api/partners/registrations?external_id=nope",
        { headers: { authorization: `Bearer ${key}` } },
        404,
        "/api/partners/registrations"
      ]
    ]
    for (const [path, init, status, route] of cases) {
      const res = await fetch(`${baseUrl}${path}`, init)
      expect(res.status).toBe(status)
      const id = res.headers.get("x-request-id")
      expect(id).not.toBeNull()
      expect((await lineOf(id!)).annotations).toMatchObject({ status, route })
    }
  })
})
