import { HttpApiSchema } from "@effect/platform"
import { afterAll, beforeAll, expect, test } from "bun:test"
import fc from "fast-check"
import * as Errors from "../../src/shared/errors.ts"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { colombian, registrationBody, reservationBody } from "../support/guests.ts"
import { JPEG, PDF, PNG } from "../support/photos.ts"
import { startFakeTrm } from "../support/trm.ts"

/**
 * Property-based robustness (issue 14, item 4): arbitrary requests — mutated valid bodies, random bytes, deep
 * nesting, huge strings, wrong types, Unicode edge cases (unpaired surrogates, NUL, controls, invalid UTF-8),
 * content types, header values, path segments and query strings — against the 16 partner endpoints, the
 * check-in API (JSON and the photo upload), the panel's session-less routes and the admin RPC, on the real
 * app and database. Invariants:
 * - never a 5xx;
 * - every 4xx is exactly `{error, code, details}` with a code of the spec's table or a framework code
 *   (`not_found`, `method_not_allowed`, `unsupported_media_type`; the panel's own codes on its routes), with
 *   that code's status; the admin RPC's errors are that shape too (an HTTP 4xx), or its `AdminError` inside an
 *   RPC failure — never a defect;
 * - an error body repeats at most 200 characters of a huge input;
 * - a refused request changes nothing in the database: row counts and a checksum of every table the
 *   endpoints write, taken before and after the batch's refused requests are sent again on their own.
 * Requests go out concurrently in batches (one batch is one fast-check run) against one app. On failure
 * fast-check prints its seed and the shrunk batch; `FUZZ_SEED=<seed>` replays it, `FUZZ_RUNS` changes the
 * number of batches.
 */

const BATCH = 20
const RUNS = Number(process.env.FUZZ_RUNS ?? 260)
const SEED = process.env.FUZZ_SEED === undefined
  ? Date.now() ^ (Math.random() * 0x7fffffff)
  : Number(process.env.FUZZ_SEED)
const MB = 1024 * 1024

let db: TestDatabase
let app: RunningApp
let trm: ReturnType<typeof startFakeTrm>

/** Real ids the requests can aim at (else they aim at made-up ones). */
const fx = {
  testKey: "",
  liveKey: "",
  property: "",
  stay: "", // external_id of a reservation with an open check-in
  cancelTarget: "",
  token: "",
  guest: "",
  pingedWebhook: "", // the only webhook endpoint 14 pings: its URL never changes (a closed local port)
  patchedWebhook: "",
  deletedWebhook: "",
  delivery: ""
}

// ---------------------------------------------------------------------------------------------------------
// The routes

type Group = "partner" | "checkin" | "panel" | "admin"
type Body = "json" | "multipart" | "none"

interface RouteSpec {
  readonly group: Group
  readonly method: string
  readonly path: string
  readonly body: Body
  /** A valid body (fresh each time); mutated by the recipes. */
  readonly template?: () => unknown
  /** Query keys the route reads. */
  readonly query?: ReadonlyArray<string>
  /** The fixture for each `:param`, in order. */
  readonly fixtures?: ReadonlyArray<() => string>
}

let sequence = 0
const fresh = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++sequence}`
const HOOK = "http://127.0.0.1:9/hook"
const someUuid = () => crypto.randomUUID()

const guest = () => ({ ...colombian({ numero_documento: String(1_000_000 + ++sequence) }), motivo: "Tránsito" })

const ROUTES: ReadonlyArray<RouteSpec> = [
  { group: "partner", method: "GET", path: "/api/partners/properties", body: "none" },
  {
    group: "partner",
    method: "PATCH",
    path: "/api/partners/properties",
    body: "json",
    template: () => ({ mappings: [{ property_id: fx.property, external_id: fresh("MAP") }] })
  },
  {
    group: "partner",
    method: "POST",
    path: "/api/partners/reservations",
    body: "json",
    template: () =>
      reservationBody(fx.property, {
        external_id: fresh("FZ"),
        total_amount: 350000,
        currency: "COP",
        guest_email: "ana@example.co",
        notes: "late arrival",
        metadata: { room: "A1", tags: ["x"] }
      })
  },
  {
    group: "partner",
    method: "PATCH",
    path: "/api/partners/reservations",
    body: "json",
    template: () => ({ external_id: fx.stay, guests_count: 2, notes: "changed", check_out: "2026-12-24" })
  },
  {
    group: "partner",
    method: "POST",
    path: "/api/partners/reservations/cancel",
    body: "json",
    template: () => ({ external_id: fx.cancelTarget, reason: "no show" })
  },
  {
    group: "partner",
    method: "GET",
    path: "/api/partners/registrations",
    body: "none",
    query: ["external_id", "include"]
  },
  {
    group: "partner",
    method: "POST",
    path: "/api/partners/registrations",
    body: "json",
    template: () =>
      registrationBody(fx.property, [colombian({ numero_documento: String(2_000_000 + ++sequence) })], {
        external_id: fresh("FR"),
        check_out: "2026-12-22",
        motivo: "Trabajo"
      })
  },
  {
    group: "partner",
    method: "GET",
    path: "/api/partners/registrations/:external_id",
    body: "none",
    query: ["include"],
    fixtures: [() => fx.stay]
  },
  { group: "partner", method: "GET", path: "/api/partners/webhooks", body: "none" },
  {
    group: "partner",
    method: "POST",
    path: "/api/partners/webhooks",
    body: "json",
    template: () => ({ url: HOOK, events: ["reservation.created"], include_guests: false })
  },
  {
    group: "partner",
    method: "PATCH",
    path: "/api/partners/webhooks/:id",
    body: "json",
    template: () => ({ url: HOOK, events: ["*"], include_guests: true }),
    fixtures: [() => fx.patchedWebhook]
  },
  {
    group: "partner",
    method: "DELETE",
    path: "/api/partners/webhooks/:id",
    body: "none",
    fixtures: [() => fx.deletedWebhook]
  },
  {
    group: "partner",
    method: "POST",
    path: "/api/partners/webhooks/:id/rotate-secret",
    body: "none",
    fixtures: [() => fx.patchedWebhook]
  },
  {
    group: "partner",
    method: "POST",
    path: "/api/partners/webhooks/:id/test",
    body: "none",
    fixtures: [() => fx.pingedWebhook]
  },
  {
    group: "partner",
    method: "GET",
    path: "/api/partners/webhooks/deliveries",
    body: "none",
    query: ["status", "event", "external_id", "limit"]
  },
  {
    group: "partner",
    method: "POST",
    path: "/api/partners/webhooks/deliveries/:id/redeliver",
    body: "none",
    fixtures: [() => fx.delivery]
  },
  { group: "checkin", method: "GET", path: "/api/checkin/:token", body: "none", fixtures: [() => fx.token] },
  {
    group: "checkin",
    method: "POST",
    path: "/api/checkin/:token/guests",
    body: "json",
    template: guest,
    fixtures: [() => fx.token]
  },
  {
    group: "checkin",
    method: "PUT",
    path: "/api/checkin/:token/guests/:guest_id/document",
    body: "multipart",
    fixtures: [() => fx.token, () => fx.guest]
  },
  {
    group: "checkin",
    method: "POST",
    path: "/api/checkin/:token/contract",
    body: "json",
    template: () => ({ signer_name: "Ana Pérez", accepted: true }),
    fixtures: [() => fx.token]
  },
  {
    group: "panel",
    method: "POST",
    path: "/api/panel/session/code",
    body: "json",
    template: () => ({ email: "fuzz@example.co" })
  },
  {
    group: "panel",
    method: "POST",
    path: "/api/panel/session",
    body: "json",
    template: () => ({ email: "fuzz@example.co", code: "123456" })
  },
  {
    group: "panel",
    method: "POST",
    path: "/api/panel/signup",
    body: "json",
    template: () => ({ name: "Hotel Fuzz", email: `${fresh("signup").toLowerCase()}@example.co` })
  },
  { group: "admin", method: "POST", path: "/rpc/admin", body: "json", template: () => adminTemplate("ListKeys") },
  // No such route (mostly): 404 or 405, whatever the body.
  {
    group: "partner",
    method: "POST",
    path: "/api/partners/:a/:b",
    body: "none",
    fixtures: [() => "nothing", () => "here"]
  }
]

/**
 * Admin payloads aim at made-up ids, never at the fixture account: a valid `SetLimits` or `RevokeKey` on it
 * would throttle or lock out the rest of the run.
 */
const ADMIN_PAYLOADS: Record<string, () => unknown> = {
  CreateAccount: () => ({ name: "Fuzz Hotel", email: `${fresh("acct").toLowerCase()}@example.co` }),
  SetLimits: () => ({ account_id: someUuid(), reads: 10, writes: 10 }),
  EnableLive: () => ({ account_id: someUuid() }),
  CreateSandbox: () => ({ account_id: someUuid() }),
  CreateKey: () => ({ account_id: someUuid(), environment: "test" }),
  RevokeKey: () => ({ key_id: someUuid() }),
  ListKeys: () => ({ account_id: someUuid() }),
  CreateProperty: () => ({ account_id: someUuid(), name: "Fuzz", environment: "test", reports_tra: true }),
  UpdateProperty: () => ({ property_id: someUuid(), name: "Fuzz", tra_token: "secret" }),
  SireFiles: () => ({ property_id: someUuid() }),
  ConfirmSireFile: () => ({ file_id: someUuid() })
}
const ADMIN_TAGS = Object.keys(ADMIN_PAYLOADS)

const adminTemplate = (tag: string) => ({
  _tag: "Request",
  id: String(++sequence),
  tag,
  payload: (ADMIN_PAYLOADS[tag] ?? ADMIN_PAYLOADS.ListKeys!)(),
  headers: []
})

// ---------------------------------------------------------------------------------------------------------
// Recipes: what the arbitraries generate. Compact (a huge body is its size, not its bytes), so a shrunk
// counterexample prints in a few lines; `materialize` builds the request.

const EDGE_STRINGS = [
  "",
  " ",
  "\t",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udc00",
  "\ud83d\ude00",
  "\u202e",
  "\u0007",
  "\u0085",
  "\ufeff",
  "\uffff",
  "null",
  "0",
  "-1",
  "1e308",
  "2026-02-30",
  "1900-01-01",
  "9999-12-31",
  "2100-12-31",
  "0000-00-00",
  "../../etc/passwd",
  "%00",
  "%zz",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "__proto__",
  "constructor",
  "a".repeat(121),
  "a".repeat(257),
  "é".repeat(300)
]

const EDGE_NUMBERS = [
  0,
  -0,
  -1,
  1,
  1.5,
  2 ** 31,
  2 ** 31 - 1,
  2 ** 53,
  -(2 ** 53),
  1e12,
  1e12 + 1,
  1e308,
  -1e308,
  5e-324
]

const edgeValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...EDGE_STRINGS) },
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_NUMBERS) },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { a: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string16bits({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true }) }
)

type Mutation =
  | { readonly op: "delete"; readonly key: number }
  | { readonly op: "set"; readonly key: number; readonly value: unknown }
  | { readonly op: "add"; readonly key: string; readonly value: unknown }
  | { readonly op: "deep"; readonly key: number; readonly value: unknown }
  | { readonly op: "wrap" }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("delete" as const), key: fc.nat(40) }),
  { weight: 4, arbitrary: fc.record({ op: fc.constant("set" as const), key: fc.nat(40), value: edgeValue }) },
  fc.record({ op: fc.constant("add" as const), key: fc.string({ maxLength: 12 }), value: edgeValue }),
  fc.record({ op: fc.constant("deep" as const), key: fc.nat(40), value: edgeValue }),
  fc.record({ op: fc.constant("wrap" as const) })
)

type TextEdit =
  | { readonly op: "duplicate"; readonly key: number }
  | { readonly op: "escape"; readonly key: number; readonly raw: string }
  | { readonly op: "truncate"; readonly at: number }
  | { readonly op: "append"; readonly text: string }

/** Escapes as JSON text: unpaired surrogates, NUL, a control, a pair, and malformed ones. */
const RAW_ESCAPES = [
  "\\ud800",
  "\\udc00x",
  "\\u0000",
  "\\u001f",
  "\\ud83d\\ude00",
  "\\x41",
  "\\u12",
  "\\",
  "\\uD800\\uD800"
]

const textEdit: fc.Arbitrary<TextEdit> = fc.oneof(
  fc.record({ op: fc.constant("duplicate" as const), key: fc.nat(40) }),
  fc.record({ op: fc.constant("escape" as const), key: fc.nat(40), raw: fc.constantFrom(...RAW_ESCAPES) }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat(400) }),
  fc.record({ op: fc.constant("append" as const), text: fc.string({ unit: "binary", maxLength: 8 }) })
)

type ByteEdit = { readonly at: number; readonly bytes: ReadonlyArray<number> }

const INVALID_UTF8 = [[0xff], [0xc3], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xef, 0xbb]]

type BodyRecipe =
  | { readonly kind: "valid" }
  | {
    readonly kind: "mutated"
    readonly mutations: ReadonlyArray<Mutation>
    readonly edits: ReadonlyArray<TextEdit>
    readonly bytes: ReadonlyArray<ByteEdit>
  }
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "nested"; readonly depth: number; readonly open: "[" | "{"; readonly closed: boolean }
  | {
    readonly kind: "huge"
    readonly char: string
    readonly size: number
    readonly where: "field" | "key" | "raw"
    readonly field: number
  }
  | { readonly kind: "empty" }
  | {
    readonly kind: "multipart"
    readonly parts: ReadonlyArray<PartRecipe>
    readonly boundary: string
    readonly cut: number
  }

interface PartRecipe {
  readonly name: string
  readonly filename: string | null
  readonly type: string
  readonly content: "jpeg" | "png" | "pdf" | "empty" | "text" | "big"
}

const part: fc.Arbitrary<PartRecipe> = fc.record({
  name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom("front", "back") }, fc.string({ maxLength: 8 })),
  filename: fc.oneof(fc.constantFrom("f.jpg", "x.png", "a.pdf", ""), fc.constant(null), fc.string({ maxLength: 10 })),
  type: fc.constantFrom("image/jpeg", "image/png", "application/pdf", "text/plain", "application/octet-stream"),
  content: fc.constantFrom("jpeg", "png", "pdf", "empty", "text", "big")
})

const bodyRecipe: fc.Arbitrary<BodyRecipe> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: "valid" as const }) },
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant("mutated" as const),
      mutations: fc.array(mutation, { minLength: 0, maxLength: 3 }),
      edits: fc.array(textEdit, { maxLength: 2 }),
      bytes: fc.array(fc.record({ at: fc.nat(500), bytes: fc.constantFrom(...INVALID_UTF8) }), { maxLength: 1 })
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("json" as const), value: fc.jsonValue({ maxDepth: 4 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("bytes" as const), bytes: fc.uint8Array({ maxLength: 300 }) })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("text" as const),
      text: fc.oneof(fc.string({ unit: "binary", maxLength: 60 }), fc.string16bits({ maxLength: 30 }))
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("nested" as const),
      depth: fc.oneof(fc.integer({ min: 1, max: 80 }), fc.constantFrom(63, 64, 65, 10_000, 20_000, 100_000)),
      open: fc.constantFrom("[" as const, "{" as const),
      closed: fc.boolean()
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("huge" as const),
      char: fc.constantFrom("x", "é", "\ud83d\ude00", "\"", "\\", "\u0000"),
      size: fc.constantFrom(201, 5_000, 300_000, MB + 10),
      where: fc.constantFrom("field" as const, "key" as const, "raw" as const),
      field: fc.nat(20)
    })
  },
  { weight: 1, arbitrary: fc.constant({ kind: "empty" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("multipart" as const),
      parts: fc.array(part, { maxLength: 4 }),
      boundary: fc.oneof({ weight: 3, arbitrary: fc.constant("fuzzboundary") }, fc.string({ maxLength: 12 })),
      cut: fc.oneof({ weight: 3, arbitrary: fc.constant(-1) }, fc.nat(600))
    })
  }
)

/** Multipart bodies mostly for the upload route, JSON recipes for the rest. */
const multipartBody = bodyRecipe.filter((recipe) => recipe.kind === "multipart")

type ContentType =
  | "json"
  | "json-charset"
  | "json-upper"
  | "json-latin1"
  | "none"
  | "text"
  | "multipart"
  | "multipart-bare"
  | "form"
  | { readonly raw: string }

const contentType: fc.Arbitrary<ContentType> = fc.oneof(
  { weight: 14, arbitrary: fc.constant("json" as const) },
  { weight: 6, arbitrary: fc.constantFrom<ContentType>("json-charset", "json-upper", "json-latin1") },
  { weight: 6, arbitrary: fc.constantFrom<ContentType>("none", "text", "multipart", "multipart-bare", "form") },
  { weight: 2, arbitrary: fc.record({ raw: fc.string({ unit: "grapheme-ascii", maxLength: 40 }) }) }
)

type Param = { readonly kind: "fixture" } | { readonly kind: "raw"; readonly text: string } | {
  readonly kind: "long"
  readonly length: number
}

const param: fc.Arbitrary<Param> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "fixture" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("raw" as const),
      text: fc.oneof(
        fc.constantFrom(
          "%00",
          "%zz",
          "%",
          "%ff",
          "..",
          ".",
          "%2F",
          "%E2%80%AE",
          "%ED%A0%80",
          "a%20b",
          "00000000-0000-0000-0000-000000000000"
        ),
        fc.string({ unit: "binary", minLength: 1, maxLength: 30 }).map(encodeURIComponent),
        fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 30 })
      )
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("long" as const), length: fc.constantFrom(121, 257, 1000, 6000) })
  }
)

type Query = ReadonlyArray<readonly [key: string, value: string]> | { readonly raw: string }

const query: fc.Arbitrary<Query> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom("external_id", "include", "status", "event", "limit", "environment", "cursor"),
          fc.string({ maxLength: 6 })
        ),
        fc.oneof(fc.constantFrom(...EDGE_STRINGS), fc.constantFrom("guests", "pending", "10", "0", "201", "-1", "1.5"))
      ),
      { maxLength: 4 }
    )
  },
  { weight: 1, arbitrary: fc.record({ raw: fc.string({ unit: "grapheme-ascii", maxLength: 40 }) }) }
)

type Auth = "test" | "live" | "none" | "garbage" | "admin" | { readonly raw: string }

const auth: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 8, arbitrary: fc.constant("test" as const) },
  { weight: 2, arbitrary: fc.constantFrom<Auth>("live", "none", "garbage") },
  { weight: 1, arbitrary: fc.record({ raw: fc.string({ unit: "grapheme-ascii", maxLength: 60 }) }) }
)

/** Header values fetch accepts: printable ASCII. */
const headerValue = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 80
})

const extraHeaders = fc.array(
  fc.tuple(
    fc.constantFrom("x-request-id", "origin", "cookie", "accept", "x-panel-csrf", "content-language"),
    headerValue
  ),
  { maxLength: 2 }
)

interface Recipe {
  readonly route: number
  readonly method: string | null
  readonly params: ReadonlyArray<Param>
  readonly query: Query
  readonly auth: Auth
  readonly contentType: ContentType
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: BodyRecipe
  readonly chunked: boolean
}

const recipe: fc.Arbitrary<Recipe> = fc.nat(ROUTES.length - 1).chain((route) => {
  const spec = ROUTES[route]!
  const isUpload = spec.body === "multipart"
  return fc.record({
    route: fc.constant(route),
    method: fc.oneof(
      { weight: 12, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD") }
    ),
    params: fc.array(param, { minLength: 2, maxLength: 2 }),
    query,
    auth: spec.group === "admin" ? fc.constantFrom<Auth>("admin", "admin", "admin", "none", "garbage") : auth,
    contentType: isUpload
      ? fc.oneof({ weight: 6, arbitrary: fc.constant("multipart" as const) }, contentType)
      : contentType,
    headers: extraHeaders,
    body: isUpload ? fc.oneof({ weight: 4, arbitrary: multipartBody }, bodyRecipe) : bodyRecipe,
    chunked: fc.boolean()
  })
})

// ---------------------------------------------------------------------------------------------------------
// Materializing a recipe

const encoder = new TextEncoder()

const applyMutation = (value: unknown, m: Mutation): unknown => {
  if (m.op === "wrap") return [value]
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value
  const object = { ...(value as Record<string, unknown>) }
  const keys = Object.keys(object)
  if (m.op === "add") {
    object[m.key] = m.value
    return object
  }
  if (keys.length === 0) return object
  const key = keys[m.key % keys.length]!
  if (m.op === "delete") delete object[key]
  else if (m.op === "set") object[key] = m.value
  else {
    // one level down: into an object field, or the first element of an array field (guests, mappings)
    const inner = object[key]
    const target = Array.isArray(inner) ? inner[0] : inner
    const changed = applyMutation(target, { op: "set", key: m.key, value: m.value })
    object[key] = Array.isArray(inner) ? [changed, ...inner.slice(1)] : changed
  }
  return object
}

/** The spans of the top-level string values of a JSON text's first object, to edit them as text. */
interface Span {
  readonly key: string
  readonly start: number
  readonly end: number
}

const stringValueSpans = (text: string): Array<Span> => {
  const spans: Array<Span> = []
  const pattern = /"((?:[^"\\]|\\.)*)":"((?:[^"\\]|\\.)*)"/g
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const start = match.index + match[1]!.length + 4
    spans.push({ key: match[1]!, start, end: start + match[2]!.length })
  }
  return spans
}

const applyEdit = (text: string, edit: TextEdit): string => {
  switch (edit.op) {
    case "duplicate": {
      const spans = stringValueSpans(text)
      if (spans.length === 0 || !text.startsWith("{")) return text
      const span = spans[edit.key % spans.length]!
      return `{"${span.key}":"dup",${text.slice(1)}`
    }
    case "escape": {
      const spans = stringValueSpans(text)
      if (spans.length === 0) return text
      const span = spans[edit.key % spans.length]!
      return text.slice(0, span.start) + edit.raw + text.slice(span.end)
    }
    case "truncate":
      return text.slice(0, edit.at % (text.length + 1))
    case "append":
      return text + edit.text
  }
}

const multipartBytes = (recipe: Extract<BodyRecipe, { kind: "multipart" }>): Uint8Array => {
  const chunks: Array<Uint8Array> = []
  for (const p of recipe.parts) {
    const disposition = p.filename === null
      ? `form-data; name="${p.name}"`
      : `form-data; name="${p.name}"; filename="${p.filename}"`
    const head = `--${recipe.boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${p.type}\r\n\r\n`
    chunks.push(encoder.encode(head))
    chunks.push(
      p.content === "jpeg" ? JPEG
        : p.content === "png" ? PNG
        : p.content === "pdf" ? PDF
        : p.content === "empty" ? new Uint8Array()
        : p.content === "text" ? encoder.encode("not a photo")
        : new Uint8Array(10 * MB + 1).fill(0xff)
    )
    chunks.push(encoder.encode("\r\n"))
  }
  chunks.push(encoder.encode(`--${recipe.boundary}--\r\n`))
  const size = chunks.reduce((total, chunk) => total + chunk.length, 0)
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return recipe.cut >= 0 ? out.slice(0, Math.min(recipe.cut, out.length)) : out
}

const bodyBytes = (spec: RouteSpec, body: BodyRecipe): Uint8Array | string | undefined => {
  const template = spec.template?.() ?? (spec.group === "admin" ? adminTemplate("ListKeys") : { a: 1 })
  switch (body.kind) {
    case "valid":
      return JSON.stringify(
        spec.group === "admin" ? adminTemplate(ADMIN_TAGS[sequence % ADMIN_TAGS.length]!) : template
      )
    case "mutated": {
      const value = body.mutations.reduce(applyMutation, template)
      const text = body.edits.reduce(applyEdit, JSON.stringify(value) ?? "")
      if (body.bytes.length === 0) return text
      const bytes = encoder.encode(text)
      const edit = body.bytes[0]!
      const at = edit.at % (bytes.length + 1)
      const out = new Uint8Array(bytes.length + edit.bytes.length)
      out.set(bytes.subarray(0, at))
      out.set(edit.bytes, at)
      out.set(bytes.subarray(at), at + edit.bytes.length)
      return out
    }
    case "json":
      return JSON.stringify(body.value) ?? ""
    case "bytes":
      return body.bytes
    case "text":
      return body.text
    case "nested": {
      const open = body.open === "[" ? "[" : "{\"a\":"
      const close = body.open === "[" ? "]" : "}"
      return open.repeat(body.depth) + "1" + (body.closed ? close.repeat(body.depth) : "")
    }
    case "huge": {
      const huge = body.char.repeat(Math.ceil(body.size / body.char.length))
      if (body.where === "raw") return huge
      const object = template as Record<string, unknown>
      if (body.where === "key") return JSON.stringify({ ...object, [huge]: 1 })
      const strings = Object.keys(object).filter((k) => typeof object[k] === "string")
      const key = strings.length === 0 ? "external_id" : strings[body.field % strings.length]!
      return JSON.stringify({ ...object, [key]: huge })
    }
    case "empty":
      return ""
    case "multipart":
      return multipartBytes(body)
  }
}

const CONTENT_TYPES: Record<Exclude<ContentType, { raw: string }>, string | undefined> = {
  json: "application/json",
  "json-charset": "application/json; charset=utf-8",
  "json-upper": "APPLICATION/JSON;Charset=\"UTF-8\"",
  "json-latin1": "application/json; charset=latin1",
  none: undefined,
  text: "text/plain",
  multipart: "multipart/form-data; boundary=fuzzboundary",
  "multipart-bare": "multipart/form-data",
  form: "application/x-www-form-urlencoded"
}

interface Built {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: Uint8Array | string | undefined
  readonly chunked: boolean
  readonly group: Group
  /** The characters a huge body or a long path segment repeats: an error body must not repeat 201 of them. */
  readonly repeated: ReadonlyArray<string>
}

const build = (r: Recipe): Built => {
  const spec = ROUTES[r.route]!
  const method = r.method ?? spec.method
  let index = 0
  const path = spec.path.replace(/:[a-z_]+/g, () => {
    const p = r.params[index] ?? { kind: "fixture" as const }
    const fixture = spec.fixtures?.[index]
    index++
    if (p.kind === "fixture") return encodeURIComponent(fixture?.() ?? "fixture")
    if (p.kind === "long") return "a".repeat(p.length)
    return p.text
  })
  const search = "raw" in r.query ? r.query.raw : new URLSearchParams(r.query.map(([k, v]) => [k, v])).toString()
  const headers: Record<string, string> = {}
  for (const [name, value] of r.headers) headers[name] = value
  const type = typeof r.contentType === "object" ? r.contentType.raw : CONTENT_TYPES[r.contentType]
  if (type !== undefined) headers["content-type"] = r.contentType === "multipart" && r.body.kind === "multipart"
    ? `multipart/form-data; boundary=${r.body.boundary}`
    : type
  const authorization = r.auth === "test" ? `Bearer ${fx.testKey}`
    : r.auth === "live" ? `Bearer ${fx.liveKey}`
    : r.auth === "admin" ? `Bearer ${app.adminToken}`
    : r.auth === "garbage" ? "Bearer svc_test_garbage"
    : r.auth === "none" ? undefined
    : r.auth.raw
  if (authorization !== undefined) headers.authorization = authorization
  const hasBody = method !== "GET" && method !== "HEAD"
  return {
    method,
    url: `${app.baseUrl}${path}${search === "" ? "" : `?${search}`}`,
    headers,
    body: hasBody ? bodyBytes(spec, r.body) : undefined,
    chunked: r.chunked,
    group: spec.group,
    repeated: [
      ...(hasBody && r.body.kind === "huge" && r.body.size > 200 ? [r.body.char] : []),
      ...(r.params.some((p, i) => p.kind === "long" && p.length > 200 && i < index) ? ["a"] : [])
    ]
  }
}

// ---------------------------------------------------------------------------------------------------------
// Invariants

/** The code a wire error schema encodes (its literal). */
const codeOf = (schema: unknown): string =>
  (schema as { from: { fields: { code: { literals: [string] } } } }).from.fields.code.literals[0]

const statusOf = new Map<string, number>()
for (const schema of [
  ...Errors.allErrorBodies,
  Errors.UnsupportedMediaTypeBody,
  Errors.CsrfRejectedBody,
  Errors.InvalidCodeBody,
  Errors.LiveNotEnabledBody,
  Errors.SandboxExistsBody,
  Errors.OwnerRequiredBody,
  Errors.MemberNotFoundBody
]) {
  statusOf.set(codeOf(schema), HttpApiSchema.getStatusError(schema))
}
const SPEC_CODES = new Set(Errors.allErrorBodies.map(codeOf))
const FRAMEWORK_CODES = new Set(["not_found", "method_not_allowed", "unsupported_media_type"])
const PANEL_CODES = new Set(["csrf_rejected", "invalid_code", "live_not_enabled", "sandbox_exists", "owner_required"])

const codeAllowed = (group: Group, code: string) =>
  SPEC_CODES.has(code) || FRAMEWORK_CODES.has(code) || (group === "panel" && PANEL_CODES.has(code))

interface Outcome {
  readonly built: Built
  readonly status: number
  readonly text: string
  /** The request was refused: it must have changed nothing. */
  readonly refused: boolean
}

const summarize = (o: Outcome) =>
  `${o.built.method} ${o.built.url.replace(app.baseUrl, "").slice(0, 300)} → ${o.status} ${o.text.slice(0, 400)}`

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The admin RPC's 200: RPC messages, each a success, an `AdminError` failure or a pong; never a defect. */
const adminRpcProblem = (text: string): string | undefined => {
  let messages: unknown
  try {
    messages = JSON.parse(text)
  } catch {
    return "the admin RPC answered 200 with a body that is not JSON"
  }
  if (!Array.isArray(messages)) return "the admin RPC answered 200 without a list of messages"
  for (const message of messages) {
    if (!isRecord(message)) return "an RPC message is not an object"
    if (message._tag === "Pong") continue
    if (message._tag !== "Exit" || !isRecord(message.exit)) return `an RPC ${String(message._tag)} message`
    if (message.exit._tag === "Success") continue
    const cause = message.exit.cause
    if (!isRecord(cause) || cause._tag !== "Fail") return "an RPC failure that is not a typed AdminError (a defect)"
    const error = cause.error
    const typed = isRecord(error) && error._tag === "AdminError" && typeof error.message === "string" &&
      typeof error.code === "string"
    if (!typed) return "an RPC failure that is not {message, code}"
  }
  return undefined
}

const problemOf = (o: Outcome): string | undefined => {
  if (o.status >= 500) return "a 5xx"
  for (const repeated of o.status >= 400 ? o.built.repeated : []) {
    const escaped = JSON.stringify(repeated).slice(1, -1)
    if (o.text.includes(escaped.repeat(201))) return "the error body repeats more than 200 characters of input"
  }
  if (o.built.method === "HEAD") return undefined
  if (o.built.group === "admin" && o.status === 200) return adminRpcProblem(o.text)
  if (o.status < 400) return undefined
  if (o.text.length > 64 * 1024) return `an error body of ${o.text.length} characters`
  let body: unknown
  try {
    body = JSON.parse(o.text)
  } catch {
    return "a 4xx whose body is not JSON"
  }
  if (!isRecord(body) || Object.keys(body).sort().join() !== "code,details,error") {
    return "a 4xx that is not exactly {error, code, details}"
  }
  if (typeof body.error !== "string" || typeof body.code !== "string" || !isRecord(body.details)) {
    return "a 4xx whose error, code or details has the wrong type"
  }
  if (!codeAllowed(o.built.group, body.code)) return `code ${body.code} is not in the error table`
  if (statusOf.get(body.code) !== o.status) return `code ${body.code} with status ${o.status}`
  return undefined
}

const send = async (built: Built): Promise<Outcome> => {
  const body = built.body === undefined
    ? undefined
    : built.chunked
    ? new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = typeof built.body === "string" ? encoder.encode(built.body) : built.body!
        for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.slice(at, at + 64 * 1024))
        controller.close()
      }
    })
    : built.body
  const response = await fetch(built.url, {
    method: built.method,
    headers: built.headers,
    ...(body === undefined ? {} : { body: body as BodyInit, duplex: "half" }),
    redirect: "manual"
  } as RequestInit)
  const text = await response.text()
  const refused = response.status >= 400 || (built.group === "admin" && !text.includes("\"Success\""))
  return { built, status: response.status, text, refused }
}

// ---------------------------------------------------------------------------------------------------------
// The database snapshot

/**
 * Every table the endpoints write, counted and hashed. Left out: `panel_codes` (a wrong code counts a try by
 * design — §8's "5 wrong tries burn it" — so a refused sign-in does write) and the migrations' own table.
 */
let snapshotSql = ""
const snapshot = async (): Promise<string> => JSON.stringify(await db.query(snapshotSql))

// ---------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  db = await freshDatabase()
  trm = startFakeTrm()
  app = await startApp({
    DATABASE_URL: db.url,
    // No background loop: the database changes only through the requests, and nothing leaves the machine
    // (endpoint 14 pings a closed local port; deliveries, photo fetches and e-mails are never sent).
    ROLE: "api",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    TRM_URL: trm.url,
    TRA_BASE_URL: "http://127.0.0.1:9",
    PANEL_SIGNUP: "open"
  })
  const account = await seedAccount(app, "Hotel Fuzz")
  const plenty = 1_000_000
  await admin(app, (c) => c.SetLimits({ account_id: account.accountId, reads: plenty, writes: plenty, tests: plenty }))
  fx.testKey = account.testKey
  fx.liveKey = account.liveKey
  fx.property = account.testProperties[0]!.property_id
  const reservation = async () => {
    const res = await call(app, "POST", "/api/partners/reservations", {
      key: fx.testKey,
      json: { ...ROUTES[2]!.template!() as object, guests_count: 3 }
    })
    expect(res.status).toBe(201)
    return res.body as { external_id: string; checkin_url: string }
  }
  const stay = await reservation()
  fx.stay = stay.external_id
  fx.token = stay.checkin_url.split("/checkin/")[1]!
  fx.cancelTarget = (await reservation()).external_id
  const registered = await call(app, "POST", `/api/checkin/${fx.token}/guests`, { json: guest() })
  expect(registered.status).toBe(201)
  fx.guest = registered.body.guest_id
  const webhook = async () => {
    const res = await call(app, "POST", "/api/partners/webhooks", { key: fx.testKey, json: { url: HOOK } })
    expect(res.status).toBe(201)
    return res.body.id as string
  }
  fx.pingedWebhook = await webhook()
  fx.patchedWebhook = await webhook()
  fx.deletedWebhook = await webhook()
  const ping = await call(app, "POST", `/api/partners/webhooks/${fx.pingedWebhook}/test`, { key: fx.testKey })
  expect(ping.status).toBe(200)
  const deliveries = await call(app, "GET", "/api/partners/webhooks/deliveries", { key: fx.testKey })
  fx.delivery = deliveries.body.deliveries[0].id
  const tables = await db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
       AND table_name NOT IN ('panel_codes', 'effect_sql_migrations')
     ORDER BY table_name`
  )
  expect(tables.map((t) => t.name)).toContain("reservations")
  snapshotSql = tables.map(({ name }) =>
    `SELECT '${name}' AS t, count(*)::int AS n,
       md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${name}" x`
  ).join(" UNION ALL ")
}, 60_000)

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  trm?.stop()
})

test(`fuzz: ${BATCH * RUNS} arbitrary requests: no 5xx, the Error shape, refused ones change nothing`, async () => {
  console.log(`fuzz: seed ${SEED} (replay with FUZZ_SEED=${SEED}), ${RUNS} batches of ${BATCH}`)
  const started = Date.now()
  const stats = {
    requests: 0,
    refused: 0,
    replayed: 0,
    checkedBatches: 0,
    byStatus: new Map<number, number>(),
    byGroup: new Map<Group, number>()
  }
  const record = (outcome: Outcome, problems: Array<string>) => {
    stats.byStatus.set(outcome.status, (stats.byStatus.get(outcome.status) ?? 0) + 1)
    const problem = problemOf(outcome)
    if (problem !== undefined) problems.push(`${problem}: ${summarize(outcome)}`)
  }
  // Whole batches: shrinking then simplifies each request of the failing batch (every failing request is
  // also named, with its answer, in the error).
  const property = fc.asyncProperty(fc.array(recipe, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
    const problems: Array<string> = []
    const outcomes = await Promise.all(batch.map((r) => send(build(r))))
    for (const outcome of outcomes) {
      stats.requests++
      if (outcome.refused) stats.refused++
      stats.byGroup.set(outcome.built.group, (stats.byGroup.get(outcome.built.group) ?? 0) + 1)
      record(outcome, problems)
    }
    // A batch mixes refused and accepted requests, whose changes cannot be told apart; so the refused ones
    // are sent again, alone, between two snapshots: refused again, they must have changed nothing.
    const refused = outcomes.filter((o) => o.refused).map((o) => o.built)
    const before = await snapshot()
    const replays = await Promise.all(refused.map(send))
    const after = await snapshot()
    for (const replay of replays) {
      stats.replayed++
      record(replay, problems)
    }
    if (replays.every((o) => o.refused)) {
      stats.checkedBatches++
      if (after !== before) {
        problems.push(`refused requests changed the database:\n${replays.map(summarize).join("\n")}`)
      }
    }
    if (problems.length > 0) throw new Error(problems.join("\n"))
  })
  try {
    // On failure fc.assert throws with the seed, the path and the shrunk counterexample, which bun prints.
    await fc.assert(property, { seed: SEED, numRuns: RUNS, verbose: 1 })
  } finally {
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    const statuses = [...stats.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(" ")
    const groups = [...stats.byGroup].map(([g, n]) => `${g}:${n}`).join(" ")
    console.log(
      `fuzz: ${stats.requests} requests (${stats.refused} refused, each sent again between two database ` +
        `snapshots: ${stats.replayed} replays, ${stats.checkedBatches} batches checked) in ${seconds} s — ` +
        `statuses ${statuses} — ${groups}`
    )
  }
  expect(stats.requests).toBeGreaterThanOrEqual(5_000)
}, 300_000)
