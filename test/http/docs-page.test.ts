import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import * as NodeHttp from "node:http"
import * as Zlib from "node:zlib"
import type { Browser, Request, Response } from "playwright-core"
import { launchBrowser } from "../support/browser.ts"
import { appOnFreshDatabase } from "../support/fixture.ts"

/**
 * Issue 14, item 8: `/docs` is self-contained — its assets come from the service, compressed, and the page makes
 * no request to any other host — and the documents are compressed too.
 */

const f = appOnFreshDatabase()
let browser: Browser

beforeAll(async () => {
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
})

const isLocal = (url: URL) => url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]"

/** Resolves once no request of the page has been in flight for 500 ms; fails after 30 s naming those still open. */
const settled = async (pending: ReadonlyMap<Request, string>) => {
  const deadline = Date.now() + 30_000
  let idleSince = pending.size === 0 ? Date.now() : undefined
  while (idleSince === undefined || Date.now() - idleSince < 500) {
    if (Date.now() > deadline) throw new Error(`requests still open after 30 s: ${[...pending.values()].join(", ")}`)
    await Bun.sleep(50)
    if (pending.size > 0) idleSince = undefined
    else idleSince ??= Date.now()
  }
}

interface Transfer {
  readonly path: string
  readonly status: number
  readonly encoding: string | undefined
  /** Bytes on the wire (the encoded body). */
  readonly wire: number
  /** Bytes of the body once decoded. */
  readonly decoded: number
}

interface Violation {
  readonly directive: string
  readonly blocked: string
}

test("/docs renders in Chromium with every non-local request blocked, no console error, compressed", async () => {
  const context = await browser.newContext()
  const blocked: Array<string> = []
  // Every request the page makes passes here: anything not to this machine is aborted and recorded.
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url())
    if ((url.protocol === "http:" || url.protocol === "https:" || url.protocol === "ws:") && !isLocal(url)) {
      blocked.push(route.request().url())
      return route.abort("blockedbyclient")
    }
    return route.continue()
  })
  const page = await context.newPage()
  await page.addInitScript(() => {
    const violations: Array<{ directive: string; blocked: string }> = []
    ;(window as unknown as { violations: typeof violations }).violations = violations
    document.addEventListener("securitypolicyviolation", (event) =>
      violations.push({ directive: event.violatedDirective, blocked: event.blockedURI }))
  })
  const errors: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`))
  page.on("requestfailed", (request) => errors.push(`failed: ${request.url()} ${request.failure()?.errorText}`))
  const responses: Array<Response> = []
  page.on("response", (response) => void responses.push(response))
  // Requests started and not yet finished or failed, by URL: the page is settled when none is left. (Playwright's
  // "networkidle" also waits on what its own bookkeeping counts; it once hung for 30 s after the page had
  // rendered, with nothing to say which request it waited for.)
  const pending = new Map<Request, string>()
  page.on("request", (request) => void pending.set(request, request.url()))
  page.on("requestfinished", (request) => void pending.delete(request))
  page.on("requestfailed", (request) => void pending.delete(request))

  const response = await page.goto(`${f.app.baseUrl}/docs`, { waitUntil: "networkidle" })
  expect(response?.status()).toBe(200)
  expect(await page.title()).toBe("Partner Reservation Registration Service")
  // Endpoint titles (operation summaries) of the generated document, rendered by Scalar.
  await page.getByText("Map properties to PMS property ids").first().waitFor({ timeout: 15_000 })
  await page.getByText("List the properties of the key's account and environment").first().waitFor({ timeout: 15_000 })
  await settled(pending)
  // Configured for production (issue 26): no Scalar developer toolbar, even on localhost.
  const text = await page.evaluate(() => document.body.innerText)
  expect(text).not.toContain("Deploy on Scalar")
  expect(text).not.toContain("Generate SDK")
  // The partner's bearer key is the selected authentication of "Test Request" (before: "No authentication selected").
  expect(text).not.toContain("No authentication selected")
  const configuration = JSON.parse(
    (await page.locator("#api-reference").getAttribute("data-configuration"))!
  )
  expect(configuration).toMatchObject({ showToolbar: "never", authentication: { preferredSecurityScheme: "bearer" } })

  expect(blocked).toEqual([])
  expect(errors).toEqual([])
  // The page's CSP holds. The one refusal is zod's feature probe inside Scalar (`new Function("")` in a try):
  // refused, zod runs without compiled validators; the page allows no `eval`.
  const violations = await page.evaluate(() => (window as unknown as { violations: Array<Violation> }).violations)
  expect(violations.filter((v) => !(v.directive === "script-src" && v.blocked === "eval"))).toEqual([])

  const transfers: Array<Transfer> = await Promise.all(responses.map(async (r) => ({
    path: new URL(r.url()).pathname,
    status: r.status(),
    encoding: (await r.allHeaders())["content-encoding"],
    wire: (await r.request().sizes()).responseBodySize,
    decoded: (await r.body()).byteLength
  })))
  console.log(
    "docs page transfers:\n" + transfers.map((t) =>
      `  ${t.status} ${t.path} ${t.encoding ?? "identity"} ${t.wire} B on the wire, ${t.decoded} B`
    ).join("\n")
  )
  expect(transfers.map((t) => t.path).sort()).toEqual(
    ["/docs", expect.stringMatching(/^\/docs\/assets\/scalar-[\w-]+\.js$/), "/openapi.json"]
  )
  for (const t of transfers) {
    expect(t.status).toBe(200)
    expect(["br", "gzip"]).toContain(t.encoding ?? "identity")
    expect(t.wire).toBeLessThan(t.decoded * (t.path === "/docs" ? 0.6 : 0.35))
  }
  const script = transfers.find((t) => t.path.startsWith("/docs/assets/"))!
  expect(script.decoded).toBeGreaterThan(3_000_000)
  // Before issue 14 the page alone was 3.4 MB uncompressed.
  expect(transfers.reduce((sum, t) => sum + t.wire, 0)).toBeLessThan(1_000_000)

  // The blocking works: a request to another host from this context is aborted and recorded (from a blank page:
  // on /docs the CSP's connect-src refuses it before it is sent).
  const blank = await context.newPage()
  const probe = await blank.evaluate(() =>
    fetch("https://fonts.scalar.com/inter-latin.woff2").then(() => "sent", () => "blocked")
  )
  expect(probe).toBe("blocked")
  expect(blocked).toEqual(["https://fonts.scalar.com/inter-latin.woff2"])
  await context.close()
}, 60_000)

interface RawResponse {
  readonly status: number
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: Buffer
}

/** A GET whose body is kept as sent (fetch would decode it). */
const rawGet = (path: string, headers: Record<string, string> = {}): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    NodeHttp.get(`${f.app.baseUrl}${path}`, { headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    }).on("error", reject)
  })

const scriptPath = async () => {
  const page = (await rawGet("/docs")).body.toString("utf8")
  return /<script src="(\/docs\/assets\/scalar-[\w-]+\.js)"><\/script>/.exec(page)![1]!
}

describe("compressed once, answered in the encoding the client accepts", () => {
  const paths = ["/docs", "/openapi.json", "/api/panel/openapi.json", "SCRIPT"]
  const resolvePath = async (path: string) => path === "SCRIPT" ? scriptPath() : path

  test("br, gzip or identity by Accept-Encoding; the same body decoded; Vary and an ETag per encoding", async () => {
    for (const p of paths) {
      const path = await resolvePath(p)
      const identity = await rawGet(path, { "accept-encoding": "identity" })
      const gzip = await rawGet(path, { "accept-encoding": "gzip, deflate" })
      const br = await rawGet(path, { "accept-encoding": "gzip, deflate, br, zstd" })
      const none = await rawGet(path)
      for (const r of [identity, gzip, br, none]) {
        expect(r.status).toBe(200)
        expect(r.headers["vary"]).toBe("Accept-Encoding")
        expect(r.headers["etag"]).toMatch(/^"[\w-]+"$/)
      }
      expect([identity.headers["content-encoding"], none.headers["content-encoding"]]).toEqual([undefined, undefined])
      expect(gzip.headers["content-encoding"]).toBe("gzip")
      expect(br.headers["content-encoding"]).toBe("br")
      expect(Zlib.gunzipSync(gzip.body).equals(identity.body)).toBe(true)
      expect(Zlib.brotliDecompressSync(br.body).equals(identity.body)).toBe(true)
      expect(none.body.equals(identity.body)).toBe(true)
      expect(new Set([identity.headers["etag"], gzip.headers["etag"], br.headers["etag"]]).size).toBe(3)
      // The page is a 1 kB shell; the script and the documents shrink to about a quarter or less.
      const ratio = path === "/docs" ? 0.6 : 0.35
      expect(br.body.byteLength).toBeLessThan(identity.body.byteLength * ratio)
      expect(gzip.body.byteLength).toBeLessThan(identity.body.byteLength * ratio)
      expect(Number(br.headers["content-length"])).toBe(br.body.byteLength)
      console.log(`${path}: ${identity.body.byteLength} B, gzip ${gzip.body.byteLength} B, br ${br.body.byteLength} B`)
    }
  })

  test("If-None-Match with the representation's ETag answers 304 without a body", async () => {
    for (const p of paths) {
      const path = await resolvePath(p)
      const first = await rawGet(path, { "accept-encoding": "br" })
      const again = await rawGet(path, { "accept-encoding": "br", "if-none-match": first.headers["etag"]! })
      expect(again.status).toBe(304)
      expect(again.body.byteLength).toBe(0)
      expect(again.headers["etag"]).toBe(first.headers["etag"])
      expect(again.headers["vary"]).toBe("Accept-Encoding")
      // Another encoding is another representation: its ETag does not match.
      const other = await rawGet(path, { "accept-encoding": "gzip", "if-none-match": first.headers["etag"]! })
      expect(other.status).toBe(200)
      expect(other.headers["content-encoding"]).toBe("gzip")
    }
  })

  test("the content types, caching and the page's security headers", async () => {
    const page = await rawGet("/docs")
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(page.headers["cache-control"]).toBe("no-cache")
    const csp = page.headers["content-security-policy"] as string
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval';")
    expect(csp).not.toContain("'unsafe-eval'")
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/)
    expect(csp).toContain("frame-ancestors 'none'")
    expect(page.headers["x-content-type-options"]).toBe("nosniff")
    // No inline script: the configuration sits in data- attributes.
    expect(page.body.toString("utf8")).not.toMatch(/<script(?![^>]*(src=|type="application\/json"))/)

    const script = await rawGet(await scriptPath())
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8")
    // The name changes with the content: the browser keeps it for good.
    expect(script.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
    for (const path of ["/openapi.json", "/api/panel/openapi.json"]) {
      const document = await rawGet(path)
      expect(document.headers["content-type"]).toBe("application/json")
      expect(document.headers["cache-control"]).toBe("no-cache")
      expect(JSON.parse(document.body.toString("utf8")).openapi).toBe("3.1.0")
    }
  })

  test("another script name under /docs/assets/ is 404 not_found; POST /docs is 405", async () => {
    const missing = await rawGet("/docs/assets/scalar-000000000000.js")
    expect(missing.status).toBe(404)
    expect(JSON.parse(missing.body.toString("utf8")).code).toBe("not_found")
    const post = await fetch(`${f.app.baseUrl}/docs`, { method: "POST" })
    expect(post.status).toBe(405)
  })
})
