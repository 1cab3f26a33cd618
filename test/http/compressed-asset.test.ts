import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as Zlib from "node:zlib"
import * as CompressedAsset from "../../src/http/CompressedAsset.ts"

describe("negotiate (RFC 9110 §12.5.3)", () => {
  const cases: ReadonlyArray<readonly [string | undefined, CompressedAsset.Encoding]> = [
    [undefined, "identity"],
    ["", "identity"],
    ["identity", "identity"],
    ["gzip", "gzip"],
    ["x-gzip", "gzip"],
    ["GZIP, Deflate", "gzip"],
    ["gzip, deflate, br, zstd", "br"],
    ["br;q=1.0, gzip;q=0.8, *;q=0.1", "br"],
    ["br;q=0.5, gzip;q=0.8", "gzip"],
    ["br;q=0, gzip", "gzip"],
    ["br;q=0, gzip;q=0", "identity"],
    ["*", "br"],
    ["*;q=0.5, br;q=0", "gzip"],
    ["deflate", "identity"],
    ["gzip;q=0.5, identity", "identity"],
    ["gzip;q=0.001, identity;q=0", "gzip"],
    ["identity;q=0, *;q=0", "identity"], // nothing acceptable: the body as it is rather than a 406
    ["gzip;q=abc", "identity"],
    ["gzip;q=2", "identity"],
    [" br ; q=0.9 , gzip ; q=0.9 ", "br"]
  ]
  for (const [header, expected] of cases) {
    test(`${JSON.stringify(header)} → ${expected}`, () => expect(CompressedAsset.negotiate(header)).toBe(expected))
  }
})

const request = (headers: Record<string, string>) =>
  HttpServerRequest.fromWeb(new Request("http://localhost/x", { headers }))

const bodyOf = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array" ? Buffer.from(response.body.body) : Buffer.alloc(0)

describe("make", () => {
  test("compresses once; every answer has Vary, the cache policy and the extra headers", async () => {
    const text = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ i, name: "Peña Núñez" })) })
    const asset = await Effect.runPromise(
      CompressedAsset.make(text, { contentType: "application/json", cacheControl: "no-cache", headers: { "x-a": "1" } })
    )
    expect(asset.sizes.identity).toBe(Buffer.byteLength(text))
    expect(asset.sizes.br).toBeLessThan(asset.sizes.identity / 4)
    const br = asset.respond(request({ "accept-encoding": "br" }))
    const gzip = asset.respond(request({ "accept-encoding": "gzip" }))
    const plain = asset.respond(request({}))
    expect(Zlib.brotliDecompressSync(bodyOf(br)).toString()).toBe(text)
    expect(Zlib.gunzipSync(bodyOf(gzip)).toString()).toBe(text)
    expect(bodyOf(plain).toString()).toBe(text)
    for (const response of [br, gzip, plain]) {
      expect(response.headers["vary"]).toBe("Accept-Encoding")
      expect(response.headers["cache-control"]).toBe("no-cache")
      expect(response.headers["x-a"]).toBe("1")
    }
    expect([br.headers["content-encoding"], gzip.headers["content-encoding"], plain.headers["content-encoding"]])
      .toEqual(["br", "gzip", undefined])
    expect(plain.headers["etag"]).toBe(asset.etag)
    expect(br.headers["etag"]).toBe(asset.etag.replace(/"$/, "-br\""))
  })

  test("If-None-Match: a list, a weak tag or * match; another representation's tag does not", async () => {
    const asset = await Effect.runPromise(
      CompressedAsset.make("x".repeat(1000), { contentType: "text/plain", cacheControl: "no-cache" })
    )
    const brTag = asset.etag.replace(/"$/, "-br\"")
    const status = (headers: Record<string, string>) => asset.respond(request(headers)).status
    expect(status({ "accept-encoding": "br", "if-none-match": brTag })).toBe(304)
    expect(status({ "accept-encoding": "br", "if-none-match": `"other", W/${brTag}` })).toBe(304)
    expect(status({ "accept-encoding": "br", "if-none-match": "*" })).toBe(304)
    expect(status({ "accept-encoding": "br", "if-none-match": asset.etag })).toBe(200)
    expect(status({ "if-none-match": asset.etag })).toBe(304)
    const notModified = asset.respond(request({ "accept-encoding": "br", "if-none-match": brTag }))
    expect(notModified.headers["content-encoding"]).toBeUndefined()
    expect(notModified.headers["etag"]).toBe(brTag)
  })

  test("a body under 256 bytes is sent as it is, whatever the client accepts", async () => {
    const asset = await Effect.runPromise(
      CompressedAsset.make("{}", { contentType: "application/json", cacheControl: "no-cache" })
    )
    const response = asset.respond(request({ "accept-encoding": "br, gzip" }))
    expect(response.headers["content-encoding"]).toBeUndefined()
    expect(bodyOf(response).toString()).toBe("{}")
    expect(response.headers["etag"]).toBe(asset.etag)
    expect(asset.sizes).toEqual({ identity: 2, gzip: 2, br: 2 })
  })
})

describe("lazyHandler", () => {
  test("makes the asset on the first request only, once, and answers it on every request", async () => {
    let made = 0
    const asset = Effect.suspend(() => {
      made++
      return CompressedAsset.make("{\"hello\":\"world\"}", { contentType: "application/json", cacheControl: "no-cache" })
    })
    const request = HttpServerRequest.fromWeb(new Request("http://localhost/openapi.json"))
    const statuses = await Effect.runPromise(Effect.gen(function*() {
      const handler = yield* CompressedAsset.lazyHandler(asset)
      const before = made
      const answers = yield* Effect.forEach([1, 2, 3], () =>
        Effect.provideService(handler, HttpServerRequest.HttpServerRequest, request), { concurrency: "unbounded" })
      return { before, statuses: answers.map((answer) => answer.status) }
    }))
    expect(statuses).toEqual({ before: 0, statuses: [200, 200, 200] })
    expect(made).toBe(1)
  })
})
