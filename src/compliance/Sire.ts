import { Either } from "effect"
import type { ReferenceData } from "./ReferenceData.ts"

/**
 * The SIRE upload file (Migración Colombia), pure: domain notes §2.3 and §6.3, design §6.13. One line per
 * movement, 13 TAB-separated columns in strict order, CRLF line ends, no header (C11, the guide "PASOS PARA
 * REPORTAR LA INFORMACIÓN MEDIANTE ARCHIVO"; C4 for CRLF, upper-case ASCII and the document number without
 * spaces). Every code comes from the reference data; a value without a code is a `SireMappingProblem`, so that
 * movement waits with a warning and is never sent with a guessed code.
 */

/** The guest data one line needs (a `GuestInput` as stored). */
export interface SireGuest {
  readonly tipo_documento: string
  readonly numero_documento: string
  /** ISO 3166-1 alpha-2. */
  readonly nacionalidad: string
  readonly apellido: string
  readonly nombre: string
  /** `YYYY-MM-DD`. */
  readonly fecha_nacimiento: string | null
  /** ISO 3166-1 alpha-2. */
  readonly pais_procedencia: string | null
  /** ISO 3166-1 alpha-2: where the guest lives (the origin when none is given; an exit's destino in `cities`). */
  readonly pais_residencia?: string | null
}

/** A registered guest as its SIRE line reads it: a live run, the simulated SIRE and the validate endpoint alike. */
export const sireGuest = (
  guest: Omit<SireGuest, "nacionalidad" | "pais_residencia"> & {
    readonly nacionalidad: string | null
    readonly pais_residencia: string | null
  }
): SireGuest => ({
  tipo_documento: guest.tipo_documento,
  numero_documento: guest.numero_documento,
  nacionalidad: guest.nacionalidad ?? "",
  apellido: guest.apellido,
  nombre: guest.nombre,
  fecha_nacimiento: guest.fecha_nacimiento,
  pais_procedencia: guest.pais_procedencia,
  pais_residencia: guest.pais_residencia
})

/**
 * How columns 11–12 (procedencia, destino) are written (design §6.8; notes §2.4 "Procedencia / destino",
 * [CONFLICT]); chosen per deployment (`SIRE_PLACES`):
 * - `countries` (default; the notes' recommendation): both are SIRE country codes and describe the guest's trip,
 *   the same on the E and the S line — procedencia the country the guest came from, destino Colombia (169). So do
 *   C13 (sire_converter.py: procedencia from the data or the nationality, destino 169 by default, whatever the
 *   movement), C3's SIRE portal form (one record per guest, `paisProcedencia`/`paisProximoDestino`, for entrada
 *   and salida alike; its fixture sends 249 → 169) and C12's documentation (before and after the hotel).
 * - `cities` (C4, services/sire.py `build_row`): the Colombian end is the hotel's city code and the places follow
 *   the movement — E: the guest's country → the hotel's city; S: the hotel's city → the guest's home country
 *   (residence, else nationality), which is C4's guess when no destination was typed.
 * The API asks neither for the next destination nor for a city code of where the guest came from, so C12's
 * DIVIPOLA codes of the guest's own previous and next cities (its real filled-in template) cannot be written.
 */
export type SirePlaces = "countries" | "cities"

export interface SireLineInput {
  /** The establishment's SIRE code (assigned on enrolment in SCH/SIRE, C11): digits. */
  readonly hotelCode: string
  /** The code of the hotel's city (DANE DIVIPOLA in practice, notes §2.4): digits, written as configured. */
  readonly cityCode: string
  readonly guest: SireGuest
  /** `E` (entry, on check-in) or `S` (exit, on check-out or an earlier cancellation; design §6.8). */
  readonly movement: "E" | "S"
  /** The movement date, `YYYY-MM-DD` (the check-in date for an entry, the exit's date for an exit). */
  readonly date: string
  /** Default `countries`. */
  readonly places?: SirePlaces
  /** Prefix of `SireMappingProblem.field`, e.g. `guests[2]`; without it the field is the plain field name. */
  readonly path?: string | undefined
}

/** Why a guest's line cannot be written: the field (`guests[1].nacionalidad` or `nacionalidad`) and its value. */
export interface SireMappingProblem {
  readonly field: string
  readonly value: string | null
  readonly message: string
}

/** The property's SIRE setting without which no line can be written (a live run and the validate endpoint alike). */
export const sireCityCodeMissing = "the property has no SIRE city code; configure it so the SIRE report can be sent"

/** How a report's warning names a guest whose line cannot be written (a live run and the simulated SIRE alike). */
export const mappingWarning = (position: number, problem: SireMappingProblem) =>
  `SIRE cannot map guests[${position}].${problem.field.replace(/^.*\./, "")}: ${problem.message}`

/** Columns per line (notes §2.3: C11 and C13 use 13; C4's 12-column default merges the surnames). */
export const SIRE_COLUMNS = 13

/** Colombia: destino of every line with `SIRE_PLACES=countries` (see `SirePlaces`). */
const COLOMBIA = "CO"

// ---------------------------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------------------------

/**
 * Letters that Unicode decomposition (NFKD) does not reduce to ASCII, written the way ICAO Doc 9303 transliterates
 * them for the machine-readable zone of a passport (the document the SIRE guide, C11, says to copy from).
 */
const TRANSLITERATION: Readonly<Record<string, string>> = {
  "ß": "SS",
  "ẞ": "SS",
  "Æ": "AE",
  "æ": "AE",
  "Œ": "OE",
  "œ": "OE",
  "Ø": "O",
  "ø": "O",
  "Ł": "L",
  "ł": "L",
  "Đ": "D",
  "đ": "D",
  "Ð": "D",
  "ð": "D",
  "Þ": "TH",
  "þ": "TH",
  "Ħ": "H",
  "ħ": "H",
  "ı": "I",
  "ĸ": "K",
  "Ŋ": "N",
  "ŋ": "N",
  // Typographic apostrophes, so that `sireName` can drop them like the ASCII one.
  "’": "'",
  "‘": "'",
  "ʼ": "'",
  "´": "'"
}

/**
 * Text as the SIRE file takes it: upper-case ASCII without accents (Ñ → N, Ü → U, ß → SS), no TAB, CR or LF
 * (they would break the columns and lines), spaces collapsed, trimmed. Characters with no ASCII form (other
 * scripts, symbols) are dropped.
 */
export const sireText = (value: string): string =>
  value
    .normalize("NFKD") // "Ñ" → "N" + combining tilde; also ligatures and full-width forms → ASCII
    .replace(/\p{M}/gu, "")
    .replace(/[^\x00-\x7F]/g, (char) => TRANSLITERATION[char] ?? (/\s/.test(char) ? " " : ""))
    .replace(/[\x00-\x20\x7F]+/g, " ") // TAB, CR, LF and every other control character become a space
    .toUpperCase()
    .replace(/ +/g, " ")
    .trim()

/**
 * A name column (surnames, names): "solamente letras" (C11). As in a passport's MRZ (ICAO 9303), an apostrophe
 * is dropped (O'Connor → OCONNOR) and a hyphen or any other non-letter becomes a space (Smith-Jones → SMITH JONES).
 */
export const sireName = (value: string): string =>
  sireText(value).replace(/'/g, "").replace(/[^A-Z ]/g, " ").replace(/ +/g, " ").trim()

/** Column 4: alphanumeric, "sin guiones ni espacios" (C4, C12): only A–Z and 0–9 are kept. */
export const sireDocumentNumber = (value: string): string => sireText(value).replace(/[^A-Z0-9]/g, "")

// ---------------------------------------------------------------------------------------------------------------
// Surnames
// ---------------------------------------------------------------------------------------------------------------

/**
 * Words that begin a surname rather than being one (design §6.13): Spanish (de, del, de la, de las, de los, la,
 * las, los, y, san, santa), Portuguese (da, das, do, dos, e), Italian (di, della, delle, dei, degli, dello), French
 * (du, des, le), Dutch (van, van der, van den, ter, ten, te), German (von, zu, zum, zur), Arabic (al, el, bin,
 * bint, ben, ibn, abu, abd). Left out on purpose because they are common surnames on their own: LI and LO (Chinese).
 * A particle alone (`Le`, `Do`) is still a whole surname.
 */
export const PARTICLES: ReadonlySet<string> = new Set([
  "DE", "DEL", "LA", "LAS", "LOS", "Y", "SAN", "SANTA",
  "DA", "DAS", "DO", "DOS", "E",
  "DI", "DELLA", "DELLE", "DEI", "DEGLI", "DELLO",
  "DU", "DES", "LE",
  "VAN", "DER", "DEN", "TER", "TEN", "TE",
  "VON", "ZU", "ZUM", "ZUR",
  "AL", "EL", "BIN", "BINT", "BEN", "IBN", "ABU", "ABD"
])

/** A word that binds to the next one: a particle, or an elided one written apart (`D' Angelo`). */
const binds = (word: string): boolean => PARTICLES.has(sireName(word)) || word.endsWith("'")

/**
 * Splits `apellido` into the first and second surname of SIRE columns 6 and 7 (design §6.13): the first surname
 * is its leading particles plus the next word, the second is the rest (empty when there is none). A hyphen keeps
 * a compound surname whole: `Pérez-Reverte Gutiérrez` → `["PEREZ REVERTE", "GUTIERREZ"]`;
 * `de la Cruz Pérez` → `["DE LA CRUZ", "PEREZ"]`; `Ortega y Gasset` → `["ORTEGA", "Y GASSET"]`.
 * Both parts are `sireName` text.
 */
export const splitSurnames = (apellido: string): readonly [first: string, second: string] => {
  // Words with at least one letter: a stray "-" between surnames is not a word.
  const words = sireText(apellido).split(" ").filter((word) => /[A-Z]/.test(word))
  let end = 0
  while (end < words.length - 1 && binds(words[end]!)) end++
  return [sireName(words.slice(0, end + 1).join(" ")), sireName(words.slice(end + 1).join(" "))]
}

// ---------------------------------------------------------------------------------------------------------------
// Dates
// ---------------------------------------------------------------------------------------------------------------

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** `dd/mm/yyyy` of a real calendar date `YYYY-MM-DD`, else undefined. */
const toSireDate = (date: string): string | undefined => {
  const match = ISO_DATE.exec(date)
  if (match === null) return undefined
  const [, year, month, day] = match
  const parsed = new Date(`${date}T00:00:00Z`)
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date) return undefined
  return `${day}/${month}/${year}`
}

/**
 * `"2026-12-20"` → `"20/12/2026"`: the date format of columns 10 and 13 (C11, C13, C4, C3, C12; notes §2.3).
 * Throws a `RangeError` for anything but a real `YYYY-MM-DD` date.
 */
export const sireDate = (date: string): string => {
  const formatted = toSireDate(date)
  if (formatted === undefined) throw new RangeError(`sireDate: expected a YYYY-MM-DD date, got ${JSON.stringify(date)}`)
  return formatted
}

// ---------------------------------------------------------------------------------------------------------------
// Lines and files
// ---------------------------------------------------------------------------------------------------------------

const DIGITS = /^\d+$/

const unmapped = (what: "country" | "document", value: string, table: string) =>
  `no SIRE ${what} code for ${JSON.stringify(value)} in the reference data (${table}); a code is never guessed`

/** The columns of one line, or every reason it cannot be written (in column order). */
const render = (
  ref: ReferenceData,
  input: SireLineInput
): Either.Either<ReadonlyArray<string>, ReadonlyArray<SireMappingProblem>> => {
  const { guest } = input
  const problems: Array<SireMappingProblem> = []
  const field = (name: string) => input.path === undefined ? name : `${input.path}.${name}`
  const problem = (name: string, value: string | null, message: string) =>
    problems.push({ field: field(name), value, message })

  if (!DIGITS.test(input.hotelCode)) {
    problem("sire_hotel_code", input.hotelCode, "the property's SIRE hotel code must be digits")
  }
  if (!DIGITS.test(input.cityCode)) {
    problem("sire_city_code", input.cityCode, "the property's SIRE city code must be digits")
  }

  const documentCode = ref.sireDocument(guest.tipo_documento)
  if (documentCode === undefined) {
    const why = unmapped("document", guest.tipo_documento, `documents ${ref.versions.documents}`)
    problem("tipo_documento", guest.tipo_documento, why)
  }
  const number = sireDocumentNumber(guest.numero_documento)
  if (number === "") problem("numero_documento", guest.numero_documento, "the document number has no letters or digits")

  const countryCode = (name: string, iso: string) => {
    const code = ref.sireCountry(iso)
    if (code === undefined) {
      problem(name, iso, unmapped("country", iso, `countries ${ref.versions.countries}`))
    }
    return code
  }
  const nationality = countryCode("nacionalidad", guest.nacionalidad)

  const [firstSurname, secondSurname] = splitSurnames(guest.apellido)
  if (firstSurname === "") {
    problem("apellido", guest.apellido, "the surname has no letters that can be written in ASCII")
  }
  const names = sireName(guest.nombre)
  if (names === "") problem("nombre", guest.nombre, "the name has no letters that can be written in ASCII")

  const movementDate = toSireDate(input.date)
  // The movement date comes from the reservation, never from the guest: a malformed one is a bug.
  if (movementDate === undefined) {
    throw new RangeError(`sireLine: expected a YYYY-MM-DD date, got ${JSON.stringify(input.date)}`)
  }

  // Columns 11–12, procedencia and destino (`SirePlaces`). A country without a code is a problem, never a guess.
  const country = (name: "pais_procedencia" | "pais_residencia") => {
    const iso = guest[name]
    return iso === null || iso === undefined || iso.trim() === "" ? undefined : countryCode(name, iso)
  }
  // Where the guest came from: as given, else where they live, else their nationality (C4's order; C13, which
  // has no residence, falls back to the nationality).
  const origin = () => guest.pais_procedencia?.trim() ? country("pais_procedencia") : home()
  // Where a departing guest most likely goes (C4: residence, else nationality).
  const home = () => guest.pais_residencia?.trim() ? country("pais_residencia") : nationality
  const colombia = (name: "procedencia" | "destino") => {
    const code = ref.sireCountry(COLOMBIA)
    if (code === undefined) problem(name, COLOMBIA, unmapped("country", COLOMBIA, `countries ${ref.versions.countries}`))
    return code
  }
  const [procedencia, destino] = input.places === "cities"
    ? input.movement === "E" ? [origin(), input.cityCode] : [input.cityCode, home()]
    : [origin(), colombia("destino")]

  const birth = guest.fecha_nacimiento === null ? undefined : toSireDate(guest.fecha_nacimiento)
  if (birth === undefined) {
    problem(
      "fecha_nacimiento",
      guest.fecha_nacimiento,
      guest.fecha_nacimiento === null
        ? "SIRE needs the date of birth"
        : "the date of birth is not a YYYY-MM-DD date"
    )
  }

  if (problems.length > 0) return Either.left(problems)
  return Either.right([
    input.hotelCode,
    input.cityCode,
    documentCode!,
    number,
    nationality!,
    firstSurname,
    secondSurname, // empty when the guest has a single surname: the column stays (C11)
    names,
    input.movement,
    movementDate,
    procedencia!,
    destino!,
    birth!
  ])
}

/** Every reason `input` cannot become a SIRE line, in column order (empty when it can). */
export const sireProblems = (ref: ReferenceData, input: SireLineInput): ReadonlyArray<SireMappingProblem> =>
  Either.match(render(ref, input), { onLeft: (problems) => problems, onRight: () => [] })

/**
 * One line of the SIRE file: the 13 columns of notes §2.3, TAB-separated, without line end. Left: the first
 * problem in column order (`sireProblems` lists them all). The caller selects the guests: only foreign
 * nationals go to SIRE (notes §2.5; `State.isForeign`).
 */
export const sireLine = (ref: ReferenceData, input: SireLineInput): Either.Either<string, SireMappingProblem> =>
  Either.match(render(ref, input), {
    onLeft: (problems) => Either.left(problems[0]!),
    onRight: (columns) => Either.right(columns.join("\t"))
  })

/** The file: every line ended by CRLF (C4; the TXT the guide has Excel save), no header row (C11). */
export const sireFile = (lines: ReadonlyArray<string>): string => lines.map((line) => `${line}\r\n`).join("")
