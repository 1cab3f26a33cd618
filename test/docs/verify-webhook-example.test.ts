import { afterEach, describe, expect, test } from "bun:test"
import { createHmac } from "node:crypto"
import { verifyWebhook } from "../../docs/examples/verify-webhook.ts"
import { type Receiver, startReceiver, verifyReceived, verifySignature } from "../support/receiver.ts"

/**
 * The receiver-side example of docs/webhooks.md, against bodies signed here with node:crypto (spec "Events" →
 * "Signature"; design §6.14: the HMAC key is the secret string with its `whsec_` prefix), and its agreement
 * with the test receiver's independent `verifySignature`.
 */

const SECRET = "whsec_4Jx9n2QeZ0cTq7LwV3rB8sYkH1mGdP5a"
const OTHER_SECRET = "whsec_Zr8Kp1Lm3Nq5Ts7Vx9Bz2Cd4Fg6Hj8Jk0"
const NOW = 1_790_000_000_000 // ms
const TS = String(NOW / 1000)

const hmac = (secret: string, timestamp: string, body: string) =>
  "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")

const BODY = `{"id":"evt_5f0c6a1e9b2d4c7f8a3e6b1d0c9f2a4e","type":"registration.completed",` +
  `"created_at":"2026-11-10T15:04:05.123Z","api_version":"2026-10-01","sandbox":false,` +
  `"data":{"reservation_id":"9b1f7d2e-3c4a-4e5b-8f6a-1d2c3b4a5e6f","external_id":"PMS-10045","guests_count":2}}`
const EVENT_ID = "evt_5f0c6a1e9b2d4c7f8a3e6b1d0c9f2a4e"

const headersFor = (body: string, options: { secret?: string; timestamp?: string; signature?: string } = {}) => {
  const timestamp = options.timestamp ?? TS
  return {
    "content-type": "application/json",
    "user-agent": "Service-Webhooks/1.0",
    "x-service-event-id": EVENT_ID,
    "x-service-event": "registration.completed",
    "x-service-timestamp": timestamp,
    "x-service-signature": options.signature ?? hmac(options.secret ?? SECRET, timestamp, body)
  }
}

const shifted = (seconds: number) => String(NOW / 1000 + seconds)

describe("verifyWebhook (docs/examples/verify-webhook.ts)", () => {
  test("accepts a correctly signed event and returns the parsed body", () => {
    const result = verifyWebhook(headersFor(BODY), BODY, SECRET, NOW)
    expect(result).toEqual({ ok: true, event: JSON.parse(BODY) })
    if (result.ok) expect(result.event.id).toBe(EVENT_ID)
  })

  test("accepts a Headers object, mixed-case names, and node:http's single-element arrays", () => {
    expect(verifyWebhook(new Headers(headersFor(BODY)), BODY, SECRET, NOW).ok).toBe(true)
    const mixed = Object.fromEntries(
      Object.entries(headersFor(BODY)).map(([name, value]) =>
        [name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase()), value]
      )
    )
    expect(Object.keys(mixed)).toContain("X-Service-Signature")
    expect(verifyWebhook(mixed, BODY, SECRET, NOW).ok).toBe(true)
    const h = headersFor(BODY)
    expect(verifyWebhook({ ...h, "x-service-signature": [h["x-service-signature"]] }, BODY, SECRET, NOW).ok)
      .toBe(true)
    expect(
      verifyWebhook({ ...h, "x-service-signature": [h["x-service-signature"], h["x-service-signature"]] }, BODY, SECRET, NOW)
    ).toMatchObject({ ok: false })
  })

  test("rejects a tampered body", () => {
    const tampered = BODY.replace('"guests_count":2', '"guests_count":3')
    expect(verifyWebhook(headersFor(BODY), tampered, SECRET, NOW)).toEqual({ ok: false, reason: "signature mismatch" })
  })

  test("rejects a signature made with another secret, or with the secret without its whsec_ prefix", () => {
    expect(verifyWebhook(headersFor(BODY, { secret: OTHER_SECRET }), BODY, SECRET, NOW))
      .toEqual({ ok: false, reason: "signature mismatch" })
    const unprefixed = headersFor(BODY, { secret: SECRET.slice("whsec_".length) })
    expect(verifyWebhook(unprefixed, BODY, SECRET, NOW)).toEqual({ ok: false, reason: "signature mismatch" })
  })

  test("5-minute tolerance: 299 s either way passes, 301 s either way fails, 300 s passes", () => {
    for (const seconds of [-299, 299, -300, 300]) {
      const h = headersFor(BODY, { timestamp: shifted(seconds) })
      expect(verifyWebhook(h, BODY, SECRET, NOW).ok).toBe(true)
    }
    for (const seconds of [-301, 301, -86_400]) {
      const h = headersFor(BODY, { timestamp: shifted(seconds) })
      const result = verifyWebhook(h, BODY, SECRET, NOW)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.reason).toContain("5 minutes")
    }
  })

  test("the timestamp is part of what is signed: a valid signature with a changed timestamp fails", () => {
    const h = { ...headersFor(BODY), "x-service-timestamp": shifted(1) }
    expect(verifyWebhook(h, BODY, SECRET, NOW)).toEqual({ ok: false, reason: "signature mismatch" })
  })

  test("missing headers are rejected with a reason naming the header", () => {
    const { "x-service-timestamp": _t, ...noTimestamp } = headersFor(BODY)
    const { "x-service-signature": _s, ...noSignature } = headersFor(BODY)
    expect(verifyWebhook(noTimestamp, BODY, SECRET, NOW))
      .toEqual({ ok: false, reason: "missing X-Service-Timestamp header" })
    expect(verifyWebhook(noSignature, BODY, SECRET, NOW))
      .toEqual({ ok: false, reason: "missing X-Service-Signature header" })
    expect(verifyWebhook({}, BODY, SECRET, NOW).ok).toBe(false)
    expect(verifyWebhook(new Headers(), BODY, SECRET, NOW).ok).toBe(false)
  })

  test("malformed signatures and timestamps are rejected", () => {
    const good = hmac(SECRET, TS, BODY)
    const hex = good.slice("sha256=".length)
    const malformed = [
      hex, // no sha256= prefix
      `sha1=${hex}`,
      `SHA256=${hex}`,
      `sha256=${hex.slice(0, 63)}`, // wrong length
      `sha256=${hex}0`,
      `sha256=${hex.slice(0, 62)}zz`, // not hex
      `sha256=${hex.toUpperCase()}`, // the spec's hex is lower case; kept exact
      ` ${good}`,
      `${good} ${good}`, // exactly one signature
      `${good},${good}`,
      ""
    ]
    for (const signature of malformed) {
      const result = verifyWebhook(headersFor(BODY, { signature }), BODY, SECRET, NOW)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.reason).toMatch(/X-Service-Signature|signature mismatch/)
    }
    for (const timestamp of ["", "abc", `${TS}.5`, `-${TS}`, `+${TS}`, ` ${TS}`, `${NOW}`]) {
      const result = verifyWebhook(headersFor(BODY, { timestamp }), BODY, SECRET, NOW)
      expect(result.ok).toBe(false)
    }
  })

  test("whitespace in the raw body is part of the signature: re-serialised JSON fails", () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2) + "\n"
    const h = headersFor(pretty)
    expect(verifyWebhook(h, pretty, SECRET, NOW).ok).toBe(true)
    const reserialised = JSON.stringify(JSON.parse(pretty))
    expect(reserialised).not.toBe(pretty)
    expect(verifyWebhook(h, reserialised, SECRET, NOW)).toEqual({ ok: false, reason: "signature mismatch" })
    expect(verifyWebhook(h, pretty.trimEnd(), SECRET, NOW).ok).toBe(false)
  })

  test("non-ASCII text is signed as UTF-8", () => {
    const body = BODY.replace('"external_id":"PMS-10045"', '"external_id":"Peña-Núñez 🏨"')
    expect(verifyWebhook(headersFor(body), body, SECRET, NOW).ok).toBe(true)
    expect(verifyWebhook(headersFor(body), body.normalize("NFD"), SECRET, NOW).ok).toBe(false)
  })

  test("an authentic body that is not an event, or an X-Service-Event-Id that is not the body id, is rejected", () => {
    expect(verifyWebhook(headersFor("not json"), "not json", SECRET, NOW))
      .toEqual({ ok: false, reason: "body is not valid JSON" })
    expect(verifyWebhook(headersFor("[1,2]"), "[1,2]", SECRET, NOW)).toEqual({ ok: false, reason: "body is not an event" })
    const h = { ...headersFor(BODY), "x-service-event-id": "evt_00000000000000000000000000000000" }
    expect(verifyWebhook(h, BODY, SECRET, NOW))
      .toEqual({ ok: false, reason: "X-Service-Event-Id does not match the body id" })
  })

  test("the test vector printed in docs/webhooks.md verifies", async () => {
    const doc = await Bun.file(new URL("../../docs/webhooks.md", import.meta.url)).text()
    const vector = doc.slice(doc.indexOf("### A test vector"))
    const field = (name: string) => {
      const match = new RegExp(`^${name}: +(.+)$`, "m").exec(vector)
      expect(match).not.toBeNull()
      return match![1]!
    }
    const secret = field("secret")
    const timestamp = field("X-Service-Timestamp")
    const body = field("body")
    const signature = field("X-Service-Signature")
    const now = Number(timestamp) * 1000
    expect(signature).toBe(hmac(secret, timestamp, body))
    const headers = { "x-service-timestamp": timestamp, "x-service-signature": signature }
    expect(verifyWebhook(headers, body, secret, now)).toMatchObject({ ok: true, event: { type: "ping" } })
    expect(verifySignature({ secret, timestamp, rawBody: body, signature, now })).toBe(true)
    // The ping body of the doc's example is the same event, pretty-printed.
    expect(doc).toContain(JSON.stringify(JSON.parse(body), null, 2))
  })

  test("defaults to the current clock", () => {
    const timestamp = String(Math.floor(Date.now() / 1000))
    expect(verifyWebhook(headersFor(BODY, { timestamp }), BODY, SECRET).ok).toBe(true)
    const stale = String(Math.floor(Date.now() / 1000) - 301)
    expect(verifyWebhook(headersFor(BODY, { timestamp: stale }), BODY, SECRET).ok).toBe(false)
  })
})

describe("verifyWebhook and test/support/receiver.ts verifySignature agree", () => {
  const pretty = JSON.stringify(JSON.parse(BODY), null, 2)
  const good = hmac(SECRET, TS, BODY)
  const cases: ReadonlyArray<{
    readonly name: string
    readonly body: string
    readonly timestamp?: string
    readonly signature?: string
    readonly secret?: string
    readonly valid: boolean
  }> = [
    { name: "valid", body: BODY, valid: true },
    { name: "valid, pretty-printed body", body: pretty, signature: hmac(SECRET, TS, pretty), valid: true },
    { name: "tampered body", body: BODY.replace("PMS-10045", "PMS-10046"), signature: good, valid: false },
    { name: "re-serialised body", body: JSON.stringify(JSON.parse(pretty)), signature: hmac(SECRET, TS, pretty), valid: false },
    { name: "wrong secret", body: BODY, secret: OTHER_SECRET, valid: false },
    { name: "secret without prefix", body: BODY, secret: SECRET.slice(6), valid: false },
    { name: "299 s old", body: BODY, timestamp: shifted(-299), valid: true },
    { name: "299 s ahead", body: BODY, timestamp: shifted(299), valid: true },
    { name: "300 s old", body: BODY, timestamp: shifted(-300), valid: true },
    { name: "301 s old", body: BODY, timestamp: shifted(-301), valid: false },
    { name: "301 s ahead", body: BODY, timestamp: shifted(301), valid: false },
    { name: "timestamp in ms", body: BODY, timestamp: String(NOW), valid: false },
    { name: "fractional timestamp", body: BODY, timestamp: `${TS}.0`, valid: false },
    { name: "empty timestamp", body: BODY, timestamp: "", valid: false },
    { name: "no prefix", body: BODY, signature: good.slice(7), valid: false },
    { name: "short", body: BODY, signature: good.slice(0, -1), valid: false },
    { name: "long", body: BODY, signature: good + "0", valid: false },
    { name: "non-hex", body: BODY, signature: good.slice(0, -2) + "zz", valid: false },
    { name: "upper-case hex", body: BODY, signature: "sha256=" + good.slice(7).toUpperCase(), valid: false },
    { name: "two signatures", body: BODY, signature: `${good} ${good}`, valid: false },
    { name: "empty signature", body: BODY, signature: "", valid: false },
    { name: "empty body", body: "", signature: hmac(SECRET, TS, ""), valid: false } // authentic but not an event
  ]

  for (const c of cases) {
    test(c.name, () => {
      const timestamp = c.timestamp ?? TS
      const signature = c.signature ?? hmac(c.secret ?? SECRET, timestamp, c.body)
      const headers = { "x-service-event-id": EVENT_ID, "x-service-timestamp": timestamp, "x-service-signature": signature }
      const example = verifyWebhook(headers, c.body, SECRET, NOW).ok
      const independent = verifySignature({ secret: SECRET, timestamp, rawBody: c.body, signature, now: NOW })
      if (c.name === "empty body") {
        // The signature is right; only the example goes on to require an event body.
        expect(independent).toBe(true)
        expect(example).toBe(false)
        return
      }
      expect(example).toBe(c.valid)
      expect(independent).toBe(c.valid)
    })
  }

  test("verifySignature: missing values and a custom tolerance", () => {
    expect(verifySignature({ secret: SECRET, timestamp: undefined, rawBody: BODY, signature: good, now: NOW })).toBe(false)
    expect(verifySignature({ secret: SECRET, timestamp: TS, rawBody: BODY, signature: undefined, now: NOW })).toBe(false)
    expect(verifySignature({ secret: SECRET, timestamp: Number(TS), rawBody: BODY, signature: good, now: NOW })).toBe(true)
    const old = hmac(SECRET, shifted(-100), BODY)
    expect(verifySignature({ secret: SECRET, timestamp: shifted(-100), rawBody: BODY, signature: old, now: NOW })).toBe(true)
    expect(
      verifySignature({ secret: SECRET, timestamp: shifted(-100), rawBody: BODY, signature: old, now: NOW, toleranceSeconds: 60 })
    ).toBe(false)
  })
})

describe("the recording receiver keeps the raw body the example verifies", () => {
  let receiver: Receiver | undefined
  afterEach(() => {
    receiver?.stop()
    receiver = undefined
  })

  test("a signed POST is recorded byte for byte and verifies with both checks", async () => {
    const r = (receiver = startReceiver())
    const body = JSON.stringify(JSON.parse(BODY), null, 2) + "\n"
    const timestamp = String(Math.floor(Date.now() / 1000))
    const headers = headersFor(body, { timestamp })
    const response = await fetch(`${r.url}/hooks/pms`, { method: "POST", headers, body })
    expect(response.status).toBe(200)
    expect(await response.text()).toBe("ok")
    const [request] = await r.waitForCount(1, (req) => req.path === "/hooks/pms")
    expect(request!.method).toBe("POST")
    expect(request!.body).toBe(body)
    expect(request!.headers["x-service-signature"]).toBe(headers["x-service-signature"])
    expect(verifyReceived(request!, SECRET)).toBe(true)
    expect(verifyWebhook(request!.headers, request!.body, SECRET).ok).toBe(true)
    expect(verifyReceived(request!, OTHER_SECRET)).toBe(false)
  })

  test("answers per path: sequences, headers, delays, hanging; waitForCount explains a timeout", async () => {
    const r = (receiver = startReceiver())
    r.on("/seq", [500, { status: 429, headers: { "Retry-After": "30" } }, 200])
    r.on("/moved", { status: 302, headers: { Location: "https://elsewhere.example.com/" } })
    r.on("/slow", { status: 204, delayMs: 150 })
    r.on("/hang", { hang: true })
    const post = (path: string, init: RequestInit = {}) =>
      fetch(`${r.url}${path}`, { method: "POST", body: "{}", redirect: "manual", ...init })

    const statuses = []
    for (let i = 0; i < 4; i++) {
      const response = await post("/seq")
      statuses.push([response.status, response.headers.get("retry-after")])
    }
    expect(statuses).toEqual([[500, null], [429, "30"], [200, null], [200, null]])
    const moved = await post("/moved")
    expect([moved.status, moved.headers.get("location")]).toEqual([302, "https://elsewhere.example.com/"])
    const started = Date.now()
    expect((await post("/slow")).status).toBe(204)
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)

    const hung = post("/hang", { signal: AbortSignal.timeout(300) })
    const [hanging] = await r.waitFor((req) => req.path === "/hang")
    expect(hanging!.body).toBe("{}")
    await expect(hung).rejects.toThrow()

    expect(r.matching((req) => req.path === "/seq").map((req) => req.index)).toEqual([0, 1, 2, 3])
    const error = await r.waitForCount(9, undefined, 100).catch((e: unknown) => e as Error)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toContain("expected at least 9 matching request(s) within 100 ms, got 7")
    expect((error as Error).message).toContain("POST /hang")
    r.clear()
    expect(r.received).toEqual([])
  })
})
