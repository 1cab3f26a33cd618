import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { runCli } from "../support/process.ts"
import { bogotaToday } from "../support/trm.ts"

/** `cli reports run`, `cli sire files`, `cli sire confirm` (design §4) as real processes. */
let tra: FakeTra
let db: TestDatabase
let app: RunningApp
let cli: (...args: Array<string>) => ReturnType<typeof runCli>

beforeAll(async () => {
  tra = startFakeTra()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api", TRA_BASE_URL: tra.url })
  cli = (...args) => runCli(["--url", app.baseUrl, "--token", app.adminToken, ...args])
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  tra?.stop()
})

describe("reports and SIRE commands", () => {
  test("reports run → counts; sire files → the kept file; sire confirm → confirmed, the stay compliant", async () => {
    const account = await seedAccount(app)
    const created = await cli(
      "properties", "create", "--account", account.accountId, "--name", "Hotel CLI", "--rnt", "13579",
      "--tra-token", DEFAULT_TOKEN, "--sire-hotel-code", "2468", "--sire-city-code", "76001"
    )
    expect(created.code).toBe(0)
    const body = registrationBody(created.json.property_id, [colombian(), foreigner()], { check_in: bogotaToday() })
    const submitted = await call(app, "POST", "/api/partners/registrations", { key: account.liveKey, json: body })
    expect(submitted.status).toBe(201)

    const run = await cli("reports", "run")
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" })
    expect(run.json).toEqual({
      date: bogotaToday(),
      reservations: 1,
      tra: { sent: 2, accepted: 2, rejected: 0 },
      sire: { sent: 1, accepted: 0, rejected: 0 }
    })

    const listed = await cli("sire", "files", "--property", created.json.property_id)
    expect(listed.code).toBe(0)
    expect(listed.json.files).toHaveLength(1)
    const file = listed.json.files[0]
    expect(file).toMatchObject({ property_id: created.json.property_id, lines: 1, status: "generated" })
    expect(file.content.split("\t")[0]).toBe("2468")

    const confirmed = await cli("sire", "confirm", "--file", file.file_id)
    expect(confirmed.json).toEqual({ file_id: file.file_id, status: "confirmed" })
    const detail = await call(app, "GET", `/api/partners/registrations?external_id=${body.external_id}`, { key: account.liveKey })
    expect(detail.body.status).toBe("compliant")

    const again = await cli("reports", "run", "--date", bogotaToday())
    expect(again.json.tra.sent).toBe(0)
  })

  test("errors: unknown file → file_not_found; a date that is not one → invalid_request", async () => {
    for (const id of ["00000000-0000-4000-8000-000000000000", "nope"]) {
      const missing = await cli("sire", "confirm", "--file", id)
      expect(missing.code).not.toBe(0)
      expect(missing.error).toEqual({ error: expect.any(String), code: "file_not_found" })
    }
    const bad = await cli("reports", "run", "--date", "2026-02-30")
    expect(bad.code).not.toBe(0)
    expect(bad.error.code).toBe("invalid_request")
  })
})
