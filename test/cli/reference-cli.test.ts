import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { type CliResult, expectCliFailure, expectCliSuccess, runCli } from "../support/process.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * `cli reference list|set|unset` (design §6.10, §9) as real processes against a running service: overrides
 * stored in the database, audited, checked like the bundled data, and in effect at the next report run — a
 * report waiting on an unmapped value is sent by the next run once the value is set.
 */

let tra: FakeTra
let db: TestDatabase
let app: RunningApp
let cli: (...args: Array<string>) => Promise<CliResult>
let account: Awaited<ReturnType<typeof seedAccount>>
let propertyId: string

beforeAll(async () => {
  tra = startFakeTra()
  db = await freshDatabase()
  // ROLE=api: no periodic run; the test runs them with `cli reports run`. SIRE_MODE is manual (the default).
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api", TRA_BASE_URL: tra.url })
  cli = (...args) => runCli(["--url", app.baseUrl, "--token", app.adminToken, ...args])
  account = await seedAccount(app)
  const created = await ok(
    "properties", "create", "--account", account.accountId, "--name", "Hotel Referencia", "--rnt", "13579",
    "--tra-token", DEFAULT_TOKEN, "--sire-hotel-code", "2468", "--sire-city-code", "76001"
  )
  propertyId = created.property_id
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  tra?.stop()
})

/** A successful command: exit 0, nothing on stderr, its JSON. */
const ok = async (...args: Array<string>) => expectCliSuccess(args, await cli(...args))

/** A failure: exit `exit`, nothing on stdout, `{error, code}` on stderr; answers the message. */
const failed = expectCliFailure

interface Entry {
  readonly table: string
  readonly key: string
  readonly value: string | null
  readonly bundled: string | null
  readonly sources: string | null
  readonly overridden: boolean
  readonly note: string | null
  readonly updated_at: string | null
  readonly ignored: string | null
}

const countries = async (): Promise<Array<Entry>> => (await ok("reference", "list", "--table", "sire-countries")).entries

const overrides = () => db.query("SELECT table_name, key, value, note FROM reference_overrides ORDER BY table_name, key")
const auditOf = (target: string) =>
  db.query<{ account_id: string | null; actor_email: string; action: string; details: any }>(
    "SELECT account_id, actor_email, action, details FROM audit_log WHERE target = $1 ORDER BY id",
    [target]
  )

const registration = (guests: ReadonlyArray<Record<string, unknown>>, overrides: Record<string, unknown> = {}) =>
  call(app, "POST", "/api/partners/registrations", {
    key: account.liveKey,
    json: registrationBody(propertyId, guests, { check_in: bogotaToday(), ...overrides })
  })

const detail = async (externalId: string) =>
  (await call(app, "GET", `/api/partners/registrations?external_id=${externalId}`, { key: account.liveKey })).body

describe("reference list", () => {
  test("every key of a table with its value, bundled value and whether it is overridden", async () => {
    const entries = await countries()
    expect(entries).toHaveLength(249)
    expect(entries.find((entry) => entry.key === "CO")).toEqual({
      table: "sire-countries",
      key: "CO",
      value: "169",
      bundled: "169",
      sources: null,
      overridden: false,
      note: null,
      updated_at: null,
      ignored: null
    })
    // Where the sources disagree, each one's code is shown beside the bundled one, for an operator to switch.
    const disputed = entries.find((entry) => entry.sources?.startsWith("the sources disagree") === true)
    if (disputed !== undefined) expect(disputed.sources).toContain(disputed.bundled!)
    const one = await ok("reference", "list", "--table", "tra-motivos", "--key", "Trabajo")
    expect(one.entries).toEqual([expect.objectContaining({
      table: "tra-motivos",
      key: "Trabajo",
      value: "Negocios y motivos profesionales",
      sources: expect.stringContaining("Negocios y motivos profesionales"),
      overridden: false
    })])
    const all = await ok("reference", "list")
    const tables = new Map<string, number>()
    for (const entry of all.entries as Array<Entry>) tables.set(entry.table, (tables.get(entry.table) ?? 0) + 1)
    expect(Object.fromEntries(tables)).toEqual({
      "sire-countries": 249,
      "sire-documents": 8,
      "tra-documents": 8,
      "tra-motivos": 9
    })
    // Colombian documents have no SIRE code: a gap the bundled data has on purpose.
    const cc = all.entries.find((entry: Entry) => entry.table === "sire-documents" && entry.key === "C.C")
    expect(cc).toMatchObject({ value: null, bundled: null })
  })
})

describe("a report waiting on an unmapped country is sent by the next run once an operator sets its code", () => {
  test("registration → run → pending with a warning naming nacionalidad → reference set → run → sent → success", async () => {
    // The country is chosen from the table as it is: one with no SIRE code if the bundled data still has one;
    // otherwise a mapped one whose code the operator withdraws first (`--unmapped`), as after finding it wrong.
    const before = await countries()
    let country = before.find((entry) => entry.value === null)?.key
    if (country === undefined) {
      country = before.find((entry) => entry.key !== "CO" && entry.key !== "US")!.key
      const withdrawn = await ok("reference", "set", "--table", "sire-countries", "--key", country, "--unmapped")
      expect(withdrawn).toMatchObject({ key: country, value: null, overridden: true })
    }
    const taken = new Set((await countries()).flatMap((entry) => entry.value === null ? [] : [entry.value]))
    const code = String(Array.from({ length: 999 }, (_, i) => i + 1).find((n) => !taken.has(String(n))))

    const created = await registration([colombian(), foreigner({ nacionalidad: country, numero_documento: "RX1" })])
    expect(created.status).toBe(201)
    const externalId = created.body.external_id

    const first = await ok("reports", "run")
    expect(first.tra).toEqual({ sent: 2, accepted: 2, rejected: 0 })
    expect(first.sire.sent).toBe(0)
    const waiting = await detail(externalId)
    expect(waiting.tra.status).toBe("success")
    expect(waiting.sire.status).toBe("pending")
    expect(waiting.sire.warning).toContain("guests[1].nacionalidad")
    expect(waiting.sire.warning).toContain(JSON.stringify(country))
    const listed = await ok("reports", "list", "--status", "pending", "--property", propertyId)
    expect(listed.reports).toContainEqual(expect.objectContaining({
      reservation_id: created.body.reservation_id,
      authority: "sire_entry",
      status: "pending",
      sends_on: bogotaToday(),
      overdue: false,
      warning: expect.stringContaining("nacionalidad")
    }))

    const set = await ok(
      "reference", "set", "--table", "sire-countries", "--key", country, "--value", code,
      "--note", "checked on the SIRE portal"
    )
    expect(set).toEqual({
      table: "sire-countries",
      key: country,
      value: code,
      bundled: before.find((entry) => entry.key === country)!.bundled,
      sources: before.find((entry) => entry.key === country)!.sources,
      overridden: true,
      note: "checked on the SIRE portal",
      updated_at: expect.any(String),
      ignored: null,
      previous: null
    })
    const audited = await auditOf(`sire-countries ${country}`)
    expect(audited.at(-1)).toEqual({
      account_id: null,
      actor_email: "operator",
      action: "reference.set",
      details: expect.objectContaining({ table: "sire-countries", key: country, old: null, new: code })
    })

    // No restart: the next run reads the override.
    const second = await ok("reports", "run")
    expect(second.sire.sent).toBe(1)
    const files = await ok("sire", "files", "--property", propertyId)
    const file = files.files[0]
    expect(file.lines).toBe(1)
    expect(file.content.split("\t")[4]).toBe(code)
    expect(await ok("sire", "confirm", "--file", file.file_id)).toEqual({ file_id: file.file_id, status: "confirmed" })
    const sent = await detail(externalId)
    expect(sent.sire.status).toBe("success")
    expect(sent.sire).not.toHaveProperty("warning")
    expect(sent.status).toBe("compliant")
  })
})

describe("a bundled code withdrawn (--unmapped) holds its reports; unset releases them", () => {
  test("--unmapped → run → pending with a warning → unset → run → the bundled code is sent", async () => {
    const entries = await countries()
    const country = entries.find((entry) => entry.value !== null && !["CO", "US"].includes(entry.key) && !entry.overridden)!
    const withdrawn = await ok(
      "reference", "set", "--table", "sire-countries", "--key", country.key, "--unmapped", "--note", "Migración refused it"
    )
    expect(withdrawn).toMatchObject({ key: country.key, value: null, bundled: country.bundled, previous: country.value })

    const created = await registration([foreigner({ nacionalidad: country.key, numero_documento: "WD1" })])
    expect(created.status).toBe(201)
    const first = await ok("reports", "run")
    expect(first.sire.sent).toBe(0)
    const waiting = await detail(created.body.external_id)
    expect(waiting.sire).toMatchObject({ status: "pending", warning: expect.stringContaining("guests[0].nacionalidad") })

    const unset = await ok("reference", "unset", "--table", "sire-countries", "--key", country.key)
    expect(unset).toMatchObject({ value: country.bundled, overridden: false, previous: null })
    expect((await auditOf(`sire-countries ${country.key}`)).map((entry) => [entry.action, entry.details.new])).toEqual([
      ["reference.set", null],
      ["reference.unset", country.bundled]
    ])
    expect((await ok("reports", "run")).sire.sent).toBe(1)
    const [file] = (await ok("sire", "files", "--property", propertyId)).files
    expect(file.content.split("\t")[4]).toBe(country.bundled)
  })
})

describe("reference set and unset of a TRA wording: the next run's body carries it", () => {
  test("set → /one/ sends the override; unset → the bundled wording again; both audited", async () => {
    const motivo = "Vacaciones, recreo y ocio"
    const set = await ok("reference", "set", "--table", "tra-motivos", "--key", motivo, "--value", "Vacaciones y ocio")
    expect(set).toMatchObject({ value: "Vacaciones y ocio", bundled: motivo, previous: motivo, overridden: true })

    tra.clear()
    expect((await registration([colombian({ numero_documento: "55501" })])).status).toBe(201)
    await ok("reports", "run")
    expect(tra.mains().map((request) => (request.body as { motivo: string }).motivo)).toEqual(["Vacaciones y ocio"])

    const unset = await ok("reference", "unset", "--table", "tra-motivos", "--key", motivo)
    expect(unset).toMatchObject({ value: motivo, bundled: motivo, previous: "Vacaciones y ocio", overridden: false })
    tra.clear()
    expect((await registration([colombian({ numero_documento: "55502" })])).status).toBe(201)
    await ok("reports", "run")
    expect(tra.mains().map((request) => (request.body as { motivo: string }).motivo)).toEqual([motivo])

    expect((await auditOf(`tra-motivos ${motivo}`)).map((entry) => [entry.action, entry.details.old, entry.details.new]))
      .toEqual([["reference.set", motivo, "Vacaciones y ocio"], ["reference.unset", "Vacaciones y ocio", motivo]])
  })
})

describe("refused changes store nothing", () => {
  test("values and keys the table's schema refuses: exit 2 before any call", async () => {
    const stored = await overrides()
    const cases: Array<[Array<string>, string, string]> = [
      [["--table", "sire-countries", "--key", "RU", "--value", "0673"], "invalid_request",
        "--value for sire-countries must be 1 to 3 digits without leading zeros (got \"0673\")"],
      [["--table", "sire-countries", "--key", "RU", "--value", "1234"], "invalid_request", "1 to 3 digits"],
      [["--table", "sire-countries", "--key", "ru", "--value", "673"], "invalid_request",
        "--key for sire-countries must be an assigned ISO 3166-1 alpha-2 country code in capitals, such as RU (got \"ru\")"],
      [["--table", "sire-documents", "--key", "Passport", "--value", "3"], "invalid_request", "must be one of: Pasaporte"],
      [["--table", "countries", "--key", "RU", "--value", "673"], "invalid_request",
        "--table must be one of: sire-countries, sire-documents, tra-documents, tra-motivos"],
      [["--table", "tra-documents", "--key", "PPT", "--value", " PPT"], "invalid_request", "neither starts nor ends"],
      [["--table", "tra-motivos", "--key", "Compras", "--unmapped"], "invalid_request", "needs a value for every key"],
      [["--table", "sire-countries", "--key", "RU"], "invalid_arguments", "--value / --unmapped: pass one of the two"],
      [["--table", "sire-countries", "--key", "RU", "--value", "673", "--unmapped"], "invalid_arguments", "pass one"]
    ]
    const results = await Promise.all(cases.map(([args]) => cli("reference", "set", ...args)))
    results.forEach((result, i) => expect(failed(result, cases[i]![1], 2)).toContain(cases[i]![2]))
    expect(failed(await cli("reference", "list", "--key", "RU"), "invalid_arguments", 2)).toContain("--key needs --table")
    expect(await overrides()).toEqual(stored)
  })

  test("a code another country already has: refused by the service (the bundled data's own rule), nothing stored", async () => {
    const entries = await countries()
    const us = entries.find((entry) => entry.key === "US")!
    const other = entries.find((entry) => entry.key !== "US" && entry.key !== "CO" && !entry.overridden)!
    const stored = await overrides()
    const audited = await db.query("SELECT count(*)::int AS n FROM audit_log WHERE action LIKE 'reference.%'")
    const message = failed(
      await cli("reference", "set", "--table", "sire-countries", "--key", other.key, "--value", us.value!),
      "invalid_request",
      1
    )
    expect(message).toMatch(new RegExp(`code ${us.value} is also the code of (US|${other.key})`))
    // Colombia's code is fixed by the data's rules too.
    expect(failed(await cli("reference", "set", "--table", "sire-countries", "--key", "CO", "--value", "170"), "invalid_request", 1))
      .toContain("Colombia must map to 169")
    expect(await overrides()).toEqual(stored)
    expect(await db.query("SELECT count(*)::int AS n FROM audit_log WHERE action LIKE 'reference.%'")).toEqual(audited)
  })

  test("unset of a key without an override → override_not_found", async () => {
    const message = failed(await cli("reference", "unset", "--table", "tra-documents", "--key", "PPT"), "override_not_found", 1)
    expect(message).toContain("tra-documents PPT has no override")
  })

  test("an unset that would bring back a code another override took is refused", async () => {
    const entries = await countries()
    const [a, b] = entries.filter((entry) => entry.value !== null && entry.key !== "CO" && !entry.overridden)
    // a takes a free code, then b takes a's old code: unsetting a would give a's bundled code back to a.
    const taken = new Set(entries.flatMap((entry) => entry.value === null ? [] : [entry.value]))
    const free = String(Array.from({ length: 999 }, (_, i) => i + 1).find((n) => !taken.has(String(n))))
    await ok("reference", "set", "--table", "sire-countries", "--key", a!.key, "--value", free)
    await ok("reference", "set", "--table", "sire-countries", "--key", b!.key, "--value", a!.value!)
    const message = failed(await cli("reference", "unset", "--table", "sire-countries", "--key", a!.key), "invalid_request", 1)
    expect(message).toContain(`the override of sire-countries ${b!.key}`)
    await ok("reference", "unset", "--table", "sire-countries", "--key", b!.key)
    await ok("reference", "unset", "--table", "sire-countries", "--key", a!.key)
  })
})

describe("swapping two countries' codes (the sources swap Niger and Nigeria)", () => {
  test("each step keeps the table valid: withdraw one, set the other, set the first; and back", async () => {
    const entries = await countries()
    const [a, b] = entries.filter((entry) => entry.value !== null && entry.key !== "CO" && !entry.overridden)
    const swap = ["reference", "set", "--table", "sire-countries"]
    // Directly, either step gives one code to two countries: refused.
    failed(await cli(...swap, "--key", a!.key, "--value", b!.value!), "invalid_request", 1)
    await ok(...swap, "--key", b!.key, "--unmapped")
    await ok(...swap, "--key", a!.key, "--value", b!.value!)
    await ok(...swap, "--key", b!.key, "--value", a!.value!)
    const swapped = await countries()
    expect([a!.key, b!.key].map((key) => swapped.find((entry) => entry.key === key)!.value)).toEqual([b!.value, a!.value])
    // Back to the bundled codes the same way.
    await ok(...swap, "--key", a!.key, "--unmapped")
    await ok("reference", "unset", "--table", "sire-countries", "--key", b!.key)
    await ok("reference", "unset", "--table", "sire-countries", "--key", a!.key)
    const back = await countries()
    expect([a!.key, b!.key].map((key) => back.find((entry) => entry.key === key)!.value)).toEqual([a!.value, b!.value])
  })
})

describe("an override a release's bundled data contradicts", () => {
  test("is left out of the tables and shown with the reason; report runs go on", async () => {
    const entries = await countries()
    const us = entries.find((entry) => entry.key === "US")!
    const other = entries.find((entry) => entry.key !== "US" && entry.key !== "CO" && !entry.overridden)!
    // As if a new release had given `other`'s overridden code to US: written directly, as no command allows it.
    await db.query(
      "INSERT INTO reference_overrides (table_name, key, value, note, updated_at) VALUES ('sire-countries', $1, $2, NULL, now())",
      [other.key, us.value]
    )
    try {
      const [shown] = (await ok("reference", "list", "--table", "sire-countries", "--key", other.key)).entries
      expect(shown).toMatchObject({ key: other.key, value: other.value, overridden: true })
      expect(shown.ignored).toMatch(new RegExp(`code ${us.value} is also the code of (US|${other.key})`))
      const run = await cli("reports", "run")
      expect(run.code).toBe(0)
    } finally {
      await db.query("DELETE FROM reference_overrides WHERE table_name = 'sire-countries' AND key = $1", [other.key])
    }
  })
})
