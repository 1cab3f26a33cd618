import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as Zlib from "node:zlib"

/**
 * A response whose body never changes while the process runs (the docs page, its script, an OpenAPI document, a
 * page's assets), compressed once when it is made — never per request — and answered in the best encoding the
 * client's `Accept-Encoding` allows: `br`, `gzip` or the body as is. Every answer carries `Vary: Accept-Encoding`
 * and an ETag of its representation; a matching `If-None-Match` is answered 304 without a body.
 */

export type Encoding = "br" | "gzip" | "identity"

export interface CompressedAssetOptions {
  readonly contentType: string
  /** e.g. `no-cache` (revalidate each time; 304 while unchanged) or `public, max-age=31536000, immutable`. */
  readonly cacheControl: string
  /** More headers on every answer, 304s included (a Content-Security-Policy). */
  readonly headers?: Readonly<Record<string, string>>
}

export interface CompressedAsset {
  /** The ETag of the uncompressed body (its SHA-256, shortened); each encoding's ETag adds a suffix. */
  readonly etag: string
  /** Bytes of each representation, for the docs and the tests. */
  readonly sizes: Readonly<Record<Encoding, number>>
  /** The answer to `request`: its encoding chosen from `Accept-Encoding`, 304 when `If-None-Match` matches. */
  readonly respond: (request: HttpServerRequest.HttpServerRequest) => HttpServerResponse.HttpServerResponse
  /** `respond` for the current request, ready for `router.get`. */
  readonly handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
}

/** Bodies this small gain nothing from compression (a frame costs ~20 bytes); they are sent as they are. */
const MIN_COMPRESSIBLE_BYTES = 256

/**
 * Brotli quality 9: on the 3.3 MB Scalar bundle, 794 kB in ~0.16 s; 11 saves another 9 % for ~3.6 s of start-up.
 * gzip level 9 costs ~0.07 s there. Both run on libuv's thread pool, not on the event loop.
 */
const brotli = (body: Uint8Array) =>
  Effect.async<Uint8Array>((resume) =>
    Zlib.brotliCompress(body, {
      params: {
        [Zlib.constants.BROTLI_PARAM_QUALITY]: 9,
        [Zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
        [Zlib.constants.BROTLI_PARAM_MODE]: Zlib.constants.BROTLI_MODE_TEXT
      }
    }, (error, out) => resume(error === null ? Effect.succeed(new Uint8Array(out)) : Effect.die(error)))
  )

const gzip = (body: Uint8Array) =>
  Effect.async<Uint8Array>((resume) =>
    Zlib.gzip(body, { level: 9 }, (error, out) =>
      resume(error === null ? Effect.succeed(new Uint8Array(out)) : Effect.die(error)))
  )

/** One coding of `Accept-Encoding` and its weight (`q`, 0–1; 1 when absent). */
const parseAcceptEncoding = (header: string): Map<string, number> => {
  const weights = new Map<string, number>()
  for (const part of header.split(",")) {
    const [name, ...params] = part.split(";")
    const coding = name?.trim().toLowerCase() ?? ""
    if (coding === "") continue
    let q = 1
    for (const param of params) {
      const [key, value] = param.split("=")
      if (key?.trim().toLowerCase() !== "q") continue
      const parsed = Number(value?.trim())
      q = Number.isFinite(parsed) && parsed >= 0 && parsed <= 1 ? parsed : 0
    }
    weights.set(coding === "x-gzip" ? "gzip" : coding, q)
  }
  return weights
}

/**
 * The encoding to send (RFC 9110 §12.5.3): the acceptable coding with the highest weight, `br` before `gzip`
 * before `identity` on a tie. No header, or nothing acceptable, gets the body as it is: every client can read
 * that, and refusing with 406 would help nobody.
 */
export const negotiate = (acceptEncoding: string | undefined): Encoding => {
  if (acceptEncoding === undefined || acceptEncoding.trim() === "") return "identity"
  const weights = parseAcceptEncoding(acceptEncoding)
  const star = weights.get("*")
  // Unlisted, the body as it is stays acceptable (unless `*;q=0`) but comes last: any accepted coding wins.
  const weightOf = (coding: Encoding) =>
    weights.get(coding) ?? (coding === "identity" ? (star === 0 ? 0 : 0.001) : star ?? 0)
  let best: Encoding = "identity"
  let bestWeight = 0
  for (const coding of ["br", "gzip", "identity"] as const) {
    const weight = weightOf(coding)
    if (weight > bestWeight) {
      best = coding
      bestWeight = weight
    }
  }
  return best
}

/** True when `If-None-Match` names `etag` (weak comparison, as RFC 9110 §13.1.2 asks) or is `*`. */
const matches = (ifNoneMatch: string | undefined, etag: string) => {
  if (ifNoneMatch === undefined) return false
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "")
  const wanted = opaque(etag)
  return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === wanted)
}

/** The SHA-256 of a body in base64url: ETags and content-hashed file names. */
export const contentHash = (body: string | Uint8Array) => createHash("sha256").update(body).digest("base64url")

/** Compresses `body` (text is UTF-8) once and answers it in the client's best encoding. */
export const make = (body: string | Uint8Array, options: CompressedAssetOptions): Effect.Effect<CompressedAsset> =>
  Effect.gen(function*() {
    const identity = typeof body === "string" ? new TextEncoder().encode(body) : body
    const compressible = identity.byteLength >= MIN_COMPRESSIBLE_BYTES
    const [br, gz] = compressible
      ? yield* Effect.all([brotli(identity), gzip(identity)], { concurrency: 2 })
      : [identity, identity]
    const hash = contentHash(identity).slice(0, 22)
    const etag = `"${hash}"`
    const representations: Record<Encoding, { readonly body: Uint8Array; readonly etag: string }> = {
      identity: { body: identity, etag },
      // A strong ETag names one representation: the compressed ones get their own.
      gzip: compressible ? { body: gz, etag: `"${hash}-gzip"` } : { body: identity, etag },
      br: compressible ? { body: br, etag: `"${hash}-br"` } : { body: identity, etag }
    }
    const common = { ...options.headers, "cache-control": options.cacheControl, vary: "Accept-Encoding" }

    const respond = (request: HttpServerRequest.HttpServerRequest) => {
      const encoding = compressible ? negotiate(request.headers["accept-encoding"]) : "identity"
      const chosen = representations[encoding]
      const headers: Record<string, string> = { ...common, etag: chosen.etag }
      if (matches(request.headers["if-none-match"], chosen.etag)) {
        return HttpServerResponse.empty({ status: 304, headers })
      }
      if (encoding !== "identity") headers["content-encoding"] = encoding
      return HttpServerResponse.uint8Array(chosen.body, { contentType: options.contentType, headers })
    }

    return {
      etag,
      sizes: {
        identity: identity.byteLength,
        gzip: representations.gzip.body.byteLength,
        br: representations.br.body.byteLength
      },
      respond,
      handler: Effect.map(HttpServerRequest.HttpServerRequest, respond)
    }
  })

/**
 * A handler for an asset made on its first request, once (`Effect.cached`): for answers that most processes never
 * serve — the OpenAPI documents, the reference page — whose generation and compression would otherwise add to
 * every start (docs/performance.md, "Start and memory").
 */
export const lazyHandler = (
  asset: Effect.Effect<CompressedAsset>
): Effect.Effect<
  Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
> =>
  Effect.map(
    Effect.cached(asset),
    (cached) => Effect.flatMap(cached, (made) => made.handler)
  )
