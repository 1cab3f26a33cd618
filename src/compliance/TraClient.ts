import { Headers } from "@effect/platform"
import {
  Context,
  Data,
  Duration,
  Effect,
  Either,
  Exit,
  Layer,
  Metric,
  Option,
  RcRef,
  Redacted,
  Runtime,
  Schema,
  type Scope,
  Tracer
} from "effect"
import { requestAttributes } from "../net/SafeHttp.ts"
import * as Metrics from "../shared/Metrics.ts"
import { projectFile } from "../shared/ProjectRoot.ts"
import type { TraCompanionBody, TraMainBody } from "./Tra.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import type { Answer, FromThread, Post, Result, Start, ToThread } from "./TraThread.ts"

/**
 * MinCIT's TRA web service for PMS providers (domain notes §1.2, §6.2): `POST {base}/one/` for the main guest,
 * `POST {base}/two/` for each companion, `Authorization: token <TOKEN>`. The client only submits and classifies
 * the answer; what to do next (retry, warn, stop) is the compliance engine's decision (design §6.9, §7).
 */

/**
 * How one submission ended. The client never fails: every failure is one of these.
 *
 * - `Accepted`: a 2xx with an integer `code` (`mincit_code`). On `/two/` a 2xx without a code is accepted too,
 *   with `code: null` (sources conflict on whether companions get a code, domain §1.5).
 * - `Rejected`: the authority refused the data (a 4xx other than 401/403/408/429); `reason` is its words,
 *   truncated. Known not registered: resending the same body would be refused again.
 * - `Misconfigured`: 401/403 (missing, wrong or expired token) or a redirect (wrong base URL). Design §6.9: the
 *   report stays pending with a warning. `status` 0 means nothing was sent (the token is empty or cannot be a
 *   header value).
 * - `Unknown`: 5xx, 408, 429, timeout, connection error, or a 2xx that is not the expected answer (a `/one/`
 *   without an integer code, a body that is not JSON). The guest may or may not have been registered: retry,
 *   and record "possible duplicate" (design §7).
 *
 * Reasons never contain the token: the authority's text is scrubbed of it before it is returned.
 */
export type TraOutcome = Data.TaggedEnum<{
  Accepted: { readonly code: number | null }
  Rejected: { readonly status: number; readonly reason: string }
  Misconfigured: { readonly status: number; readonly reason: string }
  Unknown: { readonly reason: string }
}>
export const TraOutcome = Data.taggedEnum<TraOutcome>()

export interface TraClientShape {
  readonly submitMain: (token: Redacted.Redacted<string>, body: TraMainBody) => Effect.Effect<TraOutcome>
  readonly submitCompanion: (token: Redacted.Redacted<string>, body: TraCompanionBody) => Effect.Effect<TraOutcome>
}

/** The TRA port (domain §6.1 `TraClient`); `layer` is the HTTP implementation (`MincitTraHttpClient`). */
export class TraClient extends Context.Tag("compliance/TraClient")<TraClient, TraClientShape>() {}

/** Production base URL (domain §1.2: `pms.mincit.gov.co`, not the older `traapi` host). */
export const DEFAULT_TRA_URL = "https://pms.mincit.gov.co"

export interface TraClientOptions {
  /** Scheme, host and optional path prefix; `/one/` and `/two/` are appended (a trailing `/` is allowed). */
  readonly baseUrl: string
  /** Most requests in flight at once, across all callers of this layer. */
  readonly concurrency: number
  /** Limit of one request: connection, answer and body. Default 30 seconds (C2 uses 30 s, C3 45 s). */
  readonly timeout?: Duration.DurationInput
  /** The TRA thread ends after this long without a submission, and starts again with the next. Default 1 minute. */
  readonly idle?: Duration.DurationInput
}

/** Longest reason returned; the engine puts it in a `warning`. */
export const MAX_REASON_LENGTH = 300

// ---------------------------------------------------------------------------------------------------------------
// Reading the answer
// ---------------------------------------------------------------------------------------------------------------

/**
 * `{"code": n}`. A string of digits is read as the integer too: if the service registered the guest and told us
 * the code, calling the answer unknown would make us post the guest again (domain §1.5: C5 once had to correct
 * "code to number", so the type has wobbled in the wild).
 */
const Code = Schema.Union(
  Schema.Int,
  Schema.compose(Schema.String.pipe(Schema.pattern(/^\d{1,15}$/)), Schema.NumberFromString)
)
const CodeAnswer = Schema.Struct({ code: Code })
const decodeCode = Schema.decodeUnknownOption(CodeAnswer)

/** A message as the clients of domain §1.5 read it: a string, or (Django REST Framework) a list of strings. */
const Message = Schema.Union(
  Schema.String,
  Schema.transform(Schema.NonEmptyArray(Schema.String), Schema.String, {
    strict: true,
    decode: (messages) => messages.join("; "),
    encode: (message) => [message] as const
  })
)
const decodeMessage = Schema.decodeUnknownOption(Message)

/** `detail` (DRF), `message`, `error`: the keys C2, C3 and C4 read, in that order of preference. */
const ErrorAnswer = Schema.Struct({
  detail: Schema.optional(Message),
  message: Schema.optional(Message),
  error: Schema.optional(Message)
})
const decodeErrorAnswer = Schema.decodeUnknownOption(ErrorAnswer)

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

const truncate = (text: string) =>
  text.length <= MAX_REASON_LENGTH ? text : `${text.slice(0, MAX_REASON_LENGTH - 1)}…`

/**
 * The authority's own words from an error body: `detail`, `message` or `error`, else the first DRF-style field
 * error `{"<field>": ["msg"]}` as "<field>: msg" (the field matters: C8 notes the ministry's errors rarely say
 * which one failed), else the body itself. Undefined for an empty body.
 */
const reasonOf = (text: string): string | undefined => {
  const json = parseJson(text)
  if (Either.isRight(json)) {
    const known = decodeErrorAnswer(json.right)
    if (Option.isSome(known)) {
      const words = known.value.detail ?? known.value.message ?? known.value.error
      if (words !== undefined && oneLine(words) !== "") return oneLine(words)
    }
    const value = json.right
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      for (const [field, messages] of Object.entries(value)) {
        const words = decodeMessage(messages)
        if (Option.isNone(words)) continue
        // DRF's errors that belong to no single field carry no useful field name.
        return oneLine(field === "non_field_errors" ? words.value : `${field}: ${words.value}`)
      }
    }
  }
  const raw = oneLine(text)
  return raw === "" ? undefined : raw
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  401: "the TRA token was refused",
  403: "the TRA token is not allowed to submit",
  408: "the TRA service timed out reading the request",
  429: "the TRA service is throttling requests"
}

type Endpoint = "/one/" | "/two/"

/** The outcome of a complete answer (`text` is its body). */
const classify = (endpoint: Endpoint, status: number, text: string, location: string | undefined): TraOutcome => {
  if (status >= 200 && status < 300) {
    const json = parseJson(text)
    if (Either.isLeft(json)) {
      // A companion needs no code (domain §1.5), so "201, no content" is still an acceptance. Any other body that
      // is not JSON (a proxy's HTML page) says nothing about what the service did.
      return endpoint === "/two/" && text.trim() === ""
        ? TraOutcome.Accepted({ code: null })
        : TraOutcome.Unknown({ reason: `HTTP ${status} with a body that is not JSON: ${oneLine(text)}` })
    }
    const code = decodeCode(json.right)
    if (Option.isSome(code)) return TraOutcome.Accepted({ code: code.value.code })
    // Domain §6.2.3 (and C3): on /one/ a 2xx without a code is not a success. Not a rejection either: the
    // guest may well be registered, so it is retried as a possible duplicate.
    return endpoint === "/two/"
      ? TraOutcome.Accepted({ code: null })
      : TraOutcome.Unknown({ reason: `HTTP ${status} without an integer code: ${oneLine(text)}` })
  }
  const words = reasonOf(text)
  const because = (fallback: string) => words ?? fallback
  if (status === 401 || status === 403) {
    return TraOutcome.Misconfigured({ status, reason: because(`${STATUS_TEXT[status]} (HTTP ${status})`) })
  }
  if (status >= 300 && status < 400) {
    // Redirects are not followed (the token must not travel to another address): the base URL is wrong.
    return TraOutcome.Misconfigured({
      status,
      reason: `the TRA service redirected (HTTP ${status}${
        location === undefined ? "" : ` to ${location}`
      }); check the base URL`
    })
  }
  if (status === 408 || status === 429 || status >= 500) {
    return TraOutcome.Unknown({ reason: `HTTP ${status}: ${because(STATUS_TEXT[status] ?? "no reason given")}` })
  }
  if (status >= 400) return TraOutcome.Rejected({ status, reason: because(`HTTP ${status} with an empty body`) })
  return TraOutcome.Unknown({ reason: `unexpected HTTP ${status}` })
}

/**
 * Sending failed before a complete answer arrived. The reason is built from where it stopped and the error's code
 * only: messages are never passed on, as a transport's message is not ours to vouch for.
 */
const lost = (host: string, result: Extract<Result, { _tag: "Lost" }>, timeout: Duration.Duration): TraOutcome => {
  switch (result.kind) {
    case "Timeout":
      return TraOutcome.Unknown({ reason: `no answer from ${host} within ${Duration.format(timeout)}` })
    case "Request":
      return TraOutcome.Unknown({
        reason: `no answer from ${host} (Transport${result.code === null ? "" : ` ${result.code}`})`
      })
    case "Response":
      return TraOutcome.Unknown({ reason: `the answer from ${host} broke off (HTTP ${result.status}, Decode)` })
  }
}

/** Visible ASCII only: anything else cannot be a header value, and would fail on every attempt. */
const TOKEN_SHAPE = /^[\x21-\x7e]+$/

/** Every reason passes through this: the authority could echo the token back in an error message. */
const scrub = (outcome: TraOutcome, secret: string): TraOutcome => {
  if (outcome._tag === "Accepted") return outcome
  const reason = truncate(secret === "" ? outcome.reason : outcome.reason.split(secret).join("***"))
  if (reason === outcome.reason) return outcome
  // Rebuilt through the constructors, so the result keeps the tagged enum's structural equality.
  return outcome._tag === "Unknown"
    ? TraOutcome.Unknown({ reason })
    : TraOutcome[outcome._tag]({ status: outcome.status, reason })
}

// ---------------------------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------------------------

/** A submission's way to the authority and back (the TRA thread's request, classified); never fails. */
type TraPost = (endpoint: Endpoint, secret: string, body: TraMainBody | TraCompanionBody) => Effect.Effect<TraOutcome>

/** The authority's host (for reasons and spans), once `options` are known to be usable; a defect otherwise. */
const hostOf = (options: TraClientOptions): Effect.Effect<string> =>
  Effect.gen(function*() {
    const base = yield* Effect.try(() => new URL(options.baseUrl)).pipe(
      Effect.filterOrFail((url) => url.protocol === "https:" || url.protocol === "http:"),
      Effect.orDieWith(() =>
        new Error(`TraClient: baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`)
      )
    )
    if (!Number.isSafeInteger(options.concurrency) || options.concurrency < 1) {
      return yield* Effect.dieMessage(`TraClient: concurrency must be a positive integer, got ${options.concurrency}`)
    }
    return base.host
  })

/** A started TRA thread: `post` answers the thread's `Answer`, or why there will be none. */
interface Thread {
  readonly post: (request: Omit<Post, "_tag" | "id">) => Effect.Effect<Answer | { readonly ended: string }>
}

/**
 * Starts a TRA thread (`TraThread.ts`), ended by the scope. Its module is read from the checkout, as the pages'
 * files are (`projectFile`), by the bundle too: three small files without a dependency, which Bun compiles in
 * milliseconds when the thread starts. When it stops on its own (a crash, a module that does not load), the
 * requests in it answer at once and `stopped` runs.
 */
const openThread = (
  start: Start,
  stopped: (detail: string) => void,
  module: URL = projectFile("src/tra-thread.ts")
): Effect.Effect<Thread, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const worker = new Worker(module)
      const waiting = new Map<number, (answer: Answer | { readonly ended: string }) => void>()
      let next = 0
      let ended: string | undefined
      const settle = (detail: string) => {
        ended = detail
        for (const answer of waiting.values()) answer({ ended: detail })
        waiting.clear()
      }
      const end = (detail: string) => {
        if (ended !== undefined) return
        ended = detail
        stopped(detail)
        settle(detail)
      }
      worker.addEventListener("message", (event: MessageEvent<FromThread>) => {
        const answer = waiting.get(event.data.id)
        waiting.delete(event.data.id)
        answer?.(event.data)
      })
      worker.addEventListener("error", (event) => end(event.message))
      worker.addEventListener("close", () => end("the thread exited"))
      worker.postMessage(start satisfies ToThread)
      const post: Thread["post"] = (request) =>
        Effect.async((resume) => {
          if (ended !== undefined) return resume(Effect.succeed({ ended }))
          const id = next++
          waiting.set(id, (answer) => resume(Effect.succeed(answer)))
          worker.postMessage({ _tag: "Post", id, ...request } satisfies ToThread)
          // An interrupted caller takes its request back: out of the queue, or aborted if it was sent.
          return Effect.sync(() => {
            if (waiting.delete(id)) worker.postMessage({ _tag: "Cancel", id } satisfies ToThread)
          })
        })
      // Closed by its scope (idle, or the service stopping): whoever still waits answers now.
      const close = () => {
        if (ended === undefined) settle("the TRA thread was closed")
        worker.terminate()
      }
      return { thread: { post }, close }
    }),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ thread }) => thread))

const nanos = (epochMillis: number) => BigInt(Math.round(epochMillis * 1_000_000))

/** What a submission sends besides its body (`Content-Type` too: the thread posts the body as JSON). */
const requestHeaders = (secret: string): Record<string, string> => ({
  authorization: `token ${secret}`,
  accept: "application/json",
  "content-type": "application/json"
})

/**
 * The request's `http.client POST` span, with the attributes `HttpClient` sets (`SafeHttp.requestAttributes`:
 * headers redacted by the fiber's names, so the token never shows), recorded when the answer is back: the request
 * ran in the TRA thread, which has no tracer. Beneath the submission's span, from when it had its slot to its end.
 */
const recordRequest = (url: URL, headers: Record<string, string>, answer: Answer) =>
  Effect.withFiberRuntime<void>((fiber) => {
    if (!TraceContext.isTracing(fiber)) return Effect.void
    const parent = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
    const span = fiber.currentTracer.span("http.client POST", parent, Context.empty(), [], nanos(answer.startedAt), "client")
    requestAttributes(span, "POST", url, Headers.fromInput(headers), fiber.getFiberRef(Headers.currentRedactedNames))
    const { result } = answer
    if (result._tag === "Answered") span.attribute("http.response.status_code", result.status)
    span.end(
      nanos(answer.endedAt),
      result._tag === "Answered" ? Exit.void : Exit.fail(`${result.kind}${result.code === null ? "" : ` ${result.code}`}`)
    )
    return Effect.void
  })

/**
 * The client: submissions go to the TRA thread (`TraThread.ts`), which holds at most `concurrency` requests in
 * flight across every caller of this layer, each within `timeout` from the moment it has a slot, redirects not
 * followed; the thread starts with the first submission and ends after `idle` without one (`RcRef`). Here, on the
 * caller's side: the token checked and trimmed before anything is sent, the answer classified, the token scrubbed
 * from every reason, and each submission's span, debug log and metric.
 */
export const layer = (options: TraClientOptions): Layer.Layer<TraClient> =>
  Layer.scoped(
    TraClient,
    Effect.gen(function*() {
      const host = yield* hostOf(options)
      const prefix = options.baseUrl.replace(/\/+$/, "")
      const urls: Record<Endpoint, URL> = { "/one/": new URL(`${prefix}/one/`), "/two/": new URL(`${prefix}/two/`) }
      const timeout = Duration.decode(options.timeout ?? "30 seconds")
      const start: Start = {
        _tag: "Start",
        prefix,
        concurrency: options.concurrency,
        timeoutMillis: Duration.toMillis(timeout)
      }
      const runtime = yield* Effect.runtime<never>()
      // One thread for the layer: the limit holds across every caller (worker fibers, CLI resubmits, …).
      const threads: RcRef.RcRef<Thread> = yield* RcRef.make({
        acquire: openThread(start, (detail) => {
          // Dropped before its waiting callers resume (closing it is synchronous: it terminates the worker), so
          // whatever they submit next starts another thread.
          try {
            Runtime.runSync(runtime)(RcRef.invalidate(threads))
          } catch {
            Runtime.runFork(runtime)(RcRef.invalidate(threads))
          }
          Runtime.runFork(runtime)(
            Effect.logError("the TRA thread stopped; the next submission starts another", { detail })
          )
        }),
        idleTimeToLive: options.idle ?? "1 minute"
      })

      const post: TraPost = (endpoint, secret, body) => {
        const headers = requestHeaders(secret)
        return Effect.scoped(Effect.flatMap(RcRef.get(threads), (thread) => thread.post({ endpoint, headers, body }))).pipe(
          Effect.flatMap((answer) => {
            // The request may have reached the authority: unknown, retried as a possible duplicate (design §7).
            if ("ended" in answer) return Effect.succeed(TraOutcome.Unknown({ reason: `no answer from ${host} (the TRA thread stopped)` }))
            const { result } = answer
            return Effect.as(
              recordRequest(urls[endpoint], headers, answer),
              result._tag === "Answered"
                ? classify(endpoint, result.status, result.text, result.location ?? undefined)
                : lost(host, result, timeout)
            )
          })
        )
      }

      const submit = (endpoint: Endpoint) => (token: Redacted.Redacted<string>, body: TraMainBody | TraCompanionBody) => {
        // Tokens are pasted from an e-mail (domain §1.2): surrounding blanks are not part of them.
        const secret = Redacted.value(token).trim()
        const outcome: Effect.Effect<TraOutcome> = TOKEN_SHAPE.test(secret)
          ? post(endpoint, secret, body)
          : Effect.succeed(TraOutcome.Misconfigured({
            status: 0,
            reason: secret === "" ? "no TRA token is configured" : "the TRA token contains characters a token cannot have"
          }))
        return outcome.pipe(
          Effect.map((result) => scrub(result, secret)),
          Effect.tap((result) =>
            Effect.all([
              Effect.annotateCurrentSpan({
                "tra.outcome": result._tag,
                ...("status" in result ? { "tra.status": result.status } : {})
              }),
              Effect.logDebug("TRA submission", result).pipe(Effect.annotateLogs({ tra_endpoint: endpoint })),
              Metric.increment(
                Metric.tagged(Metric.tagged(Metrics.authoritySubmissions, "authority", "tra"), "outcome", result._tag)
              )
            ], { discard: true })
          ),
          TraceContext.withSpan(endpoint === "/one/" ? "TraClient.submitMain" : "TraClient.submitCompanion", {
            // Not a "client" span: the request's own span beneath it is the one per request.
            attributes: { "tra.endpoint": endpoint, "server.address": host }
          })
        )
      }

      return TraClient.of({ submitMain: submit("/one/"), submitCompanion: submit("/two/") })
    })
  )

// Exposed for unit tests of the classification, and of a thread that stops on its own.
export const _internal = { classify, reasonOf, openThread }
