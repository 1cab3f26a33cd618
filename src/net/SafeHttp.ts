import {
  FetchHttpClient,
  HttpClient,
  type HttpClientError,
  HttpClientRequest,
  type HttpClientResponse
} from "@effect/platform"
import { Context, Duration, Effect, Either, Layer, Schema, Stream } from "effect"
import { lookup } from "node:dns/promises"
import { errorCode } from "./ErrorCode.ts"
import { addressProblem, canonicalIp, checkUrl, type Target, UnsafeUrl, type UrlPolicy } from "./UrlSafety.ts"

/**
 * Outbound HTTP to partner-supplied URLs (webhook deliveries, document photo downloads), pinned to the address
 * that passed the URL-safety check (design §7). Per attempt: check the URL, resolve the host **once**, check
 * every address, then connect to the checked IP itself — the URL's host is replaced by the IP — while the
 * original name goes in the `Host` header and is used for TLS (SNI and certificate verification). Nothing
 * resolves the name a second time, so a DNS answer that changes between the check and the connection (DNS
 * rebinding) cannot move the request to another address. Redirects are never followed.
 *
 * Transport: Bun's `fetch` through `FetchHttpClient`. Checked on Bun 1.4.5 before relying on it: with the URL
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

const isUnreachable = (error: HttpClientError.HttpClientError) =>
  error._tag === "RequestError" && error.reason === "Transport" && UNREACHABLE.has(errorCode(error.cause) ?? "")

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

export const make = (options: SafeHttpOptions): Effect.Effect<SafeHttpShape, never, Resolver> =>
  Effect.gen(function*() {
    const resolver = yield* Resolver
    // The fetch client is ours, not taken from the environment: pinning depends on fetch-specific options
    // (`tls.serverName`, `redirect: "manual"`), which another HttpClient would silently ignore.
    const client = (yield* Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer)).pipe(
      HttpClient.withTracerPropagation(false) // no trace headers to partners
    )
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

    /** Fetch options of one attempt: TLS for the original name while the URL names the IP. */
    const fetchInit = (target: Target): BunFetchRequestInit => {
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

    const sendTo = (request: HttpClientRequest.HttpClientRequest, target: Target, address: string) => {
      const pinned = new URL(target.url.href)
      pinned.hostname = address.includes(":") ? `[${address}]` : address
      return client.execute(
        request.pipe(
          HttpClientRequest.setUrl(pinned.href), // urlParams and hash of the request are kept
          HttpClientRequest.setHeader("host", target.url.host)
        )
      ).pipe(
        Effect.provideService(FetchHttpClient.RequestInit, fetchInit(target)),
        // Our fetch, whatever a caller may have put in the context.
        Effect.provideService(FetchHttpClient.Fetch, globalThis.fetch),
        Effect.map((response) => ({ response, address }))
      )
    }

    /** Tries the checked addresses in order, moving on only when one refuses or cannot be reached. */
    const connect = (
      request: HttpClientRequest.HttpClientRequest,
      target: Target,
      addresses: ReadonlyArray<string>,
      index = 0
    ): Effect.Effect<{ response: HttpClientResponse.HttpClientResponse; address: string }, OutboundFailed> =>
      sendTo(request, target, addresses[index]!).pipe(
        Effect.catchIf(
          (error) => index + 1 < addresses.length && isUnreachable(error),
          () => connect(request, target, addresses, index + 1)
        ),
        Effect.mapError((error) => {
          if (error._tag === "RequestError" && error.reason === "Transport") {
            const code = errorCode(error.cause) ?? "connection failed"
            const where = `${target.hostname} (${addresses.join(", ")}) on port ${target.port}`
            return new OutboundFailed({
              kind: "connect",
              message: /CERT|TLS|SSL|VERIFY|SIGNATURE|ISSUER|HOSTNAME_MISMATCH/i.test(code)
                ? `the TLS certificate of ${where} could not be verified (${code})`
                : `could not connect to ${where} (${code})`
            })
          }
          return new OutboundFailed({
            kind: "failed",
            message: `the request to ${target.hostname} failed (${error.message})`
          })
        })
      )

    /** Reads at most `max` bytes; the read stops (and the connection is closed) as soon as the body passes it. */
    const readBody = (
      response: HttpClientResponse.HttpClientResponse,
      target: Target,
      max: number
    ): Effect.Effect<Uint8Array, OutboundFailed> =>
      Effect.suspend(() => {
        const tooLarge = new OutboundFailed({
          kind: "too_large",
          message: `the answer of ${target.hostname} is larger than ${max} bytes`
        })
        const broke = (reason: string) =>
          new OutboundFailed({ kind: "failed", message: `the answer of ${target.hostname} broke off (${reason})` })
        const declared = Number(response.headers["content-length"])
        if (Number.isFinite(declared) && declared > max) return Effect.fail(tooLarge)
        // A declared length within the limit is read in one piece: the fetch body is bounded by it, and this is
        // several times cheaper per request than a Stream (docs/performance.md, webhook deliveries).
        if (response.headers["content-length"] !== undefined && Number.isFinite(declared)) {
          return response.arrayBuffer.pipe(
            Effect.map((buffer) => new Uint8Array(buffer)),
            Effect.filterOrFail((body) => body.byteLength <= max, () => tooLarge),
            Effect.catchTag("ResponseError", (error) => Effect.fail(broke(error.reason)))
          )
        }
        const chunks: Array<Uint8Array> = []
        let size = 0
        return response.stream.pipe(
          Stream.runForEach((chunk) => {
            size += chunk.byteLength
            if (size > max) return Effect.fail(tooLarge)
            chunks.push(chunk)
            return Effect.void
          }),
          Effect.catchTag("ResponseError", (error) =>
            error.reason === "EmptyBody" // no body at all (HEAD, 204, …)
              ? Effect.void
              : Effect.fail(broke(error.reason))),
          Effect.map(() => concat(chunks, size))
        )
      })

    const execute = (
      request: HttpClientRequest.HttpClientRequest,
      executeOptions?: ExecuteOptions
    ): Effect.Effect<SafeResponse, UnsafeUrl | OutboundFailed> =>
      Effect.gen(function*() {
        const target = yield* check(request.url)
        const timeout = Duration.decode(executeOptions?.timeout ?? DEFAULT_TIMEOUT)
        return yield* Effect.gen(function*() {
          const addresses = yield* addressesOf(target)
          const { address, response } = yield* connect(request, target, addresses)
          const body = yield* readBody(response, target, executeOptions?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES)
          const headers: Record<string, string> = { ...response.headers }
          return { status: response.status, headers, body, address } satisfies SafeResponse
        }).pipe(
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () =>
              new OutboundFailed({
                kind: "timeout",
                message: `no complete answer from ${target.hostname} within ${Duration.format(timeout)}`
              })
          }),
          Effect.withSpan("SafeHttp.execute", { attributes: { "server.address": target.hostname } })
        )
      })

    return SafeHttp.of({ policy, check, execute })
  })

/** The outbound client for partner-supplied URLs. Build it with `SafeHttp.layer({ policy })` and a `Resolver`. */
export class SafeHttp extends Context.Tag("net/SafeHttp")<SafeHttp, SafeHttpShape>() {
  static readonly layer = (options: SafeHttpOptions): Layer.Layer<SafeHttp, never, Resolver> =>
    Layer.effect(SafeHttp, make(options))
}
