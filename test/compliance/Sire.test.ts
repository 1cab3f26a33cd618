import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import { makeSync } from "../../src/compliance/Reference.ts"
import {
  PARTICLES,
  SIRE_COLUMNS,
  type SireGuest,
  type SireLineInput,
  sireDate,
  sireDocumentNumber,
  sireFile,
  sireLine,
  sireName,
  sireProblems,
  sireText,
  splitSurnames
} from "../../src/compliance/Sire.ts"
import { COLUMNS, DOCUMENT_CODE } from "../support/authority/sire-codes.ts"

const ref = makeSync()

// ---------------------------------------------------------------------------------------------------------------

describe("splitSurnames (design §6.13)", () => {
  test.each<[string, string, string]>([
    // single surnames: the second column stays empty
    ["Pérez", "PEREZ", ""],
    ["Smith", "SMITH", ""],
    ["Müller", "MULLER", ""],
    ["Nguyễn", "NGUYEN", ""],
    // two surnames
    ["García Márquez", "GARCIA", "MARQUEZ"],
    ["Muñoz Ibáñez", "MUNOZ", "IBANEZ"],
    ["Smith Johnson", "SMITH", "JOHNSON"],
    ["  García   López  ", "GARCIA", "LOPEZ"],
    ["PÉREZ\tGÓMEZ", "PEREZ", "GOMEZ"],
    // Spanish particles stay with the surname they introduce
    ["de la Cruz Pérez", "DE LA CRUZ", "PEREZ"],
    ["del Río González", "DEL RIO", "GONZALEZ"],
    ["De Los Santos", "DE LOS SANTOS", ""],
    ["de las Casas Ruiz", "DE LAS CASAS", "RUIZ"],
    ["García de la Fuente", "GARCIA", "DE LA FUENTE"],
    ["Fernández de Córdoba", "FERNANDEZ", "DE CORDOBA"],
    ["La Torre Núñez", "LA TORRE", "NUNEZ"],
    ["San Martín Rojas", "SAN MARTIN", "ROJAS"],
    ["Santa Cruz", "SANTA CRUZ", ""],
    ["Ortega y Gasset", "ORTEGA", "Y GASSET"],
    // Portuguese, Italian, French
    ["da Silva Santos", "DA SILVA", "SANTOS"],
    ["dos Santos", "DOS SANTOS", ""],
    ["do Nascimento Pereira", "DO NASCIMENTO", "PEREIRA"],
    ["de Sousa e Silva", "DE SOUSA", "E SILVA"],
    ["Di Maria", "DI MARIA", ""],
    ["della Rovere Sforza", "DELLA ROVERE", "SFORZA"],
    ["Le Pen", "LE PEN", ""],
    ["Du Pont Martin", "DU PONT", "MARTIN"],
    // Dutch, German, Arabic
    ["van der Berg", "VAN DER BERG", ""],
    ["van den Bosch Smit", "VAN DEN BOSCH", "SMIT"],
    ["Van Halen Ramírez", "VAN HALEN", "RAMIREZ"],
    ["von Neumann", "VON NEUMANN", ""],
    ["Al Saud", "AL SAUD", ""],
    ["Ben Ali Trabelsi", "BEN ALI", "TRABELSI"],
    // hyphens bind a compound surname; apostrophes are dropped (ICAO 9303)
    ["Gómez-Pérez", "GOMEZ PEREZ", ""],
    ["Pérez-Reverte Gutiérrez", "PEREZ REVERTE", "GUTIERREZ"],
    ["O'Connor", "OCONNOR", ""],
    ["d'Alembert", "DALEMBERT", ""],
    ["D’ Angelo Rossi", "D ANGELO", "ROSSI"],
    ["García - López", "GARCIA", "LOPEZ"],
    // other letters
    ["Østergaard", "OSTERGAARD", ""],
    ["Straße", "STRASSE", ""],
    ["Łukasiewicz Wójcik", "LUKASIEWICZ", "WOJCIK"],
    // a particle alone is a surname (Vietnamese Lê/Đỗ, Chinese Li)
    ["Lê", "LE", ""],
    ["Đỗ", "DO", ""],
    ["Li", "LI", ""],
    ["Pérez de", "PEREZ", "DE"],
    // nothing writable
    ["", "", ""],
    ["王", "", ""]
  ])("%p → [%p, %p]", (apellido, first, second) => {
    expect(splitSurnames(apellido)).toEqual([first, second])
  })

  test("the particle list covers the design's examples", () => {
    for (const particle of ["DE", "DEL", "LA", "LAS", "LOS", "VAN", "VON", "DA", "DAS", "DO", "DOS", "DI", "DU", "LE", "Y"]) {
      expect(PARTICLES.has(particle)).toBe(true)
    }
  })
})

describe("sireText, sireName, sireDocumentNumber", () => {
  test.each<[string, string]>([
    ["Peña", "PENA"],
    ["Müller", "MULLER"],
    ["José María", "JOSE MARIA"],
    ["  a \t b\r\nc  ", "A B C"],
    ["Ærø", "AERO"],
    ["ﬁnal", "FINAL"], // ligature
    ["ＡＢＣ", "ABC"], // full-width
    ["a\u00a0b", "A B"], // no-break space
    ["Smith-Jones", "SMITH-JONES"],
    ["Иван", ""]
  ])("sireText(%p) = %p", (input, output) => {
    expect(sireText(input)).toBe(output)
  })

  test("sireText output never holds TAB, CR, LF or non-ASCII", () => {
    const text = sireText("x\ty\rz\nw\u2028v\u0000ü€")
    expect(text).toBe("X Y Z W V U")
    expect(text).toMatch(/^[\x20-\x7E]*$/)
  })

  test("names keep letters and spaces only", () => {
    expect(sireName("Mary-Jane O'Neil")).toBe("MARY JANE ONEIL")
    expect(sireName("José  María")).toBe("JOSE MARIA")
    expect(sireName("J. R. R.")).toBe("J R R")
  })

  test("document numbers lose spaces and hyphens, upper case", () => {
    expect(sireDocumentNumber(" ab 123-456 ")).toBe("AB123456")
    expect(sireDocumentNumber("x1ñ2")).toBe("X1N2")
  })
})

describe("sireDate", () => {
  test("YYYY-MM-DD → dd/mm/yyyy", () => {
    expect(sireDate("2026-12-20")).toBe("20/12/2026")
    expect(sireDate("1985-03-05")).toBe("05/03/1985")
    expect(sireDate("2024-02-29")).toBe("29/02/2024")
  })

  test.each([["2026-02-30"], ["20/12/2026"], ["2026-1-5"], [""], ["2026-12-20T00:00:00Z"]])("%p is refused", (date) => {
    expect(() => sireDate(date)).toThrow(RangeError)
  })
})

// ---------------------------------------------------------------------------------------------------------------

const smith: SireGuest = {
  tipo_documento: "Pasaporte",
  numero_documento: "ab 123456",
  nacionalidad: "US",
  apellido: "Smith Johnson",
  nombre: "John Michael",
  fecha_nacimiento: "1985-03-25",
  pais_procedencia: "US"
}

const input = (guest: Partial<SireGuest> = {}, rest: Partial<SireLineInput> = {}): SireLineInput => ({
  hotelCode: "12345",
  cityCode: "88001",
  guest: { ...smith, ...guest },
  movement: "E",
  date: "2026-12-20",
  ...rest
})

const line = (i: SireLineInput) => Either.getOrThrowWith(sireLine(ref, i), (problem) => new Error(problem.message))
const problem = (i: SireLineInput) =>
  Either.match(sireLine(ref, i), {
    onLeft: (p) => p,
    onRight: (l) => {
      throw new Error(`expected a problem, got ${JSON.stringify(l)}`)
    }
  })

describe("sireLine: the 13 columns of notes §2.3", () => {
  test("a passport holder from the US", () => {
    expect(line(input())).toBe(
      "12345\t88001\t3\tAB123456\t249\tSMITH\tJOHNSON\tJOHN MICHAEL\tE\t20/12/2026\t249\t169\t25/03/1985"
    )
    // The guide's column count as the fake SIRE's own table writes it down (C11), not our constant.
    expect(SIRE_COLUMNS).toBe(COLUMNS)
    expect(line(input()).split("\t")).toHaveLength(COLUMNS)
  })

  test("a single surname leaves column 7 empty, the column kept", () => {
    const l = line(input({ nacionalidad: "BR", apellido: "Silva", nombre: "María Clara", pais_procedencia: "BR", numero_documento: "CD9876543", fecha_nacimiento: "1990-07-10" }))
    expect(l).toBe("12345\t88001\t3\tCD9876543\t105\tSILVA\t\tMARIA CLARA\tE\t20/12/2026\t105\t169\t10/07/1990")
    expect(l.split("\t")).toHaveLength(13)
  })

  test("documents: cédula de extranjería 5, documento extranjero 10, carné diplomático 46, PPT 52", () => {
    const code = (tipo_documento: string) => line(input({ tipo_documento })).split("\t")[2]
    // Each foreign document's code is the one of the fake SIRE's own table (C11; PPT C5, C13).
    for (const [tipo, expected] of Object.entries(DOCUMENT_CODE)) expect(code(tipo)).toBe(expected)
    expect(code("C.E")).toBe("5")
    expect(code("D.E")).toBe("10")
    expect(code("C.D")).toBe("46")
    expect(code("PPT")).toBe("52")
  })

  test("procedencia is the country the guest comes from; without one, the nationality; destino is Colombia", () => {
    const columns = line(input({ nacionalidad: "VE", pais_procedencia: "EC", apellido: "de la Cruz Pérez", nombre: "Ana" })).split("\t")
    expect(columns.slice(4, 13)).toEqual(["850", "DE LA CRUZ", "PEREZ", "ANA", "E", "20/12/2026", "239", "169", "25/03/1985"])
    const noOrigin = line(input({ nacionalidad: "AR", pais_procedencia: null })).split("\t")
    expect([noOrigin[4], noOrigin[10], noOrigin[11]]).toEqual(["63", "63", "169"])
  })

  test("no pais_procedencia: where the guest lives, else the nationality (C4's order)", () => {
    const fromHome = line(input({ nacionalidad: "AR", pais_procedencia: null, pais_residencia: "ES" })).split("\t")
    expect([fromHome[4], fromHome[10], fromHome[11]]).toEqual(["63", "245", "169"])
  })

  test("accents, ñ and stray whitespace never reach the file", () => {
    const l = line(input({ apellido: " Ibáñez\tMuñoz ", nombre: "Zoë\nÑusta" }))
    expect(l.split("\t").slice(5, 8)).toEqual(["IBANEZ", "MUNOZ", "ZOE NUSTA"])
    expect(l).toMatch(/^[\x20-\x7E\t]*$/)
  })
})

describe("sireLine: what cannot be mapped is a problem naming the field, never a guessed code", () => {
  test("an unmapped nationality (no source has South Sudan)", () => {
    expect(problem(input({ nacionalidad: "SS" }))).toEqual({
      field: "nacionalidad",
      value: "SS",
      message: 'no SIRE country code for "SS" in the reference data (countries 2026-11-25); a code is never guessed'
    })
  })

  test("with a path, the field is the guest's path", () => {
    expect(problem(input({ nacionalidad: "SS" }, { path: "guests[2]" })).field).toBe("guests[2].nacionalidad")
  })

  test("an unmapped pais_procedencia is a problem, not a fallback to the nationality", () => {
    expect(problem(input({ pais_procedencia: "SX" }))).toMatchObject({ field: "pais_procedencia", value: "SX" })
  })

  test("a Colombian document (no SIRE code) and an unknown document type", () => {
    expect(problem(input({ tipo_documento: "C.C" }))).toMatchObject({ field: "tipo_documento", value: "C.C" })
    expect(problem(input({ tipo_documento: "PEP" })).message).toContain("no SIRE document code")
  })

  test("a missing or malformed birth date", () => {
    expect(problem(input({ fecha_nacimiento: null }))).toEqual({
      field: "fecha_nacimiento",
      value: null,
      message: "SIRE needs the date of birth"
    })
    expect(problem(input({ fecha_nacimiento: "1985-02-30" }))).toMatchObject({ field: "fecha_nacimiento", value: "1985-02-30" })
  })

  test("names with no writable letters, an empty document number, non-digit property codes", () => {
    expect(problem(input({ apellido: "王" })).field).toBe("apellido")
    expect(problem(input({ nombre: "小明" })).field).toBe("nombre")
    expect(problem(input({ numero_documento: "--" })).field).toBe("numero_documento")
    expect(problem(input({}, { hotelCode: "H-1" })).field).toBe("sire_hotel_code")
    expect(problem(input({}, { cityCode: "" })).field).toBe("sire_city_code")
  })

  test("sireProblems lists every problem in column order; sireLine returns the first", () => {
    const bad = input({ tipo_documento: "C.C", nacionalidad: "SS", fecha_nacimiento: null }, { path: "guests[0]" })
    expect(sireProblems(ref, bad).map((p) => p.field)).toEqual([
      "guests[0].tipo_documento",
      "guests[0].nacionalidad",
      "guests[0].fecha_nacimiento"
    ])
    expect(problem(bad).field).toBe("guests[0].tipo_documento")
    expect(sireProblems(ref, input())).toEqual([])
  })

  test("a country confirmed in an override is written", () => {
    const confirmed = makeSync(undefined, { countries: { SS: "760" } })
    expect(Either.getOrThrow(sireLine(confirmed, input({ nacionalidad: "SS", pais_procedencia: "SS" }))).split("\t")[4]).toBe("760")
  })

  test("Russia and the other countries the sources disagree on are written with C12's code (countries.json rule)", () => {
    expect(line(input({ nacionalidad: "RU", pais_procedencia: "RU" })).split("\t")[4]).toBe("673")
    expect(line(input({ nacionalidad: "NG", pais_procedencia: "NG" })).split("\t")[4]).toBe("525")
  })

  test("a malformed movement date is a bug, thrown", () => {
    expect(() => sireLine(ref, input({}, { date: "20/12/2026" }))).toThrow(RangeError)
  })
})

describe("sireLine: procedencia and destino (SIRE_PLACES, notes §2.4)", () => {
  const traveller = { nacionalidad: "VE", pais_procedencia: "EC", pais_residencia: "ES" } as const
  const places = (movement: "E" | "S", mode?: "countries" | "cities") =>
    line(input(traveller, { movement, date: movement === "E" ? "2026-12-20" : "2026-12-24", ...(mode ? { places: mode } : {}) }))
      .split("\t").slice(8, 12)

  test("countries (default; C13, C3's portal form): the trip, the same on both lines — origin country → Colombia", () => {
    expect(places("E")).toEqual(["E", "20/12/2026", "239", "169"])
    expect(places("S")).toEqual(["S", "24/12/2026", "239", "169"])
    expect(places("S", "countries")).toEqual(places("S"))
  })

  test("cities (C4): the hotel's city at the Colombian end, following the movement; an exit goes home", () => {
    expect(places("E", "cities")).toEqual(["E", "20/12/2026", "239", "88001"])
    expect(places("S", "cities")).toEqual(["S", "24/12/2026", "88001", "245"])
  })

  test("cities: an exit without a residence goes to the nationality; an unmapped residence is a problem", () => {
    const exit = line(input({ nacionalidad: "VE", pais_residencia: null }, { movement: "S", places: "cities" })).split("\t")
    expect([exit[10], exit[11]]).toEqual(["88001", "850"])
    expect(problem(input({ pais_residencia: "SS" }, { movement: "S", places: "cities" })))
      .toMatchObject({ field: "pais_residencia", value: "SS" })
  })
})

describe("sireFile", () => {
  test("lines joined with CRLF, a CRLF after the last line, no header", () => {
    const a = line(input())
    const b = line(input({ apellido: "Silva", numero_documento: "X1" }))
    const file = sireFile([a, b])
    expect(file).toBe(`${a}\r\n${b}\r\n`)
    expect(file.split("\r\n")).toEqual([a, b, ""])
    expect(file.replaceAll("\r\n", "")).not.toMatch(/[\r\n]/)
    expect(sireFile([])).toBe("")
  })
})
