import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test"
import { Cause, Effect, Logger, LogLevel, Redacted, Tracer } from "effect"
import {
  companionBody,
  mainBody,
  type TraCompanionBody,
  type TraMainBody
} from "../../src/compliance/Tra.ts"
import * as TraClientModule from "../../src/compliance/TraClient.ts"
import { TraClient, type TraClientOptions, type TraOutcome } from "../../src/compliance/TraClient.ts"
import { tempDir } from "../support/app.ts"
import { type FakeTra, startFakeTra, type TraFault } from "../support/fakeTra.ts"
import { traCompanion as friend, traHolder as holder, traStay as stay } from "../support/traStay.ts"

// A token shaped like the real ones (40 alphanumeric characters, domain §1.2); the fake knows only this one.
const TOKEN = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
const token = Redacted.make(TOKEN)

const main = mainBody(stay, holder, 1)

let fake: FakeTra
beforeAll(() => {
  fake = startFakeTra({ tokens: [TOKEN], firstCode: 991 })
})
afterAll(() => fake.stop())
beforeEach(() => fake.reset())

const quiet = Logger.minimumLogLevel(LogLevel.None)

const clientLayer = (options: Partial<TraClientOptions> = {}) =>
  TraClientModule.layer({ baseUrl: fake.url, concurrency: 4, timeout: "2 seconds", ...options })

const run = <A>(program: Effect.Effect<A, never, TraClient>, options: Partial<TraClientOptions> = {}) =>
  Effect.runPromise(program.pipe(Effect.provide(clientLayer(options)), Effect.provide(quiet)))

const submitMain = (body: TraMainBody = main, t: Redacted.Redacted<string> = token) =>
  Effect.flatMap(TraClient, (client) => client.submitMain(t, body))
const submitCompanion = (body: TraCompanionBody, t: Redacted.Redacted<string> = token) =>
  Effect.flatMap(TraClient, (client) => client.submitCompanion(t, body))

/** Registers the main guest (no fault) and sends the companion linked to its code. */
const mainThenCompanion = Effect.gen(function*() {
  const first = yield* submitMain()
  if (first._tag !== "Accepted" || first.code === null) throw new Error(`main not accepted: ${JSON.stringify(first)}`)
  return yield* submitCompanion(companionBody(stay, friend, first.code))
})

/** A port nothing listens on. */
const closedPort = () => {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") })
  const port = server.port
  server.stop(true)
  return port
}

describe("TraClient over HTTP against the fake TRA", () => {
  test("main guest accepted with the authority's code; exact body and headers on the wire", async () => {
    const outcome = await run(submitMain())
    expect(outcome).toMatchObject({ _tag: "Accepted", code: 991 })
    const [request] = fake.mains()
    expect(fake.requests).toHaveLength(1)
    expect(request!.method).toBe("POST")
    expect(request!.path).toBe("/one/")
    expect(request!.body).toEqual(main)
    expect(request!.auth).toBe("valid") // the exact token the fake knows
    expect(request!.headers["authorization"]).toBe("token ***") // lower-case scheme word, as C2 reads the manual
    expect(request!.headers["content-type"]).toBe("application/json")
    expect(request!.headers["accept"]).toBe("application/json")
    // No trace propagation to a government service.
    for (const name of ["traceparent", "b3", "tracestate"]) expect(request!.headers[name]).toBeUndefined()
  })

  test("a baseUrl with a trailing slash still posts to /one/", async () => {
    expect(await run(submitMain(), { baseUrl: `${fake.url}/` })).toMatchObject({ _tag: "Accepted", code: 991 })
    expect(fake.mains()[0]!.path).toBe("/one/")
  })

  test("companion accepted with its code, padre linking the main guest's code", async () => {
    const outcome = await run(mainThenCompanion)
    expect(outcome).toMatchObject({ _tag: "Accepted", code: 992 })
    expect(fake.companions()).toHaveLength(1)
    expect((fake.companions()[0]!.body as Record<string, unknown>)["padre"]).toBe("991")
    // Call order: the main guest before its companion.
    expect(fake.requests.map((r) => r.path)).toEqual(["/one/", "/two/"])
  })

  test("companion accepted without a code when /two/ answers {}", async () => {
    fake.companionReply = "empty"
    const outcome = await run(mainThenCompanion)
    expect(outcome).toMatchObject({ _tag: "Accepted", code: null })
    expect(fake.companions()[0]!.answer).toEqual({})
  })

  test("companion with a padre the authority never issued is rejected with its reason", async () => {
    const outcome = await run(submitCompanion(companionBody(stay, friend, 4242)))
    expect(outcome._tag).toBe("Rejected")
    expect(outcome).toMatchObject({ status: 400 })
    expect((outcome as { reason: string }).reason).toStartWith("padre: ")
    expect((outcome as { reason: string }).reason).toContain("4242")
  })

  test("400 {\"numero_identificacion\": [...]} from validation → Rejected with that field and message", async () => {
    const outcome = await run(submitMain({ ...main, numero_identificacion: "" }))
    expect(outcome).toMatchObject({
      _tag: "Rejected",
      status: 400,
      reason: "numero_identificacion: Este campo no puede estar en blanco."
    })
  })

  test("the correct Spanish spelling ciudad_residencia is refused by the fake, as the service would", async () => {
    const { cuidad_residencia, ...rest } = main
    const misspelled = { ...rest, ciudad_residencia: cuidad_residencia } as unknown as TraMainBody
    const outcome = await run(submitMain(misspelled))
    expect(outcome._tag).toBe("Rejected")
    expect(fake.mains()[0]!.answer).toEqual({
      ciudad_residencia: ["Campo desconocido."],
      cuidad_residencia: ["Este campo es requerido."]
    })
  })

  describe("each injected fault ends in the right outcome", () => {
    const cases: ReadonlyArray<{
      readonly fault: TraFault
      readonly endpoint: "/one/" | "/two/"
      readonly expected: Partial<TraOutcome> & { readonly _tag: TraOutcome["_tag"] }
      readonly reason?: string
    }> = [
      { fault: "500", endpoint: "/one/", expected: { _tag: "Unknown" }, reason: "HTTP 500" },
      { fault: "503", endpoint: "/one/", expected: { _tag: "Unknown" }, reason: "HTTP 503" },
      { fault: "500", endpoint: "/two/", expected: { _tag: "Unknown" }, reason: "HTTP 500" },
      { fault: "no-code", endpoint: "/one/", expected: { _tag: "Unknown" }, reason: "without an integer code" },
      { fault: "no-code", endpoint: "/two/", expected: { _tag: "Accepted", code: null } },
      { fault: "non-json", endpoint: "/one/", expected: { _tag: "Unknown" }, reason: "not JSON" },
      { fault: "non-json", endpoint: "/two/", expected: { _tag: "Unknown" }, reason: "not JSON" },
      { fault: "401", endpoint: "/one/", expected: { _tag: "Misconfigured", status: 401 }, reason: "Token inválido." },
      { fault: "401", endpoint: "/two/", expected: { _tag: "Misconfigured", status: 401 } },
      {
        fault: { kind: "400-reject", field: "numero_identificacion", reason: "Documento inválido." },
        endpoint: "/one/",
        expected: { _tag: "Rejected", status: 400, reason: "numero_identificacion: Documento inválido." }
      },
      {
        fault: { kind: "400-reject", reason: "Registro rechazado." },
        endpoint: "/one/",
        expected: { _tag: "Rejected", status: 400, reason: "Registro rechazado." }
      },
      {
        fault: { kind: "answer", status: 403, body: `{"detail":"No tiene permiso."}` },
        endpoint: "/one/",
        expected: { _tag: "Misconfigured", status: 403, reason: "No tiene permiso." }
      },
      { fault: { kind: "answer", status: 408, body: "" }, endpoint: "/one/", expected: { _tag: "Unknown" }, reason: "HTTP 408" },
      { fault: { kind: "answer", status: 429, body: "" }, endpoint: "/two/", expected: { _tag: "Unknown" }, reason: "HTTP 429" },
      {
        fault: { kind: "answer", status: 500, body: `{"message":"base de datos caída"}` },
        endpoint: "/one/",
        expected: { _tag: "Unknown", reason: "HTTP 500: base de datos caída" }
      },
      {
        fault: { kind: "answer", status: 404, body: `{"error":"No encontrado"}` },
        endpoint: "/one/",
        expected: { _tag: "Rejected", status: 404, reason: "No encontrado" }
      },
      {
        fault: { kind: "answer", status: 422, body: `{"non_field_errors":["Huésped duplicado."]}` },
        endpoint: "/one/",
        expected: { _tag: "Rejected", status: 422, reason: "Huésped duplicado." }
      },
      {
        fault: { kind: "answer", status: 400, body: "" },
        endpoint: "/one/",
        expected: { _tag: "Rejected", status: 400, reason: "HTTP 400 with an empty body" }
      },
      {
        fault: { kind: "answer", status: 201, body: `{"code":"1234"}`, headers: { "content-type": "application/json" } },
        endpoint: "/one/",
        expected: { _tag: "Accepted", code: 1234 }
      },
      {
        fault: { kind: "answer", status: 201, body: `{"code":12.5}` },
        endpoint: "/one/",
        expected: { _tag: "Unknown" },
        reason: "without an integer code"
      },
      { fault: { kind: "answer", status: 200, body: `{"code":77}` }, endpoint: "/one/", expected: { _tag: "Accepted", code: 77 } },
      { fault: { kind: "answer", status: 201, body: "" }, endpoint: "/two/", expected: { _tag: "Accepted", code: null } },
      {
        // Not followed: the token must not travel elsewhere, and a POST redirected was not processed.
        fault: { kind: "answer", status: 302, body: "", headers: { location: "https://example.test/login/" } },
        endpoint: "/one/",
        expected: { _tag: "Misconfigured", status: 302 },
        reason: "https://example.test/login/"
      }
    ]

    for (const { fault, endpoint, expected, reason } of cases) {
      const name = typeof fault === "string" ? fault : fault.kind === "answer" ? `HTTP ${fault.status} ${fault.body}` : fault.kind
      test(`${endpoint} ${name} → ${expected._tag}`, async () => {
        const outcome = await run(Effect.gen(function*() {
          if (endpoint === "/one/") {
            fake.faults.push(fault)
            return yield* submitMain()
          }
          const first = yield* submitMain()
          if (first._tag !== "Accepted" || first.code === null) throw new Error("main not accepted")
          fake.faults.push(fault)
          return yield* submitCompanion(companionBody(stay, friend, first.code))
        }))
        expect(outcome).toMatchObject(expected)
        if (reason !== undefined) expect((outcome as { reason: string }).reason).toContain(reason)
        expect(fake.requests.filter((r) => r.path === endpoint)).toHaveLength(1) // no retry, no redirect followed
        expect(fake.faults).toHaveLength(0)
      })
    }
  })

  test("no-code and non-json faults did register the guest: Unknown is right, a retry may duplicate", async () => {
    fake.faults.push("no-code")
    const outcome = await run(submitMain())
    expect(outcome._tag).toBe("Unknown")
    expect(fake.mains()[0]!.code).toBe(991)
    expect(fake.registered.has(991)).toBe(true)
  })

  test("an answer that never comes → Unknown once the timeout passes", async () => {
    fake.faults.push("hang")
    const started = Date.now()
    const outcome = await run(submitMain(), { timeout: "300 millis" })
    expect(outcome._tag).toBe("Unknown")
    expect((outcome as { reason: string }).reason).toContain("within 300ms")
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(fake.mains()).toHaveLength(1)
  })

  test("a lost answer after registration → Unknown (the possible-duplicate case of design §7)", async () => {
    fake.faults.push("lost-answer")
    const outcome = await run(submitMain(), { timeout: "300 millis" })
    expect(outcome._tag).toBe("Unknown")
    expect(fake.registered.size).toBe(1)
  })

  test("connection refused → Unknown", async () => {
    const outcome = await run(submitMain(), { baseUrl: `http://127.0.0.1:${closedPort()}` })
    expect(outcome._tag).toBe("Unknown")
    expect((outcome as { reason: string }).reason).toStartWith("no answer from 127.0.0.1:")
  })

  test("an unknown token → Misconfigured 401 with the authority's detail", async () => {
    const outcome = await run(submitMain(main, Redacted.make("not-the-right-token-0000000000000000000")))
    expect(outcome).toMatchObject({ _tag: "Misconfigured", status: 401, reason: "Token inválido." })
    expect(fake.mains()[0]!.auth).toBe("unknown")
  })

  test("after a token rotation the old token is Misconfigured and the new one accepted", async () => {
    expect(await run(submitMain())).toMatchObject({ _tag: "Accepted" })
    const rotated = "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2H1g0"
    fake.tokens.clear()
    fake.tokens.add(rotated)
    expect(await run(submitMain())).toMatchObject({ _tag: "Misconfigured", status: 401 })
    expect(await run(submitMain(main, Redacted.make(rotated)))).toMatchObject({ _tag: "Accepted", code: 992 })
  })

  test("blanks around a pasted token are dropped; an empty or unusable token sends nothing", async () => {
    expect(await run(submitMain(main, Redacted.make(`  ${TOKEN}\n`)))).toMatchObject({ _tag: "Accepted" })
    fake.clear()
    expect(await run(submitMain(main, Redacted.make("   ")))).toMatchObject({
      _tag: "Misconfigured",
      status: 0,
      reason: "no TRA token is configured"
    })
    expect(await run(submitMain(main, Redacted.make("abc def")))).toMatchObject({ _tag: "Misconfigured", status: 0 })
    expect(fake.requests).toHaveLength(0)
  })

  test("a long error body is cut to 300 characters, blanks collapsed", async () => {
    const page = `<html>\n<body>\n${"<p>Error del servidor de aplicaciones</p>\n".repeat(40)}</body></html>`
    fake.faults.push({ kind: "answer", status: 400, body: page, headers: { "content-type": "text/html" } })
    const outcome = await run(submitMain())
    expect(outcome._tag).toBe("Rejected")
    const reason = (outcome as { reason: string }).reason
    expect(reason.length).toBeLessThanOrEqual(TraClientModule.MAX_REASON_LENGTH)
    expect(reason).toStartWith("<html> <body> <p>Error")
    expect(reason).not.toContain("\n")
  })

  test("at most `concurrency` requests in flight at the fake, across parallel callers", async () => {
    fake.delayMs = 200
    const six = Effect.all(Array.from({ length: 6 }, () => submitMain()), { concurrency: "unbounded" })
    const started = Date.now()
    const outcomes = await run(six, { concurrency: 2 })
    const elapsed = Date.now() - started
    expect(outcomes.map((o) => o._tag)).toEqual(Array(6).fill("Accepted"))
    expect(new Set(outcomes.map((o) => (o as { code: number }).code)).size).toBe(6)
    expect(fake.mains()).toHaveLength(6)
    expect(fake.maxInFlight()).toBe(2)
    expect(elapsed).toBeGreaterThanOrEqual(3 * 200 - 20) // three waves of two

    // The measurement can see more: with a limit of 6 all six overlap.
    fake.clear()
    await run(six, { concurrency: 6 })
    expect(fake.maxInFlight()).toBe(6)
  })

  test("the timeout does not count time spent waiting for a free slot", async () => {
    fake.delayMs = 200
    const four = Effect.all(Array.from({ length: 4 }, () => submitMain()), { concurrency: "unbounded" })
    // Each request takes ~200 ms; the fourth waits ~600 ms for its slot, longer than the 500 ms timeout (each
    // request itself keeps a 300 ms margin, for a loaded machine).
    const outcomes = await run(four, { concurrency: 1, timeout: "500 millis" })
    expect(outcomes.map((o) => o._tag)).toEqual(["Accepted", "Accepted", "Accepted", "Accepted"])
    expect(fake.maxInFlight()).toBe(1)
  })

  test("a caller that stops waiting takes its request back: the slot is free for the next one at once", async () => {
    fake.faults.push("hang")
    const { gaveUp, next, waited } = await run(
      Effect.gen(function*() {
        const gaveUp = yield* Effect.option(Effect.timeout(submitMain(), "200 millis"))
        const started = Date.now()
        const next = yield* submitMain()
        return { gaveUp, next, waited: Date.now() - started }
      }),
      { concurrency: 1, timeout: "10 seconds" }
    )
    expect(gaveUp._tag).toBe("None")
    expect(next._tag).toBe("Accepted")
    // Not the 10 s the hung request would have kept the only slot for.
    expect(waited).toBeLessThan(2_000)
    expect(fake.mains()).toHaveLength(2)
  })

  test("the TRA thread starts with the first submission, ends after `idle` without one, and starts again", async () => {
    // Bun names a worker's thread "Worker" (Linux: /proc/self/task/<tid>/comm). Other suites' threads may come
    // and go meanwhile: this follows the one that appears with the first submission.
    const workerThreads = async () => {
      const tids: Array<string> = []
      for (const task of await NodeFs.readdir("/proc/self/task")) {
        const name = await NodeFs.readFile(`/proc/self/task/${task}/comm`, "utf8").catch(() => "")
        if (name.trim() === "Worker") tids.push(task)
      }
      return tids
    }
    const observed = await run(
      Effect.gen(function*() {
        const before = yield* Effect.promise(workerThreads)
        const first = yield* submitMain()
        const started = (yield* Effect.promise(workerThreads)).filter((tid) => !before.includes(tid))
        yield* Effect.sleep("1500 millis")
        const stillThere = (yield* Effect.promise(workerThreads)).filter((tid) => started.includes(tid))
        const again = yield* submitMain()
        return { first: first._tag, started: started.length, stillThere: stillThere.length, again: again._tag }
      }),
      { idle: "300 millis" }
    )
    expect(observed).toEqual({ first: "Accepted", started: 1, stillThere: 0, again: "Accepted" })
  })

  test("a TRA thread that stops on its own: what waits in it answers at once, later requests too, and it says so", async () => {
    // A stand-in for the thread's module that breaks with the first request in it.
    const dir = await tempDir("tra-thread")
    const module = NodePath.join(dir, "exits.ts")
    await Bun.write(module, `self.onmessage = (event) => { if (event.data._tag === "Post") throw new Error("the thread broke") }\n`)
    const stopped: Array<string> = []
    const request = { endpoint: "/one/", headers: { authorization: `token ${TOKEN}` }, body: {} } as const
    try {
      const answers = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const thread = yield* TraClientModule._internal.openThread(
          { _tag: "Start", prefix: fake.url, concurrency: 1, timeoutMillis: 1_000 },
          (detail) => stopped.push(detail),
          NodeUrl.pathToFileURL(module)
        )
        const inIt = yield* thread.post(request)
        const after = yield* thread.post(request)
        return [inIt, after]
      })))
      expect(answers.map((answer) => "ended" in answer && answer.ended.includes("the thread broke"))).toEqual([true, true])
      expect(stopped.length).toBe(1)
      expect(stopped[0]).toContain("the thread broke")
      expect(fake.mains()).toHaveLength(0)
    } finally {
      await NodeFs.rm(dir, { recursive: true, force: true })
    }
  })

  test("after the TRA thread breaks, the next submission starts another", async () => {
    // A body the thread cannot serialize (a bigint: no TraClient caller sends one) breaks it with the request in it.
    const breaking = submitMain({ ...main, nombres: 1n } as never)
    const [broken, next] = await run(Effect.all([breaking, submitMain()]))
    expect(broken).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("the TRA thread stopped") })
    expect(next._tag).toBe("Accepted")
    expect(fake.mains()).toHaveLength(1)
  })

  test("the token never appears in outcomes, logs or spans; spans show the header redacted", async () => {
    const logs: Array<string> = []
    const testLogger = Logger.make((options) => {
      logs.push(JSON.stringify({
        level: options.logLevel.label,
        message: options.message,
        annotations: Object.fromEntries(options.annotations),
        cause: Cause.isEmpty(options.cause) ? undefined : Cause.pretty(options.cause)
      }))
    })
    const spans: Array<Tracer.Span> = []
    const program = Effect.gen(function*() {
      const native = yield* Effect.tracer
      const recording = Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          spans.push(span)
          return span
        },
        context: (f, fiber) => native.context(f, fiber)
      })
      const outcomes: Array<TraOutcome> = []
      const each = (fault: TraFault | undefined) =>
        Effect.gen(function*() {
          if (fault !== undefined) fake.faults.push(fault)
          outcomes.push(yield* submitMain())
        })
      yield* Effect.forEach(
        [
          undefined,
          "500",
          "401",
          "non-json",
          "hang",
          // An authority that echoes the token back: scrubbed from the reason.
          { kind: "400-reject", field: "token", reason: `El token ${TOKEN} no corresponde al RNT.` },
          { kind: "answer", status: 503, body: `upstream said: Authorization: token ${TOKEN}` }
        ] as ReadonlyArray<TraFault | undefined>,
        each
      ).pipe(Effect.withTracer(recording))
      return outcomes
    })
    const outcomes = await Effect.runPromise(
      program.pipe(
        Effect.provide(clientLayer({ timeout: "300 millis" })),
        Effect.provide(Logger.replace(Logger.defaultLogger, testLogger)),
        Effect.provide(Logger.minimumLogLevel(LogLevel.All))
      )
    )

    expect(outcomes.map((o) => o._tag)).toEqual([
      "Accepted",
      "Unknown",
      "Misconfigured",
      "Unknown",
      "Unknown",
      "Rejected",
      "Unknown"
    ])
    expect(outcomes[5]).toMatchObject({ reason: "token: El token *** no corresponde al RNT." })
    expect(JSON.stringify(outcomes)).not.toContain(TOKEN)

    // Logs: one debug line per submission, none with the token.
    expect(logs.length).toBeGreaterThanOrEqual(outcomes.length)
    for (const line of logs) expect(line).not.toContain(TOKEN)

    // Spans: ours and the HTTP client's, none with the token anywhere in their attributes.
    const names = spans.map((s) => s.name)
    expect(names.filter((n) => n === "TraClient.submitMain")).toHaveLength(outcomes.length)
    const httpSpans = spans.filter((s) => s.attributes.has("http.request.method"))
    expect(httpSpans.length).toBe(outcomes.length)
    for (const span of spans) {
      const attributes = JSON.stringify(Object.fromEntries([...span.attributes].map(([k, v]) => [k, String(v)])))
      expect(attributes).not.toContain(TOKEN)
    }
    for (const span of httpSpans) {
      expect(String(span.attributes.get("http.request.header.authorization"))).toBe("<redacted>")
    }
    expect(spans.find((s) => s.name === "TraClient.submitMain")!.attributes.get("tra.outcome")).toBe("Accepted")

    // …while the fake did get `Authorization: token <the token>` on every request.
    expect(fake.mains().length).toBe(outcomes.length)
    for (const request of fake.mains()) {
      expect(request.auth).toBe("valid")
      expect(request.headers["authorization"]).toBe("token ***")
      // The recording keeps only the redacted header (the echoing faults above put the token in answers on purpose).
      expect(JSON.stringify(request.headers)).not.toContain(TOKEN)
    }
  })
})

// ---------------------------------------------------------------------------------------------------------------
// The fake itself (others rely on it): raw HTTP, no client in between
// ---------------------------------------------------------------------------------------------------------------

describe("fake TRA", () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fake.url}${path}`, {
      method: "POST",
      headers: { authorization: `token ${TOKEN}`, "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
  const answer = async (response: Response) => ({ status: response.status, body: await response.json() as unknown })

  test("only POST /one/ and /two/ exist", async () => {
    expect((await post("/one", main)).status).toBe(404)
    expect((await post("/three/", main)).status).toBe(404)
    const get = await fetch(`${fake.url}/one/`)
    expect(get.status).toBe(405)
    expect(get.headers.get("allow")).toContain("POST")
  })

  test("the scheme word is case-insensitive and blanks are tolerated; anything else is 401 {detail}", async () => {
    expect((await post("/one/", main, { authorization: `TOKEN   ${TOKEN}` })).status).toBe(201)
    expect((await post("/one/", main, { authorization: ` Token ${TOKEN} ` })).status).toBe(201)
    for (const authorization of [`Bearer ${TOKEN}`, TOKEN, `token ${TOKEN} extra`, "token wrong"]) {
      const response = await post("/one/", main, { authorization })
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toBe("Token")
      expect(Object.keys(await response.json() as object)).toEqual(["detail"])
    }
    const none = await fetch(`${fake.url}/one/`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(await answer(none)).toEqual({ status: 401, body: { detail: "Las credenciales de autenticación no se proveyeron." } })
    expect(fake.requests.map((r) => r.auth)).toEqual(["valid", "valid", "missing", "missing", "malformed", "unknown", "missing"])
    expect(fake.requests[0]!.headers["authorization"]).toBe("TOKEN ***")
  })

  test("validation: field set, string values, dates, digits; every failing field listed", async () => {
    const { status, body } = await answer(
      await post("/one/", {
        ...main,
        check_in: "21/11/2026",
        check_out: "2026-02-30",
        numero_acompanantes: 1,
        costo: "1.250.000",
        rnt_establecimiento: "RNT-1",
        extra: "x"
      })
    )
    expect(status).toBe(400)
    expect(Object.keys(body as object).sort()).toEqual(
      ["check_in", "check_out", "costo", "extra", "numero_acompanantes", "rnt_establecimiento"]
    )
    const backwards = await answer(await post("/one/", { ...main, check_out: main.check_in }))
    expect(backwards).toEqual({ status: 400, body: { check_out: ["La fecha de salida debe ser posterior a la de llegada."] } })
    expect((await post("/one/", "{not json")).status).toBe(400)
    expect((await post("/one/", main, { "content-type": "text/plain" })).status).toBe(415)
    expect(fake.registered.size).toBe(0)
  })

  test("companions: exact field set and a padre it issued; codes count up across both endpoints", async () => {
    const one = await answer(await post("/one/", main))
    expect(one).toEqual({ status: 201, body: { code: 991 } })
    const two = await answer(await post("/two/", companionBody(stay, friend, 991)))
    expect(two).toEqual({ status: 201, body: { code: 992 } })
    // A companion body on /one/ misses the main-only fields.
    expect((await post("/one/", companionBody(stay, friend, 991))).status).toBe(400)
    // padre must point at a main registration, not at a companion.
    expect((await post("/two/", companionBody(stay, friend, 992))).status).toBe(400)
    expect((await post("/two/", { ...companionBody(stay, friend, 991), padre: 991 })).status).toBe(400)
  })

  test("duplicate mode: accept registers again, reject answers 400", async () => {
    expect(await answer(await post("/one/", main))).toEqual({ status: 201, body: { code: 991 } })
    expect(await answer(await post("/one/", main))).toEqual({ status: 201, body: { code: 992 } })
    fake.duplicates = "reject"
    const again = await answer(await post("/one/", main))
    expect(again.status).toBe(400)
    expect(Object.keys(again.body as object)).toEqual(["non_field_errors"])
  })

  test("faults by predicate on the body, after the queue", async () => {
    fake.faultFor = (request) =>
      (request.body as Record<string, unknown>)["numero_identificacion"] === "666" ? "503" : undefined
    fake.faults.push({ kind: "400-reject", reason: "first" })
    expect((await post("/one/", { ...main, numero_identificacion: "666" })).status).toBe(400) // queue first
    expect((await post("/one/", { ...main, numero_identificacion: "666" })).status).toBe(503)
    expect((await post("/one/", main)).status).toBe(201)
    expect(fake.requests.map((r) => r.status)).toEqual([400, 503, 201])
  })

  test("waitForCount resolves once enough requests arrived", async () => {
    const waiting = fake.waitForCount(2, (r) => r.path === "/one/", 2_000)
    await post("/one/", main)
    await post("/one/", main)
    expect(await waiting).toHaveLength(2)
  })
})
