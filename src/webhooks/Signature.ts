import { Either, Encoding, Schema } from "effect"
import { createHmac, randomBytes } from "node:crypto"
import { EventId } from "./Event.ts"

/** Sent as `User-Agent` with every delivery (spec "Events"). */
export const USER_AGENT = "Service-Webhooks/1.0"

/**
 * A new endpoint secret: `whsec_` and 32 random bytes in standard base64, the form the `standardwebhooks`
 * libraries read (design §6.14). Secrets issued before were base64url; they stay valid (`standardKey`).
 */
export const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`

/**
 * The spec's signature: `sha256=` + hex(HMAC-SHA256(secret, "<timestamp>.<raw body>")). The key is the secret
 * string exactly as returned, `whsec_` prefix included, as UTF-8 bytes (design §6.14).
 */
export const sign = (secret: string, timestamp: number, body: string) =>
  `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`

/**
 * The Standard Webhooks key: the bytes that the part of the secret after `whsec_` encodes, in standard base64
 * (secrets issued now) or base64url (secrets issued before; design §6.14). A secret in neither (never one the
 * service issued) is keyed with its text.
 */
export const standardKey = (secret: string): Uint8Array => {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret
  return Either.getOrElse(
    Either.orElse(Encoding.decodeBase64(encoded), () => Encoding.decodeBase64Url(encoded)),
    () => new TextEncoder().encode(encoded)
  )
}

/**
 * The Standard Webhooks signature (design §6.14, standardwebhooks.com): `v1,` + base64 HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{body}` keyed with `standardKey(secret)`.
 */
export const standardSignature = (secret: string, webhookId: string, timestamp: number, body: string) =>
  `v1,${createHmac("sha256", standardKey(secret)).update(`${webhookId}.${timestamp}.${body}`).digest("base64")}`

/**
 * Every header of one delivery attempt: the spec's ("Events": request received by the partner) and, beside them,
 * the Standard Webhooks ones (design §6.14), both signed at the same instant.
 */
export const deliveryHeaders = (input: {
  readonly secret: string
  readonly eventId: string
  readonly eventType: string
  readonly timestamp: number
  readonly body: string
}): Record<string, string> => ({
  "content-type": "application/json",
  "user-agent": USER_AGENT,
  "x-service-event-id": input.eventId,
  "x-service-event": input.eventType,
  "x-service-timestamp": String(input.timestamp),
  "x-service-signature": sign(input.secret, input.timestamp, input.body),
  "webhook-id": input.eventId,
  "webhook-timestamp": String(input.timestamp),
  "webhook-signature": standardSignature(input.secret, input.eventId, input.timestamp, input.body)
})

const header = <S extends Schema.Schema.Any>(schema: S, description: string, example: Schema.Schema.Type<S>) =>
  Schema.propertySignature(schema).annotations({ description, examples: [example] })

/**
 * The headers of every delivery besides `Content-Type` (spec "Events"), named as the spec writes them: what the
 * OpenAPI `webhooks` section documents. `deliveryHeaders` sends exactly these (a test holds the two together).
 */
export const DeliveryHeaders = Schema.Struct({
  "User-Agent": header(Schema.Literal(USER_AGENT), "Identifies the service's webhook sender.", USER_AGENT),
  "X-Service-Event-Id": header(
    EventId,
    "The event's id, equal to the body's `id`: deduplicate on it (a redelivery keeps it).",
    "evt_4f6c2a9e0b1d4c7e8f3a5b6c7d8e9f01"
  ),
  "X-Service-Event": header(Schema.String, "The event type, equal to the body's `type`.", "reservation.created"),
  "X-Service-Timestamp": header(
    Schema.String.pipe(Schema.pattern(/^\d+$/)),
    "When this attempt was sent, in Unix seconds. Reject the event if it differs from your clock by more than 5 minutes.",
    "1797523200"
  ),
  "X-Service-Signature": header(
    Schema.String.pipe(Schema.pattern(/^sha256=[0-9a-f]{64}$/)),
    "`sha256=` and the lower-case hex HMAC-SHA256 of `<X-Service-Timestamp>.<raw body>`, keyed with the endpoint's " +
      "secret exactly as returned (`whsec_…`, UTF-8). Compare in constant time; answer 401 on a mismatch.",
    "sha256=9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c0b2d4f6e8a1c3e5b7d9f0a2c4e6b8d0f"
  ),
  "webhook-id": header(
    EventId,
    "Standard Webhooks (beyond the spec): the event's id, as X-Service-Event-Id.",
    "evt_4f6c2a9e0b1d4c7e8f3a5b6c7d8e9f01"
  ),
  "webhook-timestamp": header(
    Schema.String.pipe(Schema.pattern(/^\d+$/)),
    "Standard Webhooks (beyond the spec): the same instant as X-Service-Timestamp, in Unix seconds.",
    "1797523200"
  ),
  "webhook-signature": header(
    Schema.String.pipe(Schema.pattern(/^v1,[A-Za-z0-9+/]{43}=$/)),
    "Standard Webhooks (beyond the spec): `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, " +
      "keyed with the bytes the secret's part after `whsec_` encodes. Verify it with a `standardwebhooks` library.",
    "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
  )
})

/**
 * The body as one endpoint receives it: the stored event, without `data.guests` for an endpoint that did not
 * ask for them (design §6.14). Stored bodies were written by `JSON.stringify`, for which parse-then-stringify
 * is the identity, so an endpoint with guests and one without get the same text apart from that field.
 */
export const bodyFor = (storedBody: string, includeGuests: boolean): string => {
  if (includeGuests || !storedBody.includes("\"guests\":")) return storedBody
  const parsed = JSON.parse(storedBody) as { data?: Record<string, unknown> }
  if (parsed.data === undefined || !("guests" in parsed.data)) return storedBody
  const { guests: _, ...data } = parsed.data
  return JSON.stringify({ ...parsed, data })
}
