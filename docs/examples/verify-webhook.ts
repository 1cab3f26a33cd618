/**
 * Verifying a webhook from the Partner Reservation Registration Service (receiver side).
 *
 * Self-contained: only `node:crypto`, no framework. Copy this file into your project (Node.js 18+, Bun or Deno).
 * See docs/webhooks.md for the full receiver guide.
 *
 * The service signs every attempt:
 *
 *     X-Service-Timestamp: <Unix seconds of this attempt>
 *     X-Service-Signature: sha256=<hex HMAC-SHA256(key = your endpoint secret, message = "<timestamp>.<raw body>")>
 *
 * The HMAC key is the secret string exactly as the API returned it, `whsec_` prefix included, as UTF-8 bytes.
 *
 * `verifyWebhook` applies the four receiver rules of the spec:
 *   1. it works on the raw body exactly as received — never on JSON you parsed and serialised again;
 *   2. it rejects a timestamp more than 5 minutes away from your clock (keep the clock synchronised with NTP);
 *   3. it compares the signatures in constant time (`crypto.timingSafeEqual`);
 *   4. on any mismatch it returns `{ ok: false }`: answer 401 and discard the event.
 *
 * Minimal receiver with Bun's `fetch`-style server (the same shape fits Deno and Hono):
 *
 * ```ts
 * import { verifyWebhook } from "./verify-webhook.ts"
 *
 * const secret = process.env.WEBHOOK_SECRET! // "whsec_…", as shown once by POST /api/partners/webhooks
 *
 * Bun.serve({
 *   port: 3000,
 *   async fetch(request) {
 *     const rawBody = await request.text() // 1. the raw body, before anything parses it
 *     const result = verifyWebhook(request.headers, rawBody, secret)
 *     if (!result.ok) return new Response(result.reason, { status: 401 }) // 4. reject, discard
 *
 *     // Deduplicate on the event id (equal to X-Service-Event-Id): deliveries are at-least-once and a
 *     // redelivery keeps the same id. Record it durably, e.g. INSERT … ON CONFLICT (event_id) DO NOTHING
 *     // into a queue table, in the same step that stores the event for processing.
 *     const isNew = await storeOnce(result.event.id, rawBody)
 *
 *     // Process asynchronously (a job queue, a worker reading that table): answer 2xx within 10 seconds.
 *     if (isNew) queueForProcessing(result.event.id)
 *     return new Response(null, { status: 204 })
 *   }
 * })
 * ```
 *
 * With `node:http` (Node.js and Bun alike), see ./webhook-receiver.ts: the test suite runs it under both against
 * real deliveries.
 *
 * (`storeOnce` and `queueForProcessing` stand for your own storage and job queue.)
 *
 * With Express, mount `express.text({ type: "application/json" })` on the webhook route so that `req.body` is
 * the raw string.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/** The body of every event (spec "Events"). `data` is the reservation as of the event (for `ping`: {endpoint_id, message}). */
export interface WebhookEvent {
  /** `evt_` followed by hex characters; equal to the X-Service-Event-Id header. */
  readonly id: string
  /** reservation.created, reservation.updated, reservation.cancelled, registration.updated,
   *  registration.completed, contract.signed, tra.reported, tra.failed, sire.reported, sire.failed, ping */
  readonly type: string
  readonly created_at: string
  readonly api_version: string
  readonly sandbox: boolean
  readonly data: Record<string, unknown>
}

export type VerifyResult =
  | { readonly ok: true; readonly event: WebhookEvent }
  | { readonly ok: false; readonly reason: string }

/** Receiver rule 2: at most 5 minutes between X-Service-Timestamp and your clock, either way. */
export const TOLERANCE_SECONDS = 300

/** `sha256=` and 64 lower-case hex characters. */
const SIGNATURE_FORMAT = /^sha256=[0-9a-f]{64}$/
const TIMESTAMP_FORMAT = /^[0-9]{1,15}$/

/** A header sent more than once (only possible with `node:http`'s array values). */
const REPEATED: unique symbol = Symbol("repeated header")

type HeaderInput =
  | Headers
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** A header by name, case-insensitively, from a `Headers` object or a plain object (`node:http`'s `req.headers`). */
const header = (headers: HeaderInput, name: string): string | undefined | typeof REPEATED => {
  if (typeof (headers as { get?: unknown }).get === "function") return (headers as Headers).get(name) ?? undefined
  const wanted = name.toLowerCase()
  for (const [key, value] of Object.entries(headers as Record<string, string | ReadonlyArray<string> | undefined>)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue
    if (typeof value === "string") return value
    return value.length === 1 ? value[0] : REPEATED
  }
  return undefined
}

/**
 * Checks one webhook request. `rawBody` is the body exactly as received; `secret` the endpoint's secret
 * (`whsec_…`); `now` your clock in milliseconds. On `{ ok: false }`, answer 401 and discard the event.
 */
export const verifyWebhook = (
  headers: HeaderInput,
  rawBody: string,
  secret: string,
  now: number = Date.now()
): VerifyResult => {
  const timestamp = header(headers, "X-Service-Timestamp")
  const signature = header(headers, "X-Service-Signature")
  if (timestamp === undefined) return { ok: false, reason: "missing X-Service-Timestamp header" }
  if (signature === undefined) return { ok: false, reason: "missing X-Service-Signature header" }
  if (timestamp === REPEATED || !TIMESTAMP_FORMAT.test(timestamp)) {
    return { ok: false, reason: "malformed X-Service-Timestamp header (expected Unix seconds)" }
  }
  if (Math.abs(now / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) {
    return { ok: false, reason: "X-Service-Timestamp is more than 5 minutes away from this server's clock" }
  }
  if (signature === REPEATED || !SIGNATURE_FORMAT.test(signature)) {
    return { ok: false, reason: "malformed X-Service-Signature header (expected sha256= and 64 hex characters)" }
  }

  const expected = Buffer.from(
    "sha256=" + createHmac("sha256", Buffer.from(secret, "utf8")).update(`${timestamp}.${rawBody}`, "utf8").digest("hex"),
    "utf8"
  )
  const received = Buffer.from(signature, "utf8")
  if (expected.length !== received.length || !timingSafeEqual(expected, received)) {
    return { ok: false, reason: "signature mismatch" }
  }

  // Authentic: only now parse the body.
  let event: unknown
  try {
    event = JSON.parse(rawBody)
  } catch {
    return { ok: false, reason: "body is not valid JSON" }
  }
  if (
    typeof event !== "object" || event === null || typeof (event as { id?: unknown }).id !== "string" ||
    typeof (event as { type?: unknown }).type !== "string"
  ) {
    return { ok: false, reason: "body is not an event" }
  }
  // The header is not signed; the body id is. They must agree so that deduplicating on either is safe.
  const eventIdHeader = header(headers, "X-Service-Event-Id")
  if (eventIdHeader !== undefined && eventIdHeader !== (event as WebhookEvent).id) {
    return { ok: false, reason: "X-Service-Event-Id does not match the body id" }
  }
  return { ok: true, event: event as WebhookEvent }
}
