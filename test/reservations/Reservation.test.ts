import { describe, expect, test } from "bun:test"
import { Either, JSONSchema, Option, ParseResult, Schema, SchemaAST } from "effect"
import { fieldPath } from "../../src/http/ErrorMiddleware.ts"
import { COUNTRY_CODES, isCountryCode } from "../../src/reservations/countries.ts"
import {
  bornAfter,
  CancelReservation,
  CancelResponse,
  charCount,
  CreateReservation,
  DocumentType,
  Guest,
  duplicateDocuments,
  guestCountMismatch,
  GuestInput,
  IncludeQuery,
  isCalendarDate,
  Limits,
  metadataBytes,
  Motivo,
  type PropertyIdentifier,
  propertyReference,
  RegistrationDetail,
  RegistrationPath,
  RegistrationQuery,
  RegistrationStatus,
  Report,
  ReservationResponse,
  SireReport,
  SubmitRegistration,
  TraReport,
  UpdateReservation,
  UpdateResponse
} from "../../src/reservations/Reservation.ts"

// ---------------------------------------------------------------------------------------------------------
// Helpers

interface FieldIssue {
  readonly field: string
  readonly message: string
}

/** Decodes like the HTTP layer and lists the issues as the error middleware names them. */
const issuesOf = (schema: Schema.Schema<any, any, never>, input: unknown): ReadonlyArray<FieldIssue> =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (error) =>
      ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
        field: fieldPath(issue.path) || "body",
        message: issue.message
      })),
    onRight: () => []
  })

const fieldsOf = (schema: Schema.Schema<any, any, never>, input: unknown) => [
  ...new Set(issuesOf(schema, input).map((issue) => issue.field))
]

const decoded = <A>(schema: Schema.Schema<A, any, never>, input: unknown): A => {
  const result = Schema.decodeUnknownEither(schema)(input)
  if (Either.isLeft(result)) {
    throw new Error(`expected a valid input, got ${JSON.stringify(issuesOf(schema, input))}`)
  }
  return result.right
}

const expectValid = (schema: Schema.Schema<any, any, never>, input: unknown) => expect(issuesOf(schema, input)).toEqual([])

/** `path` is a field path such as `guests[1].nacionalidad`; `undefined` removes the field. */
const withField = (base: unknown, path: string, value: unknown): unknown => {
  const copy = structuredClone(base) as Record<string, any>
  const keys = path.split(/\.|\[(\d+)\]/).filter((key) => key !== undefined && key !== "")
  let target: any = copy
  for (const key of keys.slice(0, -1)) target = target[key]
  const last = keys[keys.length - 1]!
  if (value === undefined) delete target[last]
  else target[last] = value
  return copy
}

const PROPERTY_ID = "3f2b8c1e-5a4d-4e6f-9a7b-1c2d3e4f5a6b"

const validCreate = {
  external_id: "PMS-1001",
  property_id: PROPERTY_ID,
  check_in: "2026-03-10",
  check_out: "2026-03-12",
  guest_name: "Ana Gómez",
  guests_count: 2
}

const colombian = {
  tipo_documento: "C.C",
  numero_documento: "1020304050",
  nombre: "Ana",
  apellido: "Gómez",
  nacionalidad: "CO",
  pais_procedencia: "CO",
  ciudad_procedencia: "Medellín",
  pais_residencia: "CO",
  ciudad_residencia: "Medellín"
}

const foreigner = {
  tipo_documento: "Pasaporte",
  numero_documento: "X1234567",
  nombre: "John",
  apellido: "Smith",
  nacionalidad: "US",
  fecha_nacimiento: "1985-07-04",
  pais_procedencia: "US",
  ciudad_procedencia: "Miami",
  pais_residencia: "US",
  ciudad_residencia: "Miami"
}

const validSubmit = {
  external_id: "PMS-2001",
  rnt_id: "12345",
  check_in: "2026-03-10",
  check_out: "2026-03-12",
  guest_name: "Ana Gómez",
  guests_count: 2,
  motivo: "Trabajo",
  tipo_acomodacion: "Habitación",
  guests: [colombian, foreigner]
}

const validUpdate = { external_id: "PMS-1001" }
const validCancel = { external_id: "PMS-1001" }

const guestsOf = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ ...colombian, numero_documento: `D${i}` }))

// ---------------------------------------------------------------------------------------------------------

describe("length and range limits: the boundary passes, one past fails on the right field", () => {
  const schemas = {
    CreateReservation: [CreateReservation, validCreate],
    UpdateReservation: [UpdateReservation, validUpdate],
    CancelReservation: [CancelReservation, validCancel],
    SubmitRegistration: [SubmitRegistration, validSubmit],
    RegistrationQuery: [RegistrationQuery, { external_id: "PMS-1001" }],
    RegistrationPath: [RegistrationPath, { external_id: "PMS-1001" }]
  } as const

  const x = (n: number) => "x".repeat(n)
  // [schema, field, value at the limit, value one past]
  const cases: ReadonlyArray<readonly [keyof typeof schemas, string, unknown, unknown]> = [
    ["CreateReservation", "external_id", x(120), x(121)],
    ["CreateReservation", "external_id", "x", ""],
    ["CreateReservation", "source", x(50), x(51)],
    ["CreateReservation", "property_external_id", x(120), x(121)],
    ["CreateReservation", "room_number", x(50), x(51)],
    ["CreateReservation", "guest_name", x(255), x(256)],
    ["CreateReservation", "guest_phone", x(30), x(31)],
    ["CreateReservation", "notes", x(2000), x(2001)],
    ["CreateReservation", "guests_count", 1, 0],
    ["CreateReservation", "guests_count", Limits.count, Limits.count + 1],
    ["CreateReservation", "expected_guests", 1, 0],
    ["CreateReservation", "total_amount", 0, -0.01],
    ["UpdateReservation", "external_id", x(120), x(121)],
    ["UpdateReservation", "guests_count", 1, 0],
    ["UpdateReservation", "guests_count", 50, 51],
    ["UpdateReservation", "guest_name", x(255), x(256)],
    ["UpdateReservation", "guest_phone", x(30), x(31)],
    ["UpdateReservation", "notes", x(2000), x(2001)],
    ["CancelReservation", "external_id", x(120), x(121)],
    ["CancelReservation", "reason", x(500), x(501)],
    ["SubmitRegistration", "external_id", x(120), x(121)],
    ["SubmitRegistration", "source", x(50), x(51)],
    ["SubmitRegistration", "room_number", x(50), x(51)],
    ["SubmitRegistration", "guest_name", x(255), x(256)],
    ["SubmitRegistration", "guests_count", 1, 0],
    ["SubmitRegistration", "expected_guests", 1, 0],
    ["SubmitRegistration", "total_amount", 0, -1],
    ["SubmitRegistration", "guests", guestsOf(1), []],
    ["SubmitRegistration", "guests", guestsOf(30), guestsOf(31)],
    ["RegistrationQuery", "external_id", x(120), x(121)],
    ["RegistrationPath", "external_id", x(120), x(121)]
  ]

  test.each(cases)("%s.%s", (name, field, atLimit, past) => {
    const [schema, base] = schemas[name]
    const baseWithSibling = name === "CreateReservation" && field === "property_external_id"
      ? withField(base, "property_id", undefined)
      : base
    expectValid(schema, withField(baseWithSibling, field, atLimit))
    expect(fieldsOf(schema, withField(baseWithSibling, field, past))).toEqual([field])
  })

  test("lengths count characters (code points), not UTF-16 units", () => {
    expect(charCount("😀".repeat(3))).toBe(3)
    expectValid(CreateReservation, withField(validCreate, "external_id", "😀".repeat(120)))
    expect(fieldsOf(CreateReservation, withField(validCreate, "external_id", "😀".repeat(121)))).toEqual(["external_id"])
    expectValid(CancelReservation, { external_id: "é".repeat(120), reason: "ñ".repeat(500) })
  })

  test.each([
    ["guests_count", 1.5, "must be an integer"],
    ["guests_count", "2", "Expected number, actual \"2\""],
    ["expected_guests", 2.5, "must be an integer"]
  ])("%s %p is refused", (field, value, message) => {
    expect(issuesOf(CreateReservation, withField(validCreate, field, value))).toEqual([{ field, message }])
  })

  test("messages name the limit", () => {
    expect(issuesOf(CreateReservation, withField(validCreate, "notes", x(2001)))).toEqual([
      { field: "notes", message: "must be at most 2000 characters" }
    ])
    expect(issuesOf(UpdateReservation, { external_id: "a", guests_count: 51 })).toEqual([
      { field: "guests_count", message: "must be at most 50" }
    ])
    expect(issuesOf(SubmitRegistration, withField(validSubmit, "guests", guestsOf(31)))).toEqual([
      { field: "guests", message: "must hold at most 30 guests" }
    ])
  })

  test.each([
    ["external_id", " "],
    ["guest_name", ""],
    ["guest_name", "  \t"]
  ])("required text %s %p is blank", (field, value) => {
    expect(issuesOf(CreateReservation, withField(validCreate, field, value))).toEqual([
      { field, message: "must not be blank" }
    ])
  })

  test("optional free texts may be empty", () => {
    expectValid(CreateReservation, { ...validCreate, source: "", room_number: "", notes: "", guest_phone: "" })
  })

  test.each(["external_id", "check_in", "check_out", "guest_name", "guests_count"])("CreateReservation needs %s", (field) => {
    expect(issuesOf(CreateReservation, withField(validCreate, field, undefined))).toEqual([{ field, message: "is missing" }])
  })

  test.each(["external_id", "check_in", "check_out", "guest_name", "guests_count", "motivo", "tipo_acomodacion", "guests"])(
    "SubmitRegistration needs %s",
    (field) => {
      expect(issuesOf(SubmitRegistration, withField(validSubmit, field, undefined))).toEqual([
        { field, message: "is missing" }
      ])
    }
  )

  test.each([
    "tipo_documento",
    "numero_documento",
    "nombre",
    "apellido",
    "nacionalidad",
    "pais_procedencia",
    "ciudad_procedencia",
    "pais_residencia",
    "ciudad_residencia"
  ])("GuestInput needs %s", (field) => {
    expect(issuesOf(SubmitRegistration, withField(validSubmit, `guests[0].${field}`, undefined))).toEqual([
      { field: `guests[0].${field}`, message: "is missing" }
    ])
  })

  test("UpdateReservation and CancelReservation need only external_id", () => {
    expectValid(UpdateReservation, validUpdate)
    expectValid(CancelReservation, validCancel)
    expect(fieldsOf(UpdateReservation, {})).toEqual(["external_id"])
    expect(fieldsOf(CancelReservation, { reason: "x" })).toEqual(["external_id"])
  })
})

describe("enums", () => {
  const motivos = [
    "Vacaciones, recreo y ocio",
    "Trabajo",
    "Visita a familiares y a amigos",
    "Educación y formación",
    "Salud y atención médica",
    "Religión / peregrinaciones",
    "Compras",
    "Tránsito",
    "Otros motivos"
  ]
  const documentTypes = ["Pasaporte", "C.C", "C.E", "T.I", "R.C", "D.E", "C.D", "PPT"]

  test("the enums hold exactly the spec's values", () => {
    expect<ReadonlyArray<string>>(Motivo.literals).toEqual(motivos)
    expect<ReadonlyArray<string>>(DocumentType.literals).toEqual(documentTypes)
  })

  // [schema, base, field, accepted, refused]
  const cases: ReadonlyArray<readonly [string, Schema.Schema<any, any, never>, unknown, string, ReadonlyArray<unknown>, ReadonlyArray<unknown>]> = [
    ["CreateReservation", CreateReservation, validCreate, "currency", ["COP", "USD"], ["usd", "EUR", "", 1]],
    [
      "CreateReservation",
      CreateReservation,
      validCreate,
      "sandbox_simulate",
      ["tra_failed", "sire_failed"],
      ["TRA_FAILED", "both_failed", null]
    ],
    ["SubmitRegistration", SubmitRegistration, validSubmit, "currency", ["COP", "USD"], ["cop", "EUR"]],
    ["SubmitRegistration", SubmitRegistration, validSubmit, "sandbox_simulate", ["tra_failed", "sire_failed"], ["x"]],
    [
      "SubmitRegistration",
      SubmitRegistration,
      validSubmit,
      "motivo",
      motivos,
      ["Educacion y formacion", "trabajo", "Trabajo ", "Religión/peregrinaciones", "Otros", ""]
    ],
    [
      "SubmitRegistration",
      SubmitRegistration,
      { ...validSubmit, guests: [{ ...colombian, fecha_nacimiento: "1990-01-01" }, foreigner] },
      "guests[0].tipo_documento",
      documentTypes,
      ["CC", "cc", "c.c", "Passport", "pasaporte", "CE", ""]
    ],
    ["RegistrationQuery", RegistrationQuery, { external_id: "a" }, "include", ["guests"], ["Guests", "guest", "", "all"]],
    ["IncludeQuery", IncludeQuery, {}, "include", ["guests"], ["GUESTS"]]
  ]

  for (const [name, schema, base, field, accepted, refused] of cases) {
    test.each(accepted.map((value) => [value]))(`${name}.${field} accepts %p`, (value) => {
      expectValid(schema, withField(base, field, value))
    })
    test.each(refused.map((value) => [value]))(`${name}.${field} refuses %p`, (value) => {
      expect(fieldsOf(schema, withField(base, field, value))).toEqual([field])
    })
  }

  const report = { status: "pending", reported_at: null }
  const registrationStatus = {
    ok: true,
    reservation_id: "r1",
    external_id: "PMS-1",
    status: "pending_checkin",
    reservation_status: "confirmed",
    sandbox: false,
    checkin_token: "tok",
    checkin_status: "pending",
    guests_registered: 0,
    tra: { ...report, sends_on: "2026-03-10", mincit_code: null },
    sire: { ...report, foreign_guests: 0, exit: { status: "not_applicable", sends_on: null, reported_at: null } },
    departed_on: null
  }
  const responseCases: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, ReadonlyArray<unknown>]> = [
    [
      "status",
      ["pending_checkin", "pending_signature", "pending_compliance", "compliant", "partial", "failed", "cancelled"],
      ["confirmed", "done"]
    ],
    ["reservation_status", ["confirmed", "cancelled"], ["pending", "CANCELLED"]],
    ["checkin_status", [null, "pending", "completed"], ["done", "in_progress"]],
    ["tra.status", ["pending", "not_applicable", "success", "error"], ["failed", "reported"]],
    ["sire.status", ["pending", "not_applicable", "success", "error"], ["skipped"]]
  ]
  for (const [field, accepted, refused] of responseCases) {
    test.each(accepted.map((value) => [value]))(`RegistrationStatus.${field} accepts %p`, (value) => {
      expectValid(RegistrationStatus, withField(registrationStatus, field, value))
    })
    test.each(refused.map((value) => [value]))(`RegistrationStatus.${field} refuses %p`, (value) => {
      expect(fieldsOf(RegistrationStatus, withField(registrationStatus, field, value))).toEqual([field])
    })
  }
})

describe("dates", () => {
  test.each([
    ["2026-03-10", true],
    ["2024-02-29", true],
    ["2000-02-29", true],
    ["2026-12-31", true],
    ["0001-01-01", true],
    ["2026-02-30", false],
    ["2026-02-29", false],
    ["1900-02-29", false],
    ["2026-04-31", false],
    ["2026-13-01", false],
    ["2026-00-10", false],
    ["2026-01-00", false],
    ["0000-01-01", false],
    ["2026-3-10", false],
    ["26-03-10", false],
    ["2026/03/10", false],
    ["2026-03-10T00:00:00Z", false],
    [" 2026-03-10", false],
    ["２０２６-03-10", false],
    ["", false]
  ])("%p is a calendar date: %p", (value, valid) => {
    expect(isCalendarDate(value)).toBe(valid)
    // A real date is not yet a stay date: 0001-01-01 is outside 2000–2100 (design §6.2, issue 14).
    const year = Number(value.slice(0, 4))
    const stay = valid && year >= 2000 && year <= 2100
    const fields = fieldsOf(CreateReservation, { ...validCreate, check_in: value, check_out: "2099-01-01" })
    expect(fields).toEqual(stay ? [] : ["check_in"])
  })

  test("the date message says what is expected", () => {
    expect(issuesOf(CreateReservation, { ...validCreate, check_out: "2026-02-30" })).toEqual([
      { field: "check_out", message: "must be a real calendar date written YYYY-MM-DD" }
    ])
  })

  const stays: ReadonlyArray<readonly [string, string, string, boolean]> = [
    ["one night later", "2026-03-10", "2026-03-11", true],
    ["across a month end", "2026-02-28", "2026-03-01", true],
    ["the same day", "2026-03-10", "2026-03-10", false],
    ["the day before", "2026-03-10", "2026-03-09", false],
    ["a year before", "2026-03-10", "2025-03-11", false]
  ]

  test.each(stays)("check_out %s: CreateReservation and SubmitRegistration", (_name, check_in, check_out, valid) => {
    for (const [schema, base] of [[CreateReservation, validCreate], [SubmitRegistration, validSubmit]] as const) {
      const issues = issuesOf(schema, { ...base, check_in, check_out })
      expect(issues).toEqual(valid ? [] : [{ field: "check_out", message: `must be later than check_in (${check_in})` }])
    }
  })

  test.each(stays)("check_out %s: UpdateReservation with both dates", (_name, check_in, check_out, valid) => {
    expect(fieldsOf(UpdateReservation, { ...validUpdate, check_in, check_out })).toEqual(valid ? [] : ["check_out"])
  })

  test("UpdateReservation with one date leaves the comparison to the service", () => {
    expectValid(UpdateReservation, { ...validUpdate, check_in: "2026-03-10" })
    expectValid(UpdateReservation, { ...validUpdate, check_out: "2020-01-01" })
  })

  test("an invalid date is reported once, without a misleading order error", () => {
    expect(fieldsOf(CreateReservation, { ...validCreate, check_in: "2026-03-10", check_out: "2026-02-30" })).toEqual([
      "check_out"
    ])
    expect(issuesOf(CreateReservation, { ...validCreate, check_out: "2026-02-30" })).toHaveLength(1)
  })
})

describe("exactly one property identifier (spec rule 3)", () => {
  const values = { property_id: PROPERTY_ID, property_external_id: "HOTEL-7", rnt_id: "12345" } as const
  const none = withField(validCreate, "property_id", undefined) as Record<string, unknown>
  const combinations: ReadonlyArray<ReadonlyArray<keyof typeof values>> = [
    [],
    ["property_id"],
    ["property_external_id"],
    ["rnt_id"],
    ["property_id", "property_external_id"],
    ["property_id", "rnt_id"],
    ["property_external_id", "rnt_id"],
    ["property_id", "property_external_id", "rnt_id"]
  ]

  for (const [name, schema, base] of [
    ["CreateReservation", CreateReservation, none],
    ["SubmitRegistration", SubmitRegistration, withField(validSubmit, "rnt_id", undefined) as Record<string, unknown>]
  ] as const) {
    test.each(combinations.map((sent) => [sent.join(" + ") || "none", sent] as const))(`${name}: %s`, (_label, sent) => {
      const body = { ...base, ...Object.fromEntries(sent.map((key) => [key, values[key]])) }
      const issues = issuesOf(schema, body)
      if (sent.length === 1) {
        expect(issues).toEqual([])
        const valid: Pick<CreateReservation, PropertyIdentifier> = decoded(schema as Schema.Schema<any, any, never>, body)
        expect(propertyReference(valid)).toEqual({ by: sent[0]!, value: values[sent[0]!] })
      } else if (sent.length === 0) {
        expect(issues).toEqual([
          {
            field: "property_id",
            message: "exactly one of property_id, property_external_id or rnt_id is required; none was sent"
          }
        ])
      } else {
        const message = `exactly one of property_id, property_external_id or rnt_id may be sent; got ${sent.join(" and ")}`
        expect(issues).toEqual(sent.map((field) => ({ field, message })))
      }
    })
  }

  test("identifier formats", () => {
    expect(issuesOf(CreateReservation, { ...validCreate, property_id: "not-a-uuid" })).toEqual([
      { field: "property_id", message: "must be a UUID" }
    ])
    expect(fieldsOf(CreateReservation, { ...none, rnt_id: "" })).toEqual(["rnt_id"])
    expect(fieldsOf(CreateReservation, { ...none, rnt_id: 12345 })).toEqual(["rnt_id"])
  })

  test("an identifier sent as null counts as sent and fails its own type", () => {
    expect(issuesOf(CreateReservation, { ...validCreate, rnt_id: null }).map((issue) => issue.field)).toEqual([
      "rnt_id",
      "property_id",
      "rnt_id"
    ])
  })
})

describe("metadata (design §6.7: at most 4096 bytes of compact UTF-8 JSON)", () => {
  // {"k":"…"} is 8 bytes plus the string's UTF-8 bytes
  const cases: ReadonlyArray<readonly [string, unknown, number]> = [
    ["ASCII at the limit", { k: "a".repeat(4088) }, 4096],
    ["ASCII one past", { k: "a".repeat(4089) }, 4097],
    ["2-byte é at the limit (2052 UTF-16 units)", { k: "é".repeat(2044) }, 4096],
    ["2-byte é one past", { k: "é".repeat(2044) + "a" }, 4097],
    ["3-byte € at the limit", { k: "€".repeat(1362) + "aa" }, 4096],
    ["3-byte € one past", { k: "€".repeat(1363) }, 4097],
    ["4-byte emoji at the limit", { k: "😀".repeat(1022) }, 4096],
    ["4-byte emoji one past", { k: "😀".repeat(1022) + "a" }, 4097]
  ]

  test.each(cases)("%s", (_name, metadata, bytes) => {
    expect(metadataBytes(metadata)).toBe(bytes)
    for (const [schema, base] of [[CreateReservation, validCreate], [UpdateReservation, validUpdate], [
      SubmitRegistration,
      validSubmit
    ]] as const) {
      const issues = issuesOf(schema, { ...base, metadata })
      expect(issues).toEqual(
        bytes <= 4096 ? [] : [{ field: "metadata", message: `must be at most 4096 bytes as compact UTF-8 JSON (got ${bytes})` }]
      )
    }
  })

  test("whitespace of the request does not count: the size is of the compact JSON", () => {
    const metadata = JSON.parse(`{ "k" :   "${"a".repeat(4088)}"   }`)
    expectValid(CreateReservation, { ...validCreate, metadata })
  })

  test.each([[[1, 2]], [null], ["text"], [42], [true]])("metadata %p is not a JSON object", (metadata) => {
    expect(issuesOf(CreateReservation, { ...validCreate, metadata })).toEqual([
      { field: "metadata", message: "must be a JSON object" }
    ])
  })

  test("metadata comes back unchanged: nested values, key order and even an own __proto__ key", () => {
    const metadata = JSON.parse(`{"z":1,"a":{"b":[1,"x",null,{"c":true}]},"__proto__":{"p":1},"é":"ü"}`)
    const body = decoded(CreateReservation, { ...validCreate, metadata })
    expect(body.metadata).toBe(metadata)
    expect(JSON.stringify(body.metadata)).toBe(`{"z":1,"a":{"b":[1,"x",null,{"c":true}]},"__proto__":{"p":1},"é":"ü"}`)
  })
})

describe("guests (design §6.3)", () => {
  const submitWith = (guest: Record<string, unknown>) => ({ ...validSubmit, guests_count: 1, guests: [guest] })
  const foreignTypes = ["Pasaporte", "C.E", "D.E", "C.D", "PPT"]
  const colombianTypes = ["C.C", "T.I", "R.C"]

  test.each(foreignTypes)("%s needs fecha_nacimiento", (tipo_documento) => {
    const guest = { ...foreigner, tipo_documento }
    expectValid(SubmitRegistration, submitWith(guest))
    expect(issuesOf(SubmitRegistration, submitWith(withField(guest, "fecha_nacimiento", undefined) as any))).toEqual([
      { field: "guests[0].fecha_nacimiento", message: `is required when tipo_documento is ${tipo_documento}` }
    ])
  })

  test.each(colombianTypes)("%s needs no fecha_nacimiento and is only for nacionalidad CO", (tipo_documento) => {
    expectValid(SubmitRegistration, submitWith({ ...colombian, tipo_documento }))
    expect(issuesOf(SubmitRegistration, submitWith({ ...colombian, tipo_documento, nacionalidad: "VE" }))).toEqual([
      {
        field: "guests[0].tipo_documento",
        message: `${tipo_documento} is a Colombian document; with nacionalidad VE use Pasaporte, C.E, D.E, C.D, PPT`
      }
    ])
  })

  test.each(foreignTypes)("%s is fine for a Colombian too", (tipo_documento) => {
    expectValid(SubmitRegistration, submitWith({ ...foreigner, tipo_documento, nacionalidad: "CO" }))
  })

  test("a lower-case nationality is reported once, as a code error", () => {
    expect(issuesOf(SubmitRegistration, submitWith({ ...colombian, nacionalidad: "ve" }))).toEqual([
      { field: "guests[0].nacionalidad", message: "must be an ISO 3166-1 alpha-2 country code in upper case (VE, not ve)" }
    ])
  })

  test("fecha_nacimiento must be a real date (whether it is in the future needs a clock: see bornAfter)", () => {
    expect(fieldsOf(SubmitRegistration, submitWith({ ...foreigner, fecha_nacimiento: "1990-02-30" }))).toEqual([
      "guests[0].fecha_nacimiento"
    ])
    expectValid(SubmitRegistration, submitWith({ ...foreigner, fecha_nacimiento: "2999-01-01" }))
    expect(bornAfter([{ fecha_nacimiento: "2026-03-11" }, {}, { fecha_nacimiento: "2026-03-10" }], "2026-03-10")).toEqual([0])
  })

  describe("country codes", () => {
    const countryFields = ["nacionalidad", "pais_procedencia", "pais_residencia"]
    test("the list holds the 249 assigned codes, upper case, sorted, unique", () => {
      expect(COUNTRY_CODES).toHaveLength(249)
      expect(new Set(COUNTRY_CODES).size).toBe(249)
      expect([...COUNTRY_CODES].sort()).toEqual([...COUNTRY_CODES])
      for (const code of COUNTRY_CODES) expect(code).toMatch(/^[A-Z]{2}$/)
      for (const code of ["CO", "US", "VE", "EC", "PE", "BR", "ES", "GB", "SS", "AQ", "BQ", "CW", "SX"]) {
        expect(isCountryCode(code)).toBe(true)
      }
    })

    test.each(countryFields.flatMap((field) => ["CO", "VE", "SS", "AX"].map((code) => [field, code])))(
      "%s %p is accepted",
      (field, code) => {
        expectValid(SubmitRegistration, submitWith({ ...foreigner, [field]: code }))
      }
    )

    test.each(
      countryFields.flatMap((field) =>
        [
          ["co", "must be an ISO 3166-1 alpha-2 country code in upper case (CO, not co)"],
          ["Us", "must be an ISO 3166-1 alpha-2 country code in upper case (US, not Us)"],
          ["XX", "must be an assigned ISO 3166-1 alpha-2 country code (for example CO, US)"],
          ["UK", "must be an assigned ISO 3166-1 alpha-2 country code (for example CO, US)"],
          ["EU", "must be an assigned ISO 3166-1 alpha-2 country code (for example CO, US)"],
          ["XK", "must be an assigned ISO 3166-1 alpha-2 country code (for example CO, US)"],
          ["AN", "must be an assigned ISO 3166-1 alpha-2 country code (for example CO, US)"],
          ["COL", "must be an assigned ISO 3166-1 alpha-2 country code (for example CO, US)"],
          ["", "must be an assigned ISO 3166-1 alpha-2 country code (for example CO, US)"]
        ].map(([code, message]) => [field, code, message])
      )
    )("%s %p is refused", (field, code, message) => {
      expect(issuesOf(SubmitRegistration, submitWith({ ...foreigner, [field!]: code }))).toEqual([
        { field: `guests[0].${field}`, message: message! }
      ])
    })
  })

  test.each([
    ["numero_documento", "AB12cd34", true],
    ["numero_documento", "AB-1234", false],
    ["numero_documento", "AB 1234", false],
    ["numero_documento", "ÁB1234", false],
    ["numero_documento", "", false],
    ["email", "ana.gomez+hotel@example.com.co", true],
    ["email", "ana", false],
    ["email", "ana@", false],
    ["email", "@example.com", false],
    ["email", "ana@example", false],
    ["email", "ana gomez@example.com", false],
    ["email", `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(59)}.co`, false],
    ["doc_photo_front_url", "https://files.example.com/doc/front.jpg", true],
    ["doc_photo_back_url", "https://files.example.com/doc/back.png?sig=abc", true],
    ["doc_photo_front_url", "files.example.com/front.jpg", false],
    ["doc_photo_front_url", "/relative/front.jpg", false],
    ["doc_photo_front_url", "not a url", false],
    ["doc_photo_back_url", "https://exa mple.com/x.jpg", false],
    ["nombre", " ", false],
    ["ciudad_residencia", "", false],
    ["phone", "+57 300 000 0000", true],
    ["address", "", true]
  ])("guest %s %p valid: %p", (field, value, valid) => {
    expect(fieldsOf(SubmitRegistration, submitWith({ ...foreigner, [field]: value }))).toEqual(
      valid ? [] : [`guests[0].${field}`]
    )
  })

  // Also pins effect's "stable filter" behaviour the cross-field rules rely on (Reservation.ts, `crossField`):
  // without it the rules would only run once every field is valid.
  test("errors in several guests are all reported, with their paths, together with top-level ones", () => {
    const body = {
      ...validSubmit,
      rnt_id: undefined,
      check_out: validSubmit.check_in,
      guests_count: 4,
      guests: [
        { ...colombian, nacionalidad: "xx" },
        foreigner,
        { ...foreigner, numero_documento: "A-1", fecha_nacimiento: undefined, email: "nope" },
        { ...colombian, tipo_documento: "T.I", nacionalidad: "PE", numero_documento: "X9" }
      ]
    }
    expect(fieldsOf(SubmitRegistration, JSON.parse(JSON.stringify(body))).sort()).toEqual(
      [
        "guests[0].nacionalidad",
        "guests[2].numero_documento",
        "guests[2].email",
        "guests[2].fecha_nacimiento",
        "guests[3].tipo_documento",
        "property_id",
        "check_out"
      ].sort()
    )
  })

  test("a guest that is not an object is named", () => {
    expect(issuesOf(SubmitRegistration, { ...validSubmit, guests: [colombian, 5] })).toEqual([
      { field: "guests[1]", message: "Expected GuestInput, actual 5" }
    ])
  })

  test("GuestInput on its own reports all its issues", () => {
    expect(fieldsOf(GuestInput, { tipo_documento: "Pasaporte", numero_documento: "?" }).sort()).toEqual(
      [
        "numero_documento",
        "nombre",
        "apellido",
        "nacionalidad",
        "pais_procedencia",
        "ciudad_procedencia",
        "pais_residencia",
        "ciudad_residencia",
        "fecha_nacimiento"
      ].sort()
    )
  })
})

describe("not schema errors: left to the service", () => {
  test("repeated numero_documento decodes; duplicateDocuments finds it (409 duplicate_document)", () => {
    const guests = [
      colombian,
      { ...foreigner, numero_documento: "ab12" },
      { ...colombian, numero_documento: "1020304050", tipo_documento: "T.I" },
      { ...foreigner, numero_documento: "AB12" },
      { ...foreigner, numero_documento: "Z9" }
    ]
    const body = decoded(SubmitRegistration, { ...validSubmit, guests_count: 5, guests })
    expect(duplicateDocuments(body.guests)).toEqual([
      { numero_documento: "1020304050", indexes: [0, 2] },
      { numero_documento: "ab12", indexes: [1, 3] }
    ])
    expect(duplicateDocuments([colombian, foreigner])).toEqual([])
  })

  test("guests.length ≠ guests_count decodes; guestCountMismatch names both (400 registration_rejected)", () => {
    const body = decoded(SubmitRegistration, { ...validSubmit, guests_count: 3 })
    expect(guestCountMismatch(body)).toEqual({ guests_count: 3, guests: 2 })
    expect(guestCountMismatch(decoded(SubmitRegistration, validSubmit))).toBeUndefined()
  })
})

describe("UpdateReservation", () => {
  test.each(["guest_email", "guest_phone", "notes"])("%s: null clears", (field) => {
    expect(decoded(UpdateReservation, { ...validUpdate, [field]: null })).toEqual({ ...validUpdate, [field]: null })
  })

  test.each(["guest_name", "guests_count", "check_in", "check_out", "metadata", "external_id"])(
    "%s: null is refused",
    (field) => {
      expect(fieldsOf(UpdateReservation, { ...validUpdate, [field]: null })).toEqual([field])
    }
  )

  test("CreateReservation does not take null for its optional fields", () => {
    expect(fieldsOf(CreateReservation, { ...validCreate, guest_email: null, notes: null })).toEqual(["guest_email", "notes"])
  })

  test("an invalid e-mail is reported on guest_email", () => {
    expect(fieldsOf(UpdateReservation, { ...validUpdate, guest_email: "nope" })).toEqual(["guest_email"])
    expect(fieldsOf(CreateReservation, { ...validCreate, guest_email: "nope" })).toEqual(["guest_email"])
    expectValid(CreateReservation, { ...validCreate, guest_email: "ana@example.com" })
  })
})

describe("every failing field at once; unknown fields dropped", () => {
  test("CreateReservation reports field and cross-field issues together", () => {
    const body = {
      external_id: "",
      property_id: PROPERTY_ID,
      rnt_id: "1",
      check_in: "2026-03-10",
      check_out: "2026-03-09",
      guest_name: "x".repeat(256),
      guests_count: 0,
      currency: "EUR",
      total_amount: -1,
      guest_email: "x",
      metadata: [],
      sandbox_simulate: "nope"
    }
    expect(fieldsOf(CreateReservation, body).sort()).toEqual(
      [
        "external_id",
        "property_id",
        "rnt_id",
        "check_out",
        "guest_name",
        "guests_count",
        "currency",
        "total_amount",
        "guest_email",
        "metadata",
        "sandbox_simulate"
      ].sort()
    )
  })

  test("a body that is not an object", () => {
    expect(issuesOf(CreateReservation, [])).toEqual([{ field: "body", message: "Expected CreateReservation, actual []" }])
    expect(fieldsOf(CancelReservation, "x")).toEqual(["body"])
  })

  test("unknown fields are dropped, at every level", () => {
    const create = decoded(CreateReservation, { ...validCreate, foo: 1, guests: [] })
    expect(create).toEqual(validCreate as any)
    const submit = decoded(SubmitRegistration, {
      ...validSubmit,
      guest_email: "a@b.co",
      notes: "x",
      guests: [{ ...colombian, extra: true }, foreigner]
    })
    expect(submit).toEqual(validSubmit as any)
    expect(decoded(UpdateReservation, { ...validUpdate, source: "x", room_number: "1" })).toEqual(validUpdate)
    expect(decoded(CancelReservation, { ...validCancel, reason: "no show", by: "me" })).toEqual({
      ...validCancel,
      reason: "no show"
    })
    expect(decoded(RegistrationQuery, { external_id: "a", include: "guests", page: "2" })).toEqual({
      external_id: "a",
      include: "guests"
    })
  })
})

describe("responses", () => {
  const report = { status: "success", reported_at: "2026-03-10T05:00:00.000Z", simulated: true }
  const status = {
    ok: true,
    reservation_id: "6f1d2c3b-0000-4000-8000-000000000001",
    external_id: "PMS-1",
    status: "compliant",
    reservation_status: "confirmed",
    sandbox: true,
    checkin_token: null,
    checkin_status: "completed",
    guests_registered: 2,
    tra: { ...report, sends_on: "2026-03-10", mincit_code: 4242 },
    sire: {
      ...report,
      foreign_guests: 1,
      exit: { status: "success", sends_on: "2026-03-12", reported_at: "2026-03-12T15:00:00.000Z", simulated: true }
    },
    departed_on: "2026-03-12"
  }
  const reservation = {
    ...status,
    source: null,
    metadata: { room_type: "suite" },
    checkin_url: null,
    created_at: "2026-03-01T12:00:00.000Z",
    idempotent_replay: false
  }
  const guest = {
    is_primary: true,
    tipo_documento: "Pasaporte",
    numero_documento: "X1",
    nombre: "John",
    apellido: "Smith",
    nacionalidad: "US",
    fecha_nacimiento: "1985-07-04",
    email: null,
    phone: null,
    address: null,
    ciudad_residencia: "Miami",
    pais_residencia: "US",
    registered_at: "2026-03-09T20:00:00.000Z",
    document_uploaded: null
  }
  const detail = {
    ...reservation,
    property_id: PROPERTY_ID,
    check_in: "2026-03-10",
    check_out: "2026-03-12",
    guests_count: 2,
    completed_at: null
  }

  test.each([
    ["RegistrationStatus", RegistrationStatus, status],
    ["ReservationResponse", ReservationResponse, reservation],
    ["RegistrationDetail without guests", RegistrationDetail, detail],
    ["RegistrationDetail with guests", RegistrationDetail, { ...detail, guests: [guest] }],
    ["UpdateResponse", UpdateResponse, { ...reservation, changed: ["check_out", "guests_count"] }],
    [
      "CancelResponse",
      CancelResponse,
      {
        ...status,
        status: "cancelled",
        reservation_status: "cancelled",
        already_cancelled: false,
        already_reported: { tra: true, sire: false },
        warning: "the TRA report had already been sent"
      }
    ],
    [
      "CancelResponse without warning",
      CancelResponse,
      { ...status, already_cancelled: true, already_reported: { tra: false, sire: false } }
    ],
    ["Report without warning or simulated", Report, { status: "not_applicable", reported_at: null }],
    ["TraReport", TraReport, { status: "pending", reported_at: null, warning: "x", sends_on: null, mincit_code: null }],
    ["SireReport", SireReport, {
      status: "error",
      reported_at: null,
      warning: "rejected",
      foreign_guests: 2,
      exit: { status: "not_applicable", sends_on: null, reported_at: null }
    }]
  ] as const)("%s decodes and encodes back unchanged", (_name, schema, value) => {
    const decodedValue = decoded(schema as Schema.Schema<any, any, never>, value)
    expect(Schema.encodeSync(schema as Schema.Schema<any, any, never>)(decodedValue)).toEqual(value)
  })

  test("RegistrationDetail without include=guests has no guests key", () => {
    expect("guests" in decoded(RegistrationDetail, detail)).toBe(false)
  })

  test.each([
    ["guests_registered", 1.5],
    ["tra.mincit_code", "4242"],
    ["sire.foreign_guests", null],
    ["tra.sends_on", "2026-02-30"]
  ])("RegistrationStatus.%s %p is refused", (field, value) => {
    expect(fieldsOf(RegistrationStatus, withField(status, field, value))).toEqual([field])
  })

  const identified = {
    CreateReservation,
    UpdateReservation,
    CancelReservation,
    SubmitRegistration,
    GuestInput,
    Report,
    TraReport,
    SireReport,
    Guest,
    RegistrationStatus,
    ReservationResponse,
    RegistrationDetail,
    UpdateResponse,
    CancelResponse
  }

  test.each(Object.entries(identified))("%s carries its identifier and has a JSON Schema", (name, schema) => {
    expect(SchemaAST.getIdentifierAnnotation(schema.ast)).toEqual(Option.some(name))
    expect(() => JSONSchema.make(schema as Schema.Schema<any, any, never>)).not.toThrow()
  })

  // Updated for issue 14: path and query structs used to carry an identifier too, which made the OpenAPI
  // generator emit them as `$ref`s and drop every parameter of endpoints 6 and 8. They must stay inline.
  test.each(Object.entries({ RegistrationQuery, RegistrationPath, IncludeQuery }))(
    "%s (parameters) carries no identifier and has a JSON Schema with its properties at the top",
    (_name, schema) => {
      expect(SchemaAST.getIdentifierAnnotation(schema.ast)).toEqual(Option.none())
      expect(JSONSchema.make(schema as Schema.Schema<any, any, never>)).toHaveProperty("properties")
    }
  )
})
