import { createHmac, randomBytes } from "node:crypto"

/** Sent as `User-Agent` with every delivery (spec "Events"). */
export const USER_AGENT = "Service-Webhooks/1.0"

/** A new endpoint secret: `whsec_` and 32 random bytes, base64url (design §6.14 / issue 4: ≥ 32 bytes). */
export const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`

/**
 * The spec's signature: `sha256=` + hex(HMAC-SHA256(secret, "<timestamp>.<raw body>")). The key is the secret
 * string exactly as returned, `whsec_` prefix included, as UTF-8 bytes (design §6.14).
 */
export const sign = (secret: string, timestamp: number, body: string) =>
  `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`

/** Every header of one delivery attempt (spec "Events": request received by the partner). */
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
  "x-service-signature": sign(input.secret, input.timestamp, input.body)
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
