import { describe, expect, test } from "bun:test"
import { bucketFor } from "../../src/ratelimit/RateLimits.ts"

describe("bucketFor (design §6.15)", () => {
  test.each([
    ["GET", "/api/partners/properties", "reads"],
    ["POST", "/api/partners/registrations/validate", "reads"],
    ["GET", "/api/partners/webhooks", "reads"],
    ["GET", "/api/partners/webhooks/deliveries", "reads"],
    ["GET", "/api/partners/registrations/abc", "reads"],
    ["GET", "/api/partners/reference/countries", "reads"],
    ["PATCH", "/api/partners/properties", "writes"],
    ["POST", "/api/partners/reservations", "writes"],
    ["POST", "/api/partners/reservations/cancel", "writes"],
    ["POST", "/api/partners/reservations/departure", "writes"],
    ["POST", "/api/partners/webhooks", "writes"],
    ["DELETE", "/api/partners/webhooks/3b7d", "writes"],
    ["POST", "/api/partners/webhooks/3b7d/rotate-secret", "writes"],
    ["POST", "/api/partners/webhooks/deliveries/9f/redeliver", "writes"],
    ["POST", "/api/partners/webhooks/3b7d/recover", "writes"],
    ["POST", "/api/partners/webhooks/3b7d/test", "tests"]
  ] as const)("%s %s → %s", (method, path, bucket) => {
    expect(bucketFor(method, path)).toBe(bucket)
  })
})
