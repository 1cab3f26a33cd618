/**
 * Issue 3, "Done when": every length/range limit of endpoints 3, 4, 5, 6, 7 and 8 at the boundary (accepted)
 * and one past it (400 invalid_request naming exactly that field), over real HTTP on real PostgreSQL; PII
 * absence without include=guests; tenant and environment isolation; endpoint 8 vs a `/` in the external_id;
 * rate-limit headers and buckets. Schema-level boundaries live in Reservation.test.ts; this file proves the
 * wire and the database columns agree with them (an accepted value must also be storable: no 500).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { admin, call, type HttpResult, seedAccount } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"
import { colombian, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { startFakeTrm } from "../support/trm.ts"

/** `currency: USD` converts with the fake rate. */
const trm = startFakeTrm()
const f = appFixture({ TRM_URL: trm.url, PUBLIC_BASE_URL: "https://checkin.example.co" })

/** Account b: another tenant (default limits). Account c: only for the rate-limit headers (default limits). */
let b: Awaited<ReturnType<typeof seedAccount>>
let c: Awaited<ReturnType<typeof seedAccount>>
let aLive: { property_id: string }
const PMS_ID_120 = "P".repeat(119) + "1"

beforeAll(async () => {
  b = await seedAccount(f.app, "Hotelera B")
  c = await seedAccount(f.app, "Hotelera C")
  // Account a runs well over 60 writes a minute here.
  await admin(f.app, (client) => client.SetLimits({ account_id: f.account.accountId, writes: 100_000, reads: 100_000 }))
  aLive = await admin(f.app, (client) => client.CreateProperty({ account_id: f.account.accountId, name: "Live" }))
  // property_external_id at its limit (120) must resolve: map one test property to a 120-character PMS id.
  const mapped = await call(f.app, "PATCH", "/api/partners/properties", {
    key: f.account.testKey,
    json: { mappings: [{ property_id: f.account.testProperties[1]!.property_id, external_id: PMS_ID_120 }] }
  })
  if (mapped.status !== 200) throw new Error(`mapping failed: ${JSON.stringify(mapped.body)}`)
}, 30_000)

afterAll(() => {
  trm.stop()
})

// ---------------------------------------------------------------------------------------------------------
// Helpers

const x = (n: number) => "x".repeat(n)
const rand = () => Math.random().toString(36).slice(2, 10)
/** A unique external_id of exactly `n` characters. */
const idOf = (n: number) => `L${rand()}`.padEnd(n, "x").slice(0, n)

type Body = Record<string, unknown>
const testKey = () => f.account.testKey
const create = (json: Body, key = testKey()) => call(f.app, "POST", "/api/partners/reservations", { key, json })
const patch = (json: Body, key = testKey()) => call(f.app, "PATCH", "/api/partners/reservations", { key, json })
const cancel = (json: Body, key = testKey()) => call(f.app, "POST", "/api/partners/reservations/cancel", { key, json })
const submit = (json: Body, key = testKey()) => call(f.app, "POST", "/api/partners/registrations", { key, json })
const byQuery = (externalId: string, key = testKey(), include = false) =>
  call(
    f.app,
    "GET",
    `/api/partners/registrations?external_id=${encodeURIComponent(externalId)}${include ? "&include=guests" : ""}`,
    { key }
  )
const byPath = (externalId: string, key = testKey(), include = false) =>
  call(f.app, "GET", `/api/partners/registrations/${encodeURIComponent(externalId)}${include ? "?include=guests" : ""}`, {
    key
  })

const reservation = (overrides: Body = {}): Body =>
  reservationBody(f.account.testProperties[0]!.property_id, { external_id: idOf(16), ...overrides })

const manyGuests = (n: number) => Array.from({ length: n }, (_, i) => colombian({ numero_documento: `${1000 + i}` }))
/** An endpoint-7 body; guests_count follows the guests unless overridden. */
const registration = (overrides: Body = {}): Body => {
  const guests = (overrides.guests as Array<Body> | undefined) ?? [colombian(), foreigner()]
  return registrationBody(f.account.testProperties[0]!.property_id, guests, { external_id: idOf(16), ...overrides })
}

const fieldsOf = (res: HttpResult) => (res.body?.details?.fields ?? []).map((issue: { field: string }) => issue.field)
/** 400 invalid_request naming exactly `field` (and nothing else). */
const expectRefused = (res: HttpResult, field: string) => {
  expect({ status: res.status, code: res.body?.code, fields: fieldsOf(res) }).toEqual({
    status: 400,
    code: "invalid_request",
    fields: [field]
  })
}
const expectStatus = (res: HttpResult, status: number) => {
  // on failure, show the body rather than a bare number
  expect({ status: res.status, body: status === res.status ? "ok" : res.body }).toEqual({ status, body: "ok" })
}

// A case: [label, field the error must name, overrides accepted, overrides refused]
type Case = readonly [string, string, Body, Body]

// ---------------------------------------------------------------------------------------------------------

describe("endpoint 3, POST /api/partners/reservations: boundary accepted (201), one past refused (400)", () => {
  const cases: ReadonlyArray<Case> = [
    ["external_id 120/121", "external_id", { external_id: idOf(120) }, { external_id: idOf(121) }],
    ["external_id 120 emoji (code points)/121", "external_id", { external_id: "😀".repeat(119) + rand().slice(0, 1) }, {
      external_id: "😀".repeat(121)
    }],
    ["source 50/51", "source", { source: x(50) }, { source: x(51) }],
    ["property_external_id 120/121", "property_external_id", { property_id: undefined, property_external_id: PMS_ID_120 }, {
      property_id: undefined,
      property_external_id: PMS_ID_120 + "1"
    }],
    ["room_number 50/51", "room_number", { room_number: x(50) }, { room_number: x(51) }],
    ["guest_name 255/256", "guest_name", { guest_name: x(255) }, { guest_name: x(256) }],
    ["guest_name 255 ñ/256", "guest_name", { guest_name: "ñ".repeat(255) }, { guest_name: "ñ".repeat(256) }],
    ["guest_phone 30/31", "guest_phone", { guest_phone: "3".repeat(30) }, { guest_phone: "3".repeat(31) }],
    ["notes 2000/2001", "notes", { notes: x(2000) }, { notes: x(2001) }],
    ["metadata 4096/4097 bytes (ASCII)", "metadata", { metadata: { k: "a".repeat(4088) } }, {
      metadata: { k: "a".repeat(4089) }
    }],
    ["metadata 4096/4097 bytes (2-byte é)", "metadata", { metadata: { k: "é".repeat(2044) } }, {
      metadata: { k: "é".repeat(2044) + "a" }
    }],
    ["guests_count 1/0", "guests_count", { guests_count: 1 }, { guests_count: 0 }],
    ["expected_guests 1/0", "expected_guests", { expected_guests: 1 }, { expected_guests: 0 }],
    ["total_amount 0/-0.01", "total_amount", { total_amount: 0 }, { total_amount: -0.01 }],
    ["currency COP/EUR", "currency", { currency: "COP", total_amount: 10 }, { currency: "EUR", total_amount: 10 }],
    ["currency USD/EUR", "currency", { currency: "USD", total_amount: 10 }, { currency: "EUR", total_amount: 10 }],
    ["check_out one day after check_in / equal to it", "check_out", { check_out: "2026-12-21", check_in: "2026-12-20" }, {
      check_out: "2026-12-20",
      check_in: "2026-12-20"
    }],
    ["guest_email valid/invalid", "guest_email", { guest_email: "ana.gomez+hotel@example.com.co" }, { guest_email: "ana@" }]
  ]

  test.each(cases)("%s", async (_label, field, ok, bad) => {
    const [accepted, refused] = await Promise.all([create(reservation(ok)), create(reservation(bad))])
    expectStatus(accepted, 201)
    expectRefused(refused, field)
  })

  test("metadata size is of the compact JSON: a whitespace-padded 4096-byte object is accepted and returned compact", async () => {
    const id = idOf(20)
    const raw = JSON.stringify(reservation({ external_id: id })).replace(/}$/, `, "metadata" :  {  "k" :   "${"a".repeat(4088)}"  } }`)
    const res = await call(f.app, "POST", "/api/partners/reservations", {
      key: testKey(),
      body: raw,
      headers: { "content-type": "application/json" }
    })
    expectStatus(res, 201)
    expect(JSON.stringify(res.body.metadata)).toBe(`{"k":"${"a".repeat(4088)}"}`)
  })

  test("values at the limit are stored and read back unchanged (no truncation by a column)", async () => {
    const body = reservation({
      external_id: idOf(120),
      source: "s".repeat(50),
      room_number: "r".repeat(50),
      guest_name: "ñ".repeat(255),
      guest_phone: "3".repeat(30),
      notes: "é".repeat(2000),
      metadata: { k: "€".repeat(1362) + "aa" }
    })
    expectStatus(await create(body), 201)
    const [row] = await f.db.query<Record<string, string>>(
      "SELECT external_id, source, room_number, guest_name, guest_phone, notes FROM reservations WHERE external_id = $1",
      [body.external_id]
    )
    expect(row).toEqual({
      external_id: body.external_id as string,
      source: body.source as string,
      room_number: body.room_number as string,
      guest_name: body.guest_name as string,
      guest_phone: body.guest_phone as string,
      notes: body.notes as string
    })
    const detail = await byQuery(body.external_id as string)
    expect(detail.body.source).toBe(body.source)
    expect(detail.body.metadata).toEqual(body.metadata)
  })
})

describe("endpoint 4, PATCH /api/partners/reservations: boundary accepted (200), one past refused (400)", () => {
  // each case patches its own fresh reservation (created with guests_count 2, 2026-12-20 → 2026-12-23)
  const cases: ReadonlyArray<Case> = [
    ["guests_count 1/0", "guests_count", { guests_count: 1 }, { guests_count: 0 }],
    ["guests_count 50/51", "guests_count", { guests_count: 50 }, { guests_count: 51 }],
    ["guest_name 255/256", "guest_name", { guest_name: x(255) }, { guest_name: x(256) }],
    ["guest_phone 30/31", "guest_phone", { guest_phone: "3".repeat(30) }, { guest_phone: "3".repeat(31) }],
    ["notes 2000/2001", "notes", { notes: x(2000) }, { notes: x(2001) }],
    ["metadata 4096/4097 bytes", "metadata", { metadata: { k: "a".repeat(4088) } }, { metadata: { k: "a".repeat(4089) } }],
    ["metadata 4096/4097 bytes (4-byte emoji)", "metadata", { metadata: { k: "😀".repeat(1022) } }, {
      metadata: { k: "😀".repeat(1022) + "a" }
    }],
    ["guest_email valid/invalid", "guest_email", { guest_email: "nuevo@example.co" }, { guest_email: "nope" }],
    ["check_out after check_in / equal to it", "check_out", { check_out: "2026-12-21" }, { check_out: "2026-12-20" }],
    ["both dates, one night / none", "check_out", { check_in: "2026-12-10", check_out: "2026-12-11" }, {
      check_in: "2026-12-10",
      check_out: "2026-12-10"
    }]
  ]

  test.each(cases)("%s", async (_label, field, ok, bad) => {
    const [r1, r2] = await Promise.all([create(reservation()), create(reservation())])
    expectStatus(r1, 201)
    expectStatus(r2, 201)
    const [accepted, refused] = await Promise.all([
      patch({ external_id: r1.body.external_id, ...ok }),
      patch({ external_id: r2.body.external_id, ...bad })
    ])
    expectStatus(accepted, 200)
    expect(accepted.body.changed).toEqual(Object.keys(ok).sort())
    expectRefused(refused, field)
  })

  test("external_id 120 is found (200) / 121 is refused (400)", async () => {
    const body = reservation({ external_id: idOf(120) })
    expectStatus(await create(body), 201)
    const [accepted, refused] = await Promise.all([
      patch({ external_id: body.external_id, guest_name: "Otra" }),
      patch({ external_id: idOf(121), guest_name: "Otra" })
    ])
    expectStatus(accepted, 200)
    expect(accepted.body.changed).toEqual(["guest_name"])
    expectRefused(refused, "external_id")
  })
})

describe("endpoint 5, POST /api/partners/reservations/cancel: boundary accepted (200), one past refused (400)", () => {
  test("external_id 120/121", async () => {
    const body = reservation({ external_id: idOf(120) })
    expectStatus(await create(body), 201)
    const [accepted, refused] = await Promise.all([
      cancel({ external_id: body.external_id }),
      cancel({ external_id: idOf(121) })
    ])
    expectStatus(accepted, 200)
    expect(accepted.body.external_id).toBe(body.external_id)
    expectRefused(refused, "external_id")
  })

  test("reason 500/501 (and 500 multi-byte)", async () => {
    const [r1, r2, r3] = await Promise.all([create(reservation()), create(reservation()), create(reservation())])
    const [accepted, acceptedMultiByte, refused] = await Promise.all([
      cancel({ external_id: r1.body.external_id, reason: x(500) }),
      cancel({ external_id: r2.body.external_id, reason: "ñ".repeat(500) }),
      cancel({ external_id: r3.body.external_id, reason: x(501) })
    ])
    expectStatus(accepted, 200)
    expectStatus(acceptedMultiByte, 200)
    expectRefused(refused, "reason")
    // the refused cancel did not cancel
    expect((await byQuery(r3.body.external_id)).body.reservation_status).toBe("confirmed")
  })
})

describe("endpoints 6 and 8, GET: external_id 120 found (200), 121 refused (400)", () => {
  test("query form (endpoint 6): 120 found, 121 refused", async () => {
    const body = reservation({ external_id: idOf(120) })
    expectStatus(await create(body), 201)
    const [q120, q121] = await Promise.all([byQuery(body.external_id as string), byQuery(idOf(121))])
    expectStatus(q120, 200)
    expect(q120.body.external_id).toBe(body.external_id)
    expectRefused(q121, "external_id")
  })

  test("path form (endpoint 8) up to 100 characters: found, and equal to the query form", async () => {
    const body = reservation({ external_id: idOf(100) })
    expectStatus(await create(body), 201)
    const [q, p] = await Promise.all([byQuery(body.external_id as string), byPath(body.external_id as string)])
    expectStatus(p, 200)
    expect(p.body).toEqual(q.body)
  })

  // The router's default maxParamLength (100) once dropped longer path ids (405); src/App.ts raises it.
  test("path form (endpoint 8): external_id 101..120 found (200), 121 refused (400 external_id)", async () => {
    const body = reservation({ external_id: idOf(120) })
    expectStatus(await create(body), 201)
    const [p101, p120, p121] = await Promise.all([
      byPath(idOf(101)),
      byPath(body.external_id as string),
      byPath(idOf(121))
    ])
    expect([p101.status, p101.body.code]).toEqual([404, "registration_not_found"])
    expectStatus(p120, 200)
    expectRefused(p121, "external_id")
  })

  test("include accepts only guests", async () => {
    const body = reservation()
    expectStatus(await create(body), 201)
    const id = body.external_id as string
    const [q, p] = await Promise.all([
      call(f.app, "GET", `/api/partners/registrations?external_id=${id}&include=everything`, { key: testKey() }),
      call(f.app, "GET", `/api/partners/registrations/${id}?include=everything`, { key: testKey() })
    ])
    expectRefused(q, "include")
    expectRefused(p, "include")
  })
})

describe("endpoint 7, POST /api/partners/registrations: boundary accepted (201), one past refused (400)", () => {
  const cases: ReadonlyArray<Case> = [
    ["external_id 120/121", "external_id", { external_id: idOf(120) }, { external_id: idOf(121) }],
    ["source 50/51", "source", { source: x(50) }, { source: x(51) }],
    ["property_external_id 120/121", "property_external_id", { property_id: undefined, property_external_id: PMS_ID_120 }, {
      property_id: undefined,
      property_external_id: PMS_ID_120 + "1"
    }],
    ["room_number 50/51", "room_number", { room_number: x(50) }, { room_number: x(51) }],
    ["guest_name 255/256", "guest_name", { guest_name: x(255) }, { guest_name: x(256) }],
    ["metadata 4096/4097 bytes", "metadata", { metadata: { k: "a".repeat(4088) } }, { metadata: { k: "a".repeat(4089) } }],
    ["metadata 4096/4097 bytes (3-byte €)", "metadata", { metadata: { k: "€".repeat(1362) + "aa" } }, {
      metadata: { k: "€".repeat(1363) }
    }],
    ["guests_count 1/0 (one guest)", "guests_count", { guests: [colombian()], guests_count: 1 }, {
      guests: [colombian()],
      guests_count: 0
    }],
    ["expected_guests 1/0", "expected_guests", { expected_guests: 1 }, { expected_guests: 0 }],
    ["total_amount 0/-0.01", "total_amount", { total_amount: 0 }, { total_amount: -0.01 }],
    ["currency COP/EUR", "currency", { currency: "COP", total_amount: 10 }, { currency: "EUR", total_amount: 10 }],
    ["currency USD/EUR", "currency", { currency: "USD", total_amount: 10 }, { currency: "EUR", total_amount: 10 }],
    ["check_out one day after check_in / equal to it", "check_out", { check_out: "2026-12-21" }, { check_out: "2026-12-20" }],
    ["guests 1/0", "guests", { guests: manyGuests(1) }, { guests: [], guests_count: 1 }],
    ["guests 30/31", "guests", { guests: manyGuests(30) }, { guests: manyGuests(31) }],
    ["numero_documento alphanumeric / with a hyphen", "guests[1].numero_documento", {
      guests: [colombian(), foreigner({ numero_documento: "AB12cd34" })]
    }, { guests: [colombian(), foreigner({ numero_documento: "AB-1234" })] }],
    ["numero_documento / with a space", "guests[0].numero_documento", { guests: [colombian({ numero_documento: "9" })] }, {
      guests: [colombian({ numero_documento: "10 20" })]
    }],
    ["numero_documento / with an accent", "guests[0].numero_documento", { guests: [colombian({ numero_documento: "AB1" })] }, {
      guests: [colombian({ numero_documento: "ÁB1" })]
    }],
    ["nacionalidad VE / lower case ve", "guests[1].nacionalidad", { guests: [colombian(), foreigner({ nacionalidad: "VE" })] }, {
      guests: [colombian(), foreigner({ nacionalidad: "ve" })]
    }],
    ["nacionalidad / unassigned XX", "guests[1].nacionalidad", { guests: [colombian(), foreigner({ nacionalidad: "SS" })] }, {
      guests: [colombian(), foreigner({ nacionalidad: "XX" })]
    }],
    ["nacionalidad / alpha-3 COL", "guests[0].nacionalidad", { guests: [colombian()] }, {
      guests: [colombian({ nacionalidad: "COL" })]
    }],
    ["C.C with nacionalidad CO / VE", "guests[0].tipo_documento", { guests: [colombian()] }, {
      guests: [colombian({ nacionalidad: "VE" })]
    }],
    ["pais_procedencia VE / UK", "guests[1].pais_procedencia", {
      guests: [colombian(), foreigner({ pais_procedencia: "VE" })]
    }, { guests: [colombian(), foreigner({ pais_procedencia: "UK" })] }],
    ["pais_residencia ES / es", "guests[1].pais_residencia", { guests: [colombian(), foreigner({ pais_residencia: "ES" })] }, {
      guests: [colombian(), foreigner({ pais_residencia: "es" })]
    }],
    ...(["Pasaporte", "C.E", "D.E", "C.D", "PPT"] as const).map((tipo): Case => [
      `${tipo}: fecha_nacimiento present / missing`,
      "guests[1].fecha_nacimiento",
      { guests: [colombian(), foreigner({ tipo_documento: tipo })] },
      { guests: [colombian(), foreigner({ tipo_documento: tipo, fecha_nacimiento: undefined })] }
    ]),
    ["C.C needs no fecha_nacimiento / Pasaporte does", "guests[0].fecha_nacimiento", { guests: [colombian()] }, {
      guests: [foreigner({ fecha_nacimiento: undefined })]
    }],
    ["guest email valid / invalid", "guests[1].email", { guests: [colombian(), foreigner({ email: "john@example.com" })] }, {
      guests: [colombian(), foreigner({ email: "john@example" })]
    }]
  ]

  test.each(cases)("%s", async (_label, field, ok, bad) => {
    const [accepted, refused] = await Promise.all([submit(registration(ok)), submit(registration(bad))])
    expectStatus(accepted, 201)
    expectRefused(refused, field)
  })

  test("30 guests with guests_count 30 are all registered", async () => {
    const body = registration({ guests: manyGuests(30) })
    const res = await submit(body)
    expectStatus(res, 201)
    expect(res.body.guests_registered).toBe(30)
    const detail = await byQuery(body.external_id as string, testKey(), true)
    expect(detail.body.guests_count).toBe(30)
    expect(detail.body.guests).toHaveLength(30)
  })
})

// ---------------------------------------------------------------------------------------------------------

describe("PII: RegistrationDetail without include=guests carries no personal data (endpoints 6 and 8)", () => {
  test("an endpoint-7 registration with guests, plus holder contact set by PATCH", async () => {
    const guests = [
      colombian({
        nombre: "Zacarías",
        apellido: "Quintero Villamizar",
        numero_documento: "77889911",
        email: "zacarias.q@correo.example",
        phone: "+57 311 222 3344",
        address: "Calle 93 # 11-27 apto 501",
        ciudad_procedencia: "Bucaramanga",
        ciudad_residencia: "Cúcuta"
      }),
      foreigner({
        nombre: "Wilhelmina",
        apellido: "Oosterhuis",
        numero_documento: "NL99XK4471",
        nacionalidad: "NL",
        pais_procedencia: "NL",
        pais_residencia: "NL",
        fecha_nacimiento: "1979-03-15",
        email: "w.oosterhuis@mail.example",
        phone: "+31 6 1234 5678",
        address: "Prinsengracht 263",
        ciudad_procedencia: "Utrecht",
        ciudad_residencia: "Amsterdam"
      })
    ]
    const holder = { guest_email: "titular.unico@holder.example", guest_phone: "+57 300 999 8877", notes: "Nota interna alérgico" }
    // SubmitRegistration has no holder contact fields (spec): sent anyway, they are dropped as unknown fields
    // (design §6.2), which the PATCH below proves by reporting all three as changed.
    const body = registration({ external_id: `PII/${rand()}`, guest_name: "Titular Hólder Únicoz", guests, ...holder })
    const submitted = await submit(body)
    expectStatus(submitted, 201)
    const patched = await patch({ external_id: body.external_id, ...holder })
    expectStatus(patched, 200)
    expect(patched.body.changed).toEqual(["guest_email", "guest_phone", "notes"])

    const guestPii = [
      "Zacarías",
      "Quintero Villamizar",
      "77889911",
      "zacarias.q@correo.example",
      "+57 311 222 3344",
      "Calle 93 # 11-27 apto 501",
      "Cúcuta",
      "Wilhelmina",
      "Oosterhuis",
      "NL99XK4471",
      "1979-03-15",
      "w.oosterhuis@mail.example",
      "+31 6 1234 5678",
      "Prinsengracht 263",
      "Amsterdam"
    ]
    const holderPii = ["Titular Hólder Únicoz", ...Object.values(holder)]
    const externalId = body.external_id as string
    // the external_id has a `/`: endpoint 8 is only usable without one, so it is queried on a twin without
    const twin = registration({ ...body, external_id: externalId.replace("/", "-") })
    expectStatus(await submit(twin), 201)
    expectStatus(await patch({ external_id: twin.external_id, ...holder }), 200)

    const [plainQuery, plainPath, fullQuery, fullPath] = await Promise.all([
      byQuery(externalId),
      byPath(twin.external_id as string),
      byQuery(externalId, testKey(), true),
      byPath(twin.external_id as string, testKey(), true)
    ])
    for (const plain of [plainQuery, plainPath]) {
      expectStatus(plain, 200)
      expect(plain.body.guests).toBeUndefined()
      expect(plain.body.guests_registered).toBe(2)
      const text = JSON.stringify(plain.body)
      expect([...guestPii, ...holderPii].filter((pii) => text.includes(pii))).toEqual([])
    }
    // the submit and modify responses carry none either
    for (const res of [submitted, patched]) {
      const text = JSON.stringify(res.body)
      expect([...guestPii, ...holderPii].filter((pii) => text.includes(pii))).toEqual([])
    }
    for (const full of [fullQuery, fullPath]) {
      expectStatus(full, 200)
      expect(full.body.guests).toHaveLength(2)
      const text = JSON.stringify(full.body)
      expect(guestPii.filter((pii) => !text.includes(pii))).toEqual([])
      // The holder's contact and notes are not fields of RegistrationDetail (spec), with or without guests.
      expect(holderPii.filter((pii) => text.includes(pii))).toEqual([])
    }
  })
})

describe("tenant and environment isolation (endpoints 4, 5, 6, 7, 8)", () => {
  test("another account's key and the other environment's key get 404; the same external_id is independent", async () => {
    const viaLink = reservation()
    const viaForm = registration()
    const [created, submitted] = await Promise.all([create(viaLink), submit(viaForm)])
    expectStatus(created, 201)
    expectStatus(submitted, 201)

    for (const key of [b.testKey, f.account.liveKey]) {
      for (const externalId of [viaLink.external_id as string, viaForm.external_id as string]) {
        const results = await Promise.all([
          patch({ external_id: externalId, guest_name: "Intruso", guests_count: 9 }, key),
          cancel({ external_id: externalId, reason: "intrusion" }, key),
          byQuery(externalId, key, true),
          byPath(externalId, key, true),
          byQuery(externalId, key),
          byPath(externalId, key)
        ])
        for (const res of results) expect([res.status, res.body.code]).toEqual([404, "registration_not_found"])
      }
    }

    // The same external_ids, created independently in account b and in a's live environment, each flow
    // crossed in b (a's endpoint-3 id through endpoint 7 is not registration_open there, and vice versa).
    const bProperty = b.testProperties[0]!.property_id
    const [bLink, bForm, liveLink, liveForm] = await Promise.all([
      create({ ...viaLink, external_id: viaForm.external_id, property_id: bProperty }, b.testKey),
      submit({ ...viaForm, external_id: viaLink.external_id, property_id: bProperty }, b.testKey),
      create({ ...viaLink, property_id: aLive.property_id }, f.account.liveKey),
      submit({ ...viaForm, property_id: aLive.property_id }, f.account.liveKey)
    ])
    for (const res of [bLink!, bForm!, liveLink!, liveForm!]) expectStatus(res, 201)
    expect(liveLink!.body.sandbox).toBe(false)
    expect(liveForm!.body.sandbox).toBe(false)
    const ids = [created, submitted, bLink!, bForm!, liveLink!, liveForm!].map((r) => r.body.reservation_id)
    expect(new Set(ids).size).toBe(6)

    // Changing or cancelling the copies leaves a's test reservations untouched.
    const changes = await Promise.all([
      cancel({ external_id: viaLink.external_id }, f.account.liveKey),
      cancel({ external_id: viaLink.external_id }, b.testKey),
      patch({ external_id: viaForm.external_id, guest_name: "Otro", guests_count: 7 }, b.testKey),
      cancel({ external_id: viaForm.external_id }, f.account.liveKey)
    ])
    for (const res of changes) expectStatus(res, 200)
    const [link, form] = await Promise.all([
      byPath(viaLink.external_id as string),
      byPath(viaForm.external_id as string)
    ])
    expect(link.body).toMatchObject({
      reservation_id: created.body.reservation_id,
      reservation_status: "confirmed",
      status: "pending_checkin",
      guests_count: 2
    })
    expect(form.body).toMatchObject({
      reservation_id: submitted.body.reservation_id,
      reservation_status: "confirmed",
      status: "compliant",
      guests_count: 2
    })
    for (const externalId of [viaLink.external_id, viaForm.external_id]) {
      const rows = await f.db.query("SELECT 1 FROM reservations WHERE external_id = $1", [externalId])
      expect(rows).toHaveLength(3)
    }
  }, 30_000)
})

describe("text that PostgreSQL cannot store", () => {
  // PostgreSQL refuses U+0000 in text; request strings are `StoredString`s, so it is a 400 naming the field.
  test("a NUL character is 400 invalid_request naming the field, on every endpoint", async () => {
    const existing = reservation()
    expectStatus(await create(existing), 201)
    const id = existing.external_id as string
    const cases: ReadonlyArray<[Promise<HttpResult>, string]> = [
      [create(reservation({ guest_name: "Ana\u0000" })), "guest_name"],
      [create(reservation({ notes: "a\u0000b" })), "notes"],
      [create(reservation({ external_id: `${idOf(10)}\u0000` })), "external_id"],
      [patch({ external_id: id, guest_name: "Ana\u0000" }), "guest_name"],
      [cancel({ external_id: id, reason: "\u0000" }), "reason"],
      [call(f.app, "GET", "/api/partners/registrations?external_id=%00", { key: testKey() }), "external_id"],
      [call(f.app, "GET", "/api/partners/registrations/%00", { key: testKey() }), "external_id"],
      [submit(registration({ guests: [colombian({ nombre: "Ana\u0000" })] })), "guests[0].nombre"],
      [submit(registration({ tipo_acomodacion: "Hab\u0000" })), "tipo_acomodacion"]
    ]
    for (const [res, field] of cases) expectRefused(await res, field)
    const mapping = await call(f.app, "PATCH", "/api/partners/properties", {
      key: testKey(),
      json: { mappings: [{ property_id: f.account.testProperties[0]!.property_id, external_id: "a\u0000" }] }
    })
    expectRefused(mapping, "mappings[0].external_id")
  })

  test("a path with malformed percent-encoding is 400 invalid_request, not 405", async () => {
    const res = await call(f.app, "GET", "/api/partners/registrations/%ZZ", { key: testKey() })
    expect([res.status, res.body.code]).toEqual([400, "invalid_request"])
  })
})

describe("endpoint 8 and a `/` in the external_id (spec rule 2)", () => {
  test("the query form finds it; a raw / in the path is another route", async () => {
    const externalId = `PMS/${rand()}/42`
    expectStatus(await create(reservation({ external_id: externalId })), 201)
    const [query, raw, encoded] = await Promise.all([
      byQuery(externalId),
      call(f.app, "GET", `/api/partners/registrations/${externalId}`, { key: testKey() }),
      byPath(externalId) // %2F-encoded
    ])
    expectStatus(query, 200)
    expect(query.body.external_id).toBe(externalId)
    expect([raw.status, raw.body.code]).toEqual([404, "not_found"])
    // Spec rule 2 only says ids with `/` "must use" the query form; it does not say what endpoint 8 answers
    // to an encoded one. The router percent-decodes the segment, so %2F reaches the same reservation.
    expectStatus(encoded, 200)
    expect(encoded.body).toEqual(query.body)
  })
})

describe("rate-limit headers (spec Limits): writes bucket for 3, 4, 5, 7; reads bucket for 6, 8", () => {
  test("a fresh key: one shared writes budget of 60, a separate reads budget of 120", async () => {
    const key = c.testKey
    const property_id = c.testProperties[0]!.property_id
    const r = reservation({ property_id })
    const responses: Array<[string, HttpResult]> = []
    responses.push(["3 create", await create(r, key)])
    responses.push(["4 modify", await patch({ external_id: r.external_id, guest_name: "Otra" }, key)])
    responses.push(["5 cancel", await cancel({ external_id: r.external_id }, key)])
    responses.push(["7 submit", await submit(registration({ property_id }), key)])
    responses.push(["6 query", await byQuery(r.external_id as string, key)])
    responses.push(["8 path", await byPath(r.external_id as string, key)])
    const now = Math.floor(Date.now() / 1000)
    const seen = responses.map(([name, res]) => {
      const reset = Number(res.headers.get("x-ratelimit-reset"))
      expect(Number.isInteger(reset) && reset >= now - 1 && reset <= now + 61).toBe(true)
      return [name, res.status, res.headers.get("x-ratelimit-limit"), res.headers.get("x-ratelimit-remaining")]
    })
    expect(seen).toEqual([
      ["3 create", 201, "60", "59"],
      ["4 modify", 200, "60", "58"],
      ["5 cancel", 200, "60", "57"],
      ["7 submit", 201, "60", "56"],
      ["6 query", 200, "120", "119"],
      ["8 path", 200, "120", "118"]
    ])
  })

  test("errors carry the headers too (400 on 3, 404 on 6)", async () => {
    const [bad, missing] = await Promise.all([
      create({ external_id: "" }, b.testKey),
      byQuery("nope-never", b.testKey)
    ])
    expect(bad.status).toBe(400)
    expect(bad.headers.get("x-ratelimit-limit")).toBe("60")
    expect(missing.status).toBe(404)
    expect(missing.headers.get("x-ratelimit-limit")).toBe("120")
  })
})
