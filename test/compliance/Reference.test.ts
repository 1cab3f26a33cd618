import { describe, expect, test } from "bun:test"
import { Cause, Effect, Exit, Layer } from "effect"
import countriesFile from "../../src/compliance/reference/countries.json" with { type: "json" }
import documentsFile from "../../src/compliance/reference/documents.json" with { type: "json" }
import motivosFile from "../../src/compliance/reference/motivos.json" with { type: "json" }
import {
  build,
  bundledFiles,
  makeSync,
  Reference,
  ReferenceDataError,
  type ReferenceFiles
} from "../../src/compliance/Reference.ts"
import { COUNTRY_CODES } from "../../src/reservations/countries.ts"
import { C4_COUNTRIES, COUNTRY_CODE, DOCUMENT_CODE, NO_SOURCE } from "../support/authority/sire-codes.ts"
import { DOCUMENT_LABEL } from "../support/authority/tra-fields.ts"
import { DocumentType, Motivo } from "../../src/reservations/Reservation.ts"

const ref = makeSync()

/** The countries on which C4, C12 and C13 agree (domain notes §2.4). */
const AGREED: ReadonlyArray<readonly [iso: string, code: string]> = [
  ["CO", "169"], ["US", "249"], ["ES", "245"], ["BR", "105"], ["MX", "493"], ["AR", "63"],
  ["CL", "211"], ["CN", "215"], ["JP", "399"], ["DE", "23"], ["FR", "275"], ["IT", "386"],
  ["GB", "628"], ["VE", "850"], ["EC", "239"], ["PE", "589"], ["CA", "149"], ["NL", "573"]
]

/** Fails with the `ReferenceDataError` of `files`; returns its message. */
const failure = (files: ReferenceFiles, overrides = {}): ReferenceDataError => {
  try {
    makeSync(files, overrides)
  } catch (error) {
    expect(error).toBeInstanceOf(ReferenceDataError)
    return error as ReferenceDataError
  }
  throw new Error("expected the reference data to be refused")
}

const withCountries = (change: (file: typeof countriesFile) => unknown): ReferenceFiles => ({
  ...bundledFiles,
  countries: change(structuredClone(countriesFile))
})

describe("bundled tables", () => {
  test("the three JSON files validate, with their versions and sources", () => {
    expect(ref.versions).toEqual({ countries: "2026-11-25", documents: "2026-11-25", motivos: "2026-11-22" })
    for (const file of [countriesFile, documentsFile, motivosFile]) {
      expect(file.sources.length).toBeGreaterThan(0)
      for (const source of file.sources) expect(source.tag).toMatch(/^[A-Z]+\d*$/)
    }
  })

  test("every spec tipo_documento has a TRA label; foreign documents a SIRE code, Colombian ones none", () => {
    const expected = {
      "Pasaporte": ["Pasaporte", "3"],
      "C.C": ["C.C", undefined],
      "T.I": ["T.I", undefined],
      "R.C": ["R.C", undefined],
      "C.E": ["C.E", "5"],
      "D.E": ["D.N.I", "10"], // [CONFLICT] D.N.I (C3, C5) vs Pasaporte (C8) vs DE (C4): documents.json notes // TRA label: the spec's own value (design §6.10)
      "C.D": ["Otro", "46"], // no source labels it; Otro is the sources' catch-all (C2, C5): documents.json notes
      "PPT": ["PPT", "52"] // [CONFLICT] 52 (C5, C13) vs 48 (C4): documents.json notes
    } as const
    expect(Object.keys(expected).sort()).toEqual([...DocumentType.literals].sort())
    for (const tipo of DocumentType.literals) {
      const [tra, sire] = expected[tipo]
      expect(ref.traDocument(tipo)).toBe(tra)
      expect(ref.sireDocument(tipo)).toBe(sire)
    }
  })

  test("every spec motivo has a TRA wording; Trabajo and Visita… are mapped to the form's categories", () => {
    for (const motivo of Motivo.literals) expect(ref.traMotivo(motivo)).toBeString()
    expect(ref.traMotivo("Trabajo")).toBe("Negocios y motivos profesionales")
    expect(ref.traMotivo("Visita a familiares y a amigos")).toBe("Visitas a familiares y a amigos")
    expect(ref.traMotivo("Vacaciones, recreo y ocio")).toBe("Vacaciones, recreo y ocio")
    expect(ref.traMotivo("Religión / peregrinaciones")).toBe("Religión / peregrinaciones")
    expect(Object.keys(motivosFile.entries).sort()).toEqual([...Motivo.literals].sort())
  })

  test.each(AGREED)("the agreed country %s maps to %s", (iso, code) => {
    expect(ref.sireCountry(iso)).toBe(code)
  })

  test("Colombia is 169; lookups are case-insensitive; unknown and inherited keys are undefined", () => {
    expect(ref.sireCountry("CO")).toBe("169")
    expect(ref.sireCountry("co")).toBe("169")
    expect(ref.sireCountry("XK")).toBeUndefined()
    expect(ref.sireCountry("constructor")).toBeUndefined()
    expect(ref.sireCountry("__proto__")).toBeUndefined()
    expect(ref.traDocument("toString")).toBeUndefined()
    expect(ref.sireDocument("hasOwnProperty")).toBeUndefined()
    expect(ref.traMotivo("Turismo")).toBeUndefined()
  })

  test("countries: unpadded, unique codes keyed by assigned ISO codes; every ISO code is mapped or documented", () => {
    const entries = Object.entries(countriesFile.entries)
    for (const [iso, code] of entries) {
      expect(COUNTRY_CODES as ReadonlyArray<string>).toContain(iso)
      expect(code).toMatch(/^[1-9]\d{0,2}$/)
    }
    expect(new Set(entries.map(([, code]) => code)).size).toBe(entries.length)
    const { no_source, candidates } = countriesFile.unmapped
    expect(new Set([...Object.keys(countriesFile.entries), ...no_source])).toEqual(new Set(COUNTRY_CODES))
    expect(entries.length + no_source.length).toBe(COUNTRY_CODES.length)
    expect(Object.keys(candidates).sort()).toEqual([...no_source].sort())
  })

  test("only the countries no source has are unmapped (issue 15: Russia and the other 76 conflicts are mapped)", () => {
    expect([...countriesFile.unmapped.no_source].sort()).toEqual(["BL", "BQ", "GS", "MF", "SS", "SX"])
    for (const iso of countriesFile.unmapped.no_source) expect(ref.sireCountry(iso)).toBeUndefined()
    expect(Object.keys(countriesFile.entries)).toHaveLength(243)
  })

  // The bundled tables are compared with the fakes' own tables (`test/support/authority/`, keyed from the sources'
  // names, never from our files), not with themselves: a country mapped to its neighbour's code fails here.
  test("every country has the code of the fake SIRE's own table (C12's), and only the six no source has are missing", () => {
    for (const iso of COUNTRY_CODES) expect([iso, ref.sireCountry(iso)]).toEqual([iso, COUNTRY_CODE[iso]])
    expect(Object.keys(COUNTRY_CODE).sort()).toEqual(Object.keys(countriesFile.entries).sort())
    expect([...NO_SOURCE].sort()).toEqual([...countriesFile.unmapped.no_source].sort())
  })

  test("a conflict takes C12's value (Migración's list), never C4's (DIAN); both are documented as the sources give them", () => {
    const conflicts: Readonly<Record<string, { readonly C12: string; readonly C4: string }>> = countriesFile.conflicts.values
    expect(Object.keys(conflicts)).toHaveLength(77)
    for (const [iso, { C12, C4 }] of Object.entries(conflicts)) {
      expect([iso, C12, C4]).toEqual([iso, COUNTRY_CODE[iso]!, String(Number(C4_COUNTRIES[iso]))])
    }
    // Exactly the countries where the two sources differ are documented as conflicts.
    const differing = Object.keys(COUNTRY_CODE).filter((iso) =>
      C4_COUNTRIES[iso] !== undefined && String(Number(C4_COUNTRIES[iso])) !== COUNTRY_CODE[iso]
    )
    expect(Object.keys(conflicts).sort()).toEqual(differing.sort())
    expect(ref.sireCountry("RU")).toBe("673")
    // The DIAN table gives Niger 525 / Nigeria 528, C12 the reverse: we follow C12 on both.
    expect(ref.sireCountry("NE")).toBe("528")
    expect(ref.sireCountry("NG")).toBe("525")
    // Countries C4 does not have are the single-source ones.
    const single: Readonly<Record<string, { readonly C12: string }>> = countriesFile.single_source.values
    expect(Object.keys(single).sort()).toEqual(Object.keys(COUNTRY_CODE).filter((iso) => C4_COUNTRIES[iso] === undefined).sort())
    for (const [iso, { C12 }] of Object.entries(single)) expect([iso, C12]).toEqual([iso, COUNTRY_CODE[iso]!])
    const agreed = Object.keys(countriesFile.entries).filter((iso) => !(iso in conflicts) && !(iso in single))
    expect(agreed).toHaveLength(152)
  })

  test("every document has the TRA label and SIRE code of the fakes' own tables", () => {
    for (const tipo of DocumentType.literals) {
      expect([tipo, ref.traDocument(tipo), ref.sireDocument(tipo)]).toEqual([tipo, DOCUMENT_LABEL[tipo], DOCUMENT_CODE[tipo]])
    }
  })
})

describe("broken data fails at load", () => {
  test("a padded code", () => {
    const error = failure(withCountries((file) => ({ ...file, entries: { ...file.entries, DE: "023" } })))
    expect(error.file).toBe("countries")
    expect(error.message).toContain("DE")
    expect(error.message).toContain("without leading zeros")
  })

  test("a key that is not an assigned ISO code, and an unknown top-level field", () => {
    expect(failure(withCountries((file) => ({ ...file, entries: { ...file.entries, XK: "414" } }))).message).toContain("XK")
    expect(failure(withCountries((file) => ({ ...file, extra: true }))).message).toContain("extra")
  })

  test("two countries with one code; Colombia missing; a country both mapped and listed as unmapped", () => {
    expect(failure(withCountries((file) => ({ ...file, entries: { ...file.entries, FR: "249" } }))).message).toContain(
      "also the code of"
    )
    const { CO: _, ...withoutColombia } = countriesFile.entries
    expect(failure(withCountries((file) => ({ ...file, entries: withoutColombia }))).message).toContain("169")
    expect(failure(withCountries((file) => ({ ...file, entries: { ...file.entries, SS: "760" } }))).message).toContain(
      "both mapped and listed as unmapped"
    )
  })

  test("a tipo_documento without an entry, a misspelt one, and a motivo without its wording", () => {
    const { PPT: _, ...withoutPpt } = documentsFile.entries
    const missing = failure({ ...bundledFiles, documents: { ...documentsFile, entries: withoutPpt, notes: {} } })
    expect(missing.file).toBe("documents")
    expect(missing.message).toContain("PPT")
    const misspelt = failure({
      ...bundledFiles,
      documents: { ...documentsFile, entries: { ...documentsFile.entries, Pasaport: { tra: "Pasaporte", sire: "3" } } }
    })
    expect(misspelt.message).toContain("Pasaport")
    const { Compras: _c, ...withoutCompras } = motivosFile.entries
    const motivos = failure({ ...bundledFiles, motivos: { ...motivosFile, entries: withoutCompras } })
    expect(motivos.file).toBe("motivos")
    expect(motivos.message).toContain("Compras")
  })

  test("a bad version, no sources, a note for a missing entry, not JSON data at all", () => {
    expect(failure({ ...bundledFiles, motivos: { ...motivosFile, version: "22/11/2026" } }).message).toContain("YYYY-MM-DD")
    expect(failure({ ...bundledFiles, motivos: { ...motivosFile, sources: [] } }).message).toContain("sources")
    expect(failure({ ...bundledFiles, motivos: { ...motivosFile, notes: { Turismo: "x" } } }).message).toContain("Turismo")
    expect(failure({ ...bundledFiles, countries: "[]" }).file).toBe("countries")
  })

  test("the layer dies at build (a defect at start), naming the file", async () => {
    const broken = withCountries((file) => ({ ...file, version: "v1" }))
    const exit = await Effect.runPromiseExit(Effect.provide(Reference, Reference.layer(broken)))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(Cause.isDie(exit.cause)).toBe(true)
      expect(String(Cause.squash(exit.cause))).toContain("countries.json is invalid")
    }
  })

  test("the default layer builds the bundled tables", async () => {
    const data = await Effect.runPromise(Effect.provide(Reference, Reference.default))
    expect(data.sireCountry("US")).toBe("249")
    expect(data.versions).toEqual(ref.versions)
  })
})

describe("overrides", () => {
  test("a confirmed country code is added, a document code changed, a wording replaced; versions say so", async () => {
    const layer = Reference.layer(bundledFiles, {
      countries: { RU: "676", SS: "760" },
      documents: { PPT: { sire: "48" } },
      motivos: { Compras: "Compras y otros" }
    })
    const data = await Effect.runPromise(Effect.provide(Reference, layer))
    expect(data.sireCountry("RU")).toBe("676") // an operator who found the DIAN value in the portal
    expect(data.sireCountry("SS")).toBe("760") // a country no source has
    expect(data.sireDocument("PPT")).toBe("48")
    expect(data.traDocument("PPT")).toBe("PPT") // the other field is kept
    expect(data.traMotivo("Compras")).toBe("Compras y otros")
    expect(data.versions).toEqual({
      countries: "2026-11-25+overrides",
      documents: "2026-11-25+overrides",
      motivos: "2026-11-22+overrides"
    })
    expect(ref.sireCountry("RU")).toBe("673") // the bundled data is untouched
    expect(ref.sireCountry("SS")).toBeUndefined()
  })

  test("null removes an entry; an override is validated like the file", () => {
    expect(makeSync(bundledFiles, { countries: { US: null } }).sireCountry("US")).toBeUndefined()
    expect(makeSync(bundledFiles, { documents: { PPT: { sire: null } } }).sireDocument("PPT")).toBeUndefined()
    expect(failure(bundledFiles, { countries: { RU: "0673" } }).message).toContain("RU")
    expect(failure(bundledFiles, { countries: { FR: "249" } }).message).toContain("also the code of")
    expect(failure(bundledFiles, { documents: { PPT: null } }).message).toContain("PPT")
  })

  test("build is a pure function returning Either", () => {
    expect(build()._tag).toBe("Right")
    expect(build({ ...bundledFiles, documents: null })._tag).toBe("Left")
    // Layer.succeed with data from build, for tests that want fixed tables
    expect(Layer.isLayer(Reference.layer())).toBe(true)
  })
})
