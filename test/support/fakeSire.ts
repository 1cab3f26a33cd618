import {
  COLUMN_NAMES,
  COLUMNS,
  COUNTRY_CODE,
  DOCUMENT_CODE,
  MAY_BE_BLANK,
  MOVEMENTS
} from "./authority/sire-codes.ts"

/**
 * A local stand-in for the SIRE gateway of design §6.13 (domain notes §6.4 "Fake SIRE"): a real HTTP server
 * (Bun.serve, port 0) that reads the body as a SIRE file and checks it the way the upload would, then answers
 * `{processed, valid, invalid, errors:[{line, message}]}`.
 *
 * Checks: POST to its path; `X-Sire-Hotel-Code` and `X-Sire-City-Code` present and digits; the bearer token when
 * one is configured; a `text/plain` body; CRLF line ends; per line exactly 13 TAB-separated columns, none blank
 * but the second surname, the hotel and city columns equal to the headers, document and country codes from the
 * fake's own tables (`./authority/sire-codes.ts`, written down from the sources — never our own reference data,
 * so a code we map wrongly is caught), one accepted code per country and per document: for a traveller the test
 * has introduced (`traveller(number, …)`: what Migración knows of a passport from the border) the code of that
 * traveller's nationality and document, for anyone else a code the tables give some country or document.
 * Procedencia and destino a country code or the line's own city code (C4), an alphanumeric document number,
 * upper-case letters in the name columns, `E`/`S`, and real `dd/mm/yyyy` dates. A line that fails is listed in
 * `errors` with every reason, as the gateway of design §6.13 answers.
 *
 * Faults are queued, one per coming upload: `"500"`, `"hang"` (never answers), `"401"`, `"403"`, `"400"`,
 * `"garbage"` (200 with a body that is not JSON), `{ rejectLines }` (the gateway refuses those lines with those
 * messages, on top of its own checks) or `{ status, body }` (any answer). Every upload is recorded with its
 * headers (the token redacted), raw text and parsed rows.
 */

export type SireFault =
  | "500"
  | "hang"
  | "401"
  | "403"
  | "400"
  | "garbage"
  | { readonly rejectLines: ReadonlyArray<{ readonly line: number; readonly message: string }> }
  | { readonly status: number; readonly body: string; readonly contentType?: string }

export interface SireAnswer {
  readonly processed: number
  readonly valid: number
  readonly invalid: number
  readonly errors: ReadonlyArray<{ readonly line: number; readonly message: string }>
}

export interface SireUpload {
  readonly method: string
  readonly path: string
  /** Lower-case names; `authorization` reads `Bearer <redacted>` (or `<redacted>` for another scheme). */
  readonly headers: Readonly<Record<string, string>>
  /** How the bearer token compared with the configured one. */
  readonly bearer: "absent" | "valid" | "invalid"
  readonly text: string
  /** The lines split at TAB (lines split at CRLF; a final empty piece after the last CRLF is not a row). */
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
  /** What the fake answered: a status and body, or `hang`. */
  readonly answered: { readonly status: number; readonly body: string } | "hang"
}

export interface FakeSireOptions {
  /** When set, uploads need `Authorization: Bearer <token>`. */
  readonly token?: string
  /** Path of the upload endpoint. Default `/sire/upload`. */
  readonly path?: string
  /** ISO alpha-2 → the one accepted country code. Default: `COUNTRY_CODE` of `./authority/sire-codes.ts`. */
  readonly countries?: Readonly<Record<string, string>>
  /** Spec `tipo_documento` → the one accepted document code. Default: `DOCUMENT_CODE`. */
  readonly documents?: Readonly<Record<string, string>>
}

/** Who a document number belongs to, as the test tells the fake: ISO alpha-2 nationality, spec document type. */
export interface SireTraveller {
  readonly nationality: string
  readonly document?: string
}

export interface FakeSire {
  readonly url: string
  readonly uploads: ReadonlyArray<SireUpload>
  /** The last upload; throws when there is none. */
  readonly last: () => SireUpload
  /** Queues faults, one per coming upload. */
  readonly fail: (...faults: ReadonlyArray<SireFault>) => void
  /** Queues a fault refusing line `line` of the next upload with `message`. */
  readonly rejectLine: (line: number, message: string) => void
  /**
   * Introduces a traveller: a line whose document number (column 4, as the file writes it) is `number` must carry
   * the code of `nationality` in column 5 and, when given, of `document` in column 3.
   */
  readonly traveller: (number: string, traveller: SireTraveller) => void
  /** Forgets uploads, queued faults and travellers. */
  readonly reset: () => void
  readonly stop: () => void
}

const DIGITS = /^\d+$/
const NAME = /^[A-Z]+( [A-Z]+)*$/

const isSireDate = (value: string): boolean => {
  const match = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(value)
  if (match === null) return false
  const [, day, month, year] = match
  const iso = `${year}-${month}-${day}`
  const parsed = new Date(`${iso}T00:00:00Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === iso
}

/** The fake's tables, and the codes they give some country or document. */
interface Tables {
  readonly countries: Readonly<Record<string, string>>
  readonly documents: Readonly<Record<string, string>>
  readonly countryCodes: ReadonlySet<string>
  readonly documentCodes: ReadonlySet<string>
  readonly travellers: ReadonlyMap<string, SireTraveller>
}

/** The problems of one line (empty when it is valid). */
const checkLine = (
  columns: ReadonlyArray<string>,
  hotelCode: string,
  cityCode: string,
  tables: Tables
): Array<string> => {
  if (columns.length !== COLUMNS) return [`expected ${COLUMNS} TAB-separated columns, got ${columns.length}`]
  const [hotel, city, document, number, nationality, first, second, names, movement, date, origin, destination, birth] =
    columns as [string, string, string, string, string, string, string, string, string, string, string, string, string]
  const problems: Array<string> = []
  columns.forEach((value, index) => {
    if (value.trim() === "" && !MAY_BE_BLANK.has(index + 1)) {
      problems.push(`column ${index + 1} (${COLUMN_NAMES[index]}) is blank`)
    }
  })
  const code = (name: string, value: string, known: ReadonlySet<string>) => {
    if (value === "") return // said above
    if (!DIGITS.test(value)) problems.push(`${name} must be digits, got ${JSON.stringify(value)}`)
    else if (!known.has(value)) problems.push(`unknown ${name} ${value}`)
  }
  // Procedencia and destino: a country, or the hotel's city (C4 writes the city code at the Colombian end).
  const place = (name: string, value: string) => {
    if (value !== city || value === "") code(name, value, tables.countryCodes)
  }
  // The one code of this traveller's country or document: another country's valid code is a misreport.
  const expected = (name: string, value: string, table: Readonly<Record<string, string>>, key: string | undefined) => {
    if (key === undefined || value === "" || !DIGITS.test(value)) return
    const wanted = Object.hasOwn(table, key) ? table[key] : undefined
    if (value !== wanted) {
      problems.push(`${name} ${value} is not the code of ${key} (${wanted ?? "no code"}) for document ${number}`)
    }
  }
  const traveller = tables.travellers.get(number)
  if (hotel !== "" && hotel !== hotelCode) {
    problems.push(`hotel code ${JSON.stringify(hotel)} differs from the header ${hotelCode}`)
  }
  if (city !== "" && city !== cityCode) problems.push(`city code ${JSON.stringify(city)} differs from the header ${cityCode}`)
  code("document type", document, tables.documentCodes)
  expected("document type", document, tables.documents, traveller?.document)
  if (number !== "" && !/^[A-Z0-9]+$/.test(number)) {
    problems.push(`document number must be upper-case letters and digits, got ${JSON.stringify(number)}`)
  }
  code("nationality", nationality, tables.countryCodes)
  expected("nationality", nationality, tables.countries, traveller?.nationality)
  const letters = (name: string, value: string) => {
    if (value !== "" && !NAME.test(value)) problems.push(`${name} must be upper-case letters, got ${JSON.stringify(value)}`)
  }
  const sireDate = (name: string, value: string) => {
    if (value !== "" && !isSireDate(value)) problems.push(`${name} must be dd/mm/yyyy, got ${JSON.stringify(value)}`)
  }
  letters("first surname", first)
  letters("second surname", second)
  letters("names", names)
  if (movement !== "" && !MOVEMENTS.has(movement)) problems.push(`movement must be E or S, got ${JSON.stringify(movement)}`)
  sireDate("movement date", date)
  place("procedencia", origin)
  place("destino", destination)
  sireDate("birth date", birth)
  return problems
}

const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body), contentType: "application/json" })

/** The app settings that send SIRE files to `sire` as the gateway, with the `token` it was started with. */
export const gatewayEnv = (sire: Pick<FakeSire, "url">, token: string) => ({
  SIRE_MODE: "gateway",
  SIRE_GATEWAY_URL: sire.url,
  SIRE_GATEWAY_TOKEN: token
})

export const startFakeSire = (options: FakeSireOptions = {}): FakeSire => {
  const path = options.path ?? "/sire/upload"
  const countries = options.countries ?? COUNTRY_CODE
  const documents = options.documents ?? DOCUMENT_CODE
  const travellers = new Map<string, SireTraveller>()
  const tables: Tables = {
    countries,
    documents,
    countryCodes: new Set(Object.values(countries)),
    documentCodes: new Set(Object.values(documents)),
    travellers
  }
  const uploads: Array<SireUpload> = []
  const queue: Array<SireFault> = []

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      const url = new URL(request.url)
      if (url.pathname !== path) return Response.json({ detail: "not found" }, { status: 404 })
      if (request.method !== "POST") return Response.json({ detail: "method not allowed" }, { status: 405 })

      const text = await request.text()
      const headers: Record<string, string> = {}
      request.headers.forEach((value, name) => {
        headers[name] = name === "authorization"
          ? value.toLowerCase().startsWith("bearer ") ? "Bearer <redacted>" : "<redacted>"
          : value
      })
      const authorization = request.headers.get("authorization")
      const presented = authorization === null ? undefined : /^Bearer (.+)$/i.exec(authorization)?.[1] ?? ""
      const bearer = presented === undefined ? "absent" : presented === options.token ? "valid" : "invalid"
      const pieces = text.split("\r\n")
      // The piece after the final CRLF is not a line; an empty body has none.
      const rows = text === "" ? [] : (text.endsWith("\r\n") ? pieces.slice(0, -1) : pieces).map((row) => row.split("\t"))

      const record = (answered: SireUpload["answered"]) =>
        uploads.push({ method: request.method, path: url.pathname, headers, bearer, text, rows, answered })
      const reply = (answer: { status: number; body: string; contentType: string }) => {
        record({ status: answer.status, body: answer.body })
        return new Response(answer.body, { status: answer.status, headers: { "content-type": answer.contentType } })
      }

      const fault = queue.shift()
      if (fault === "hang") {
        record("hang")
        return new Promise<Response>(() => {})
      }
      if (fault === "500") return reply(json(500, { detail: "internal error of the fake gateway" }))
      if (fault === "401") return reply(json(401, { detail: "invalid token" }))
      if (fault === "403") return reply(json(403, { detail: "this token may not upload for this hotel" }))
      if (fault === "400") return reply(json(400, { detail: "the portal refused the file" }))
      if (fault === "garbage") return reply({ status: 200, body: "<html>portal session expired</html>", contentType: "text/html" })
      if (typeof fault === "object" && "status" in fault) {
        return reply({ status: fault.status, body: fault.body, contentType: fault.contentType ?? "application/json" })
      }

      if (options.token !== undefined && bearer !== "valid") return reply(json(401, { detail: "invalid token" }))
      const hotelCode = request.headers.get("x-sire-hotel-code")
      const cityCode = request.headers.get("x-sire-city-code")
      if (hotelCode === null || !DIGITS.test(hotelCode)) return reply(json(400, { detail: "X-Sire-Hotel-Code must be digits" }))
      if (cityCode === null || !DIGITS.test(cityCode)) return reply(json(400, { detail: "X-Sire-City-Code must be digits" }))
      if (!(request.headers.get("content-type") ?? "").startsWith("text/plain")) {
        return reply(json(400, { detail: "the file must be sent as text/plain" }))
      }
      if (text === "") return reply(json(400, { detail: "empty file" }))

      const errors = new Map<number, Array<string>>()
      const add = (line: number, message: string) => errors.set(line, [...(errors.get(line) ?? []), message])
      pieces.forEach((piece, index) => {
        const line = index + 1
        if (index === pieces.length - 1) {
          if (piece !== "") add(line, "the last line has no CRLF line end")
          else return
        }
        if (/[\r\n]/.test(piece)) add(line, "a bare CR or LF inside the line (lines must end with CRLF)")
        for (const problem of checkLine(piece.split("\t"), hotelCode, cityCode, tables)) add(line, problem)
      })
      if (typeof fault === "object" && "rejectLines" in fault) {
        for (const { line, message } of fault.rejectLines) add(line, message)
      }
      const processed = rows.length
      const listed = [...errors.entries()].sort(([a], [b]) => a - b).map(([line, messages]) => ({ line, message: messages.join("; ") }))
      const answer: SireAnswer = { processed, valid: processed - listed.length, invalid: listed.length, errors: listed }
      return reply(json(200, answer))
    }
  })

  return {
    url: `http://127.0.0.1:${server.port}${path}`,
    uploads,
    last: () => {
      const upload = uploads.at(-1)
      if (upload === undefined) throw new Error("the fake SIRE gateway has received no upload")
      return upload
    },
    fail: (...faults) => {
      queue.push(...faults)
    },
    rejectLine: (line, message) => {
      queue.push({ rejectLines: [{ line, message }] })
    },
    traveller: (number, traveller) => {
      travellers.set(number, traveller)
    },
    reset: () => {
      uploads.length = 0
      queue.length = 0
      travellers.clear()
    },
    stop: () => {
      server.stop(true)
    }
  }
}
