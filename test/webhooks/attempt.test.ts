import { describe, expect, test } from "bun:test"
import { Duration, Either, Option } from "effect"
import { OutboundFailed, type SafeResponse } from "../../src/net/SafeHttp.ts"
import {
  deliveryRequest,
  EXCERPT_BYTES,
  excerptOf,
  inactive,
  outcomeKind,
  outcomeOf,
  outcomeRow,
  sentOf
} from "../../src/webhooks/Attempt.ts"
import type { ClaimedDelivery } from "../../src/webhooks/DeliveryStore.ts"
import { sign } from "../../src/webhooks/Signature.ts"

/**
 * An attempt as data (`webhooks/Attempt.ts`): the request a claimed delivery makes, what an answer means, and the
 * row its outcome writes — no database, no receiver.
 */

const job: ClaimedDelivery = {
  id: "00000000-0000-4000-8000-000000000001",
  endpoint_id: "00000000-0000-4000-8000-000000000002",
  event_id: "evt_1",
  event_type: "reservation.created",
  cycle_attempts: 2,
  max_attempts: 10,
  url: "https://hooks.example.com/in",
  secret: "sealed",
  include_guests: false,
  is_active: true,
  body: JSON.stringify({ id: "evt_1", data: { guests: [{ name: "A" }], external_id: "x" } }),
  trace_parent: null,
  lease_until: new Date(0)
}

const at = new Date("2026-11-28T12:00:00.000Z")
const answer = (
  status: number,
  headers: Record<string, string> = {},
  body: string = ""
): Either.Either<SafeResponse, OutboundFailed> =>
  Either.right({ status, headers, body: new TextEncoder().encode(body), address: "203.0.113.1" })

describe("the request of an attempt", () => {
  test("signed at send time with the opened secret, the body without guests unless the endpoint includes them", () => {
    const request = deliveryRequest(job, "whsec_test", at.getTime())
    expect(request.method).toBe("POST")
    expect(request.url).toBe(job.url)
    expect(JSON.parse(request.body!).data.guests).toBeUndefined()
    const timestamp = Math.floor(at.getTime() / 1000)
    expect(request.headers["x-service-timestamp"]).toBe(String(timestamp))
    expect(request.headers["x-service-signature"]).toBe(sign("whsec_test", timestamp, request.body!))
    const withGuests = deliveryRequest({ ...job, include_guests: true }, "whsec_test", at.getTime())
    expect(withGuests.body).toBe(job.body)
  })
})

describe("what an answer means", () => {
  test("2xx delivered; 3xx a redirect not followed; others the status; a failure its message", () => {
    expect(sentOf(answer(204), at, 12)).toEqual({
      attemptedAt: at,
      httpStatus: 204,
      durationMs: 12,
      error: null,
      retryAfter: undefined,
      responseExcerpt: null
    })
    expect(sentOf(answer(302), at, 1).error).toBe("HTTP 302: redirects are not followed")
    expect(sentOf(answer(503, { "retry-after": "30" }), at, 1)).toMatchObject({ error: "HTTP 503", retryAfter: "30" })
    const failed = sentOf(Either.left(new OutboundFailed({ kind: "timeout", message: "too slow" })), at, 10_000)
    expect(failed).toMatchObject({ httpStatus: null, error: "too slow", responseExcerpt: null })
    expect([
      outcomeKind(job, sentOf(answer(200), at, 1)),
      outcomeKind(job, sentOf(answer(500), at, 1)),
      outcomeKind(job, failed),
      outcomeKind({ ...job, is_active: false }, inactive(at))
    ]).toEqual(["delivered", "http_error", "network_error", "endpoint_inactive"])
  })
})

describe("the receiver's answer kept with the attempt (the panel's delivery view)", () => {
  test("its first 2 KB as text: a short answer whole, a long one cut, a character cut at the limit replaced", () => {
    expect(sentOf(answer(500, {}, "{\"error\":\"busy\"}"), at, 1).responseExcerpt).toBe("{\"error\":\"busy\"}")
    const long = sentOf(answer(200, {}, "x".repeat(EXCERPT_BYTES + 500)), at, 1).responseExcerpt!
    expect(long).toBe("x".repeat(EXCERPT_BYTES))
    // "é" is two bytes in UTF-8: the last one starts at byte 2047, so only its first byte is inside the limit.
    const cut = sentOf(answer(200, {}, `${"x".repeat(EXCERPT_BYTES - 1)}é tail`), at, 1).responseExcerpt!
    expect(cut).toBe(`${"x".repeat(EXCERPT_BYTES - 1)}\uFFFD`)
    expect(excerptOf(new Uint8Array(0))).toBeNull()
  })

  test("stored with the attempt's entry; endpoint 15's view of the entry leaves it out", () => {
    const row = outcomeRow(job, sentOf(answer(503, {}, "maintenance"), at, 7), Option.none())
    expect(row.entry).toEqual({
      attempted_at: at.toISOString(),
      http_status: 503,
      duration_ms: 7,
      error: "HTTP 503",
      response_excerpt: "maintenance"
    })
  })
})

describe("the row an outcome writes", () => {
  test("delivered; pending again after the retry's delay; failed when no retry is left", () => {
    const delivered = outcomeRow(job, sentOf(answer(200), at, 5), Option.none())
    expect(delivered).toMatchObject({ id: job.id, delivered: true, status: "delivered", next_attempt_at: null })
    expect(delivered.entry).toEqual({
      attempted_at: at.toISOString(),
      http_status: 200,
      duration_ms: 5,
      error: null,
      response_excerpt: null
    })
    const retried = outcomeRow(job, sentOf(answer(500), at, 5), Option.some(Duration.minutes(5)))
    expect(retried).toMatchObject({ delivered: false, status: "pending", error: "HTTP 500" })
    expect(retried.next_attempt_at).toBe(new Date(at.getTime() + 5 * 60_000).toISOString())
    const failed = outcomeRow(job, sentOf(answer(500), at, 5), Option.none())
    expect(failed).toMatchObject({ status: "failed", next_attempt_at: null })
    expect(outcomeOf(sentOf(answer(500), at, 5), "failed")).toEqual({
      delivered: false,
      httpStatus: 500,
      durationMs: 5,
      error: "HTTP 500",
      status: "failed"
    })
  })
})
