import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { toBody } from "../shared/errors.ts"
import type { CoveredHeaders } from "./AccessLog.ts"
import { projectFile } from "../shared/ProjectRoot.ts"

/**
 * One static HTML page with its scripts and styles, served by the API's router beside the JSON API it drives
 * (the guest check-in page, the account panel): the page itself (`no-store`, `noindex`), its whitelisted assets
 * (`no-cache` with an ETag, 304 while unchanged) and the same security headers on the page, its assets and every
 * answer of its JSON API. The page gets the server's rules in a `<meta>`, never in an inline script.
 */

/** The security headers under a page's Content-Security-Policy. */
export const securityHeaders = (contentSecurityPolicy: string): Readonly<Record<string, string>> => ({
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // for browsers that predate `frame-ancestors`
  "x-frame-options": "DENY"
})

/** The directives every page's Content-Security-Policy ends with: this origin only, no `<base>`, never framed. */
export const CSP_TAIL = ["connect-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"]

export const JAVASCRIPT = "text/javascript; charset=utf-8"
export const CSS = "text/css; charset=utf-8"

/** `base.css`, the style every page shares (colours, focus, skip link, form fields), from src/http/page/. */
export const BASE_CSS = { contentType: CSS, dir: projectFile("src/http/page/") } as const

/** An asset's content type, and the folder it is read from when it is not the page's own. */
export type Asset = string | { readonly contentType: string; readonly dir: URL }

export interface StaticPageOptions<R> {
  /** The folder of `index.html` and the assets (a `file:` URL next to the module). */
  readonly dir: URL
  /** The paths that answer the page (`/checkin/:token`, `/panel`). */
  readonly pagePaths: ReadonlyArray<`/${string}`>
  /** Where the assets are served: `${assetsPath}/:file`. */
  readonly assetsPath: `/${string}`
  /** The only files served, with their content types (from `dir` unless an asset names its own folder). */
  readonly assets: Readonly<Record<string, Asset>>
  readonly contentSecurityPolicy: string
  /** The placeholder in `index.html` replaced by `rules` as JSON, inside a `<meta content="…">`. */
  readonly placeholder: string
  readonly rules: Effect.Effect<unknown, never, R>
  /** The request URLs (path and query) whose answers carry the security headers: the page's and its API's. */
  readonly covers: (url: string) => boolean
}

export interface StaticPage<R> {
  /** The page's and its assets' routes. */
  readonly layer: Layer.Layer<never, never, R>
  /**
   * The security headers of every answer `covers` names, the JSON API's typed errors and the error middleware's
   * 404/405 included: for `ErrorMiddleware.layer`, whose one pre-response handler writes them on the final
   * response (a middleware mapping the response would not see those answers).
   */
  readonly coveredHeaders: CoveredHeaders
  /** For `ErrorMiddleware.routesOf`: 405 rather than 404 for another method on these paths. */
  readonly routes: ReadonlyArray<{ readonly method: string; readonly path: string }>
}

const escapeAttribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const etagOf = (body: string) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`

export const make = <R>(options: StaticPageOptions<R>): StaticPage<R> => {
  const headers = securityHeaders(options.contentSecurityPolicy)
  const secure = (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.setHeaders(response, headers)
  const read = (name: string, dir = options.dir) => readFileSync(new URL(name, dir), "utf8")

  /** Reads the page and its assets once, at start-up: a missing file fails the start, not a visitor's request. */
  const load = Effect.map(options.rules, (rules) => {
    // A replacer function: rules may hold `$&` (a pattern's `$` before an escaped quote), which a replacement
    // string would expand.
    const html = read("index.html").replace(options.placeholder, () => escapeAttribute(JSON.stringify(rules)))
    const assets = new Map(
      Object.entries(options.assets).map(([name, asset]) => {
        const { contentType, dir } = typeof asset === "string" ? { contentType: asset, dir: options.dir } : asset
        const body = read(name, dir)
        return [name, { body, contentType, etag: etagOf(body) }] as const
      })
    )
    return { html, assets }
  })

  const routeLayer = HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const { html, assets } = yield* load
      const page = secure(HttpServerResponse.text(html, {
        contentType: "text/html; charset=utf-8",
        // The page may sit under a URL with a secret (a check-in token): no cache keeps it; robots skip it.
        headers: { "cache-control": "no-store", "x-robots-tag": "noindex" }
      }))
      for (const path of options.pagePaths) yield* router.get(path, Effect.succeed(page))
      yield* router.get(
        `${options.assetsPath}/:file`,
        Effect.gen(function*() {
          const params = yield* HttpRouter.params
          const request = yield* HttpServerRequest.HttpServerRequest
          const asset = assets.get(params.file ?? "")
          if (asset === undefined) {
            return secure(HttpServerResponse.unsafeJson(
              toBody("not_found", `no route GET ${request.url.split("?", 1)[0]}`),
              { status: 404 }
            ))
          }
          // Revalidated on every load (`no-cache`), answered 304 while unchanged: a deploy is picked up at once.
          const cache = { "cache-control": "no-cache", etag: asset.etag }
          if (request.headers["if-none-match"] === asset.etag) {
            return secure(HttpServerResponse.empty({ status: 304, headers: cache }))
          }
          return secure(HttpServerResponse.text(asset.body, { contentType: asset.contentType, headers: cache }))
        })
      )
    })
  )

  return {
    layer: routeLayer,
    coveredHeaders: { covers: options.covers, headers },
    routes: [...options.pagePaths, `${options.assetsPath}/:file`].map((path) => ({ method: "GET", path }))
  }
}
