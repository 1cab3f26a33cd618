import { HttpApiSchema } from "@effect/platform"
import { describe, expect, test } from "bun:test"
import { Schema } from "effect"
import * as Errors from "../../src/shared/errors.ts"

/** The spec's error table plus design §6.2's two additions: code → HTTP status. */
const table: Array<[string, number]> = [
  ["invalid_json", 400],
  ["invalid_request", 400],
  ["invalid_webhook_url", 400],
  ["registration_rejected", 400],
  ["unauthorized", 401],
  ["property_out_of_scope", 403],
  ["sandbox_property_required", 403],
  ["live_property_required", 403],
  ["property_not_found", 404],
  ["registration_not_found", 404],
  ["webhook_not_found", 404],
  ["delivery_not_found", 404],
  ["reservation_conflict", 409],
  ["creation_in_progress", 409],
  ["registration_open", 409],
  ["reservation_cancelled", 409],
  ["already_reported", 409],
  ["guests_already_registered", 409],
  ["duplicate_document", 409],
  ["external_id_in_use", 409],
  ["webhook_limit_reached", 409],
  ["rate_limited", 429],
  ["internal_error", 500],
  ["trm_unavailable", 503],
  ["not_found", 404],
  ["method_not_allowed", 405]
]

const codeOf = (schema: (typeof Errors.allErrorBodies)[number]) => {
  const encoded = Schema.encodeSync(schema as any)(Schema.decodeUnknownSync(schema as any)({
    error: "x",
    code: (schema as any).from.fields.code.literals[0],
    details: {}
  })) as { code: string }
  return encoded.code
}

describe("error table", () => {
  test("every code of the spec exists exactly once, with its status", () => {
    const actual = Errors.allErrorBodies.map((schema) => [codeOf(schema), HttpApiSchema.getStatusError(schema)])
    expect(actual.sort()).toEqual([...table].sort())
    expect(new Set(actual.map(([code]) => code)).size).toBe(actual.length)
  })

  test("an error encodes to exactly {error, code, details}: no _tag, details always an object", () => {
    const error = new Errors.PropertyNotFound({ message: "property p not found" })
    expect(Schema.encodeSync(Errors.PropertyNotFoundBody)(error)).toEqual({
      error: "property p not found",
      code: "property_not_found",
      details: {}
    })
    const withDetails = new Errors.ExternalIdInUse({ message: "clash", details: { external_id: "X" } })
    expect(Schema.encodeSync(Errors.ExternalIdInUseBody)(withDetails)).toEqual({
      error: "clash",
      code: "external_id_in_use",
      details: { external_id: "X" }
    })
  })

  test("a body decodes back into its class (the typed client sees tagged errors)", () => {
    const decoded = Schema.decodeUnknownSync(Errors.RateLimitedBody)({ error: "slow down", code: "rate_limited", details: { limit: 1 } })
    expect(decoded).toBeInstanceOf(Errors.RateLimited)
    expect(decoded._tag).toBe("RateLimited")
    expect(decoded.details).toEqual({ limit: 1 })
    expect(() => Schema.decodeUnknownSync(Errors.RateLimitedBody)({ error: "x", code: "unauthorized", details: {} })).toThrow()
  })
})
