import { FetchHttpClient } from "@effect/platform"
import { afterAll, beforeEach, describe, expect, test } from "bun:test"
import { Effect, Either, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { makeSync } from "../../src/compliance/Reference.ts"
import { type SireGuest, sireFile, sireLine } from "../../src/compliance/Sire.ts"
import * as SireGateway from "../../src/compliance/SireGateway.ts"
import { startFakeSire } from "../support/fakeSire.ts"

const TOKEN = "sire-gw-token-3f9c1d2e7a"

const fake = startFakeSire({ token: TOKEN })
const open = startFakeSire() // a gateway that asks for no token
afterAll(() => {
  fake.stop()
  open.stop()
})
beforeEach(() => {
  fake.reset()
  open.reset()
})

const ref = makeSync()
const guest = (overrides: Partial<SireGuest>): SireGuest => ({
  tipo_documento: "Pasaporte",
  numero_documento: "AB123456",
  nacionalidad: "US",
  apellido: "Smith Johnson",
  nombre: "John",
  fecha_nacimiento: "1985-03-25",
  pais_procedencia: "US",
  ...overrides
})
const lineOf = (g: SireGuest) =>
  Either.getOrThrow(sireLine(ref, { hotelCode: "41656", cityCode: "88001", guest: g, movement: "E", date: "2026-12-20" }))
const LINES = [
  lineOf(guest({})),
  lineOf(guest({ nacionalidad: "VE", pais_procedencia: "VE", apellido: "de la Cruz Pérez", numero_documento: "V1234567", nombre: "Ana" })),
  lineOf(guest({ nacionalidad: "DE", pais_procedencia: "ES", apellido: "Müller", numero_documento: "C01X00T47", nombre: "Jörg" }))
]
const FILE = { hotelCode: "41656", cityCode: "88001", content: sireFile(LINES) }

/** Submits `file` through a fresh client; returns the outcome and every log line written meanwhile. */
const submit = async (
  file: SireGateway.SireFileUpload,
  options: Partial<SireGateway.SireGatewayOptions> = {}
) => {
  const logs: Array<string> = []
  const capture = Logger.make(({ annotations, logLevel, message }) => {
    logs.push(`${logLevel.label} ${JSON.stringify(message)} ${JSON.stringify([...annotations])}`)
  })
  const layer = SireGateway.layer({ url: fake.url, token: Option.some(Redacted.make(TOKEN)), timeout: "2 seconds", ...options })
    .pipe(Layer.provide(FetchHttpClient.layer))
  const outcome = await Effect.runPromise(
    Effect.flatMap(SireGateway.SireGateway, (gateway) => gateway.submit(file)).pipe(
      Effect.provide(layer),
      Effect.provide(Logger.replace(Logger.defaultLogger, capture)),
      Logger.withMinimumLogLevel(LogLevel.All)
    )
  )
  return { outcome, logs }
}

const neverLeaksToken = (outcome: unknown, logs: ReadonlyArray<string>) => {
  expect(JSON.stringify(outcome)).not.toContain(TOKEN)
  for (const line of logs) expect(line).not.toContain(TOKEN)
}

// ---------------------------------------------------------------------------------------------------------------

describe("SireGateway against a fake gateway over HTTP (design §6.13)", () => {
  test("a clean file: every line accepted; the file, headers and bearer token are sent", async () => {
    const { outcome, logs } = await submit(FILE)
    expect(outcome).toEqual(SireGateway.SireOutcome.Answered({ processed: 3, valid: 3, invalid: 0, errors: [] }))
    const upload = fake.last()
    expect(upload.method).toBe("POST")
    expect(upload.path).toBe("/sire/upload")
    expect(upload.headers["content-type"]).toBe("text/plain; charset=utf-8")
    expect(upload.headers["x-sire-hotel-code"]).toBe("41656")
    expect(upload.headers["x-sire-city-code"]).toBe("88001")
    expect(upload.headers["authorization"]).toBe("Bearer <redacted>")
    expect(upload.bearer).toBe("valid")
    expect(upload.headers["traceparent"]).toBeUndefined() // no trace headers to a third party
    expect(upload.text).toBe(FILE.content)
    expect(upload.rows).toHaveLength(3)
    for (const row of upload.rows) expect(row).toHaveLength(13)
    expect(upload.rows[1]!.slice(4, 8)).toEqual(["850", "DE LA CRUZ", "PEREZ", "ANA"])
    expect(logs.some((line) => line.includes("processed 3 lines: 3 valid, 0 invalid"))).toBe(true)
    neverLeaksToken(outcome, logs)
  })

  test("without a token no Authorization header is sent", async () => {
    const { outcome } = await submit(FILE, { url: open.url, token: Option.none() })
    expect(outcome._tag).toBe("Answered")
    expect(open.last().bearer).toBe("absent")
    expect(open.last().headers["authorization"]).toBeUndefined()
  })

  test("per-line errors: lines the gateway refuses come back numbered from 1, the others are accepted", async () => {
    fake.rejectLine(2, "documento no válido para la nacionalidad")
    const { outcome } = await submit(FILE)
    expect(outcome).toEqual(
      SireGateway.SireOutcome.Answered({
        processed: 3,
        valid: 2,
        invalid: 1,
        errors: [{ line: 2, message: "documento no válido para la nacionalidad" }]
      })
    )
  })

  test("the fake checks the file itself: a malformed line is refused with the reason", async () => {
    const broken = LINES[0]!.split("\t").slice(0, 12).join("\t") // a column dropped
    const lowercase = LINES[2]!.replace("MULLER", "Müller")
    const { outcome } = await submit({ ...FILE, content: sireFile([broken, LINES[1]!, lowercase]) })
    expect(outcome._tag).toBe("Answered")
    if (outcome._tag !== "Answered") return
    expect(outcome).toMatchObject({ processed: 3, valid: 1, invalid: 2 })
    expect(outcome.errors.map((e) => e.line)).toEqual([1, 3])
    expect(outcome.errors[0]!.message).toContain("expected 13 TAB-separated columns, got 12")
    expect(outcome.errors[1]!.message).toContain("first surname must be upper-case letters")
  })

  test("401 and 403 are Misconfigured: credentials to fix, nothing uploaded", async () => {
    fake.fail("401", "403")
    const first = await submit(FILE)
    expect(first.outcome).toEqual(SireGateway.SireOutcome.Misconfigured({ status: 401, reason: "HTTP 401: invalid token" }))
    const second = await submit(FILE)
    expect(second.outcome).toMatchObject({ _tag: "Misconfigured", status: 403 })
    neverLeaksToken(first.outcome, first.logs)
  })

  test("a wrong token or none at all, against a gateway that checks it, is Misconfigured", async () => {
    const wrong = await submit(FILE, { token: Option.some(Redacted.make("not-the-token")) })
    expect(wrong.outcome).toMatchObject({ _tag: "Misconfigured", status: 401 })
    expect(fake.last().bearer).toBe("invalid")
    const none = await submit(FILE, { token: Option.none() })
    expect(none.outcome).toMatchObject({ _tag: "Misconfigured", status: 401 })
    expect(fake.last().bearer).toBe("absent")
  })

  test("another 4xx is Rejected with the gateway's reason", async () => {
    fake.fail("400", { status: 422, body: "hotel code unknown to SIRE", contentType: "text/plain" })
    expect((await submit(FILE)).outcome).toEqual(
      SireGateway.SireOutcome.Rejected({ status: 400, reason: "HTTP 400: the portal refused the file" })
    )
    expect((await submit(FILE)).outcome).toEqual(
      SireGateway.SireOutcome.Rejected({ status: 422, reason: "HTTP 422: hotel code unknown to SIRE" })
    )
  })

  test("a 5xx is Unknown: the file may or may not have gone in", async () => {
    fake.fail("500")
    const { outcome, logs } = await submit(FILE)
    expect(outcome._tag).toBe("Unknown")
    expect(outcome._tag === "Unknown" && outcome.reason).toContain("HTTP 500")
    expect(logs.some((line) => line.startsWith("WARN") && line.includes("outcome unknown"))).toBe(true)
  })

  test("a gateway that never answers is Unknown after the timeout", async () => {
    fake.fail("hang")
    const started = performance.now()
    const { outcome } = await submit(FILE, { timeout: "200 millis" })
    const elapsed = performance.now() - started
    expect(outcome).toEqual(SireGateway.SireOutcome.Unknown({ reason: `no answer from ${new URL(fake.url).host} within 200ms` }))
    expect(elapsed).toBeGreaterThanOrEqual(190)
    expect(elapsed).toBeLessThan(2000)
    expect(fake.last().answered).toBe("hang")
  })

  test("no server at all is Unknown", async () => {
    const { outcome } = await submit(FILE, { url: "http://127.0.0.1:9/sire/upload" })
    expect(outcome._tag).toBe("Unknown")
    expect(outcome._tag === "Unknown" && outcome.reason).toContain("no answer from 127.0.0.1:9")
  })

  test("an unreadable or inconsistent 2xx answer is Unknown, never a guess at what was accepted", async () => {
    fake.fail(
      "garbage",
      { status: 200, body: JSON.stringify({ processed: 3, valid: 3, invalid: 1, errors: [] }) },
      { status: 200, body: JSON.stringify({ processed: 3, valid: 2, invalid: 1, errors: [{ line: 7, message: "x" }] }) },
      { status: 200, body: JSON.stringify({ processed: "3" }) }
    )
    for (let i = 0; i < 4; i++) {
      const { outcome } = await submit(FILE)
      expect(outcome._tag).toBe("Unknown")
      expect(outcome._tag === "Unknown" && outcome.reason).toContain("unreadable answer")
    }
  })

  test("an answer without `errors` is read as none refused", async () => {
    fake.fail({ status: 200, body: JSON.stringify({ processed: 3, valid: 3, invalid: 0 }) })
    expect((await submit(FILE)).outcome).toEqual(
      SireGateway.SireOutcome.Answered({ processed: 3, valid: 3, invalid: 0, errors: [] })
    )
  })

  test("the token never reaches an outcome or a log, even when the gateway echoes it back", async () => {
    const echo = JSON.stringify({ detail: `header Authorization: Bearer ${TOKEN} is not allowed for hotel 41656` })
    fake.fail({ status: 400, body: echo }, { status: 502, body: `upstream saw Bearer ${TOKEN}` }, { status: 403, body: `token ${TOKEN} revoked` })
    const results = [await submit(FILE), await submit(FILE), await submit(FILE)]
    expect(results.map((r) => r.outcome._tag)).toEqual(["Rejected", "Unknown", "Misconfigured"])
    expect(results[0]!.outcome).toMatchObject({ reason: "HTTP 400: header Authorization: Bearer <redacted> is not allowed for hotel 41656" })
    for (const { outcome, logs } of results) {
      expect(logs.length).toBeGreaterThan(0)
      neverLeaksToken(outcome, logs)
    }
    // the fake's own record redacts it too
    for (const upload of fake.uploads) expect(JSON.stringify(upload.headers)).not.toContain(TOKEN)
  })

  test("logs name the hotel and the number of lines", async () => {
    const { logs } = await submit(FILE)
    const entry = logs.find((line) => line.includes("processed 3 lines"))
    expect(entry).toContain('"sireHotelCode","41656"')
    expect(entry).toContain('"lines",3')
  })
})
