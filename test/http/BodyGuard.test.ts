import { Multipart } from "@effect/platform"
import { describe, expect, test } from "bun:test"
import fc from "fast-check"
import { isJson, isMultipart, MAX_JSON_DEPTH, scanJson, unwrapPlatformMultipart } from "../../src/http/BodyGuard.ts"

/** The body guard's pure parts: the JSON scan and the content types (design §6.2, issue 14). */

const depthOf = (value: unknown): number =>
  typeof value === "object" && value !== null
    ? 1 + Math.max(0, ...Object.values(value as Record<string, unknown>).map(depthOf))
    : 0

describe("scanJson", () => {
  test.each([
    ["{}", undefined],
    ["[]", undefined],
    ["{\"a\":1,\"b\":{\"a\":2}}", undefined],
    ["[{\"a\":1},{\"a\":2}]", undefined],
    ["{\"a\":\"{[\\\"}\",\"b\":\"]]]]\"}", undefined],
    ["{\"a\\\\\":1,\"a\":2}", undefined],
    ["{\"a\":1,\"a\":2}", { _tag: "DuplicateKey", key: "a" }],
    ["{\"a\":1,\"\\u0061\":2}", { _tag: "DuplicateKey", key: "a" }],
    ["{\"x\":{\"k\":[],\"k\":0}}", { _tag: "DuplicateKey", key: "k" }],
    ["{\"__proto__\":1,\"__proto__\":2}", { _tag: "DuplicateKey", key: "__proto__" }]
  ])("%s", (text, issue) => {
    expect(scanJson(text)).toEqual(issue as never)
  })

  test("64 levels are read, 65 are not; unbalanced and huge nesting stop at 65 without recursion", () => {
    expect(scanJson("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).toBeUndefined()
    expect(scanJson("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1))).toEqual({ _tag: "TooDeep" })
    expect(scanJson("{\"a\":".repeat(1_000_000))).toEqual({ _tag: "TooDeep" })
    // Brackets inside a string do not count; an unterminated string is JSON.parse's to refuse.
    expect(scanJson(`["${"[".repeat(100_000)}`)).toBeUndefined()
  })

  test("any JSON text: no issue exactly when it nests at most 64 deep (JSON.stringify writes no key twice)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 70 }), (value) => {
        const issue = scanJson(JSON.stringify(value))
        expect(issue === undefined).toBe(depthOf(value) <= MAX_JSON_DEPTH)
      })
    )
  })

  test("any text at all: it never throws", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => void scanJson(text)))
    fc.assert(fc.property(fc.string16bits(), (text) => void scanJson(text)))
  })
})

describe("content types", () => {
  test.each([
    ["application/json", true],
    ["Application/JSON", true],
    ["application/json; charset=utf-8", true],
    ["application/json;charset=\"UTF-8\"", true],
    ["application/json;", true],
    ["application/json; charset=latin1", false],
    ["application/json; profile=x", false],
    ["application/jsonx", false],
    ["application/merge-patch+json", false],
    ["text/plain", false],
    ["", false]
  ])("%p is JSON: %p", (header, json) => {
    expect(isJson(header)).toBe(json)
  })

  test("no content type is not JSON; multipart is recognised with or without its boundary", () => {
    expect(isJson(undefined)).toBe(false)
    expect(isMultipart("multipart/form-data; boundary=x")).toBe(true)
    expect(isMultipart("Multipart/Form-Data")).toBe(true)
    expect(isMultipart("multipart/mixed")).toBe(false)
    expect(isMultipart(undefined)).toBe(false)
  })
})

describe("multipart failures as the platform's reasons", () => {
  const wrapped = (cause: unknown) => new Multipart.MultipartError({ reason: "InternalError", cause })

  test.each([
    [{ _tag: "ReachedLimit", limit: "MaxParts" }, "TooManyParts"],
    [{ _tag: "ReachedLimit", limit: "MaxFieldSize" }, "FieldTooLarge"],
    [{ _tag: "ReachedLimit", limit: "MaxPartSize" }, "FileTooLarge"],
    [{ _tag: "ReachedLimit", limit: "MaxTotalSize" }, "BodyTooLarge"],
    [{ _tag: "InvalidBoundary" }, "Parse"],
    [{ _tag: "BadHeaders", error: { _tag: "BadRequest" } }, "Parse"],
    [{ _tag: "InvalidDisposition" }, "Parse"],
    [{ _tag: "EndNotReached" }, "Parse"]
  ] as const)("the platform parser's InternalError around %o is %s, keeping the cause", (cause, reason) => {
    const unwrapped = unwrapPlatformMultipart(wrapped(cause))
    expect(unwrapped.reason).toBe(reason)
    expect(unwrapped.cause).toBe(cause)
  })

  test("anything else is left as it is: another InternalError, or a reason already given", () => {
    const internal = wrapped(new Error("disk full"))
    expect(unwrapPlatformMultipart(internal)).toBe(internal)
    const unknownTag = wrapped({ _tag: "SomethingElse" })
    expect(unwrapPlatformMultipart(unknownTag)).toBe(unknownTag)
    const parse = new Multipart.MultipartError({ reason: "Parse", cause: { _tag: "InvalidBoundary" } })
    expect(unwrapPlatformMultipart(parse)).toBe(parse)
  })
})
