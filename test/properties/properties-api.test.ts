import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Redacted } from "effect"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { openStored } from "../support/secrets.ts"

let db: TestDatabase
let app: RunningApp
let a: Awaited<ReturnType<typeof seedAccount>>
let b: Awaited<ReturnType<typeof seedAccount>>
let liveProperty: { property_id: string }
let otherLiveProperty: { property_id: string }

beforeAll(async () => {
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url })
  a = await seedAccount(app, "Hotelera A")
  b = await seedAccount(app, "Hotelera B")
  liveProperty = await admin(app, (c) =>
    c.CreateProperty({
      account_id: a.accountId,
      name: "Hotel Real Cartagena",
      rnt_id: "RNT-123",
      tra_token: Redacted.make("tok-secret")
    }))
  otherLiveProperty = await admin(app, (c) => c.CreateProperty({ account_id: b.accountId, name: "Hotel B Live" }))
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
})

const ids = (body: { properties: Array<{ property_id: string }> }) => body.properties.map((p) => p.property_id).sort()

describe("GET /api/partners/properties (endpoint 1)", () => {
  test("a test key lists exactly its account's test properties, with every spec field", async () => {
    const res = await call(app, "GET", "/api/partners/properties", { key: a.testKey })
    expect(res.status).toBe(200)
    expect(ids(res.body)).toEqual(a.testProperties.map((p) => p.property_id).sort())
    expect(res.body.properties[0]).toEqual({
      property_id: a.testProperties[0]!.property_id,
      external_id: null,
      rnt_id: "SBX-00001",
      name: "Hotel Sandbox Centro",
      internal_name: "sandbox-1",
      checkin_enabled: true,
      compliance: { tra: true, sire: true },
      requires_contract_signature: false,
      requires_document_photos: false
    })
    expect(res.body.properties[1]).toMatchObject({ requires_contract_signature: true, requires_document_photos: true })
  })

  test("a live key lists only live properties, and authority settings never appear", async () => {
    const res = await call(app, "GET", "/api/partners/properties", { key: a.liveKey })
    expect(res.status).toBe(200)
    expect(ids(res.body)).toEqual([liveProperty.property_id])
    const text = JSON.stringify(res.body)
    expect(text).not.toContain("tok-secret")
    expect(text).not.toContain("tra_token")
    expect(text).not.toContain("environment")
    // stored for the TRA client, which needs it
    const stored = await db.query("SELECT tra_token FROM properties WHERE id = $1", [liveProperty.property_id])
    expect(stored).toHaveLength(1)
    expect(await openStored(stored[0]!.tra_token)).toBe("tok-secret")
  })

  test("tenant isolation: another account's key never sees these properties", async () => {
    const res = await call(app, "GET", "/api/partners/properties", { key: b.liveKey })
    expect(ids(res.body)).toEqual([otherLiveProperty.property_id])
    const test = await call(app, "GET", "/api/partners/properties", { key: b.testKey })
    expect(ids(test.body)).toEqual(b.testProperties.map((p) => p.property_id).sort())
  })

  test("carries the rate-limit headers", async () => {
    const res = await call(app, "GET", "/api/partners/properties", { key: a.testKey })
    expect(res.headers.get("x-ratelimit-limit")).toBe("120")
    expect(Number(res.headers.get("x-ratelimit-remaining"))).toBeLessThan(120)
    expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000)
  })
})

describe("PATCH /api/partners/properties (endpoint 2)", () => {
  const patch = (key: string, mappings: unknown) => call(app, "PATCH", "/api/partners/properties", { key, json: { mappings } })
  const externalIds = async (key: string) => {
    const res = await call(app, "GET", "/api/partners/properties", { key })
    return Object.fromEntries(
      res.body.properties.map((p: { property_id: string; external_id: string | null }) => [p.property_id, p.external_id])
    )
  }

  /** Maps account a's two test properties to `first` and `second`, in one batch. */
  const mapBoth = (first: string, second: string) => {
    const [p1, p2] = a.testProperties
    return patch(a.testKey, [
      { property_id: p1!.property_id, external_id: first },
      { property_id: p2!.property_id, external_id: second }
    ])
  }

  test("maps, answers the applied mappings, and the list shows them", async () => {
    const [p1, p2] = a.testProperties
    const res = await mapBoth("PMS-1", "PMS-2")
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      ok: true,
      mappings: [
        { property_id: p1!.property_id, external_id: "PMS-1" },
        { property_id: p2!.property_id, external_id: "PMS-2" }
      ]
    })
    expect(await externalIds(a.testKey)).toEqual({ [p1!.property_id]: "PMS-1", [p2!.property_id]: "PMS-2" })
  })

  test("null removes a mapping; swapping two ids in one batch works", async () => {
    const [p1, p2] = a.testProperties
    const swap = await mapBoth("PMS-2", "PMS-1")
    expect(swap.status).toBe(200)
    const removed = await patch(a.testKey, [{ property_id: p2!.property_id, external_id: null }])
    expect(removed.status).toBe(200)
    expect(removed.body.mappings).toEqual([{ property_id: p2!.property_id, external_id: null }])
    expect(await externalIds(a.testKey)).toEqual({ [p1!.property_id]: "PMS-2", [p2!.property_id]: null })
  })

  test("409 external_id_in_use when an external_id would name two properties, and nothing is applied", async () => {
    const [p1, p2] = a.testProperties
    const before = await externalIds(a.testKey)
    const res = await patch(a.testKey, [{ property_id: p2!.property_id, external_id: "PMS-2" }])
    expect(res.status).toBe(409)
    expect(res.body.code).toBe("external_id_in_use")
    expect(res.body.details).toMatchObject({ external_id: "PMS-2" })
    expect(Object.keys(res.body).sort()).toEqual(["code", "details", "error"])
    const inBatch = await patch(a.testKey, [
      { property_id: p1!.property_id, external_id: "SAME" },
      { property_id: p2!.property_id, external_id: "SAME" }
    ])
    expect(inBatch.status).toBe(409)
    expect(inBatch.body.code).toBe("external_id_in_use")
    expect(await externalIds(a.testKey)).toEqual(before)
  })

  test("all-or-nothing: one bad mapping (another account's property) leaves every mapping unchanged", async () => {
    const [p1] = a.testProperties
    const before = await externalIds(a.testKey)
    const res = await patch(a.testKey, [
      { property_id: p1!.property_id, external_id: "WOULD-CHANGE" },
      { property_id: b.testProperties[0]!.property_id, external_id: "X" }
    ])
    expect(res.status).toBe(403)
    expect(res.body.code).toBe("property_out_of_scope")
    expect(await externalIds(a.testKey)).toEqual(before)
  })

  test("403 property_out_of_scope for an unknown property id", async () => {
    const res = await patch(a.testKey, [{ property_id: "00000000-0000-4000-8000-000000000000", external_id: "X" }])
    expect(res.status).toBe(403)
    expect(res.body.code).toBe("property_out_of_scope")
  })

  test("environment rules: test key on a live property, live key on a test property", async () => {
    const testOnLive = await patch(a.testKey, [{ property_id: liveProperty.property_id, external_id: "X" }])
    expect(testOnLive.status).toBe(403)
    expect(testOnLive.body.code).toBe("sandbox_property_required")
    const liveOnTest = await patch(a.liveKey, [{ property_id: a.testProperties[0]!.property_id, external_id: "X" }])
    expect(liveOnTest.status).toBe(403)
    expect(liveOnTest.body.code).toBe("live_property_required")
  })

  test("external_id mappings are per environment: the same id may be used in test and live", async () => {
    const live = await patch(a.liveKey, [{ property_id: liveProperty.property_id, external_id: "PMS-2" }])
    expect(live.status).toBe(200)
  })

  test("400 invalid_request names every failing field", async () => {
    const res = await patch(a.testKey, [
      { property_id: "not-a-uuid", external_id: 5 },
      { external_id: "x".repeat(121), property_id: a.testProperties[0]!.property_id },
      {}
    ])
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_request")
    const fields = res.body.details.fields.map((f: { field: string }) => f.field).sort()
    expect(fields).toEqual([
      "mappings[0].external_id",
      "mappings[0].property_id",
      "mappings[1].external_id",
      "mappings[2].external_id",
      "mappings[2].property_id"
    ])
    for (const f of res.body.details.fields) expect(typeof f.message).toBe("string")
  })

  test("1 to 500 mappings: empty and oversize batches are invalid_request", async () => {
    const empty = await patch(a.testKey, [])
    expect(empty.status).toBe(400)
    expect(empty.body.details.fields[0].field).toBe("mappings")
    const many = Array.from({ length: 501 }, () => ({ property_id: a.testProperties[0]!.property_id, external_id: null }))
    const tooMany = await patch(a.testKey, many)
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.code).toBe("invalid_request")
  })

  test("the same property twice in one batch is invalid_request", async () => {
    const p1 = a.testProperties[0]!.property_id
    const res = await patch(a.testKey, [{ property_id: p1, external_id: "A" }, { property_id: p1, external_id: "B" }])
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_request")
    expect(res.body.details.fields.map((f: { field: string }) => f.field)).toEqual([
      "mappings[0].property_id",
      "mappings[1].property_id"
    ])
  })

  test("400 invalid_json for a malformed body; missing body fields are invalid_request", async () => {
    const bad = await call(app, "PATCH", "/api/partners/properties", {
      key: a.testKey,
      body: "{\"mappings\": [",
      headers: { "content-type": "application/json" }
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({ error: expect.any(String), code: "invalid_json", details: {} })
    const missing = await call(app, "PATCH", "/api/partners/properties", { key: a.testKey, json: {} })
    expect(missing.status).toBe(400)
    expect(missing.body.details.fields).toEqual([{ field: "mappings", message: "is missing" }])
  })

  test("unknown body fields are ignored", async () => {
    const res = await call(app, "PATCH", "/api/partners/properties", {
      key: a.testKey,
      json: { mappings: [{ property_id: a.testProperties[0]!.property_id, external_id: "PMS-9", extra: 1 }], more: true }
    })
    expect(res.status).toBe(200)
    expect(res.body.mappings).toEqual([{ property_id: a.testProperties[0]!.property_id, external_id: "PMS-9" }])
  })
})
