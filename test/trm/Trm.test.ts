import { FetchHttpClient } from "@effect/platform"
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test"
import { ConfigProvider, Effect, Either, Layer, Logger, LogLevel, Schedule, Schema, TestClock, TestContext } from "effect"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { TrmUnavailable, TrmUnavailableBody } from "../../src/shared/errors.ts"
import * as Trm from "../../src/trm/Trm.ts"

// ---------------------------------------------------------------------------------------------------------------
// A fake datos.gov.co: GET /resource/<id>.json honouring $where (containment), $order and $limit, recording
// every query string, with fault modes (domain notes §6.4 "Fake TRM").
// ---------------------------------------------------------------------------------------------------------------

type Row = { valor: string; unidad: "COP"; vigenciadesde: string; vigenciahasta: string }
type Mode = "ok" | "500" | "404" | "hang" | "malformed" | "empty" | "wrong-shape" | "ignore-where"

const ts = (date: string) => `${date}T00:00:00.000`
const row = (from: string, to: string, valor: string): Row => ({
  valor,
  unidad: "COP",
  vigenciadesde: ts(from),
  vigenciahasta: ts(to)
})

// November 2026: Sun 1 … Fri 13, Sat 14, Sun 15, Mon 16 (holiday, Independencia de Cartagena), Tue 17 … Fri 20,
// Sat 21, Sun 22, Mon 23, Tue 24. A Saturday–Monday row is certified (published) on the Friday before.
const ROWS: ReadonlyArray<Row> = [
  row("2026-11-13", "2026-11-13", "3801.10"),
  row("2026-11-14", "2026-11-17", "3795.55"), // weekend + Monday holiday: Sat → Tue
  row("2026-11-18", "2026-11-18", "3810.00"),
  row("2026-11-19", "2026-11-19", "3822.75"),
  row("2026-11-20", "2026-11-20", "3940.00"),
  row("2026-11-21", "2026-11-23", "3950.45"), // weekend: Sat → Mon, published Fri 20
  row("2026-11-24", "2026-11-24", "3961.20") // tomorrow's, already published on Mon 23: the "latest" row
]

const WHERE = /^vigenciadesde <= '([^']+)' AND vigenciahasta >= '([^']+)'$/

const fake = {
  server: undefined as ReturnType<typeof Bun.serve> | undefined,
  url: "",
  /** Raw query strings, in arrival order. */
  queries: [] as Array<string>,
  /** Used when `queue` is empty. */
  mode: "ok" as Mode,
  /** One mode per coming request, consumed first. */
  queue: [] as Array<Mode>,
  rows: ROWS as ReadonlyArray<Row>,
  reset() {
    this.queries = []
    this.mode = "ok"
    this.queue = []
    this.rows = ROWS
  }
}

const answer = (params: URLSearchParams, ignoreWhere: boolean): Array<Row> => {
  let rows = [...fake.rows]
  const where = params.get("$where")
  if (where !== null && !ignoreWhere) {
    const m = WHERE.exec(where)
    if (m === null) throw new Error(`unsupported $where: ${where}`)
    rows = rows.filter((r) => r.vigenciadesde <= m[1]! && r.vigenciahasta >= m[2]!)
  }
  const [field, direction] = (params.get("$order") ?? "vigenciahasta DESC").split(" ") as [keyof Row, string?]
  rows.sort((a, b) => (direction === "DESC" ? -1 : 1) * a[field].localeCompare(b[field]))
  const limit = Number(params.get("$limit") ?? "1000")
  return rows.slice(0, limit)
}

beforeAll(() => {
  fake.server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url)
      if (url.pathname !== "/resource/32sa-8pi3.json") return new Response("not found", { status: 404 })
      fake.queries.push(url.search)
      const mode = fake.queue.shift() ?? fake.mode
      switch (mode) {
        case "500":
          return Response.json({ code: "internal", error: true, message: "boom" }, { status: 500 })
        case "404":
          return Response.json({ code: "not_found", error: true }, { status: 404 })
        case "hang":
          return new Promise<Response>(() => {})
        case "malformed":
          return new Response(`[{"valor": "3950.45", "unidad": "COP"`, { headers: { "content-type": "application/json" } })
        case "empty":
          return Response.json([])
        case "wrong-shape":
          return Response.json([{ valor: "3.950,45", unidad: "COP", vigenciadesde: "21/11/2026", vigenciahasta: "23/11/2026" }])
        case "ok":
        case "ignore-where":
          try {
            return Response.json(answer(url.searchParams, mode === "ignore-where"))
          } catch (e) {
            return Response.json({ error: true, message: String(e) }, { status: 400 })
          }
      }
    }
  })
  fake.url = `http://127.0.0.1:${fake.server.port}/resource/32sa-8pi3.json`
})

afterAll(() => fake.server?.stop(true))
beforeEach(() => fake.reset())

/** Fast retries and a short timeout, so failure paths take milliseconds, not seconds. */
const fastRetry = Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(2)))

const provider = (options: Partial<Trm.TrmProviderOptions> = {}) =>
  Trm.layerWith({ url: fake.url, timeout: "300 millis", retrySchedule: fastRetry, ...options }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )

const quiet = Logger.minimumLogLevel(LogLevel.None)

/** Runs `program` against a fresh provider (fresh cache) on the fake server. */
const run = <A, E>(program: Effect.Effect<A, E, Trm.TrmProvider>, options: Partial<Trm.TrmProviderOptions> = {}) =>
  Effect.runPromise(program.pipe(Effect.provide(provider(options)), Effect.provide(quiet)))

const rateFor = (date: string) => Effect.flatMap(Trm.TrmProvider, (trm) => trm.rateFor(date))

const containment = (date: string) =>
  `vigenciadesde <= '${date}T00:00:00.000' AND vigenciahasta >= '${date}T00:00:00.000'`

// ---------------------------------------------------------------------------------------------------------------

describe("usdToCop: exact, half-up to whole pesos", () => {
  test("plain conversions", () => {
    expect(Trm.usdToCop("100", "3950.45")).toBe("395045")
    expect(Trm.usdToCop("100.00", "3950.45")).toBe("395045")
    expect(Trm.usdToCop("0", "3950.45")).toBe("0")
    expect(Trm.usdToCop("1", "3950.49")).toBe("3950")
    expect(Trm.usdToCop("1", "3950.50")).toBe("3951")
    expect(Trm.usdToCop("1", "3950.5")).toBe("3951")
    expect(Trm.usdToCop("0.01", "49.99")).toBe("0") // 0.4999
    expect(Trm.usdToCop("0.01", "50")).toBe("1") // 0.5 exactly
  })

  // Each product ends in exactly .5; in binary floating point it comes out just below (e.g. 127508.49999999999),
  // so Math.round(a * r) would give one peso less.
  test.each([
    ["42.50", "3000.20", "127509"],
    ["68.75", "3000.24", "206267"],
    ["165.00", "3000.70", "495116"],
    ["34.80", "3001.25", "104444"],
    ["169.20", "3001.25", "507812"]
  ])("%s USD × %s = …,5 rounds up to %s (float would not)", (amount, rate, cop) => {
    expect(String(Math.round(Number(amount) * Number(rate)))).not.toBe(cop) // the trap is real
    expect(Trm.usdToCop(amount, rate)).toBe(cop)
    expect(Trm.usdToCop(Number(amount), rate)).toBe(cop) // a JSON number, as the partner wrote it
  })

  test("large values stay exact beyond 2^53", () => {
    // 999 999 999 999.99 × 4999.99 = 4 999 989 999 999 950.0001
    expect(Trm.usdToCop("999999999999.99", "4999.99")).toBe("4999989999999950")
    // 123 456 789 012.35 × 3950.45 = 487 709 872 153 838.0575 (checked with Python's decimal) → …838
    expect(Trm.usdToCop("123456789012.35", "3950.45")).toBe("487709872153838")
    // …,5 exactly at a large magnitude: 900 719 925 474 099.10 × 5 = 4 503 599 627 370 495.5
    expect(Trm.usdToCop("900719925474099.10", "5")).toBe("4503599627370496")
  })

  test.each([["-1"], ["1e3"], ["1,5"], [""], ["abc"], [".5"]])("amount %p is refused", (amount) => {
    expect(() => Trm.usdToCop(amount, "3950.45")).toThrow(RangeError)
  })

  test("non-finite and negative numbers are refused", () => {
    expect(() => Trm.usdToCop(Number.NaN, "3950.45")).toThrow(RangeError)
    expect(() => Trm.usdToCop(Number.POSITIVE_INFINITY, "3950.45")).toThrow(RangeError)
    expect(() => Trm.usdToCop(-5, "3950.45")).toThrow(RangeError)
    expect(() => Trm.usdToCop(5, "3.950,45")).toThrow(RangeError)
  })
})

describe("todayInBogota", () => {
  test("is the UTC−5 calendar day, from Clock", async () => {
    const at = (iso: string) =>
      Effect.runPromise(
        Effect.zipRight(TestClock.setTime(Date.parse(iso)), Trm.todayInBogota).pipe(Effect.provide(TestContext.TestContext))
      )
    expect(await at("2026-11-24T04:59:59.999Z")).toBe("2026-11-23") // 23:59:59.999 in Bogotá
    expect(await at("2026-11-24T05:00:00.000Z")).toBe("2026-11-24") // midnight in Bogotá
    expect(await at("2027-01-01T03:00:00.000Z")).toBe("2026-12-31")
  })
})

describe("TrmProvider over datos.gov.co (containment lookup)", () => {
  test("a Sunday gets the weekend row published on Friday; the query is the containment $where", async () => {
    const rate = await run(rateFor("2026-11-22"))
    expect(rate).toEqual({ rate: "3950.45", valid_from: "2026-11-21", valid_to: "2026-11-23" })
    expect(fake.queries).toHaveLength(1)
    const params = new URLSearchParams(fake.queries[0])
    expect(params.get("$where")).toBe(containment("2026-11-22"))
    expect(params.get("$order")).toBe("vigenciadesde DESC")
    expect(fake.queries[0]).not.toContain("vigenciahasta%20DESC") // never "latest"
  })

  test("a Monday holiday and the Tuesday after it share the Saturday row", async () => {
    const [monday, tuesday] = await run(Effect.all([rateFor("2026-11-16"), rateFor("2026-11-17")]))
    expect(monday).toEqual({ rate: "3795.55", valid_from: "2026-11-14", valid_to: "2026-11-17" })
    expect(tuesday).toEqual(monday)
  })

  test("today never gets tomorrow's row, even though tomorrow's is already the newest", async () => {
    // 22:30 on Monday 23 in Bogotá is already Tuesday 24 in UTC; the newest row is Tuesday's.
    const program = Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-24T03:30:00Z"))
      const today = yield* Trm.todayInBogota
      return { today, rate: yield* rateFor(today) }
    })
    const { today, rate } = await run(program.pipe(Effect.provide(TestContext.TestContext)))
    expect(today).toBe("2026-11-23")
    expect(rate).toEqual({ rate: "3950.45", valid_from: "2026-11-21", valid_to: "2026-11-23" })
    expect(new URLSearchParams(fake.queries[0]).get("$where")).toBe(containment("2026-11-23"))
  })

  test("containment is also checked locally: a server ignoring $where cannot hand over tomorrow's row", async () => {
    fake.mode = "ignore-where" // answers every row, newest (tomorrow's) first
    expect(await run(rateFor("2026-11-23"))).toEqual({ rate: "3950.45", valid_from: "2026-11-21", valid_to: "2026-11-23" })
  })

  test("a date with no row containing it is unavailable (and is not retried)", async () => {
    const error = await run(Effect.flip(rateFor("2026-11-25")))
    expect(error).toBeInstanceOf(TrmUnavailable)
    expect(error.message).toContain("no rate valid on 2026-11-25")
    expect(fake.queries).toHaveLength(1)
  })

  test("a malformed date is a defect, not a 503", async () => {
    const exit = await Effect.runPromiseExit(rateFor("2026-02-30").pipe(Effect.provide(provider())))
    expect(exit._tag).toBe("Failure")
    expect(String(exit)).toContain("expected a YYYY-MM-DD date")
    expect(fake.queries).toHaveLength(0)
  })
})

describe("TrmProvider caching", () => {
  test("a second call for the same date sends no request; another date does", async () => {
    const [first, second, other] = await run(
      Effect.gen(function*() {
        return [yield* rateFor("2026-11-22"), yield* rateFor("2026-11-22"), yield* rateFor("2026-11-20")] as const
      })
    )
    expect(second).toEqual(first)
    expect(other.rate).toBe("3940.00")
    expect(fake.queries).toHaveLength(2)
  })

  test("concurrent calls for one date share one request", async () => {
    const rates = await run(Effect.all(Array.from({ length: 10 }, () => rateFor("2026-11-22")), { concurrency: "unbounded" }))
    expect(new Set(rates.map((r) => r.rate))).toEqual(new Set(["3950.45"]))
    expect(fake.queries).toHaveLength(1)
  })
})

/**
 * A first `rateFor` against a server failing in `mode`: its error and how many queries it took; then the rate a
 * second call gets once the server answers again.
 */
const failThenRecover = (mode: Mode) => {
  fake.mode = mode
  return run(
    Effect.gen(function*() {
      const error = yield* Effect.flip(rateFor("2026-11-22"))
      const queries = fake.queries.length
      fake.mode = "ok"
      return { error, queries, rate: yield* rateFor("2026-11-22") }
    })
  )
}

describe("TrmProvider failures → TrmUnavailable (503 trm_unavailable), retried, never cached", () => {
  test("5xx: retried up to 3 attempts, then TrmUnavailable; a later call succeeds once the server recovers", async () => {
    const { error, queries, rate } = await failThenRecover("500")
    expect(queries).toBe(3)
    expect(error).toBeInstanceOf(TrmUnavailable)
    expect(error.message).toContain("HTTP 500")
    expect(error.details).toEqual({ date: "2026-11-22" })
    expect(Schema.encodeSync(TrmUnavailableBody)(error)).toMatchObject({ code: "trm_unavailable" })
    expect(rate.rate).toBe("3950.45")
    expect(fake.queries).toHaveLength(4)
    // every attempt sent the same containment query
    expect(new Set(fake.queries).size).toBe(1)
  })

  test("a transient failure that clears within the retries is invisible to the caller", async () => {
    fake.queue = ["500", "hang"]
    expect((await run(rateFor("2026-11-22"))).rate).toBe("3950.45")
    expect(fake.queries).toHaveLength(3)
  })

  test("a hanging server times out per attempt (short timeout), 3 attempts, then TrmUnavailable", async () => {
    fake.mode = "hang"
    const started = performance.now()
    const error = await run(Effect.flip(rateFor("2026-11-22")), { timeout: "150 millis" })
    const elapsed = performance.now() - started
    expect(error).toBeInstanceOf(TrmUnavailable)
    expect(error.message).toContain("within 150ms")
    expect(fake.queries).toHaveLength(3)
    expect(elapsed).toBeGreaterThanOrEqual(3 * 150)
    expect(elapsed).toBeLessThan(3000)
  })

  test("malformed JSON is retried, then TrmUnavailable, not cached", async () => {
    const { error, rate } = await failThenRecover("malformed")
    expect(error.message).toContain("not JSON")
    expect(rate.rate).toBe("3950.45")
    expect(fake.queries).toHaveLength(4)
  })

  test("an empty answer is TrmUnavailable without retries, and is not cached", async () => {
    const { error, queries, rate } = await failThenRecover("empty")
    expect(queries).toBe(1)
    expect(error).toBeInstanceOf(TrmUnavailable)
    expect(rate.rate).toBe("3950.45")
    expect(fake.queries).toHaveLength(2)
  })

  test("rows of the wrong shape (CSV-style values) and a 4xx are refused without retries", async () => {
    fake.mode = "wrong-shape"
    const shape = await run(Effect.flip(rateFor("2026-11-22")))
    expect(shape.message).toContain("unexpected shape")
    expect(fake.queries).toHaveLength(1)
    fake.reset()
    fake.mode = "404"
    const notFound = await run(Effect.flip(rateFor("2026-11-22")))
    expect(notFound.message).toContain("HTTP 404")
    expect(fake.queries).toHaveLength(1)
  })

  test("no server at all is TrmUnavailable", async () => {
    const error = await run(Effect.flip(rateFor("2026-11-22")), { url: "http://127.0.0.1:9/resource/x.json" })
    expect(error).toBeInstanceOf(TrmUnavailable)
    expect(error.message).toContain("no answer")
  })
})

describe("several rows containing the date", () => {
  const { pick } = Trm._internal
  test("the row whose validity began latest wins, then the narrowest; equal rows are fine", () => {
    const rows = [row("2026-11-21", "2026-11-24", "3950.45"), row("2026-11-23", "2026-11-23", "3955.00")]
    expect(pick(rows, "2026-11-23")).toEqual({ rate: "3955.00", valid_from: "2026-11-23", valid_to: "2026-11-23" })
    const sameStart = [row("2026-11-21", "2026-11-24", "3950.45"), row("2026-11-21", "2026-11-23", "3951.00")]
    expect(pick(sameStart, "2026-11-22")).toMatchObject({ rate: "3951.00", valid_to: "2026-11-23" })
    const duplicate = [row("2026-11-21", "2026-11-23", "3950.45"), row("2026-11-21", "2026-11-23", "3950.450")]
    expect(pick(duplicate, "2026-11-22")).toMatchObject({ rate: "3950.45" })
  })

  test("identical spans with different values are refused, not guessed", () => {
    const rows = [row("2026-11-21", "2026-11-23", "3950.45"), row("2026-11-21", "2026-11-23", "3950.46")]
    expect(pick(rows, "2026-11-22")).toBe("ambiguous")
  })

  test("over HTTP: two containing rows resolve by the rule", async () => {
    fake.rows = [...ROWS, row("2026-11-23", "2026-11-23", "3955.00")]
    expect(await run(rateFor("2026-11-23"))).toEqual({ rate: "3955.00", valid_from: "2026-11-23", valid_to: "2026-11-23" })
  })
})

describe("configuration", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(
      AppConfig.make.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either)
    )

  test("TRM_URL defaults to the datos.gov.co dataset; empty means unset; a non-URL is refused", () => {
    expect(Either.getOrThrow(read({})).trmUrl).toBe("https://www.datos.gov.co/resource/32sa-8pi3.json")
    expect(Either.getOrThrow(read({ TRM_URL: " " })).trmUrl).toBe(Trm.DEFAULT_TRM_URL)
    const bad = read({ TRM_URL: "not a url" })
    expect(Either.isLeft(bad) && String(bad.left)).toContain("TRM_URL")
  })

  test("layer reads TRM_URL from AppConfig", async () => {
    const live = Trm.layer.pipe(
      Layer.provide(AppConfig.layer),
      Layer.provide(FetchHttpClient.layer),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["TRM_URL", fake.url]]))))
    )
    const rate = await Effect.runPromise(rateFor("2026-11-22").pipe(Effect.provide(live)))
    expect(rate.rate).toBe("3950.45")
    expect(fake.queries).toHaveLength(1)
  })
})
