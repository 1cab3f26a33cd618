import { createHmac, timingSafeEqual } from "node:crypto"

/** One request as the receiver got it. */
export interface ReceivedRequest {
  readonly method: string
  /** The path without the query string (`/hooks/a`). */
  readonly path: string
  /** The query string with its `?`, or "" (`?x=1`). */
  readonly search: string
  /** Every header, names in lower case (repeated headers joined with ", " as `Headers` does). */
  readonly headers: Readonly<Record<string, string>>
  /** The body exactly as received (read with `request.text()` before anything else). */
  readonly body: string
  /** `Date.now()` when the body had been read. */
  readonly receivedAt: number
  /** Which request to this path it was: 0 for the first (after `on` for the path, or since the start). */
  readonly index: number
}

/** One answer: a status (body "ok"), a status with headers/body, a delayed answer, or no answer at all. */
export type SingleAnswer =
  | number
  | {
    readonly status: number
    readonly headers?: Readonly<Record<string, string>>
    readonly body?: string
    /** Wait this long before answering (the request is recorded at once). */
    readonly delayMs?: number
  }
  | { readonly hang: true }

/** A single answer for every request, or a sequence: the nth request gets the nth answer, the last repeats. */
export type ReceiverAnswer = SingleAnswer | ReadonlyArray<SingleAnswer>

export interface Receiver {
  /** Base URL, `http://127.0.0.1:PORT` (no trailing slash). */
  readonly url: string
  /** Every request so far, in arrival order. `clear()` empties this same array. */
  readonly received: Array<ReceivedRequest>
  /** How requests to `path` are answered from now on (restarts its sequence). `"*"`: every unconfigured path. */
  readonly on: (path: string, answer: ReceiverAnswer) => void
  /** The requests so far that match. */
  readonly matching: (predicate?: (request: ReceivedRequest) => boolean) => Array<ReceivedRequest>
  /** Resolves with the matching requests once at least one has arrived. */
  readonly waitFor: (
    predicate?: (request: ReceivedRequest) => boolean,
    timeoutMs?: number
  ) => Promise<Array<ReceivedRequest>>
  /**
   * Resolves with the matching requests once at least `count` have arrived; rejects after `timeoutMs` with a
   * message listing everything that did arrive.
   */
  readonly waitForCount: (
    count: number,
    predicate?: (request: ReceivedRequest) => boolean,
    timeoutMs?: number
  ) => Promise<Array<ReceivedRequest>>
  /** Forgets the recorded requests (answers and sequence positions are kept). */
  readonly clear: () => void
  /** Closes every connection (hanging requests included) and stops listening. */
  readonly stop: () => void
}

const DEFAULT_ANSWER: SingleAnswer = 200

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A short line per request, for failure messages. */
export const describeRequest = (request: ReceivedRequest): string => {
  const event = request.headers["x-service-event"]
  const id = request.headers["x-service-event-id"]
  const extra = [event, id].filter((part) => part !== undefined).join(" ")
  return `${request.method} ${request.path}${request.search}${extra === "" ? "" : ` (${extra})`} at ${
    new Date(request.receivedAt).toISOString()
  }`
}

/**
 * A real HTTP server standing in for a partner's webhook endpoint: records every request (raw body included) and
 * answers per path as told — a status, a sequence of answers for retries, headers (`Retry-After`, `Location`),
 * a delay, or never answering. Unconfigured paths answer 200 "ok".
 */
export const startReceiver = (): Receiver => {
  const received: Array<ReceivedRequest> = []
  const answers = new Map<string, ReceiverAnswer>()
  const counters = new Map<string, number>()
  const listeners = new Set<() => void>()
  const hanging = new Set<() => void>()

  const answerFor = (path: string): { readonly answer: SingleAnswer; readonly index: number } => {
    const key = answers.has(path) ? path : "*"
    const configured = answers.get(key) ?? DEFAULT_ANSWER
    const counterKey = `${key === "*" ? "*" : "="}${path}`
    const index = counters.get(counterKey) ?? 0
    counters.set(counterKey, index + 1)
    if (typeof configured === "number" || !Array.isArray(configured)) {
      return { answer: configured as SingleAnswer, index }
    }
    const sequence = configured as ReadonlyArray<SingleAnswer>
    return { answer: sequence[Math.min(index, sequence.length - 1)] ?? DEFAULT_ANSWER, index }
  }

  const respond = async (answer: SingleAnswer, request: Request): Promise<Response> => {
    if (typeof answer === "number") return new Response("ok", { status: answer })
    if ("hang" in answer) {
      return new Promise<Response>((resolve) => {
        const release = () => {
          hanging.delete(release)
          resolve(new Response(null, { status: 503 }))
        }
        hanging.add(release)
        request.signal.addEventListener("abort", release, { once: true })
      })
    }
    if (answer.delayMs !== undefined && answer.delayMs > 0) await sleep(answer.delayMs)
    // Bodies are not allowed with these statuses.
    const empty = answer.status === 204 || answer.status === 205 || answer.status === 304
    return new Response(empty ? null : answer.body ?? "ok", { status: answer.status, headers: answer.headers ?? {} })
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    // Never close a connection for idleness: a hanging answer must stay open until the client gives up.
    idleTimeout: 0,
    fetch: async (request) => {
      const body = await request.text()
      const receivedAt = Date.now()
      const url = new URL(request.url)
      const headers: Record<string, string> = {}
      request.headers.forEach((value, name) => {
        headers[name.toLowerCase()] = value
      })
      const { answer, index } = answerFor(url.pathname)
      received.push({ method: request.method, path: url.pathname, search: url.search, headers, body, receivedAt, index })
      for (const listener of [...listeners]) listener()
      return respond(answer, request)
    }
  })

  const matching = (predicate?: (request: ReceivedRequest) => boolean) =>
    predicate === undefined ? [...received] : received.filter(predicate)

  const waitForCount = (
    count: number,
    predicate?: (request: ReceivedRequest) => boolean,
    timeoutMs = 10_000
  ): Promise<Array<ReceivedRequest>> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = matching(predicate)
        if (found.length < count) return false
        cleanup()
        resolve(found)
        return true
      }
      const timer = setTimeout(() => {
        cleanup()
        const found = matching(predicate)
        const lines = received.length === 0 ? ["  (nothing)"] : received.map((request) => `  ${describeRequest(request)}`)
        reject(
          new Error(
            `receiver: expected at least ${count} matching request(s) within ${timeoutMs} ms, got ${found.length}; ` +
              `received ${received.length} in all:\n${lines.join("\n")}`
          )
        )
      }, timeoutMs)
      const listener = () => void check()
      const cleanup = () => {
        clearTimeout(timer)
        listeners.delete(listener)
      }
      listeners.add(listener)
      check()
    })

  return {
    url: `http://127.0.0.1:${server.port}`,
    received,
    on: (path, answer) => {
      answers.set(path, answer)
      for (const key of [...counters.keys()]) {
        if (path === "*" ? key.startsWith("*") : key === `=${path}`) counters.delete(key)
      }
    },
    matching,
    waitFor: (predicate, timeoutMs) => waitForCount(1, predicate, timeoutMs),
    waitForCount,
    clear: () => void received.splice(0, received.length),
    stop: () => {
      server.stop(true)
      for (const release of [...hanging]) release()
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Signature check, written from the spec ("Events" → "Signature") and design §6.14 only, never from the service

export interface VerifyInput {
  /** The endpoint's secret exactly as the API returned it, `whsec_` prefix included (the HMAC key is its UTF-8). */
  readonly secret: string
  /** `X-Service-Timestamp`: Unix seconds. */
  readonly timestamp: string | number | undefined
  /** The body exactly as received. */
  readonly rawBody: string
  /** `X-Service-Signature`: `sha256=` + lower-case hex HMAC-SHA256. */
  readonly signature: string | undefined
  readonly toleranceSeconds?: number
  /** Milliseconds since the epoch. */
  readonly now?: number
}

/** `sha256=` + hex(HMAC_SHA256(secret, `${timestamp}.${rawBody}`)). */
export const sign = (secret: string, timestamp: string | number, rawBody: string): string =>
  `sha256=${createHmac("sha256", Buffer.from(secret, "utf8")).update(`${timestamp}.${rawBody}`, "utf8").digest("hex")}`

/** True when the signature is the spec's and the timestamp is within ±tolerance of `now`. */
export const verifySignature = (input: VerifyInput): boolean => {
  const { secret, timestamp, rawBody, signature } = input
  const toleranceSeconds = input.toleranceSeconds ?? 300
  const now = input.now ?? Date.now()
  if (timestamp === undefined || signature === undefined) return false
  const text = String(timestamp)
  if (!/^\d{1,15}$/.test(text)) return false
  if (Math.abs(now / 1000 - Number(text)) > toleranceSeconds) return false
  const expected = Buffer.from(sign(secret, text, rawBody), "utf8")
  const actual = Buffer.from(signature, "utf8")
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

/** `verifySignature` on a recorded request's headers and raw body. */
export const verifyReceived = (
  request: ReceivedRequest,
  secret: string,
  options: { readonly toleranceSeconds?: number; readonly now?: number } = {}
): boolean =>
  verifySignature({
    secret,
    timestamp: request.headers["x-service-timestamp"],
    rawBody: request.body,
    signature: request.headers["x-service-signature"],
    ...options
  })

/** A recorded request's body parsed as JSON. */
export const bodyOf = <A = any>(request: ReceivedRequest): A => JSON.parse(request.body) as A
