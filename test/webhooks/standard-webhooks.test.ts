import { describe, expect, test } from "bun:test"
import fc from "fast-check"
import { randomBytes } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { deliveryHeaders, newSecret, standardKey, standardSignature } from "../../src/webhooks/Signature.ts"

/**
 * The Standard Webhooks signer (design §6.14) against the official `standardwebhooks` package. The deliveries
 * themselves are verified with the package in webhooks-api.test.ts ("Standard Webhooks").
 */

describe("the signer", () => {
  const body = JSON.stringify({ id: "evt_0", type: "ping" })

  test("agrees with the standardwebhooks package's own sign for any secret, id, instant and body", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        fc.stringMatching(/^evt_[0-9a-f]{32}$/),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        fc.string({ unit: "binary" }),
        (bytes, id, seconds, text) => {
          const secret = `whsec_${Buffer.from(bytes).toString("base64")}`
          expect(standardSignature(secret, id, seconds, text)).toBe(new Webhook(secret).sign(id, new Date(seconds * 1000), text))
        }
      )
    )
  })

  test("a secret issued before (base64url, no padding) is keyed with the bytes it encodes", () => {
    const bytes = randomBytes(32)
    const legacy = `whsec_${bytes.toString("base64url")}`
    expect(Buffer.from(standardKey(legacy))).toEqual(bytes)
    const headers = deliveryHeaders({ secret: legacy, eventId: "evt_1", eventType: "ping", timestamp: 1_800_000_000, body })
    // A receiver's library reads standard base64: the same bytes, re-encoded, give the same signature.
    const asStandard = `whsec_${bytes.toString("base64")}`
    expect(headers["webhook-signature"]).toBe(new Webhook(asStandard).sign("evt_1", new Date(1_800_000_000_000), body))
  })

  test("new secrets are whsec_ and the standard base64 of 32 random bytes", () => {
    const secrets = Array.from({ length: 20 }, newSecret)
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(standardKey(secret).length).toBe(32)
    }
    expect(new Set(secrets).size).toBe(20)
  })
})
