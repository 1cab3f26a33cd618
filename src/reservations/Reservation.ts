import { Predicate, Schema } from "effect"
import { SingleLineString, singleLine, StoredString } from "../shared/StoredString.ts"
import { isCountryCode } from "./countries.ts"

/**
 * Schemas of endpoints 3–8 (spec "Resources and their fields", constants table, rules 3, 5–8; design §6.2,
 * §6.3, §6.5, §6.7, §6.12). Pure: no I/O, no clock. Request schemas report every failing field
 * (`errors: "all"`), cross-field rules included, each with the path of the field it is about; unknown fields
 * are dropped (Schema's default `onExcessProperty: "ignore"`).
 */

// ---------------------------------------------------------------------------------------------------------
// Limits (spec constants table; design §6.7 for metadata)

export const Limits = {
  externalId: 120,
  source: 50,
  roomNumber: 50,
  guestName: 255,
  guestPhone: 30,
  notes: 2000,
  cancelReason: 500,
  metadataBytes: 4096,
  guestsCountOnModify: 50,
  guestsPerSubmission: 30,
  /** Not in the spec: the PostgreSQL `integer` maximum, so a count can never overflow a column (a 500). */
  count: 2_147_483_647,
  /** Not in the spec: RFC 5321's practical limit for an address. */
  email: 254,
  /** Not in the spec: stay dates no one could mean (design §6.2) — years outside 2000–2100. */
  stayYears: { from: 2000, to: 2100 },
  /** Not in the spec: the earliest birth year anyone alive could have. */
  birthYearFrom: 1900,
  /** Not in the spec: the largest `total_amount` (a trillion; 1e308 is no amount). */
  amount: 1e12
} as const

// ---------------------------------------------------------------------------------------------------------
// Building blocks

/**
 * Length in characters, read as Unicode code points (as PostgreSQL and JSON Schema's `maxLength` count them),
 * not UTF-16 units: an emoji is one character.
 */
export const charCount = (value: string): number => {
  let count = 0
  for (const _ of value) count++
  return count
}

const maxChars = (max: number) => (self: Schema.Schema<string>) =>
  self.pipe(Schema.filter((value) => value.length <= max || charCount(value) <= max, {
    message: () => `must be at most ${max} characters`,
    jsonSchema: { maxLength: max }
  }))

const notBlank = (self: Schema.Schema<string>) =>
  self.pipe(Schema.filter((value) => /\S/.test(value), {
    message: () => "must not be blank",
    jsonSchema: { minLength: 1 }
  }))

/** A required text: at least one non-space character; optionally at most `max` characters. */
const Text = (max?: number): Schema.Schema<string> =>
  max === undefined ? StoredString.pipe(notBlank) : StoredString.pipe(notBlank, maxChars(max))

/** A required name (a person's, a city, a label): {@link Text} on one line, no control characters. */
const Name = (max?: number): Schema.Schema<string> => singleLine(Text(max))

/** An optional free text: may be empty, at most `max` characters. */
const BoundedText = (max: number): Schema.Schema<string> => StoredString.pipe(maxChars(max))

/** The partner's reservation id (spec: max 120). */
export const ExternalId = Text(Limits.externalId)

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/

const daysInMonth = (year: number, month: number) =>
  month === 2
    ? (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
    : month === 4 || month === 6 || month === 9 || month === 11
    ? 30
    : 31

/**
 * `YYYY-MM-DD` naming a day that exists in the proleptic Gregorian calendar (`2026-02-30` does not).
 * Year 0000 is refused: PostgreSQL's `date` has no year 0.
 */
export const isCalendarDate = (value: string): boolean => {
  const match = CALENDAR_DATE.exec(value)
  if (match === null) return false
  const year = Number(match[1])
  const month = Number(match[2])
  const day = Number(match[3])
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

/** A calendar date as the spec writes it (`YYYY-MM-DD`); kept as the string that was sent. */
export const IsoDate = Schema.String.pipe(
  Schema.filter(isCalendarDate, {
    message: () => "must be a real calendar date written YYYY-MM-DD",
    jsonSchema: { format: "date" }
  })
)

const { from: FIRST_STAY_YEAR, to: LAST_STAY_YEAR } = Limits.stayYears

/**
 * A date of a stay (check-in, check-out, an arrival filter): a calendar date in the years 2000–2100. A stay in
 * 1900 or 9999 is a typo or a placeholder, never a booking (design §6.2).
 */
export const StayDate = IsoDate.pipe(
  Schema.filter((value) => {
    const year = Number(value.slice(0, 4))
    return year >= FIRST_STAY_YEAR && year <= LAST_STAY_YEAR
  }, { message: () => `must be between ${FIRST_STAY_YEAR}-01-01 and ${LAST_STAY_YEAR}-12-31` })
)

/** A birth date: a calendar date from 1900 on (that it is not in the future needs the clock: the service). */
export const BirthDate = IsoDate.pipe(
  Schema.filter((value) => Number(value.slice(0, 4)) >= Limits.birthYearFrom, {
    message: () => `must be ${Limits.birthYearFrom}-01-01 or later`
  })
)

/** A date-time in responses (ISO 8601, UTC). Output only: not validated. */
const DateTimeString = Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } })

/**
 * An e-mail address: the WHATWG `input type=email` grammar, with a dot required in the domain (no
 * `user@localhost`), at most 254 characters.
 */
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/

export const Email = Schema.String.pipe(
  Schema.filter((value: string) => value.length <= Limits.email && EMAIL.test(value), {
    message: () => "must be an e-mail address",
    jsonSchema: { format: "email", maxLength: Limits.email }
  })
)

const URI_SHAPE = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/

/** An absolute URI (a scheme, no spaces, parseable by WHATWG URL). Where it may point is checked on fetch. */
export const Uri = SingleLineString.pipe(
  Schema.filter((value: string) => URI_SHAPE.test(value) && URL.canParse(value), {
    message: () => "must be an absolute URI",
    jsonSchema: { format: "uri" }
  })
)

/** ISO 3166-1 alpha-2, an assigned code, upper case (`countries.ts`). */
export const CountryCode = Schema.String.pipe(
  Schema.filter((value: string) => {
    if (isCountryCode(value)) return true
    if (value.length === 2 && isCountryCode(value.toUpperCase())) {
      return `must be an ISO 3166-1 alpha-2 country code in upper case (${value.toUpperCase()}, not ${value})`
    }
    return "must be an assigned ISO 3166-1 alpha-2 country code (for example CO, US)"
  }, { jsonSchema: { pattern: "^[A-Z]{2}$" }, description: "ISO 3166-1 alpha-2 country code, upper case" })
)

const Count = (min: number, max: number = Limits.count) =>
  Schema.Number.pipe(
    Schema.filter((n: number) => Number.isInteger(n), { message: () => "must be an integer", jsonSchema: { type: "integer" } }),
    Schema.filter((n: number) => n >= min, { message: () => `must be at least ${min}`, jsonSchema: { minimum: min } }),
    Schema.filter((n: number) => n <= max, { message: () => `must be at most ${max}`, jsonSchema: { maximum: max } })
  )

/** A money amount: 0 to a trillion (design §6.2; in pesos or dollars, nothing larger is a stay's price). */
export const Amount = Schema.Number.pipe(
  Schema.filter((n: number) => Number.isFinite(n), { message: () => "must be a finite number" }),
  Schema.filter((n: number) => n >= 0, { message: () => "must be at least 0", jsonSchema: { minimum: 0 } }),
  Schema.filter((n: number) => n <= Limits.amount, {
    message: () => `must be at most ${Limits.amount}`,
    jsonSchema: { maximum: Limits.amount }
  })
)

const utf8 = new TextEncoder()

/** Byte length of the compact UTF-8 JSON of `value` (design §6.7). */
export const metadataBytes = (value: unknown): number => utf8.encode(JSON.stringify(value) ?? "").length

/** Every UTF-16 unit is 1 to 3 bytes (a surrogate pair, 2 units, is 4), so most sizes need no encoding. */
const fitsMetadataLimit = (json: string) =>
  json.length * 3 <= Limits.metadataBytes ||
  (json.length <= Limits.metadataBytes && utf8.encode(json).length <= Limits.metadataBytes)

/**
 * A JSON object taken as it is: the very object that was parsed, not a copy. (`Schema.Record` rebuilds the
 * object and loses an own `__proto__` key, which JSON.parse creates; metadata must come back unchanged.)
 */
export const JsonObject = Schema.declare(
  (value: unknown): value is { readonly [key: string]: unknown } =>
    typeof value === "object" && value !== null && !Array.isArray(value),
  {
    title: "JSON object",
    message: () => "must be a JSON object",
    // Free-form: without `additionalProperties: true` generators type it as an object with no keys.
    jsonSchema: { type: "object", additionalProperties: true }
  }
)

/** Free-form JSON object, returned unchanged; at most 4096 bytes as compact UTF-8 JSON (design §6.7). */
export const Metadata = JsonObject.pipe(
  Schema.filter(
    (value) =>
      fitsMetadataLimit(JSON.stringify(value)) ||
      `must be at most ${Limits.metadataBytes} bytes as compact UTF-8 JSON (got ${metadataBytes(value)})`,
    { jsonSchema: { description: "free-form JSON object, at most 4096 bytes as compact UTF-8 JSON" } }
  )
)
export type Metadata = typeof Metadata.Type

// ---------------------------------------------------------------------------------------------------------
// Enums (exact strings of the spec)

export const Currency = Schema.Literal("COP", "USD")
export type Currency = typeof Currency.Type

/** Test keys only (design §6.12: with a live key the service answers 400 invalid_request). */
export const SandboxSimulate = Schema.Literal("tra_failed", "sire_failed")
export type SandboxSimulate = typeof SandboxSimulate.Type

export const Motivo = Schema.Literal(
  "Vacaciones, recreo y ocio",
  "Trabajo",
  "Visita a familiares y a amigos",
  "Educación y formación",
  "Salud y atención médica",
  "Religión / peregrinaciones",
  "Compras",
  "Tránsito",
  "Otros motivos"
)
export type Motivo = typeof Motivo.Type

export const DocumentType = Schema.Literal("Pasaporte", "C.C", "C.E", "T.I", "R.C", "D.E", "C.D", "PPT")
export type DocumentType = typeof DocumentType.Type

/** Document types that need `fecha_nacimiento` (design §6.3). */
export const FOREIGN_DOCUMENT_TYPES: ReadonlyArray<DocumentType> = ["Pasaporte", "C.E", "D.E", "C.D", "PPT"]
/** Colombian-only documents: a non-CO `nacionalidad` cannot carry them (design §6.3). */
export const COLOMBIAN_DOCUMENT_TYPES: ReadonlyArray<DocumentType> = ["C.C", "T.I", "R.C"]

export const Status = Schema.Literal(
  "pending_checkin",
  "pending_signature",
  "pending_compliance",
  "compliant",
  "partial",
  "failed",
  "cancelled"
)
export type Status = typeof Status.Type

export const ReservationStatus = Schema.Literal("confirmed", "cancelled")
export type ReservationStatus = typeof ReservationStatus.Type

export const CheckinStatus = Schema.Literal("pending", "completed")
export type CheckinStatus = typeof CheckinStatus.Type

export const ReportStatus = Schema.Literal("pending", "not_applicable", "success", "error")
export type ReportStatus = typeof ReportStatus.Type

// ---------------------------------------------------------------------------------------------------------
// Cross-field rules

/**
 * Runs `rules` after the struct, **and also when some field of the struct failed** (effect's "stable filter":
 * with `errors: "all"` the filter then sees the raw input), so a body with a bad field and a bad date pair
 * gets both reported. Because the input may be raw, every rule checks the types it reads. The annotation key
 * is effect's `SchemaAST.StableFilterAnnotationId`, which its d.ts does not export; the test suite pins the
 * behaviour.
 */
const StableFilter = Symbol.for("effect/annotation/StableFilter")

type Input = Readonly<Record<string, unknown>>
type Rule = (input: Input) => ReadonlyArray<Schema.FilterIssue>

const crossField = (...rules: ReadonlyArray<Rule>) => (input: unknown): ReadonlyArray<Schema.FilterIssue> | undefined => {
  if (!Predicate.isRecord(input)) return undefined
  const issues = rules.flatMap((rule) => rule(input))
  return issues.length === 0 ? undefined : issues
}

const isDate = (value: unknown): value is string => typeof value === "string" && isCalendarDate(value)

/** check_out later than check_in, reported on `check_out` (when both are valid dates). */
const stayDates: Rule = ({ check_in, check_out }) =>
  isDate(check_in) && isDate(check_out) && check_out <= check_in
    ? [{ path: ["check_out"], message: `must be later than check_in (${check_in})` }]
    : []

export const PROPERTY_IDENTIFIERS = ["property_id", "property_external_id", "rnt_id"] as const
export type PropertyIdentifier = (typeof PROPERTY_IDENTIFIERS)[number]
const identifierList = "property_id, property_external_id or rnt_id"

/**
 * Spec rule 3: exactly one property identifier. None → one issue on `property_id`; several → one issue on each
 * one sent, naming them all. A field sent as `null` counts as sent (and fails its own type).
 */
const oneProperty: Rule = (input) => {
  const sent = PROPERTY_IDENTIFIERS.filter((key) => input[key] !== undefined)
  if (sent.length === 1) return []
  if (sent.length === 0) {
    return [{ path: ["property_id"], message: `exactly one of ${identifierList} is required; none was sent` }]
  }
  const message = `exactly one of ${identifierList} may be sent; got ${sent.join(" and ")}`
  return sent.map((key) => ({ path: [key], message }))
}

/** design §6.3: birth date for foreign documents; Colombian-only documents only with nacionalidad CO. */
const guestDocument: Rule = ({ tipo_documento, nacionalidad, fecha_nacimiento }) => {
  const issues: Array<Schema.FilterIssue> = []
  if (
    typeof tipo_documento === "string" && FOREIGN_DOCUMENT_TYPES.some((type) => type === tipo_documento) &&
    fecha_nacimiento === undefined
  ) {
    issues.push({ path: ["fecha_nacimiento"], message: `is required when tipo_documento is ${tipo_documento}` })
  }
  if (
    typeof tipo_documento === "string" && COLOMBIAN_DOCUMENT_TYPES.some((type) => type === tipo_documento) &&
    typeof nacionalidad === "string" && isCountryCode(nacionalidad) && nacionalidad !== "CO"
  ) {
    issues.push({
      path: ["tipo_documento"],
      message: `${tipo_documento} is a Colombian document; with nacionalidad ${nacionalidad} use ${
        FOREIGN_DOCUMENT_TYPES.join(", ")
      }`
    })
  }
  return issues
}

const requestOptions = { parseOptions: { errors: "all" } } as const

/**
 * A request struct with its cross-field rules, named `identifier` (also in "Expected …" messages), and the
 * example the OpenAPI document shows (on the struct: the generator reads a filter's `from`, not the filter).
 */
const withRules = <Fields extends Schema.Struct.Fields>(
  identifier: string,
  self: Schema.Struct<Fields>,
  example: Schema.Struct.Type<Fields>,
  ...rules: ReadonlyArray<Rule>
) =>
  self.annotations({ title: identifier, examples: [example] }).pipe(
    Schema.filter(crossField(...rules), { [StableFilter]: true }),
    (schema) => schema.annotations({ identifier, ...requestOptions })
  )

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

// ---------------------------------------------------------------------------------------------------------
// Examples for the OpenAPI document: one reservation's story, typed by the schemas they illustrate (a value
// that does not encode would be dropped from the document; the test suite checks every operation has one).

const EXAMPLE = {
  propertyId: "0d6f1c9a-8b3e-4f2a-9c71-5e4b3a2d1f08",
  reservationId: "5f0c7c1e-3b2a-4d9e-8f61-2a7b9c0d1e23",
  externalId: "PMS-2026-0042",
  checkinToken: "Yq3Jv0xT6bWmK2pR8sZ1uD4hF7nL9cE5",
  createdAt: "2026-12-01T14:30:00.000Z",
  metadata: { channel: "booking-engine" }
} as const

const EXAMPLE_GUEST = {
  tipo_documento: "Pasaporte",
  numero_documento: "X1234567",
  nombre: "John",
  apellido: "Smith",
  nacionalidad: "US",
  fecha_nacimiento: "1985-04-12",
  pais_procedencia: "US",
  ciudad_procedencia: "Miami",
  pais_residencia: "US",
  ciudad_residencia: "Miami",
  email: "john.smith@example.com"
} as const

// ---------------------------------------------------------------------------------------------------------
// Requests

const PropertyReferenceFields = {
  property_id: optional(Schema.UUID.annotations({ message: () => "must be a UUID" })),
  property_external_id: optional(Text(Limits.externalId)),
  rnt_id: optional(Text())
}

/** The fields endpoints 3 and 7 share: the stay, its holder, its property and its amount. */
const StayFields = {
  external_id: ExternalId,
  source: optional(BoundedText(Limits.source)),
  ...PropertyReferenceFields,
  room_number: optional(BoundedText(Limits.roomNumber)),
  check_in: StayDate,
  check_out: StayDate,
  guest_name: Name(Limits.guestName),
  guests_count: Count(1),
  expected_guests: optional(Count(1)),
  total_amount: optional(Amount),
  currency: optional(Currency),
  metadata: optional(Metadata),
  sandbox_simulate: optional(SandboxSimulate)
}

/** Endpoint 3's body. */
export const CreateReservation = withRules(
  "CreateReservation",
  Schema.Struct({
    ...StayFields,
    guest_email: optional(Email),
    guest_phone: optional(BoundedText(Limits.guestPhone)),
    notes: optional(BoundedText(Limits.notes))
  }),
  {
    external_id: EXAMPLE.externalId,
    source: "pms-acme",
    property_id: EXAMPLE.propertyId,
    room_number: "304",
    check_in: "2026-12-18",
    check_out: "2026-12-21",
    guest_name: "Ana Gómez",
    guests_count: 2,
    total_amount: 1250000,
    currency: "COP",
    guest_email: "ana.gomez@example.com",
    metadata: EXAMPLE.metadata
  },
  oneProperty,
  stayDates
)
export type CreateReservation = typeof CreateReservation.Type

/**
 * Endpoint 4's body. Only the spec's fields; anything else (source, room_number, amounts…) is dropped as
 * unknown. `null` clears guest_email, guest_phone and notes. A lone check_in or check_out is compared with
 * the stored one by the service; when both are sent, check_out must be later here.
 */
export const UpdateReservation = withRules(
  "UpdateReservation",
  Schema.Struct({
    external_id: ExternalId,
    check_in: optional(StayDate),
    check_out: optional(StayDate),
    guests_count: optional(Count(1, Limits.guestsCountOnModify)),
    guest_name: optional(Name(Limits.guestName)),
    guest_email: optional(Schema.NullOr(Email)),
    guest_phone: optional(Schema.NullOr(BoundedText(Limits.guestPhone))),
    notes: optional(Schema.NullOr(BoundedText(Limits.notes))),
    metadata: optional(Metadata)
  }),
  { external_id: EXAMPLE.externalId, check_out: "2026-12-22", guests_count: 3, notes: null },
  stayDates
)
export type UpdateReservation = typeof UpdateReservation.Type

/** Endpoint 5's body. */
export const CancelReservation = Schema.Struct({
  external_id: ExternalId,
  reason: optional(BoundedText(Limits.cancelReason))
}).annotations({
  identifier: "CancelReservation",
  examples: [{ external_id: EXAMPLE.externalId, reason: "The guest cancelled through the booking channel." }],
  ...requestOptions
})
export type CancelReservation = typeof CancelReservation.Type

/**
 * The departure endpoint's body (design §6.8): the Bogotá day the guests actually left. That it lies within the
 * stay and is not after today needs the stored reservation and the clock: the service (`Stay.depart` of the reservation machine).
 */
export const RecordDeparture = Schema.Struct({
  external_id: ExternalId,
  departed_on: StayDate
}).annotations({
  identifier: "RecordDeparture",
  examples: [{ external_id: EXAMPLE.externalId, departed_on: "2026-12-20" }],
  ...requestOptions
})
export type RecordDeparture = typeof RecordDeparture.Type

/** One guest of endpoint 7. Not checked here (no clock): that fecha_nacimiento is not in the future. */
/** GuestInput's `numero_documento`: letters and digits only (also handed to the check-in page). */
export const DOCUMENT_NUMBER = /^[a-zA-Z0-9]+$/

const GuestFields = {
    tipo_documento: DocumentType,
    numero_documento: Schema.String.pipe(
      Schema.pattern(DOCUMENT_NUMBER, { message: () => "must be letters and digits only (^[a-zA-Z0-9]+$)" })
    ),
    nombre: Name(),
    apellido: Name(),
    nacionalidad: CountryCode,
    fecha_nacimiento: optional(BirthDate),
    pais_procedencia: CountryCode,
    ciudad_procedencia: Name(),
    pais_residencia: CountryCode,
    ciudad_residencia: Name(),
    email: optional(Email),
    phone: optional(StoredString),
    address: optional(StoredString),
    doc_photo_front_url: optional(Uri),
    doc_photo_back_url: optional(Uri)
}

export const GuestInput = withRules("GuestInput", Schema.Struct(GuestFields), EXAMPLE_GUEST, guestDocument)
export type GuestInput = typeof GuestInput.Type

/**
 * The check-in page's guest (design §5): GuestInput plus the trip's `motivo`, required from the first guest, with
 * the document number's separators removed.
 */
/**
 * What the check-in page removes from a typed document number before checking it (issue 26 item 5): the dots,
 * spaces and dashes of a number copied as printed ("1.020.345.678"). Also handed to the check-in page.
 */
export const DOCUMENT_SEPARATORS = /[.\s-]/g

/**
 * The check-in page's `numero_documento`: cleaned of DOCUMENT_SEPARATORS, then GuestInput's rule. Only the
 * guest-facing endpoint cleans; the partner API's GuestInput keeps its documented letters-and-digits rule.
 */
const CheckinDocumentNumber = Schema.transform(Schema.String, GuestFields.numero_documento, {
  strict: true,
  decode: (typed) => typed.replace(DOCUMENT_SEPARATORS, ""),
  encode: (clean) => clean
})

export const CheckinGuestInput = withRules(
  "CheckinGuestInput",
  Schema.Struct({ ...GuestFields, numero_documento: CheckinDocumentNumber, motivo: optional(Motivo) }),
  { ...EXAMPLE_GUEST, motivo: "Vacaciones, recreo y ocio" },
  guestDocument
)
export type CheckinGuestInput = typeof CheckinGuestInput.Type

/**
 * Endpoint 7's body. Exactly one property identifier (spec rule 3, design §6.5). Not schema errors, left to
 * the service: repeated numero_documento (409 duplicate_document, `duplicateDocuments`) and guests.length ≠
 * guests_count (400 registration_rejected, `guestCountMismatch`).
 */
export const SubmitRegistration = withRules(
  "SubmitRegistration",
  Schema.Struct({
    ...StayFields,
    motivo: Motivo,
    tipo_acomodacion: Name(),
    guests: Schema.Array(GuestInput).pipe(
      Schema.minItems(1, { message: () => "must hold at least 1 guest" }),
      Schema.maxItems(Limits.guestsPerSubmission, {
        message: () => `must hold at most ${Limits.guestsPerSubmission} guests`
      })
    )
  }),
  {
    external_id: "PMS-2026-0043",
    source: "pms-acme",
    property_external_id: "HOTEL-CTG-01",
    check_in: "2026-12-18",
    check_out: "2026-12-20",
    guest_name: "John Smith",
    guests_count: 1,
    total_amount: 320,
    currency: "USD",
    motivo: "Vacaciones, recreo y ocio",
    tipo_acomodacion: "Hotel",
    guests: [EXAMPLE_GUEST]
  },
  oneProperty,
  stayDates
)
export type SubmitRegistration = typeof SubmitRegistration.Type

export const Include = Schema.Literal("guests")

// Path and query structs carry no `identifier`: the OpenAPI generator turns a struct into parameters only when
// it is inlined (an identifier makes it a `$ref`, and every parameter would be dropped). Descriptions sit on
// the property signatures, where they document the parameter without changing any validation message.

const include = optional(Include).annotations({
  description: "`guests` adds the guests (personal data) to the answer; without it the answer carries statuses only.",
  examples: ["guests"]
})

/** Endpoint 6's query. */
export const RegistrationQuery = Schema.Struct({
  external_id: Schema.propertySignature(ExternalId).annotations({
    description: "The partner's reservation id, as sent on creation; any characters, `/` included.",
    examples: ["PMS-2026-0042"]
  }),
  include
}).annotations(requestOptions)
export type RegistrationQuery = typeof RegistrationQuery.Type

/** Endpoint 8's path (`/api/partners/registrations/{external_id}`). */
export const RegistrationPath = Schema.Struct({
  external_id: Schema.propertySignature(ExternalId).annotations({
    description: "The partner's reservation id, as sent on creation. An id containing `/` must use endpoint 6's query.",
    examples: ["PMS-2026-0042"]
  })
}).annotations(requestOptions)
export type RegistrationPath = typeof RegistrationPath.Type

/** Endpoint 8's query. */
export const IncludeQuery = Schema.Struct({ include }).annotations(requestOptions)
export type IncludeQuery = typeof IncludeQuery.Type

// ---------------------------------------------------------------------------------------------------------
// Pure helpers for the service

export interface DuplicateDocument {
  /** The number as the first guest carrying it sent it. */
  readonly numero_documento: string
  /** Indexes in `guests` of every guest with that number (at least two). */
  readonly indexes: ReadonlyArray<number>
}

/**
 * Spec rule 8: numero_documento repeated among the guests (409 duplicate_document), whatever the document
 * type, compared case-insensitively (`ab12` and `AB12` are the same document). Empty when all are unique.
 */
export const duplicateDocuments = (
  guests: ReadonlyArray<Pick<GuestInput, "numero_documento">>
): ReadonlyArray<DuplicateDocument> => {
  const seen = new Map<string, { numero_documento: string; indexes: Array<number> }>()
  guests.forEach((guest, index) => {
    const key = guest.numero_documento.toUpperCase()
    const entry = seen.get(key)
    if (entry === undefined) seen.set(key, { numero_documento: guest.numero_documento, indexes: [index] })
    else entry.indexes.push(index)
  })
  return [...seen.values()].filter((entry) => entry.indexes.length > 1)
}

/** design §6.5: guests.length must equal guests_count (else 400 registration_rejected naming both). */
export const guestCountMismatch = (
  body: Pick<SubmitRegistration, "guests_count" | "guests">
): { readonly guests_count: number; readonly guests: number } | undefined =>
  body.guests.length === body.guests_count ? undefined : { guests_count: body.guests_count, guests: body.guests.length }

/** Indexes of guests born after `today` (YYYY-MM-DD, the Bogotá date): the clock-dependent half of the rule. */
export const bornAfter = (guests: ReadonlyArray<Pick<GuestInput, "fecha_nacimiento">>, today: string) =>
  guests.flatMap((guest, index) => guest.fecha_nacimiento !== undefined && guest.fecha_nacimiento > today ? [index] : [])

/** Which property identifier a valid body carries (spec rule 3 guarantees exactly one). */
export const propertyReference = (
  body: Pick<CreateReservation, PropertyIdentifier>
): { readonly by: PropertyIdentifier; readonly value: string } => {
  for (const by of PROPERTY_IDENTIFIERS) {
    const value = body[by]
    if (value !== undefined) return { by, value }
  }
  throw new Error("propertyReference: a decoded body always carries one property identifier")
}

// ---------------------------------------------------------------------------------------------------------
// Responses

/** The fields of both report objects (spec "Report"). */
const ReportFields = {
  status: ReportStatus,
  reported_at: Schema.NullOr(DateTimeString),
  /** Present when a report will not go out for a configuration reason, or with a rejection's reason. */
  warning: optional(Schema.String),
  /** Present (true) only in the test environment. */
  simulated: optional(Schema.Boolean)
}

export const Report = Schema.Struct(ReportFields).annotations({ identifier: "Report" })
export type Report = typeof Report.Type

export const TraReport = Schema.Struct({
  ...ReportFields,
  sends_on: Schema.NullOr(IsoDate),
  mincit_code: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "TraReport" })
export type TraReport = typeof TraReport.Type

/**
 * The exit movements (S) of the foreign guests whose entry went out (design §6.8): due on `check_out` (or on the
 * day of a cancellation made before it). It emits no event of its own and does not change the reservation's
 * `status`.
 */
export const SireExitReport = Schema.Struct({
  status: ReportStatus,
  sends_on: Schema.NullOr(IsoDate),
  reported_at: Schema.NullOr(DateTimeString),
  warning: optional(Schema.String),
  /** Present (true) only in the test environment. */
  simulated: optional(Schema.Boolean)
}).annotations({ identifier: "SireExitReport" })
export type SireExitReport = typeof SireExitReport.Type

export const SireReport = Schema.Struct({
  ...ReportFields,
  foreign_guests: Schema.Int,
  exit: SireExitReport
}).annotations({ identifier: "SireReport" })
export type SireReport = typeof SireReport.Type

/** A registered guest (output; in RegistrationDetail and `registration.*` webhooks). */
export const Guest = Schema.Struct({
  is_primary: Schema.Boolean,
  tipo_documento: DocumentType,
  numero_documento: Schema.String,
  nombre: Schema.String,
  apellido: Schema.String,
  nacionalidad: Schema.NullOr(Schema.String),
  fecha_nacimiento: Schema.NullOr(IsoDate),
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String),
  ciudad_residencia: Schema.NullOr(Schema.String),
  pais_residencia: Schema.NullOr(Schema.String),
  registered_at: Schema.NullOr(DateTimeString),
  /** null once the stay's check_out is more than 30 days past (photos deleted). */
  document_uploaded: Schema.NullOr(Schema.Boolean)
}).annotations({ identifier: "Guest" })
export type Guest = typeof Guest.Type

const RegistrationStatusFields = {
  ok: Schema.Boolean,
  reservation_id: Schema.String,
  external_id: Schema.String,
  status: Status,
  reservation_status: ReservationStatus,
  sandbox: Schema.Boolean,
  checkin_token: Schema.NullOr(Schema.String),
  checkin_status: Schema.NullOr(CheckinStatus),
  guests_registered: Schema.Int,
  tra: TraReport,
  sire: SireReport,
  /** The day the guests actually left, once recorded (design §6.8); `check_out` keeps the booked date. */
  departed_on: Schema.NullOr(IsoDate)
}

const EXAMPLE_STATUS = {
  ok: true,
  reservation_id: EXAMPLE.reservationId,
  external_id: EXAMPLE.externalId,
  status: "pending_checkin",
  reservation_status: "confirmed",
  sandbox: false,
  checkin_token: EXAMPLE.checkinToken,
  checkin_status: "pending",
  guests_registered: 0,
  tra: { status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null },
  sire: { status: "not_applicable", reported_at: null, foreign_guests: 0, exit: { status: "not_applicable", sends_on: null, reported_at: null } },
  departed_on: null
} as const

/** Endpoints 5 and 7, and the departure; the base of the others. */
export const RegistrationStatus = Schema.Struct(RegistrationStatusFields).annotations({
  identifier: "RegistrationStatus",
  examples: [{
    ...EXAMPLE_STATUS,
    external_id: "PMS-2026-0043",
    status: "pending_compliance",
    checkin_token: null,
    checkin_status: "completed",
    guests_registered: 1,
    tra: { status: "pending", reported_at: null, sends_on: "2026-12-18", mincit_code: null },
    sire: { status: "pending", reported_at: null, foreign_guests: 1, exit: { status: "not_applicable", sends_on: null, reported_at: null } }
  }]
})
export type RegistrationStatus = typeof RegistrationStatus.Type

const ReservationResponseFields = {
  ...RegistrationStatusFields,
  source: Schema.NullOr(Schema.String),
  metadata: JsonObject,
  checkin_url: Schema.NullOr(Schema.String.annotations({ jsonSchema: { type: "string", format: "uri" } })),
  created_at: DateTimeString,
  idempotent_replay: Schema.Boolean
}

const EXAMPLE_RESERVATION = {
  ...EXAMPLE_STATUS,
  source: "pms-acme",
  metadata: EXAMPLE.metadata,
  checkin_url: `https://registro.example.co/checkin/${EXAMPLE.checkinToken}`,
  created_at: EXAMPLE.createdAt,
  idempotent_replay: false
} as const

/** Endpoint 3. */
export const ReservationResponse = Schema.Struct(ReservationResponseFields).annotations({
  identifier: "ReservationResponse",
  examples: [EXAMPLE_RESERVATION]
})
export type ReservationResponse = typeof ReservationResponse.Type

/** Endpoints 6 and 8; `guests` only with include=guests (without it the body carries no personal data). */
export const RegistrationDetail = Schema.Struct({
  ...ReservationResponseFields,
  property_id: Schema.UUID,
  check_in: IsoDate,
  check_out: IsoDate,
  guests_count: Schema.Int,
  completed_at: Schema.NullOr(DateTimeString),
  guests: optional(Schema.Array(Guest))
}).annotations({
  identifier: "RegistrationDetail",
  examples: [{
    ...EXAMPLE_RESERVATION,
    status: "pending_compliance",
    checkin_status: "completed",
    guests_registered: 2,
    tra: { status: "pending", reported_at: null, sends_on: "2026-12-18", mincit_code: null },
    property_id: EXAMPLE.propertyId,
    check_in: "2026-12-18",
    check_out: "2026-12-21",
    guests_count: 2,
    completed_at: "2026-12-10T15:04:05.000Z"
  }]
})
export type RegistrationDetail = typeof RegistrationDetail.Type

/** Endpoint 4: ReservationResponse plus the names of the fields whose value changed (`[]` if none). */
export const UpdateResponse = Schema.Struct({
  ...ReservationResponseFields,
  changed: Schema.Array(Schema.String)
}).annotations({
  identifier: "UpdateResponse",
  examples: [{ ...EXAMPLE_RESERVATION, changed: ["check_out", "guests_count", "notes"] }]
})
export type UpdateResponse = typeof UpdateResponse.Type

/** Endpoint 5. `warning` is present only when a report had already gone out (spec rule 7). */
export const CancelResponse = Schema.Struct({
  ...RegistrationStatusFields,
  already_cancelled: Schema.Boolean,
  already_reported: Schema.Struct({ tra: Schema.Boolean, sire: Schema.Boolean }),
  warning: optional(Schema.String)
}).annotations({
  identifier: "CancelResponse",
  examples: [{
    ...EXAMPLE_STATUS,
    status: "cancelled",
    reservation_status: "cancelled",
    already_cancelled: false,
    already_reported: { tra: false, sire: false }
  }]
})
export type CancelResponse = typeof CancelResponse.Type
