import { Duration, Effect, Either, Option } from "effect"
import type { OutboundFailed, PlainRequest, SafeResponse, UnsafeUrl } from "../net/SafeHttp.ts"
import type { ClaimedDelivery, OutcomeRow } from "./DeliveryStore.ts"
import { DELIVERY_TIMEOUT, nextRetry, retryAfter } from "./RetryPolicy.ts"
import { bodyFor, deliveryHeaders } from "./Signature.ts"
import type { DeliveryStatus, StoredAttempt } from "./Webhook.ts"

/**
 * One delivery attempt as data (design §6.14): the signed request a claimed delivery makes, what the receiver's
 * answer (or the failure) means, and the row its outcome writes. Pure but for `retryOf` (the jittered schedule);
 * `Deliveries` sends, records and traces.
 */

/** The receiver's answer is read only up to this size: its status is what counts. */
const MAX_ANSWER_BYTES = 1024 * 1024

/** How much of the receiver's answer an attempt keeps, for the panel's delivery view (design §8). */
export const EXCERPT_BYTES = 2048

const lenient = new TextDecoder("utf-8", { fatal: false })

/** The first `EXCERPT_BYTES` of an answer as text (a character cut at the limit becomes U+FFFD); null when empty. */
export const excerptOf = (body: Uint8Array): string | null =>
  body.length === 0 ? null : lenient.decode(body.subarray(0, EXCERPT_BYTES))

/** `SafeHttp`'s limits of one attempt. */
export const sendLimits = { timeout: DELIVERY_TIMEOUT, maxBodyBytes: MAX_ANSWER_BYTES } as const

/** What one request to the receiver gave. */
export interface Sent {
  readonly attemptedAt: Date
  readonly httpStatus: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly retryAfter: string | undefined
  /** The receiver's answer, its first `EXCERPT_BYTES` (`excerptOf`); null without an answer or body. */
  readonly responseExcerpt: string | null
}

/** The outcome of one attempt, as recorded and as endpoint 14 answers it. */
export interface AttemptOutcome {
  readonly delivered: boolean
  readonly httpStatus: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly status: DeliveryStatus
}

/** The signed request of one attempt at `job`, sent at `nowMillis` with the endpoint's opened secret. */
export const deliveryRequest = (job: ClaimedDelivery, secret: string, nowMillis: number): PlainRequest => {
  const body = bodyFor(job.body, job.include_guests)
  return {
    method: "POST",
    url: job.url,
    headers: deliveryHeaders({
      secret,
      eventId: job.event_id,
      eventType: job.event_type,
      timestamp: Math.floor(nowMillis / 1000),
      body
    }),
    body
  }
}

/** What the receiver's answer (or the failure) means for the attempt. */
export const sentOf = (
  result: Either.Either<SafeResponse, UnsafeUrl | OutboundFailed>,
  attemptedAt: Date,
  durationMs: number
): Sent =>
  Either.match(result, {
    onLeft: (error) => ({
      attemptedAt,
      httpStatus: null,
      durationMs,
      error: error.message,
      retryAfter: undefined,
      responseExcerpt: null
    }),
    onRight: (response) => ({
      attemptedAt,
      httpStatus: response.status,
      durationMs,
      error: response.status >= 200 && response.status < 300
        ? null
        : response.status >= 300 && response.status < 400
        ? `HTTP ${response.status}: redirects are not followed`
        : `HTTP ${response.status}`,
      retryAfter: response.headers["retry-after"],
      responseExcerpt: excerptOf(response.body)
    })
  })

/** An attempt at a deactivated endpoint: nothing is sent. */
export const inactive = (attemptedAt: Date): Sent => ({
  attemptedAt,
  httpStatus: null,
  durationMs: 0,
  error: "the webhook endpoint was deactivated",
  retryAfter: undefined,
  responseExcerpt: null
})

/** How the attempts counter names an outcome. */
export type OutcomeKind = "endpoint_inactive" | "delivered" | "network_error" | "http_error"

export const outcomeKind = (job: ClaimedDelivery, sent: Sent): OutcomeKind =>
  !job.is_active
    ? "endpoint_inactive"
    : sent.error === null
    ? "delivered"
    : sent.httpStatus === null
    ? "network_error"
    : "http_error"

/**
 * After how long a failed attempt is made again (`Retry-After` honoured within the schedule); None when it is not:
 * delivered, the endpoint deactivated, or the cycle over. The one effect of an attempt's outcome: the schedule's
 * gaps are jittered.
 */
export const retryOf = (job: ClaimedDelivery, sent: Sent): Effect.Effect<Option.Option<Duration.Duration>> =>
  sent.error === null || !job.is_active
    ? Effect.succeedNone
    : nextRetry(job.cycle_attempts + 1, job.max_attempts, retryAfter(sent.retryAfter, sent.attemptedAt))

/** The row an attempt's outcome writes: its status, and when (`retry`, from `retryOf`) a failed one is tried again. */
export const outcomeRow = (job: ClaimedDelivery, sent: Sent, retry: Option.Option<Duration.Duration>): OutcomeRow => {
  const delivered = sent.error === null
  const status: DeliveryStatus = delivered ? "delivered" : Option.isSome(retry) ? "pending" : "failed"
  const entry: StoredAttempt = {
    attempted_at: sent.attemptedAt.toISOString(),
    http_status: sent.httpStatus,
    duration_ms: sent.durationMs,
    error: sent.error,
    response_excerpt: sent.responseExcerpt
  }
  return {
    id: job.id,
    http_status: sent.httpStatus,
    error: sent.error,
    entry,
    delivered,
    status,
    attempted_at: entry.attempted_at,
    next_attempt_at: Option.match(retry, {
      onNone: () => null,
      onSome: (delay) => new Date(sent.attemptedAt.getTime() + Duration.toMillis(delay)).toISOString()
    })
  }
}

/** What endpoint 14 answers of an attempt recorded with `status`. */
export const outcomeOf = (sent: Sent, status: DeliveryStatus): AttemptOutcome => ({
  delivered: sent.error === null,
  httpStatus: sent.httpStatus,
  durationMs: sent.durationMs,
  error: sent.error,
  status
})
