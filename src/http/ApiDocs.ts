import { HttpApi, HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, Schema } from "effect"
import { createRequire } from "node:module"
import { toBody } from "../shared/errors.ts"
import * as CompressedAsset from "./CompressedAsset.ts"

/**
 * The OpenAPI document and the API reference page (design §1), served by this process alone: the page is a small
 * HTML shell, the Scalar script a separate asset under a content-hashed name (cached for good by the browser),
 * the document fetched by the page from its own URL. Everything is compressed once (CompressedAsset): the page and
 * the document at start-up, the script when it is first asked for.
 *
 * Why not `HttpApiScalar.layer`: it inlines the 3.3 MB Scalar bundle and the document into the page on every
 * load, uncompressed, and Scalar then fetches its fonts from fonts.scalar.com — the page broke offline and behind
 * strict egress rules, and told a third party who read the docs (issue 14).
 */

const JSON_TYPE = "application/json"
const HTML_TYPE = "text/html; charset=utf-8"
const JAVASCRIPT_TYPE = "text/javascript; charset=utf-8"

/** A document is regenerated at each deploy: revalidated on every load, 304 while unchanged. */
const REVALIDATE = "no-cache"
/** A content-hashed name never changes its body. */
const IMMUTABLE = "public, max-age=31536000, immutable"

/**
 * The Scalar bundle `HttpApiScalar.layer` inlines (@scalar/api-reference's standalone build), from the installed
 * @effect/platform, so the page runs exactly the version the platform was released with. It is an internal module
 * of the package (not in its `exports`), hence the path; a platform upgrade that moves it fails the first request
 * for the script, and test/http/docs-page.test.ts with it.
 */
const loadScalarBundle = Effect.promise(async () => {
  const platformPackage = createRequire(import.meta.url).resolve("@effect/platform/package.json")
  const path = new URL("dist/esm/internal/httpApiScalar.js", `file://${platformPackage}`).href
  const module: { readonly javascript?: unknown } = await import(path)
  if (typeof module.javascript !== "string") {
    throw new Error(`the Scalar bundle was not found in ${path} (@effect/platform moved it?)`)
  }
  return module.javascript
})

/**
 * The script's content-hashed name, known without loading the bundle: the bundle is a constant of the installed
 * @effect/platform, so its version names it (an upgrade changes the name, as a new body must).
 */
const scalarFile = (() => {
  const platformPackage = Schema.decodeUnknownSync(Schema.Struct({ version: Schema.String }))(
    createRequire(import.meta.url)("@effect/platform/package.json")
  )
  return `scalar-${CompressedAsset.contentHash(`@effect/platform@${platformPackage.version}`).slice(0, 12)}.js`
})()

/**
 * The bundle (3.3 MB) is loaded and compressed on the first request for it, once per process however many
 * servers the process starts (the test suite starts dozens): most processes never serve it, and loading it at
 * start cost ~60 MB of peak memory and a second of start-up on this machine (docs/performance.md).
 */
const scalarBundle = Effect.runSync(Effect.cached(Effect.flatMap(loadScalarBundle, (javascript) =>
  CompressedAsset.make(javascript, { contentType: JAVASCRIPT_TYPE, cacheControl: IMMUTABLE }))))

/** `GET path`: the API's OpenAPI document (`OpenApi.fromApi`, as `HttpApiBuilder.middlewareOpenApi`), compressed. */
export const openApiLayer = (options: { readonly path: `/${string}` }) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const { api } = yield* HttpApi.Api
      const document = yield* CompressedAsset.lazyHandler(Effect.suspend(() => documentAsset(OpenApi.fromApi(api))))
      yield* router.get(options.path, document)
    })
  )

/** Any OpenAPI document as a compressed JSON answer (the panel's document uses it too). */
export const documentAsset = (document: unknown) =>
  CompressedAsset.make(JSON.stringify(document), { contentType: JSON_TYPE, cacheControl: REVALIDATE })

/**
 * The page's Content-Security-Policy: scripts only from this origin (the page has no inline script: its
 * configuration sits in `data-` attributes), no fonts or images from elsewhere, requests only to this origin and
 * the document's server (`connectSources`, for Scalar's "Test Request"). Scalar compiles a WebAssembly module
 * when it loads the document (`'wasm-unsafe-eval'` allows that and no JavaScript `eval`); styles allow
 * `'unsafe-inline'` because Scalar injects its stylesheet and sets `style` attributes at run time. The one refusal
 * left is zod's `new Function("")` probe inside the bundle, which falls back to its interpreter.
 */
export const contentSecurityPolicy = (connectSources: ReadonlyArray<string>) =>
  [
    "default-src 'none'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src ${["'self'", ...connectSources].join(" ")}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "\"": "&quot;",
  "'": "&#39;",
  "<": "&lt;",
  ">": "&gt;"
}
const escapeHtml = (value: string) => value.replace(/[&"'<>]/g, (c) => ENTITIES[c]!)

export interface ScalarPageOptions {
  /** The page: `/docs`. Its script is served at `${path}/assets/scalar-<hash>.js`. */
  readonly path: `/${string}`
  /** The document the page shows: `/openapi.json`. */
  readonly documentPath: `/${string}`
  /** Origins besides this one that the page may call: the document's `servers` (`PUBLIC_BASE_URL`). */
  readonly connectSources?: ReadonlyArray<string>
}

/** The reference page of `api` (its title and description from the document), compressed. */
const referencePage = (api: HttpApi.Api["Type"]["api"], options: ScalarPageOptions, scriptPath: string) =>
  Effect.suspend(() => {
    const { info } = OpenApi.fromApi(api)
    const configuration = {
      _integration: "html",
      // Inter and JetBrains Mono from fonts.scalar.com otherwise; the system's fonts are fine.
      withDefaultFonts: false,
      // The API client posts usage events to api.scalar.com otherwise.
      telemetry: false,
      // Scalar's developer toolbar ("Deploy on Scalar", "Generate SDKs… $100/mo") shows on localhost otherwise:
      // an integrator running the service locally would take it for ours (issue 26).
      showToolbar: "never",
      // "Test Request" starts with the partner's bearer key selected, the only scheme (its description gives
      // the key's format, `svc_test_…` or `svc_live_…`).
      authentication: { preferredSecurityScheme: "bearer" }
    }
    const description = info.description === undefined
      ? ""
      : `\n    <meta name="description" content="${escapeHtml(info.description)}" />`
    const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(info.title)}</title>${description}
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="icon" href="data:," />
  </head>
  <body>
    <script id="api-reference" type="application/json" data-url="${escapeHtml(options.documentPath)}"
      data-configuration="${escapeHtml(JSON.stringify(configuration))}"></script>
    <script src="${escapeHtml(scriptPath)}"></script>
  </body>
</html>
`
    return CompressedAsset.make(html, {
      contentType: HTML_TYPE,
      cacheControl: REVALIDATE,
      headers: {
        "content-security-policy": contentSecurityPolicy(options.connectSources ?? []),
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer"
      }
    })
  })

/** `GET path` (the reference page) and `GET path/assets/:file` (its script) for the API of `HttpApi.Api`. */
export const scalarLayer = (options: ScalarPageOptions) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const { api } = yield* HttpApi.Api
      const file = scalarFile
      const scriptPath = `${options.path}/assets/${file}`
      // The page names the API's title and description: made on its first request, like the document.
      const page = yield* CompressedAsset.lazyHandler(referencePage(api, options, scriptPath))
      yield* router.get(options.path, page)
      yield* router.get(
        `${options.path}/assets/:file`,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const params = yield* HttpRouter.params
          if (params.file === file) return (yield* scalarBundle).respond(request)
          // An old name after an upgrade, or a guess: the error middleware would call it 405 (GET is routed here).
          return HttpServerResponse.unsafeJson(
            toBody("not_found", `no route GET ${request.url.split("?", 1)[0]}`),
            { status: 404 }
          )
        })
      )
    })
  )

/** For `ErrorMiddleware.routesOf` and the access log: the script's name changes with the bundle. */
export const routes = (options: Pick<ScalarPageOptions, "path" | "documentPath">) => [
  { method: "GET", path: options.documentPath },
  { method: "GET", path: options.path },
  { method: "GET", path: `${options.path}/assets/:file` }
]
