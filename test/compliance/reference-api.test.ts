import { describe, expect, test } from "bun:test"
import countriesFile from "../../src/compliance/reference/countries.json" with { type: "json" }
import documentsFile from "../../src/compliance/reference/documents.json" with { type: "json" }
import { Either } from "effect"
import { bundledPartnerFiles, partnerSources } from "../../src/compliance/PartnerReference.ts"
import tiposFile from "../../src/compliance/reference/tipos_acomodacion.json" with { type: "json" }
import { admin, call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"

/**
 * `GET /api/partners/reference/{table}` (design §8b, issue 25 item 2) over the real app: what the service maps
 * each value to, with the cited sources and the operator's overrides applied.
 */

const f = appFixture()

interface Entry {
  readonly key: string
  readonly tra: string | null
  readonly sire: string | null
  readonly source: string
}

/** `key` null: no Authorization header. */
const read = (table: string, key: string | null = f.account.liveKey) =>
  call<{ table: string; entries: Array<Entry>; code?: string }>(f.app, "GET", `/api/partners/reference/${table}`, key === null ? {} : { key })

const entryOf = async (table: string, key: string) => {
  const res = await read(table)
  expect(res.status).toBe(200)
  return res.body.entries.find((entry) => entry.key === key)
}

describe("GET /api/partners/reference/{table} (design §8b)", () => {
  test("countries: every ISO country with its SIRE code from countries.json, no TRA value, its sources cited", async () => {
    const res = await read("countries")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-ratelimit-limit")).not.toBeNull()
    expect(res.body.table).toBe("countries")
    const byKey = new Map(res.body.entries.map((entry) => [entry.key, entry]))
    expect(byKey.size).toBe(res.body.entries.length)
    for (const [iso, code] of Object.entries(countriesFile.entries)) expect({ iso, sire: byKey.get(iso)?.sire }).toEqual({ iso, sire: code })
    expect(res.body.entries.every((entry) => entry.tra === null)).toBe(true)
    // Agreed, disputed (C12's value, C4's named) and unmapped, each citing where the codes can be read.
    expect(byKey.get("CO")).toEqual({
      key: "CO",
      tra: null,
      sire: "169",
      source: expect.stringMatching(/^countries\.json \d{4}-\d{2}-\d{2}: C12 .* and C4 .* agree \(C12 toneill57\/muva-chat .*; C4 BreynerTejada\/housetel /)
    })
    expect(byKey.get("RU")?.source).toContain("the sources disagree: C12 673, C4 676; C12's value is taken")
    expect(byKey.get("SS")).toMatchObject({ sire: null, source: expect.stringContaining("no public source has a code") })
  })

  test("document_types and motivos: the TRA label or wording and the SIRE code, with the file's notes", async () => {
    const documents = await read("document_types")
    expect(Object.fromEntries(documents.body.entries.map((entry) => [entry.key, { tra: entry.tra, sire: entry.sire }])))
      .toEqual(documentsFile.entries)
    const foreign = documents.body.entries.find((entry) => entry.key === "D.E")
    expect(foreign).toMatchObject({ tra: "D.N.I", sire: "10", source: expect.stringContaining("steadydee/owagents tools/hotel_pms/server.py") })

    expect(await entryOf("motivos", "Trabajo")).toEqual({
      key: "Trabajo",
      tra: "Negocios y motivos profesionales",
      sire: null,
      source: expect.stringContaining("The TRA list has no 'Trabajo'")
    })
    expect((await entryOf("motivos", "Compras"))?.source).toContain("C10 ")
  })

  test("tipos_acomodacion: the form's options and the defaults, each sent as written; SIRE takes none", async () => {
    const res = await read("tipos_acomodacion")
    expect(res.status).toBe(200)
    expect(res.body.entries.every((entry) => entry.tra === entry.key && entry.sire === null)).toBe(true)
    expect(res.body.entries.map((entry) => entry.key)).toEqual(expect.arrayContaining(["Sencilla", "Doble", "SUITE"]))
    expect(res.body.entries.find((entry) => entry.key === "SUITE")?.source).toContain(
      "franbz1/hotel-san-miguel src/common/enums/tipoHabitacion.enum.ts"
    )
  })

  test("an operator's override (cli reference set) shows in the value and the source; unset restores the bundled one", async () => {
    await admin(f.app, (client) => client.SetReference({ table: "sire-countries", key: "RU", value: "676", note: "read in the portal" }))
    await admin(f.app, (client) => client.SetReference({ table: "tra-documents", key: "C.D", value: "C.D" }))
    try {
      expect(await entryOf("countries", "RU")).toEqual({
        key: "RU",
        tra: null,
        sire: "676",
        source: expect.stringMatching(/^sire: override by the operator \(bundled: "673"\); countries\.json .*the sources disagree/)
      })
      const diplomatic = await entryOf("document_types", "C.D")
      expect(diplomatic).toMatchObject({ tra: "C.D", sire: "46" })
      expect(diplomatic?.source).toStartWith(`tra: override by the operator (bundled: "Otro"); documents.json`)
      expect(diplomatic?.source).not.toContain("sire: override")
    } finally {
      await admin(f.app, (client) => client.UnsetReference({ table: "sire-countries", key: "RU" }))
      await admin(f.app, (client) => client.UnsetReference({ table: "tra-documents", key: "C.D" }))
    }
    expect(await entryOf("countries", "RU")).toMatchObject({ sire: "673", source: expect.stringMatching(/^countries\.json /) })
  })

  test("test and live keys get the same tables; no key is 401; another table is 400 invalid_request naming the four", async () => {
    const live = await read("motivos")
    const sandbox = await read("motivos", f.account.testKey)
    expect(sandbox.status).toBe(200)
    expect(sandbox.body).toEqual(live.body)

    const anonymous = await read("motivos", null)
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.code).toBe("unauthorized")

    const unknown = await read("cities")
    expect(unknown.status).toBe(400)
    expect(unknown.body.code).toBe("invalid_request")
    for (const table of ["countries", "document_types", "motivos", "tipos_acomodacion"]) {
      expect(JSON.stringify(unknown.body)).toContain(table)
    }
  })
})

describe("tipos_acomodacion.json", () => {
  test("is checked like the other files: an entry that does not map to itself, or a stray note, is refused", () => {
    expect(Either.isRight(partnerSources())).toBe(true)
    const broken = (change: object) => partnerSources({ ...bundledPartnerFiles, tiposAcomodacion: { ...tiposFile, ...change } })
    expect(Either.getLeft(broken({ entries: { ...tiposFile.entries, Doble: "DOBLE" } }))).toEqual(
      expect.objectContaining({ value: expect.stringContaining("every entry must map to itself") })
    )
    expect(Either.getLeft(broken({ notes: { Triple: "a room type no source lists" } }))).toEqual(
      expect.objectContaining({ value: expect.stringContaining("a note must explain an entry") })
    )
  })
})
