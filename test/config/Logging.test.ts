import { describe, expect, test } from "bun:test"
import { Cause, FiberId, HashMap, List, Logger, LogLevel, LogSpan } from "effect"
import { jsonLine } from "../../src/config/Logging.ts"

/** One call of a logger with the options Effect passes it. */
const format = <A>(logger: Logger.Logger<unknown, A>, message: unknown, extra: {
  readonly annotations?: Record<string, unknown>
  readonly cause?: Cause.Cause<unknown>
} = {}) => {
  const date = new Date("2026-11-25T13:40:00.000Z")
  return logger.log({
    fiberId: FiberId.make(7, 0),
    logLevel: LogLevel.Info,
    message,
    cause: extra.cause ?? Cause.empty,
    context: undefined as never,
    spans: List.make(LogSpan.make("run", date.getTime() - 25)),
    annotations: HashMap.fromIterable(Object.entries(extra.annotations ?? {})),
    date
  })
}

describe("the JSON log line", () => {
  // The access log writes one of these per request: the same document as Effect's jsonLogger, cheaper.
  const cases: ReadonlyArray<readonly [string, unknown, Parameters<typeof format>[2]]> = [
    ["an access-log line", "request", {
      annotations: { method: "GET", route: "/api/partners/properties", status: 200, duration_ms: 3, request_id: "r-1" }
    }],
    ["several message parts", ["applied migrations:", "0001_foundation"], {}],
    ["a failure with its cause", "report run failed", { cause: Cause.fail(new Error("TRA answered 502")) }],
    ["an Error as the message", new Error("boom"), {}],
    ["nested annotations", "event", { annotations: { details: { count: 2, ids: ["a", "b"] }, none: null } }]
  ]
  for (const [name, message, extra] of cases) {
    test(`${name}: the same document as Logger.jsonLogger`, () => {
      const ours = format(jsonLine, message, extra)
      expect(JSON.parse(ours)).toEqual(JSON.parse(format(Logger.jsonLogger, message, extra)))
      expect(ours.includes("\n")).toBe(false)
    })
  }

  test("a value plain JSON cannot hold (a cycle, a bigint) still gives one line", () => {
    const cyclic: Record<string, unknown> = { name: "loop" }
    cyclic.self = cyclic
    const line = format(jsonLine, "odd values", { annotations: { cyclic, big: 10n } })
    const parsed = JSON.parse(line)
    expect(parsed.message).toBe("odd values")
    expect(parsed.annotations.big).toBe("10")
    expect(parsed.annotations.cyclic.name).toBe("loop")
  })
})
