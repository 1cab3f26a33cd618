import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "./fakeTra.ts"
import { type FakeSire, startFakeSire } from "./fakeSire.ts"
import { C4_COUNTRIES, COUNTRY_CODE, DOCUMENT_CODE, NO_SOURCE, OTHER_DOCUMENT_CODES } from "./authority/sire-codes.ts"
import { DOCUMENT_LABEL } from "./authority/tra-fields.ts"

/**
 * The fakes reject what the real services would (issue 15 item 4), proven by sending bad bodies and files to
 * them directly over HTTP — no code of `src/` involved. Each rule is the one written down from the public sources
 * in `./authority/`.
 */

// A `/one/` body as the sources write it (C2's construirPayloadPrincipal, C3, C8): all 15 fields, all strings.
const one = {
  tipo_identificacion: "Pasaporte",
  numero_identificacion: "X1234567",
  nombres: "John",
  apellidos: "Smith",
  cuidad_residencia: "Miami",
  cuidad_procedencia: "Bogotá",
  numero_habitacion: "304",
  motivo: "Vacaciones, recreo y ocio",
  numero_acompanantes: "1",
  check_in: "2026-12-20",
  check_out: "2026-12-23",
  tipo_acomodacion: "Doble",
  costo: "900000",
  nombre_establecimiento: "Hotel Casa Bahía",
  rnt_establecimiento: "123456"
} as const

const two = (padre: string) => ({
  tipo_identificacion: "C.C",
  numero_identificacion: "1020304050",
  nombres: "Ana",
  apellidos: "Pérez",
  cuidad_residencia: "Medellín",
  cuidad_procedencia: "Bogotá",
  numero_habitacion: "304",
  check_in: "2026-12-20",
  check_out: "2026-12-23",
  padre
})

describe("fake TRA", () => {
  let tra: FakeTra
  beforeAll(() => {
    tra = startFakeTra()
  })
  afterAll(() => tra.stop())
  beforeEach(() => tra.reset())

  const post = async (path: "/one/" | "/two/", body: unknown) => {
    const response = await fetch(`${tra.url}${path}`, {
      method: "POST",
      headers: { authorization: `Token ${DEFAULT_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: await response.json() as Record<string, unknown> }
  }

  test("accepts the sources' body with 201 {code}, and a companion linked to it", async () => {
    const main = await post("/one/", one)
    expect(main).toEqual({ status: 201, body: { code: 1001 } })
    expect(await post("/two/", two("1001"))).toEqual({ status: 201, body: { code: 1002 } })
  })

  test("a wrong field name: ciudad_ is unknown and leaves cuidad_ missing (400, DRF shape)", async () => {
    const { cuidad_residencia, ...rest } = one
    const answer = await post("/one/", { ...rest, ciudad_residencia: cuidad_residencia })
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual({
      ciudad_residencia: ["Campo desconocido."],
      cuidad_residencia: ["Este campo es requerido."]
    })
  })

  test("an unknown extra field and a missing one, every failing field listed", async () => {
    const { motivo: _, ...withoutMotivo } = one
    const answer = await post("/one/", { ...withoutMotivo, nacionalidad: "US" })
    expect(answer.status).toBe(400)
    expect(Object.keys(answer.body).sort()).toEqual(["motivo", "nacionalidad"])
  })

  test("a companion body on /one/ (padre is not a /one/ field; motivo, costo… are missing)", async () => {
    const answer = await post("/one/", two("1"))
    expect(answer.status).toBe(400)
    expect(answer.body).toHaveProperty("padre")
    expect(answer.body).toHaveProperty("motivo")
  })

  test("an unknown label: one no source sends, or another source's label for a document (one label per document)", async () => {
    // C4's undotted labels and the labels of documents the spec does not have are no document's label here.
    for (const label of ["C.D", "Passport", "pasaporte", "D.E", "CC", "CE", "TI", "PA", "DE", "P.E.P", "PEP", "NIT"]) {
      const answer = await post("/one/", { ...one, tipo_identificacion: label })
      expect([label, answer.status]).toEqual([label, 400])
      expect(Object.keys(answer.body)).toEqual(["tipo_identificacion"])
    }
    for (const label of Object.values(DOCUMENT_LABEL)) {
      expect([label, (await post("/one/", { ...one, tipo_identificacion: label })).status]).toEqual([label, 201])
    }
  })

  test("a known guest: the label of the document they showed, not another plausible label", async () => {
    // C8 sends a documento extranjero as "Pasaporte": a valid label, but not this guest's document.
    tra.guests.set(one.numero_identificacion, "D.E")
    const wrong = await post("/one/", { ...one, tipo_identificacion: "Pasaporte" })
    expect(wrong).toEqual({
      status: 400,
      body: { tipo_identificacion: ["Pasaporte no es el tipo de documento de X1234567 (D.E: D.N.I)."] }
    })
    expect((await post("/one/", { ...one, tipo_identificacion: "D.N.I" })).status).toBe(201)
    // Every document of the table, on /one/ and /two/: its own label passes, any other document's label fails.
    tra.guests.delete(one.numero_identificacion)
    const main = (await post("/one/", one)).body.code as number
    for (const [tipo, label] of Object.entries(DOCUMENT_LABEL)) {
      tra.guests.set("5550001", tipo)
      const companion = (tipo_identificacion: string) =>
        post("/two/", { ...two(String(main)), numero_identificacion: "5550001", tipo_identificacion })
      expect([tipo, (await companion(label)).status]).toEqual([tipo, 201])
      for (const other of new Set(Object.values(DOCUMENT_LABEL))) {
        if (other !== label) expect([tipo, other, (await companion(other)).status]).toEqual([tipo, other, 400])
      }
    }
  })

  test("a date in the wrong format, or not a real date", async () => {
    for (const check_in of ["20/12/2026", "2026-12-20T00:00:00Z", "2026-02-30", ""]) {
      const answer = await post("/one/", { ...one, check_in })
      expect(answer.status).toBe(400)
      expect(answer.body).toHaveProperty("check_in")
    }
    const backwards = await post("/one/", { ...one, check_out: "2026-12-19" })
    expect(backwards).toEqual({
      status: 400,
      body: { check_out: ["La fecha de salida debe ser posterior a la de llegada."] }
    })
  })

  test("a blank required value; a blank room number is not one (C8 sends it as it comes)", async () => {
    const required = ["tipo_identificacion", "numero_identificacion", "nombres", "cuidad_residencia", "rnt_establecimiento"]
    for (const field of required) {
      const answer = await post("/one/", { ...one, [field]: " " })
      expect(answer.status).toBe(400)
      expect(answer.body).toHaveProperty(field)
    }
    expect((await post("/one/", { ...one, numero_habitacion: "" })).status).toBe(201)
  })

  test("digits where the sources send digits; strings only", async () => {
    expect((await post("/one/", { ...one, costo: "900000.50" })).body).toHaveProperty("costo")
    expect((await post("/one/", { ...one, numero_acompanantes: "uno" })).body).toHaveProperty("numero_acompanantes")
    expect((await post("/one/", { ...one, costo: 900000 })).body).toEqual({ costo: ["Not a valid string."] })
  })

  test("a companion whose padre was never issued", async () => {
    expect(await post("/two/", two("4242"))).toEqual({
      status: 400,
      body: { padre: ['Clave primaria "4242" inválida - objeto no existe.'] }
    })
  })

  test("no token, or an unknown one: 401 {detail}", async () => {
    const response = await fetch(`${tra.url}/one/`, {
      method: "POST",
      headers: { authorization: "Token not-a-known-token", "content-type": "application/json" },
      body: JSON.stringify(one)
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({ detail: "Token inválido." })
  })
})

describe("fake SIRE gateway", () => {
  let sire: FakeSire
  beforeAll(() => {
    sire = startFakeSire()
  })
  afterAll(() => sire.stop())
  beforeEach(() => sire.reset())

  // A line as the guide (C11) and C13 write it: US passport holder, entry, 249 → 169.
  const good = [
    "12345", "88001", "3", "AB123456", "249", "SMITH", "JOHNSON", "JOHN MICHAEL", "E", "20/12/2026", "249", "169",
    "25/03/1985"
  ]
  const withColumn = (index: number, value: string) => good.map((column, i) => i === index ? value : column)

  interface Answer {
    readonly processed: number
    readonly valid: number
    readonly invalid: number
    readonly errors: ReadonlyArray<{ readonly line: number; readonly message: string }>
  }
  const headers = { "x-sire-hotel-code": "12345", "x-sire-city-code": "88001" }

  const upload = async (lines: ReadonlyArray<ReadonlyArray<string>>) => {
    const response = await fetch(sire.url, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8", ...headers },
      body: lines.map((line) => `${line.join("\t")}\r\n`).join("")
    })
    return { status: response.status, body: await response.json() as Answer }
  }

  /** Uploads `good` then `bad`; the answer must refuse line 2 only, saying `reason`. */
  const refused = async (bad: ReadonlyArray<string>, reason: string | RegExp) => {
    const answer = await upload([good, bad])
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ processed: 2, valid: 1, invalid: 1 })
    expect(answer.body.errors).toHaveLength(1)
    expect(answer.body.errors[0]!.line).toBe(2)
    expect(answer.body.errors[0]!.message).toMatch(reason)
  }

  test("accepts the guide's line, a single surname (column 7 blank) and an exit with the hotel's city (C4)", async () => {
    const exit = [
      "12345", "88001", "5", "E998877", "850", "PEREZ", "", "ANA", "S", "23/12/2026", "88001", "850", "01/01/1990"
    ]
    expect(await upload([good, exit])).toEqual({ status: 200, body: { processed: 2, valid: 2, invalid: 0, errors: [] } })
  })

  test("a missing column, and one too many", async () => {
    await refused(good.slice(0, 12), "expected 13 TAB-separated columns, got 12")
    await refused([...good, "X"], "got 14")
  })

  test("an unknown code: a document no source lists, an ISO numeric country, a padded one", async () => {
    await refused(withColumn(2, "1"), "unknown document type 1")
    await refused(withColumn(4, "840"), "unknown nationality 840")
    await refused(withColumn(10, "023"), "unknown procedencia 023")
    await refused(withColumn(11, "11001"), "unknown destino 11001") // a city that is not the hotel's
  })

  test("a date in the wrong format", async () => {
    await refused(withColumn(9, "2026-12-20"), "movement date must be dd/mm/yyyy")
    await refused(withColumn(12, "1985/03/25"), "birth date must be dd/mm/yyyy") // C5's never-sent sample format
    await refused(withColumn(12, "30/02/1985"), "birth date must be dd/mm/yyyy")
  })

  test("a blank required value (every column but the second surname)", async () => {
    await refused(withColumn(3, ""), "column 4 (número de identificación) is blank")
    await refused(withColumn(7, ""), "column 8 (nombre) is blank")
    await refused(withColumn(11, ""), "column 12 (lugar de destino) is blank")
  })

  test("letters where the guide says letters, E or S, the hotel's own codes", async () => {
    await refused(withColumn(5, "Smith"), "first surname must be upper-case letters")
    await refused(withColumn(8, "X"), "movement must be E or S")
    await refused(withColumn(0, "99999"), "hotel code")
  })

  /** `good` with a traveller's document number, document code and nationality code. */
  const about = (number: string, document: string, nationality: string) =>
    good.map((column, i) => i === 3 ? number : i === 2 ? document : i === 4 ? nationality : column)

  test("one code per country: Niger's code sent for a Nigerian is refused, Nigeria's accepted", async () => {
    sire.traveller("NG1234567", { nationality: "NG", document: "Pasaporte" })
    // C4 (the DIAN table) swaps them: 528 is Nigeria's there, Niger's in Migración's list (C12, C13, C14).
    await refused(about("NG1234567", "3", "528"), "nationality 528 is not the code of NG (525) for document NG1234567")
    expect((await upload([good, about("NG1234567", "3", "525")])).body).toMatchObject({ valid: 2, invalid: 0 })
  })

  test("every country the sources disagree on: the other source's code is refused for it", async () => {
    const conflicts = Object.keys(COUNTRY_CODE).filter((iso) =>
      C4_COUNTRIES[iso] !== undefined && String(Number(C4_COUNTRIES[iso])) !== COUNTRY_CODE[iso]
    )
    expect(conflicts).toHaveLength(77)
    const lines = conflicts.map((iso, i) => {
      sire.traveller(`P${i}`, { nationality: iso })
      return about(`P${i}`, "3", String(Number(C4_COUNTRIES[iso])))
    })
    const answer = await upload(lines)
    expect(answer.body).toMatchObject({ processed: 77, valid: 0, invalid: 77 })
    // The same travellers with the code of the fake's table pass.
    const right = await upload(conflicts.map((iso, i) => about(`P${i}`, "3", COUNTRY_CODE[iso]!)))
    expect(right.body).toMatchObject({ processed: 77, valid: 77, invalid: 0 })
  })

  test("a code no country has in the table (Russia's DIAN 676) is refused even for an unknown traveller", async () => {
    await refused(withColumn(4, "676"), "unknown nationality 676")
    await refused(withColumn(10, "921"), "unknown procedencia 921") // ANTILLAS HOLANDESAS: no ISO country
  })

  test("a country no source has a code for: whatever code is sent is refused", async () => {
    for (const iso of NO_SOURCE) {
      sire.traveller("SS998877", { nationality: iso })
      await refused(about("SS998877", "3", "759"), `nationality 759 is not the code of ${iso} (no code)`)
    }
  })

  test("one code per document: PPT's other code and PEP's are refused; a known traveller's document must match", async () => {
    for (const code of Object.values(OTHER_DOCUMENT_CODES)) await refused(withColumn(2, code), `unknown document type ${code}`)
    sire.traveller("DE445566", { nationality: "AR", document: "D.E" })
    await refused(about("DE445566", "3", "63"), "document type 3 is not the code of D.E (10)")
    for (const [tipo, code] of Object.entries(DOCUMENT_CODE)) {
      sire.traveller("DOC1", { nationality: "AR", document: tipo })
      expect((await upload([about("DOC1", code, "63")])).body).toMatchObject({ valid: 1, invalid: 0 })
    }
  })

  test("a file without CRLF line ends, or sent as something else than text", async () => {
    const bare = await fetch(sire.url, {
      method: "POST",
      headers: { "content-type": "text/plain", ...headers },
      body: good.join("\t")
    })
    expect((await bare.json() as { errors: Array<{ message: string }> }).errors[0]!.message).toContain("CRLF")
    const json = await fetch(sire.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: "{}"
    })
    expect(json.status).toBe(400)
  })
})
