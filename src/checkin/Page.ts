import { HttpApiBuilder, HttpApp, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { MAX_DOCUMENT_BYTES } from "../documents/DocumentKind.ts"
import { COUNTRY_CODES } from "../reservations/countries.ts"
import {
  COLOMBIAN_DOCUMENT_TYPES,
  DOCUMENT_NUMBER,
  DocumentType,
  FOREIGN_DOCUMENT_TYPES,
  Limits,
  Motivo
} from "../reservations/Reservation.ts"
import { toBody } from "../shared/errors.ts"
import { SIGNER_NAME_MAX } from "./Checkin.ts"

/**
 * The guest check-in page (design §5, issue 6): `GET /checkin/{token}` answers one static HTML page whose
 * script (src/checkin/page/) drives the token-scoped JSON API. Served by the same process, outside the partner
 * OpenAPI document. The page does not look at the token: an unknown or expired link is told by the API, so the
 * HTML is the same for everyone and leaks nothing.
 */

/** No inline script or style anywhere on the page; photo previews are `blob:` URLs. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self'",
  "script-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

/** The security headers, on every response of the page, its assets and its JSON API. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // for browsers that predate `frame-ancestors`
  "x-frame-options": "DENY"
}

/** The page's assets: the only names `/checkin/assets/:file` serves. */
const ASSET_TYPES: Readonly<Record<string, string>> = {
  "checkin.js": "text/javascript; charset=utf-8",
  "i18n.js": "text/javascript; charset=utf-8",
  "checkin.css": "text/css; charset=utf-8"
}

const PAGE_DIR = new URL("./page/", import.meta.url)
const read = (name: string) => readFileSync(new URL(name, PAGE_DIR), "utf8")

const escapeAttribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/**
 * The server's own GuestInput rules, handed to the page in a `<meta>` (no inline script) so the client-side
 * validation cannot drift from src/reservations/Reservation.ts.
 */
const clientRules = () => ({
  documentTypes: DocumentType.literals,
  foreignDocumentTypes: FOREIGN_DOCUMENT_TYPES,
  colombianDocumentTypes: COLOMBIAN_DOCUMENT_TYPES,
  motivos: Motivo.literals,
  countries: COUNTRY_CODES,
  documentPattern: DOCUMENT_NUMBER.source,
  emailMaxLength: Limits.email,
  signerNameMaxLength: SIGNER_NAME_MAX,
  maxDocumentBytes: MAX_DOCUMENT_BYTES
})

const withSecurityHeaders = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, SECURITY_HEADERS)

const isCheckinPath = (url: string) => url.startsWith("/checkin/") || url.startsWith("/api/checkin/")

/** Reads the page and its assets once, at start-up: a missing file fails the start, not a guest's request. */
const loadPage = Effect.sync(() => {
  // A replacer function: the rules hold `$&` (the pattern's `$` before an escaped quote), which a replacement
  // string would expand.
  const html = read("index.html").replace("__CHECKIN_RULES__", () => escapeAttribute(JSON.stringify(clientRules())))
  const assets = new Map(
    Object.entries(ASSET_TYPES).map(([name, contentType]) => {
      const body = read(name)
      const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`
      return [name, { body, contentType, etag }] as const
    })
  )
  return { html, assets }
})

/** `GET /checkin/:token` and `GET /checkin/assets/:file` on the API's router. */
const routeLayer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { html, assets } = yield* loadPage
    const page = withSecurityHeaders(HttpServerResponse.text(html, {
      contentType: "text/html; charset=utf-8",
      // The page is the same for every token, but a shared cache has no business keeping a URL with a token.
      headers: { "cache-control": "no-store", "x-robots-tag": "noindex" }
    }))
    yield* router.get("/checkin/:token", Effect.succeed(page))
    yield* router.get(
      "/checkin/assets/:file",
      Effect.gen(function*() {
        const params = yield* HttpRouter.params
        const request = yield* HttpServerRequest.HttpServerRequest
        const asset = assets.get(params.file ?? "")
        if (asset === undefined) {
          return withSecurityHeaders(HttpServerResponse.unsafeJson(
            toBody("not_found", `no route GET ${request.url.split("?", 1)[0]}`),
            { status: 404 }
          ))
        }
        // Revalidated on every load (`no-cache`), answered 304 while unchanged: a deploy is picked up at once.
        const headers = { "cache-control": "no-cache", etag: asset.etag }
        if (request.headers["if-none-match"] === asset.etag) {
          return withSecurityHeaders(HttpServerResponse.empty({ status: 304, headers }))
        }
        return withSecurityHeaders(HttpServerResponse.text(asset.body, { contentType: asset.contentType, headers }))
      })
    )
  })
)

/**
 * The same headers on every answer under `/api/checkin/` (and `/checkin/`, the error middleware's 404/405
 * included): a pre-response handler runs on the final response, after the API has encoded its typed errors,
 * which a middleware mapping the response would not see. Other paths pay one `startsWith`.
 */
const apiSecurityHeaders = HttpApiBuilder.middleware((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isCheckinPath(request.url)
      ? Effect.zipRight(HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(withSecurityHeaders(response))), app)
      : app)
)

/** The check-in page, its assets and the security headers of everything under `/checkin` and `/api/checkin`. */
export const layer = Layer.mergeAll(routeLayer, apiSecurityHeaders)

/** For `ErrorMiddleware.routesOf`: 405 rather than 404 for another method on these paths. */
export const routes: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: "/checkin/:token" },
  { method: "GET", path: "/checkin/assets/:file" }
]
