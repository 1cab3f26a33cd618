import { describe, expect, test } from "bun:test"
import { admin, call, createProperty, seedAccount } from "../support/app.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { day, type ReportWorld, reportWorlds, runOn } from "../support/reportWorld.ts"

/**
 * The validate endpoint (design §8b, issue 25 item 1) over the real app: what it says the TRA and SIRE would be
 * sent is what a live report run then sends for the same body, it stores, sends and emits nothing, and it
 * answers endpoint 7's body errors as endpoint 7 does.
 */

const start = reportWorlds()

const VALIDATE = "/api/partners/registrations/validate"

const validate = (world: ReportWorld, json: unknown, key = world.liveKey) => call(world.app, "POST", VALIDATE, { key, json })

/** Rows every effect of a registration would leave: none may appear after a validate. */
const TABLES = [
  "reservations",
  "guests",
  "events",
  "webhook_deliveries",
  "tra_submissions",
  "sire_movements",
  "document_fetches"
] as const

const rowCounts = async (world: ReportWorld) =>
  Object.fromEntries(
    await Promise.all(TABLES.map(async (table) => {
      const [row] = await world.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
      return [table, row?.n] as const
    }))
  )

const stay = { check_in: day(0), check_out: day(2), room_number: "204", total_amount: 480000, currency: "COP" }

describe("POST /api/partners/registrations/validate (design §8b)", () => {
  test("would_send is what a live run then posts to the TRA and writes in the SIRE file; validating stores and sends nothing", async () => {
    const world = await start("gateway")
    const body = registrationBody(world.propertyId, [colombian(), foreigner({ numero_documento: "VS771" })], stay)
    const empty = await rowCounts(world)

    const res = await validate(world, body)
    expect(res.status).toBe(200)
    expect(res.headers.get("x-ratelimit-limit")).not.toBeNull()
    expect(res.body).toMatchObject({ valid: true, tra: { applies: true, problems: [] }, sire: { applies: true, problems: [] } })
    expect(res.body.tra.would_send.map((guest: { guest_index: number }) => guest.guest_index)).toEqual([0, 1])
    expect(res.body.tra.would_send[1].fields.padre).toBeNull()
    expect(res.body.sire.would_send.map((guest: { guest_index: number }) => guest.guest_index)).toEqual([1])

    // Nothing stored, emitted or sent, and the same body can still be submitted.
    expect(await rowCounts(world)).toEqual(empty)
    expect(world.tra.requests).toHaveLength(0)
    expect(world.sire.uploads).toHaveLength(0)

    const submitted = await call(world.app, "POST", "/api/partners/registrations", { key: world.liveKey, json: body })
    expect(submitted.status).toBe(201)
    await runOn(world, day(0))

    const [main] = world.tra.mains()
    const [companion] = world.tra.companions()
    expect(main?.body).toEqual(res.body.tra.would_send[0].fields)
    expect(companion?.body).toEqual({ ...res.body.tra.would_send[1].fields, padre: String(main?.code) })
    expect(world.sire.last().text).toBe(`${res.body.sire.would_send[0].line}\r\n`)
  })

  test("a value the tables do not map makes it invalid, and an operator's override (cli reference set) changes the answer", async () => {
    const world = await start("gateway")
    const japanese = foreigner({ nacionalidad: "JP", pais_procedencia: "JP", pais_residencia: "JP" })
    const body = registrationBody(world.propertyId, [colombian(), japanese], stay)

    const mapped = await validate(world, body)
    expect(mapped.body.valid).toBe(true)
    expect(mapped.body.sire.would_send).toHaveLength(1)

    await admin(world.app, (client) => client.SetReference({ table: "sire-countries", key: "JP", value: null }))
    const unmapped = await validate(world, body)
    expect(unmapped.status).toBe(200)
    expect(unmapped.body.valid).toBe(false)
    expect(unmapped.body.sire).toEqual({
      applies: true,
      would_send: [],
      problems: ["nacionalidad", "pais_procedencia"].map((field) => ({
        guest_index: 1,
        field,
        message: expect.stringContaining('"JP"')
      }))
    })
    // The TRA does not need the country: its bodies are unchanged.
    expect(unmapped.body.tra).toEqual(mapped.body.tra)

    // The simulated SIRE of a test key takes its warning from the same builder.
    const account = await seedAccount(world.app, "Hotelera Simulada")
    const sandboxBody = registrationBody(account.testProperties[0]!.property_id, [colombian(), japanese], stay)
    const simulated = await validate(world, sandboxBody, account.testKey)
    // A test property needs no enrolment (the simulated authorities answer): only the guest's values are problems.
    expect(simulated.body.sire.problems).toEqual(unmapped.body.sire.problems)
    expect(simulated.body.tra.problems).toEqual([])
    const submitted = await call(world.app, "POST", "/api/partners/registrations", { key: account.testKey, json: sandboxBody })
    expect(submitted.body.sire.warning).toContain(
      `SIRE cannot map guests[1].nacionalidad: ${simulated.body.sire.problems[0].message}`
    )
  })

  test("the property's missing enrolment holds the reports: problems of no guest", async () => {
    const world = await start("gateway")
    const account = await seedAccount(world.app, "Hotelera Sin Inscripción")
    const bare = await createProperty(world.app, account.accountId, { name: "Bare" })
    const res = await validate(world, registrationBody(bare.property_id, [foreigner()], stay), account.liveKey)
    expect(res.status).toBe(200)
    expect(res.body.valid).toBe(false)
    expect(res.body.tra.problems.map((problem: { field: string }) => problem.field)).toEqual(["tra_token", "rnt_id"])
    expect(res.body.sire.problems.map((problem: { field: string }) => problem.field)).toEqual([
      "sire_hotel_code",
      "sire_city_code"
    ])
    for (const problem of [...res.body.tra.problems, ...res.body.sire.problems]) expect(problem.guest_index).toBeNull()
    // The bodies do not carry the token: the TRA's are shown; no SIRE line can be written without the codes.
    expect(res.body.tra.would_send).toHaveLength(1)
    expect(res.body.sire.would_send).toEqual([])
  })

  test("a test key's sandbox property needs no enrolment: valid, with its bodies and lines, and still nothing stored", async () => {
    const world = await start("gateway")
    const account = await seedAccount(world.app, "Hotelera de Pruebas")
    const empty = await rowCounts(world)
    const body = registrationBody(account.testProperties[0]!.property_id, [colombian(), foreigner()], stay)
    const res = await validate(world, body, account.testKey)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ valid: true, tra: { applies: true, problems: [] }, sire: { applies: true, problems: [] } })
    expect(res.body.tra.would_send).toHaveLength(2)
    expect(res.body.sire.would_send[0].line.split("\t")).toHaveLength(13)
    expect(await rowCounts(world)).toEqual(empty)
  })

  test("a Colombian-only stay does not apply to SIRE; a property not reporting to the TRA does not apply to it", async () => {
    const world = await start("gateway", { reportsTra: false })
    const res = await validate(world, registrationBody(world.propertyId, [colombian()], stay))
    expect(res.body).toEqual({
      valid: true,
      tra: { applies: false, would_send: [], problems: [] },
      sire: { applies: false, would_send: [], problems: [] }
    })
  })

  test("endpoint 7's body rules answer 400 exactly as endpoint 7", async () => {
    const world = await start("gateway")
    const good = registrationBody(world.propertyId, [colombian(), foreigner()], stay)
    const bad = [
      { ...good, guests_count: 3 },
      { ...good, motivo: "Negocios" },
      { ...good, guests: [colombian(), colombian()] },
      { ...good, sandbox_simulate: "tra_failed" }
    ]
    for (const json of bad) {
      const submitted = await call(world.app, "POST", "/api/partners/registrations", { key: world.liveKey, json })
      const validated = await validate(world, json)
      expect(submitted.status).toBeGreaterThanOrEqual(400)
      expect({ status: validated.status, body: validated.body }).toEqual({ status: submitted.status, body: submitted.body })
    }
    const account = await seedAccount(world.app, "Otra Hotelera")
    const foreign = await validate(world, good, account.liveKey)
    expect(foreign.status).toBe(403)
  })

  test("counts as a read for the rate limits", async () => {
    const world = await start("gateway")
    const body = registrationBody(world.propertyId, [colombian()], stay)
    const read = async () => Number((await call(world.app, "GET", "/api/partners/properties", { key: world.liveKey })).headers.get("x-ratelimit-remaining"))
    const before = await read()
    const validated = await validate(world, body)
    expect(Number(validated.headers.get("x-ratelimit-remaining"))).toBe(before - 1)
    expect(await read()).toBe(before - 2)
  })
})
