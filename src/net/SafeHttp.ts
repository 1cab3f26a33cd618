import { Headers, type HttpClientRequest, UrlParams } from "@effect/platform"
import { Cause, Clock, Context, Duration, Effect, Either, Exit, FiberId, FiberRef, Layer, Option, Runtime, Schema, Stream, type Tracer } from "effect"
import { lookup } from "node:dns/promises"
import { errorCode } from "./ErrorCode.ts"
import { addressProblem, canonicalIp, checkUrl, type Target, UnsafeUrl, type UrlPolicy } from "./UrlSafety.ts"
import { concatBytes } from "../shared/Bytes.ts"

/**
 * Outbound HTTP to partner-supplied URLs (webhook deliveries, document photo downloads), pinned to the address
 * that passed the URL-safety check (design §7). Per attempt: check the URL, resolve the host **once**, check
 * every address, then connect to the checked IP itself — the URL's host is replaced by the IP — while the
 * original name goes in the `Host` header and is used for TLS (SNI and certificate verification). Nothing
 * resolves the name a second time, so a DNS answer that changes between the check and the connection (DNS
 * rebinding) cannot move the request to another address. Redirects are never followed.
 *
 * Transport: Bun's `fetch` called directly (not through `FetchHttpClient`, whose wrappers cost more than the rest
 * of a webhook delivery; docs/performance.md), with an `http.client <METHOD>` span as `HttpClient` makes one and
 * no trace header. Bun pools its connections per host and port, so repeated attempts to one endpoint reuse
 * them (keep-alive). Checked on Bun 1.4.5 before relying on it: with the URL
 * host an IP, `fetch` sends our `Host` header as given, and `tls.serverName` sets the SNI and is the name the
 * certificate is verified against (a certificate for another name fails with ERR_TLS_CERT_ALTNAME_INVALID,
 * also right after a successful pooled connection to the same IP and port). `redirect: "manual"` returns 3xx
 * responses as they are.
 */

export { UnsafeUrl }
export type { Target, UrlPolicy }

export class ResolveFailed extends Schema.TaggedError<ResolveFailed>()("ResolveFailed", {
  hostname: Schema.String,
  /** Short cause, e.g. the resolver's error code (`ENOTFOUND`). */
  reason: Schema.String
}) {
  override get message(): string {
    return `could not resolve ${this.hostname}: ${this.reason}`
  }
}

export interface ResolverShape {
  /** Every address of `hostname`, in the order the system prefers them. */
  readonly lookup: (hostname: string) => Effect.Effect<ReadonlyArray<string>, ResolveFailed>
}

/** Name resolution, a service so that tests can answer what they like (for instance differently on each call). */
export class Resolver extends Context.Tag("net/Resolver")<Resolver, ResolverShape>() {
  /** The system resolver (`getaddrinfo`: /etc/hosts, then DNS), as every other client of the process sees it. */
  static readonly system: Layer.Layer<Resolver> = Layer.succeed(
    Resolver,
    Resolver.of({
      lookup: (hostname) =>
        Effect.tryPromise({
          try: () => lookup(hostname, { all: true, verbatim: true }),
          catch: (cause) => new ResolveFailed({ hostname, reason: errorCode(cause) ?? String(cause) })
        }).pipe(Effect.map((answers) => answers.map((answer) => answer.address)))
    })
  )
}

export const OutboundFailureKind = Schema.Literal("resolve", "connect", "timeout", "too_large", "failed")
export type OutboundFailureKind = typeof OutboundFailureKind.Type

/**
 * An attempt that did not produce a complete response. `resolve`: the name has no address; `connect`: no
 * connection or TLS verification failed (nothing was answered); `timeout`: no complete answer in time;
 * `too_large`: the body passed the limit; `failed`: anything else (connection broken mid-body, …).
 */
export class OutboundFailed extends Schema.TaggedError<OutboundFailed>()("OutboundFailed", {
  kind: OutboundFailureKind,
  message: Schema.String
}) {}

export interface ExecuteOptions {
  /** Largest body read; a longer one fails with `too_large` as soon as it is exceeded. Default 10 MiB. */
  readonly maxBodyBytes?: number
  /** Limit of the whole attempt: resolution, connection, answer and body. Default 10 seconds. */
  readonly timeout?: Duration.DurationInput
}

/** A complete answer, whatever its status (3xx included: redirects are not followed). */
export interface SafeResponse {
  readonly status: number
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  /** The IP the request was sent to (canonical form, no brackets). */
  readonly address: string
}

/** A request in plain form, as `send` takes it (a delivery loop builds it without `HttpClientRequest`). */
export interface PlainRequest {
  readonly method: string
  /** Absolute. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | null
}

/**
 * What `send` needs to trace its attempt as `execute` does (an `http.client <METHOD>` span, same attributes),
 * taken once by its caller from its fiber's context rather than read per request.
 */
export interface PlainTrace {
  readonly tracer: Tracer.Tracer
  readonly clock: Clock.Clock
  /** The span the attempt's span is a child of. */
  readonly parent: Tracer.AnySpan
  /** `Headers.currentRedactedNames` as the caller's fiber has it. */
  readonly redactedNames: ReadonlyArray<string | RegExp>
}

export interface SendOptions extends ExecuteOptions {
  /** Aborts the attempt: `send` then rejects with the abort's reason instead of answering. */
  readonly signal?: AbortSignal
  /** Trace the attempt (an `http.client` span under `trace.parent`); without it, no span is made. */
  readonly trace?: PlainTrace
}

/**
 * The `http.client` span's request attributes, as `HttpClient` sets them (headers redacted as there); also for the
 * TRA thread's requests, whose spans `TraClient` records.
 */
export const requestAttributes = (
  span: Tracer.Span,
  method: string,
  url: URL,
  headers: Headers.Headers,
  redacted: ReadonlyArray<string | RegExp>
) => {
  span.attribute("http.request.method", method)
  span.attribute("server.address", url.origin)
  if (url.port !== "") span.attribute("server.port", +url.port)
  span.attribute("url.full", url.toString())
  span.attribute("url.path", url.pathname)
  span.attribute("url.scheme", url.protocol.slice(0, -1))
  if (url.search.length > 1) span.attribute("url.query", url.search.slice(1))
  for (const [name, value] of Object.entries(Headers.redact(headers, redacted))) {
    span.attribute(`http.request.header.${name}`, String(value))
  }
}

/** The `http.client` span's answer attributes. */
const responseAttributes = (span: Tracer.Span, result: SafeResponse, redacted: ReadonlyArray<string | RegExp>) => {
  span.attribute("http.response.status_code", result.status)
  for (const [name, value] of Object.entries(Headers.redact(Headers.fromInput(result.headers), redacted))) {
    span.attribute(`http.response.header.${name}`, String(value))
  }
}

export interface SafeHttpShape {
  readonly policy: UrlPolicy
  /**
   * `checkUrl` under this instance's policy, with no I/O: for validating a URL when a partner registers it
   * (`invalid_webhook_url`). Host names are only judged by their addresses at each `execute`.
   */
  readonly check: (url: string) => Either.Either<Target, UnsafeUrl>
  /**
   * One attempt at `request`, whose URL must be absolute. Fails with `UnsafeUrl` when the URL or any address
   * of its host is refused by the policy (then nothing was sent), else with `OutboundFailed`.
   */
  readonly execute: (
    request: HttpClientRequest.HttpClientRequest,
    options?: ExecuteOptions
  ) => Effect.Effect<SafeResponse, UnsafeUrl | OutboundFailed>
  /**
   * The same attempt as a plain promise, for a caller that makes many without a fiber each (the webhook delivery
   * loop; docs/performance.md, "Deliveries without a fiber each"): same policy, resolution, pinning, limits and
   * failures, answered as an `Either`; rejects only when `options.signal` aborted it.
   */
  readonly send: (
    request: PlainRequest,
    options?: SendOptions
  ) => Promise<Either.Either<SafeResponse, UnsafeUrl | OutboundFailed>>
}

export interface SafeHttpOptions {
  readonly policy: UrlPolicy
  /**
   * Extra trusted CA certificates (PEM), for tests only. When given they **replace** the public roots, as
   * `tls.ca` does in Bun and Node.
   */
  readonly ca?: string | ReadonlyArray<string>
}

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
export const DEFAULT_TIMEOUT: Duration.DurationInput = "10 seconds"

/** Connection failures that happen before anything is sent, so the next checked address may be tried. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "EAFNOSUPPORT"
])

/** A request whose URL passed the policy, in the form an attempt sends it (`execute`'s and `send`'s alike). */
interface CheckedRequest {
  readonly target: Target
  /** What is requested (the target's URL with the request's parameters and hash). */
  readonly url: URL
  readonly method: string
  readonly headers: Headers.Headers
  readonly body: BodyInit | null
  readonly stream: boolean
}


const unreachable = (cause: unknown) => UNREACHABLE.has(errorCode(cause) ?? "")

const isTimeout = (cause: unknown) =>
  typeof cause === "object" && cause !== null && "name" in cause && cause.name === "TimeoutError"

/** Thrown inside the attempt's promise to carry a refusal (an address the policy refuses) out of it. */
class Refused {
  constructor(readonly error: UnsafeUrl) {}
}

const timedOut = (target: Target, timeoutMs: number) =>
  new OutboundFailed({
    kind: "timeout",
    message: `no complete answer from ${target.hostname} within ${Duration.format(Duration.millis(timeoutMs))}`
  })

/** A transport failure (no answer) as the attempt reports it. */
const connectFailed = (target: Target, addresses: ReadonlyArray<string>, cause: unknown) => {
  const code = errorCode(cause) ?? "connection failed"
  const where = `${target.hostname} (${addresses.join(", ")}) on port ${target.port}`
  return new OutboundFailed({
    kind: "connect",
    message: /CERT|TLS|SSL|VERIFY|SIGNATURE|ISSUER|HOSTNAME_MISMATCH/i.test(code)
      ? `the TLS certificate of ${where} could not be verified (${code})`
      : `could not connect to ${where} (${code})`
  })
}

/** Thrown inside the attempt's promise to carry a failure out of it as it is. */
class Failed {
  constructor(readonly error: OutboundFailed) {}
}

/**
 * Reads at most `max` bytes; the read stops (and the connection is closed) as soon as the body passes it. A
 * declared length within the limit is read in one piece: the body is bounded by it, and this is several times
 * cheaper per request than a stream (docs/performance.md, webhook deliveries).
 */
const readBody = async (response: Response, target: Target, max: number, signal: AbortSignal) => {
  const tooLarge = () =>
    new Failed(
      new OutboundFailed({
        kind: "too_large",
        message: `the answer of ${target.hostname} is larger than ${max} bytes`
      })
    )
  // The reason is what @effect/platform called a broken body read ("Decode"): the message stays as it was.
  const broke = (cause: unknown) =>
    isTimeout(cause) || signal.aborted
      ? cause
      : new Failed(
        new OutboundFailed({ kind: "failed", message: `the answer of ${target.hostname} broke off (Decode)` })
      )
  const length = response.headers.get("content-length")
  const declared = Number(length)
  if (length !== null && Number.isFinite(declared)) {
    if (declared > max) {
      await response.body?.cancel().catch(() => undefined)
      throw tooLarge()
    }
    const buffer = await response.arrayBuffer().catch((cause) => {
      throw broke(cause)
    })
    if (buffer.byteLength > max) throw tooLarge()
    return new Uint8Array(buffer)
  }
  if (response.body === null) return new Uint8Array(0) // no body at all (HEAD, 204, …)
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const next = await reader.read().catch((cause) => {
      throw broke(cause)
    })
    if (next.done) return concatBytes(chunks, size)
    size += next.value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge()
    }
    chunks.push(next.value)
  }
}

/**
 * Sends to the checked addresses in order, moving on only when one refuses or cannot be reached, and reads
 * the answer. Plain `fetch` with the pinning options: `FetchHttpClient`'s request and response wrappers and a
 * timeout fiber cost more than the rest of a delivery together (docs/performance.md, webhook deliveries).
 */
const sendTo = async (
  url: URL,
  init: BunFetchRequestInit,
  target: Target,
  addresses: ReadonlyArray<string>,
  max: number,
  signal: AbortSignal
): Promise<SafeResponse> => {
  for (let index = 0;; index++) {
    const address = addresses[index]!
    const pinned = new URL(url.href) // urlParams and hash of the request are kept
    pinned.hostname = address.includes(":") ? `[${address}]` : address
    let response: Response
    try {
      response = await fetch(pinned, { ...init, signal })
    } catch (cause) {
      if (isTimeout(cause) || signal.aborted) throw cause
      if (index + 1 < addresses.length && unreachable(cause)) continue
      throw new Failed(connectFailed(target, addresses, cause))
    }
    const body = await readBody(response, target, max, signal)
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      headers[name] = value
    })
    return { status: response.status, headers, body, address }
  }
}

/** What an attempt's promise failed with, as the caller sees it. */
const failureOf = (cause: unknown): UnsafeUrl | OutboundFailed =>
  cause instanceof Failed || cause instanceof Refused
    ? cause.error
    : new OutboundFailed({ kind: "failed", message: `the request failed (${errorCode(cause) ?? String(cause)})` })

const bodyOf = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<BodyInit | null> => {
  const body = request.body
  switch (body._tag) {
    case "Raw":
      return Effect.succeed(body.body as BodyInit)
    case "Uint8Array":
      return Effect.succeed(body.body as BodyInit)
    case "FormData":
      return Effect.succeed(body.formData)
    case "Stream":
      return Effect.orDie(Stream.toReadableStreamEffect(body.stream))
    default:
      return Effect.succeed(null)
  }
}

/** Fetch options of one attempt: TLS for the original name while the URL names the IP (`ca`: the test roots). */
const fetchInit = (target: Target, ca: Array<string> | undefined): BunFetchRequestInit => {
  const init: BunFetchRequestInit = { redirect: "manual" }
  if (target.url.protocol === "https:") {
    init.tls = {
      // Explicit, so that NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot turn verification off.
      rejectUnauthorized: true,
      // SNI and the name the certificate must match; an IP-literal URL is verified against the IP (no SNI).
      ...(target.literal === undefined ? { serverName: target.hostname.replace(/\.$/, "") } : {}),
      ...(ca === undefined ? {} : { ca })
    }
  }
  return init
}

export const make = (options: SafeHttpOptions): Effect.Effect<SafeHttpShape, never, Resolver> =>
  Effect.gen(function*() {
    const resolver = yield* Resolver
    // What the promise form runs its resolution with, and its time source.
    const runtime = yield* Effect.runtime<never>()
    const clock = yield* Effect.clock
    // Bun's fetch itself, not an HttpClient from the environment: pinning depends on fetch-specific options
    // (`tls.serverName`, `redirect: "manual"`), which another client would silently ignore.
    const { policy } = options
    const ca = options.ca === undefined ? undefined : typeof options.ca === "string" ? [options.ca] : [...options.ca]

    const check = (url: string) => checkUrl(url, policy)

    /** The addresses to connect to: the literal itself, or the name resolved once, every answer checked. */
    const addressesOf = (target: Target): Effect.Effect<ReadonlyArray<string>, UnsafeUrl | OutboundFailed> =>
      target.literal !== undefined ? Effect.succeed([target.literal]) : Effect.gen(function*() {
        const answers = yield* resolver.lookup(target.hostname).pipe(
          Effect.mapError((error) => new OutboundFailed({ kind: "resolve", message: error.message }))
        )
        if (answers.length === 0) {
          return yield* new OutboundFailed({ kind: "resolve", message: `${target.hostname} has no address` })
        }
        const addresses: Array<string> = []
        for (const answer of answers) {
          // All answers are checked, not only the one used: a name that points anywhere private is refused.
          const problem = policy.allowPrivate ? undefined : addressProblem(answer)
          if (problem !== undefined) {
            return yield* new UnsafeUrl({
              url: target.url.href,
              reason: `${target.hostname} resolves to ${answer}; ${problem}`
            })
          }
          const address = canonicalIp(answer)
          if (address === undefined) {
            return yield* new OutboundFailed({
              kind: "resolve",
              message: `the resolver answered ${JSON.stringify(answer)} for ${target.hostname}, not an IP address`
            })
          }
          addresses.push(address)
        }
        return addresses
      })

    /** The addresses of `target` (resolved through the `Resolver`, in the attempt's time limit), as a promise. */
    const resolve = async (target: Target, timeoutMs: number, signal: AbortSignal | undefined) => {
      const exit = await Runtime.runPromiseExit(runtime)(
        addressesOf(target).pipe(
          Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => timedOut(target, timeoutMs) })
        ),
        signal === undefined ? undefined : { signal }
      )
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.failureOption(exit.cause)
      if (Option.isNone(failure)) throw Cause.squash(exit.cause)
      throw failure.value._tag === "UnsafeUrl" ? new Refused(failure.value) : new Failed(failure.value)
    }

    /**
     * One attempt at a checked target, as a plain promise (no fiber): resolution, the pinned request, the answer.
     * Fails only with `Failed` or `Refused`, or with the abort of `signal`.
     */
    const attemptAt = async (
      request: CheckedRequest,
      timeoutMs: number,
      max: number,
      signal: AbortSignal | undefined
    ): Promise<SafeResponse> => {
      const { target, url } = request
      const started = clock.unsafeCurrentTimeMillis()
      // Resolution is part of the attempt's time limit: an IP literal needs none.
      const addresses = target.literal !== undefined ? [target.literal] : await resolve(target, timeoutMs, signal)
      const left = timeoutMs - (clock.unsafeCurrentTimeMillis() - started)
      if (left <= 0) throw new Failed(timedOut(target, timeoutMs))
      let headers = Headers.set(request.headers, "host", target.url.host)
      if (headers["content-length"] !== undefined) headers = Headers.remove(headers, "content-length")
      const init: BunFetchRequestInit = {
        ...fetchInit(target, ca),
        method: request.method,
        headers,
        body: request.body,
        ...(request.stream ? { duplex: "half" } : {})
      }
      const limit = AbortSignal.timeout(left)
      try {
        return await sendTo(url, init, target, addresses, max, signal === undefined ? limit : AbortSignal.any([signal, limit]))
      } catch (cause) {
        if (cause instanceof Failed) throw cause
        if (signal?.aborted) throw cause
        throw new Failed(isTimeout(cause) ? timedOut(target, timeoutMs) : connectFailed(target, addresses, cause))
      }
    }

    /**
     * The one attempt behind `execute` and `send`, at a request whose URL passed the policy: the pinned request
     * (`attemptAt`) with the `http.client` span's request and answer attributes set on `span` as `HttpClient` sets
     * them (ending the span is the caller's), answered as an `Either`; rejects only when `signal` aborted it.
     */
    const attemptChecked = async (
      request: CheckedRequest,
      limits: ExecuteOptions | undefined,
      signal: AbortSignal | undefined,
      span: Tracer.Span | undefined,
      redacted: ReadonlyArray<string | RegExp>
    ): Promise<Either.Either<SafeResponse, UnsafeUrl | OutboundFailed>> => {
      const timeoutMs = Duration.toMillis(Duration.decode(limits?.timeout ?? DEFAULT_TIMEOUT))
      const max = limits?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
      if (span !== undefined) requestAttributes(span, request.method, request.url, request.headers, redacted)
      try {
        const response = await attemptAt(request, timeoutMs, max, signal)
        if (span !== undefined) responseAttributes(span, response, redacted)
        return Either.right(response)
      } catch (cause) {
        // Aborted by the caller: nothing to answer.
        if (signal?.aborted === true) throw cause
        return Either.left(failureOf(cause))
      }
    }

    /** `attemptChecked` in the caller's fiber: its span is the fiber's, interrupting the fiber aborts the request. */
    const execute = (
      request: HttpClientRequest.HttpClientRequest,
      executeOptions?: ExecuteOptions
    ): Effect.Effect<SafeResponse, UnsafeUrl | OutboundFailed> =>
      Effect.gen(function*() {
        const target = yield* check(request.url)
        const url = yield* Either.mapLeft(
          UrlParams.makeUrl(request.url, request.urlParams, request.hash),
          (error) =>
            new OutboundFailed({
              kind: "failed",
              message: `the request to ${target.hostname} failed (${error.message})`
            })
        )
        const checked: CheckedRequest = {
          target,
          url,
          method: request.method,
          headers: request.headers,
          body: yield* bodyOf(request),
          stream: request.body._tag === "Stream"
        }
        return yield* Effect.useSpan(
          `http.client ${request.method}`,
          { kind: "client", captureStackTrace: false },
          (span) =>
            Effect.flatMap(FiberRef.get(Headers.currentRedactedNames), (redacted) =>
              Effect.flatMap(
                Effect.promise((signal) => attemptChecked(checked, executeOptions, signal, span, redacted)),
                (result) => result
              ))
        )
      })

    /** `attemptChecked` as a plain promise, its span (when traced) made and ended here. */
    const send = async (
      request: PlainRequest,
      sendOptions?: SendOptions
    ): Promise<Either.Either<SafeResponse, UnsafeUrl | OutboundFailed>> => {
      const target = check(request.url)
      if (Either.isLeft(target)) return Either.left(target.left)
      const checked: CheckedRequest = {
        target: target.right,
        url: target.right.url,
        method: request.method,
        headers: Headers.fromInput(request.headers),
        body: request.body,
        stream: false
      }
      const trace = sendOptions?.trace
      const span = trace?.tracer.span(
        `http.client ${request.method}`,
        Option.some(trace.parent),
        Context.empty(),
        [],
        trace.clock.unsafeCurrentTimeNanos(),
        "client"
      )
      const end = (exit: Exit.Exit<unknown, unknown>) => span?.end(trace!.clock.unsafeCurrentTimeNanos(), exit)
      try {
        const result = await attemptChecked(checked, sendOptions, sendOptions?.signal, span, trace?.redactedNames ?? [])
        end(Either.isRight(result) ? Exit.void : Exit.fail(result.left))
        return result
      } catch (cause) {
        // Aborted by the caller: the span still ends (interrupted), then the promise rejects.
        end(Exit.interrupt(FiberId.none))
        throw cause
      }
    }

    return SafeHttp.of({ policy, check, execute, send })
  })

/** The outbound client for partner-supplied URLs. Build it with `SafeHttp.layer({ policy })` and a `Resolver`. */
export class SafeHttp extends Context.Tag("net/SafeHttp")<SafeHttp, SafeHttpShape>() {
  static readonly layer = (options: SafeHttpOptions): Layer.Layer<SafeHttp, never, Resolver> =>
    Layer.effect(SafeHttp, make(options))
}
