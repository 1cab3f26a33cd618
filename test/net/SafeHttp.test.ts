import { HttpClientRequest } from "@effect/platform"
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test"
import { Clock, Context, Effect, Either, Exit, Layer, Option, Tracer } from "effect"
import {
  DEFAULT_MAX_BODY_BYTES,
  type ExecuteOptions,
  OutboundFailed,
  type PlainRequest,
  ResolveFailed,
  Resolver,
  SafeHttp,
  type SafeHttpOptions,
  type SendOptions
} from "../../src/net/SafeHttp.ts"

// ---------------------------------------------------------------------------------------------------------------
// Real local servers. The TLS fixtures (test/net/fixtures, valid until 2126) are a CA and a certificate for
// photos.example.test signed by it, made with:
//   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca-key.pem -out ca.pem \
//     -days 36500 -subj "/CN=SafeHttp test CA" -addext basicConstraints=critical,CA:TRUE \
//     -addext keyUsage=critical,keyCertSign,cRLSign
//   openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server-key.pem -out server.csr \
//     -subj "/CN=photos.example.test"
//   openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -out server.pem -days 36500 -extfile <(printf \
//     "subjectAltName=DNS:photos.example.test\nextendedKeyUsage=serverAuth\n")      (ca-key.pem then deleted)
// ---------------------------------------------------------------------------------------------------------------

const fixture = (name: string) => Bun.file(`${import.meta.dir}/fixtures/${name}`)

interface Seen {
  readonly method: string
  readonly path: string
  readonly host: string | null
  readonly headers: Record<string, string>
  readonly body: string
}

const seen: Array<Seen> = []
const ca = await fixture("ca.pem").text()

const record = async (request: Request) => {
  const url = new URL(request.url)
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  seen.push({
    method: request.method,
    path: url.pathname + url.search,
    host: request.headers.get("host"),
    headers,
    body: await request.text()
  })
  return url
}

/** An endless body, sent in 64 KiB chunks without a Content-Length, until the client goes away. */
const endless = () => {
  const chunk = new Uint8Array(64 * 1024).fill(120)
  return new ReadableStream<Uint8Array>({ pull: (controller) => controller.enqueue(chunk) })
}

/** `size` bytes in chunks, without a Content-Length. */
const chunked = (size: number) => {
  let left = size
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left <= 0) return controller.close()
      const n = Math.min(left, 256 * 1024)
      left -= n
      controller.enqueue(new Uint8Array(n).fill(121))
    }
  })
}

const route = async (request: Request): Promise<Response> => {
  const url = await record(request)
  switch (url.pathname) {
    case "/redirect":
      return new Response("moved", { status: 302, headers: { location: "/target" } })
    case "/bytes":
      return new Response(new Uint8Array(Number(url.searchParams.get("n"))).fill(120))
    case "/chunked":
      return new Response(chunked(Number(url.searchParams.get("n"))))
    case "/endless":
      return new Response(endless())
    case "/hang":
      return new Promise<Response>(() => {})
    case "/empty":
      return new Response(null, { status: 204 })
    default:
      return Response.json({ ok: true }, { headers: { "X-Receiver": "yes" } })
  }
}

let http: ReturnType<typeof Bun.serve>
let https: ReturnType<typeof Bun.serve>

beforeAll(() => {
  http = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: route })
  https = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: fixture("server.pem"), key: fixture("server-key.pem") },
    fetch: route
  })
})

afterAll(() => {
  http.stop(true)
  https.stop(true)
})

beforeEach(() => {
  seen.length = 0
})

// ---------------------------------------------------------------------------------------------------------------
// Resolvers written for the tests: each counts its calls.
// ---------------------------------------------------------------------------------------------------------------

/** Answers `answers[0]` on the first call, `answers[1]` on the second, … and the last one from then on. */
const rebinding = (...answers: ReadonlyArray<ReadonlyArray<string>>) => {
  const calls: Array<string> = []
  const layer = Layer.succeed(
    Resolver,
    Resolver.of({
      lookup: (hostname) =>
        Effect.sync(() => {
          calls.push(hostname)
          return answers[Math.min(calls.length, answers.length) - 1]!
        })
    })
  )
  return { layer, calls }
}

/** Every name is 127.0.0.1. */
const everythingLocal = () => rebinding(["127.0.0.1"])

const run = <A, E>(
  resolver: Layer.Layer<Resolver>,
  options: SafeHttpOptions,
  program: (http: SafeHttp["Type"]) => Effect.Effect<A, E>
) =>
  Effect.runPromise(
    Effect.flatMap(SafeHttp, program).pipe(Effect.provide(SafeHttp.layer(options).pipe(Layer.provide(resolver))))
  )

/** One `execute`, its outcome as an Either. */
const attempt = (
  resolver: Layer.Layer<Resolver>,
  options: SafeHttpOptions,
  request: HttpClientRequest.HttpClientRequest,
  executeOptions?: ExecuteOptions
) => run(resolver, options, (client) => Effect.either(client.execute(request, executeOptions)))

const strict: SafeHttpOptions = { policy: { allowPrivate: false }, ca }
const dev: SafeHttpOptions = { policy: { allowPrivate: true }, ca }

const failure = <A, E>(result: Either.Either<A, E>): E => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

const outbound = <A, E>(result: Either.Either<A, E>): OutboundFailed => {
  const error = failure(result)
  if (!(error instanceof OutboundFailed)) throw new Error(`expected OutboundFailed, got ${String(error)}`)
  return error
}

const text = (body: Uint8Array) => new TextDecoder().decode(body)

// ---------------------------------------------------------------------------------------------------------------

describe("DNS rebinding: resolve once, check, connect to the checked address", () => {
  test("allowPrivate=false: a name resolving to 127.0.0.1 is refused and nothing is sent", async () => {
    const resolver = everythingLocal()
    // The TLS receiver would accept this request (see the TLS tests): only the check stands in the way.
    const result = await attempt(
      resolver.layer,
      strict,
      HttpClientRequest.post(`https://photos.example.test:${https.port}/hook`)
    )
    const error = failure(result)
    expect(error._tag).toBe("UnsafeUrl")
    expect(error.message).toContain("photos.example.test resolves to 127.0.0.1; the address 127.0.0.1 is loopback")
    expect(resolver.calls).toEqual(["photos.example.test"])
    expect(seen).toEqual([])
  })

  test("allowPrivate=false: one private address among public ones is enough to refuse", async () => {
    const resolver = rebinding(["93.184.216.34", "2606:4700::1111", "::ffff:10.0.0.7"])
    const error = failure(await attempt(resolver.layer, strict, HttpClientRequest.get("https://mixed.example.test/x")))
    expect(error._tag).toBe("UnsafeUrl")
    expect(error.message).toContain("IPv4-mapped address of 10.0.0.7, which is private")
    expect(seen).toEqual([])
  })

  test("allowPrivate=false: every attempt resolves again, exactly once, and checks the new answer", async () => {
    const resolver = rebinding(["10.0.0.5"], ["169.254.169.254"], ["fd00:ec2::254"])
    const request = HttpClientRequest.get("https://rebind.example.test/hook")
    const reasons = await run(resolver.layer, strict, (client) =>
      Effect.forEach([1, 2, 3], () =>
        client.execute(request).pipe(
          Effect.flip,
          Effect.map((error) => error.message)
        )))
    expect(reasons[0]).toContain("10.0.0.5 is private")
    expect(reasons[1]).toContain("169.254.169.254 is the cloud metadata endpoint")
    expect(reasons[2]).toContain("fd00:ec2::254 is the AWS metadata endpoint")
    expect(resolver.calls).toEqual(["rebind.example.test", "rebind.example.test", "rebind.example.test"])
    expect(seen).toEqual([])
  })

  test("allowPrivate=true: the request goes to the address of the one resolution, with the original Host", async () => {
    // 127.0.0.1 first, then an unreachable documentation address: if anything resolved the name a second time
    // for the connection (or fetch resolved it itself: the name does not exist), the request would not arrive.
    const resolver = rebinding(["127.0.0.1"], ["203.0.113.9"])
    const request = HttpClientRequest.post(`http://rebind.example.test:${http.port}/hook`, {
      urlParams: { attempt: "1" },
      headers: { "x-signature": "t=1,v1=abc", host: "evil.example" }
    }).pipe(HttpClientRequest.bodyText(`{"event":"ping"}`, "application/json"))

    const response = Either.getOrThrow(await attempt(resolver.layer, dev, request))
    expect(response.status).toBe(200)
    expect(response.address).toBe("127.0.0.1")
    expect(response.headers["x-receiver"]).toBe("yes")
    expect(JSON.parse(text(response.body))).toEqual({ ok: true })
    expect(resolver.calls).toEqual(["rebind.example.test"])
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({
      method: "POST",
      path: "/hook?attempt=1",
      host: `rebind.example.test:${http.port}`, // ours, not the caller's "evil.example"
      body: `{"event":"ping"}`
    })
    expect(seen[0]!.headers["x-signature"]).toBe("t=1,v1=abc")
    expect(seen[0]!.headers["traceparent"]).toBeUndefined() // no trace headers to partners
  })

  test("allowPrivate=true: the next attempt resolves again and uses that answer, not the first", async () => {
    const resolver = rebinding(["127.0.0.1"], ["203.0.113.9"])
    const request = HttpClientRequest.get(`http://rebind.example.test:${http.port}/hook`)
    const [first, second] = await run(resolver.layer, dev, (client) =>
      Effect.all([
        Effect.either(client.execute(request)),
        Effect.either(client.execute(request, { timeout: "300 millis" }))
      ]))
    expect(Either.isRight(first!)).toBe(true)
    expect(["timeout", "connect"]).toContain(outbound(second!).kind)
    expect(resolver.calls).toHaveLength(2)
    expect(seen).toHaveLength(1)
  })

  test("an IP-literal URL is never resolved", async () => {
    const resolver = everythingLocal()
    const response = Either.getOrThrow(
      await attempt(resolver.layer, dev, HttpClientRequest.get(`http://127.0.0.1:${http.port}/x`))
    )
    expect(response.status).toBe(200)
    expect(resolver.calls).toEqual([])
    expect(seen[0]!.host).toBe(`127.0.0.1:${http.port}`)
  })

  test("an address that refuses the connection is skipped for the next checked one", async () => {
    // The server listens on 127.0.0.1 only, so ::1 refuses (or is unavailable without IPv6).
    const resolver = rebinding(["::1", "127.0.0.1"])
    const response = Either.getOrThrow(
      await attempt(resolver.layer, dev, HttpClientRequest.get(`http://two.example.test:${http.port}/x`))
    )
    expect(response.address).toBe("127.0.0.1")
    expect(resolver.calls).toHaveLength(1)
    expect(seen).toHaveLength(1)
  })

  test("check() applies the layer's policy without any I/O", async () => {
    const resolver = everythingLocal()
    const [refused, accepted] = await run(resolver.layer, strict, (client) =>
      Effect.succeed([client.check("http://example.com/hook"), client.check("https://example.com/hook")] as const))
    expect(Either.isLeft(refused) && refused.left.reason).toBe("only https URLs are accepted")
    expect(Either.isRight(accepted)).toBe(true)
    expect(resolver.calls).toEqual([])
  })

  test("refused URLs are refused before resolution", async () => {
    const resolver = everythingLocal()
    for (const url of ["https://user:pw@example.com/", "https://localhost/", "https://0x7f.1/", "file:///etc/passwd"]) {
      expect(failure(await attempt(resolver.layer, strict, HttpClientRequest.get(url)))._tag).toBe("UnsafeUrl")
    }
    expect(resolver.calls).toEqual([])
  })
})

describe("TLS to the pinned address, verified against the original name", () => {
  test("the certificate of photos.example.test is verified while connecting to 127.0.0.1", async () => {
    const resolver = everythingLocal()
    const response = Either.getOrThrow(
      await attempt(resolver.layer, dev, HttpClientRequest.get(`https://photos.example.test:${https.port}/photo.jpg`))
    )
    expect(response.status).toBe(200)
    expect(response.address).toBe("127.0.0.1")
    expect(seen).toHaveLength(1)
    expect(seen[0]!.host).toBe(`photos.example.test:${https.port}`)
  })

  test("another name on the same address fails verification, even right after a successful connection", async () => {
    const resolver = everythingLocal()
    const [good, other] = await run(resolver.layer, dev, (client) =>
      Effect.all([
        Effect.either(client.execute(HttpClientRequest.get(`https://photos.example.test:${https.port}/a`))),
        Effect.either(client.execute(HttpClientRequest.get(`https://other.example.test:${https.port}/b`)))
      ]))
    expect(Either.isRight(good!)).toBe(true)
    const error = outbound(other!)
    expect(error.kind).toBe("connect")
    expect(error.message).toContain("TLS certificate of other.example.test")
    expect(seen.map((s) => s.path)).toEqual(["/a"])
  })

  test("without the test CA the certificate is not trusted", async () => {
    const error = outbound(
      await attempt(
        everythingLocal().layer,
        { policy: { allowPrivate: true } },
        HttpClientRequest.get(`https://photos.example.test:${https.port}/x`)
      )
    )
    expect(error.kind).toBe("connect")
    expect(error.message).toContain("could not be verified")
    expect(seen).toEqual([])
  })

  test("an IP-literal https URL is verified against the IP (the certificate names no IP)", async () => {
    const error = outbound(
      await attempt(everythingLocal().layer, dev, HttpClientRequest.get(`https://127.0.0.1:${https.port}/x`))
    )
    expect(error.kind).toBe("connect")
    expect(error.message).toContain("could not be verified")
    expect(seen).toEqual([])
  })
})

describe("answers", () => {
  const local = (path: string) => HttpClientRequest.get(`http://hooks.example.test:${http.port}${path}`)

  test("redirects are not followed: the 302 is the answer and its target is never requested", async () => {
    const response = Either.getOrThrow(await attempt(everythingLocal().layer, dev, local("/redirect")))
    expect(response.status).toBe(302)
    expect(response.headers["location"]).toBe("/target")
    expect(seen.map((s) => s.path)).toEqual(["/redirect"])
  })

  test("a body of exactly the limit is read in full", async () => {
    const response = Either.getOrThrow(
      await attempt(everythingLocal().layer, dev, local("/chunked?n=100000"), { maxBodyBytes: 100_000 })
    )
    expect(response.body.byteLength).toBe(100_000)
    expect(response.body.every((b) => b === 121)).toBe(true)
  })

  test("a declared body over the limit fails with too_large", async () => {
    const error = outbound(await attempt(everythingLocal().layer, dev, local("/bytes?n=1025"), { maxBodyBytes: 1024 }))
    expect(error.kind).toBe("too_large")
  })

  test("a body without Content-Length over the default limit (10 MiB + 1) fails with too_large", async () => {
    const request = local(`/chunked?n=${DEFAULT_MAX_BODY_BYTES + 1}`)
    const error = outbound(await attempt(everythingLocal().layer, dev, request))
    expect(error.kind).toBe("too_large")
  })

  test("an endless body stops as soon as the limit is passed (it is never buffered whole)", async () => {
    const started = Date.now()
    const error = outbound(
      await attempt(everythingLocal().layer, dev, local("/endless"), { maxBodyBytes: 1_000_000, timeout: "20 seconds" })
    )
    expect(error.kind).toBe("too_large")
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  test("an answer without a body", async () => {
    const response = Either.getOrThrow(await attempt(everythingLocal().layer, dev, local("/empty")))
    expect(response.status).toBe(204)
    expect(response.body.byteLength).toBe(0)
  })

  test("a server that never answers: timeout", async () => {
    const started = Date.now()
    const error = outbound(await attempt(everythingLocal().layer, dev, local("/hang"), { timeout: "300 millis" }))
    expect(error.kind).toBe("timeout")
    expect(error.message).toContain("hooks.example.test")
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  test("a closed port: connect", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() })
    const port = closed.port
    closed.stop(true)
    const error = outbound(
      await attempt(everythingLocal().layer, dev, HttpClientRequest.get(`http://hooks.example.test:${port}/x`))
    )
    expect(error.kind).toBe("connect")
    expect(error.message).toContain("ECONNREFUSED")
  })
})

describe("resolution failures", () => {
  const failing = Layer.succeed(
    Resolver,
    Resolver.of({ lookup: (hostname) => Effect.fail(new ResolveFailed({ hostname, reason: "ENOTFOUND" })) })
  )

  test("the resolver fails: resolve", async () => {
    const error = outbound(await attempt(failing, strict, HttpClientRequest.get("https://nowhere.example.test/x")))
    expect(error.kind).toBe("resolve")
    expect(error.message).toBe("could not resolve nowhere.example.test: ENOTFOUND")
  })

  test("no address at all: resolve", async () => {
    const request = HttpClientRequest.get("https://empty.example.test/")
    const error = outbound(await attempt(rebinding([]).layer, strict, request))
    expect(error.kind).toBe("resolve")
  })

  test("an answer that is not an IP address: refused (strict) or resolve (allowPrivate)", async () => {
    const resolver = rebinding(["fe80::1%eth0"])
    const refused = failure(await attempt(resolver.layer, strict, HttpClientRequest.get("https://zone.example.test/")))
    expect(refused._tag).toBe("UnsafeUrl")
    expect(refused.message).toContain("not a valid IP address")
    const request = HttpClientRequest.get(`http://zone.example.test:${http.port}/`)
    expect(outbound(await attempt(resolver.layer, dev, request)).kind).toBe("resolve")
  })

  test("the system resolver: a name under .invalid (RFC 6761) does not resolve", async () => {
    const error = outbound(
      await attempt(Resolver.system, strict, HttpClientRequest.get("https://no-such-host.invalid/x"), {
        timeout: "20 seconds"
      })
    )
    expect(error.kind).toBe("resolve")
    expect(error.message).toContain("no-such-host.invalid")
  })

  test("the system resolver answers localhost from /etc/hosts", async () => {
    const response = Either.getOrThrow(
      await attempt(Resolver.system, dev, HttpClientRequest.get(`http://localhost:${http.port}/x`))
    )
    expect(["127.0.0.1", "::1"]).toContain(response.address)
  })
})

describe("send: the promise form makes the same attempt (the webhook delivery loop's)", () => {
  /** One `send` under a layer built for it. */
  const send = (
    resolver: Layer.Layer<Resolver>,
    options: SafeHttpOptions,
    request: PlainRequest,
    sendOptions?: SendOptions
  ) => run(resolver, options, (client) => Effect.promise(() => client.send(request, sendOptions)))

  const post = (url: string): PlainRequest => ({
    method: "POST",
    url,
    headers: { "content-type": "application/json", "x-signature": "t=1,v1=abc", host: "evil.example" },
    body: `{"event":"ping"}`
  })

  test("pinned to the one resolution, with the original Host, the caller's headers and body", async () => {
    const resolver = rebinding(["127.0.0.1"], ["203.0.113.9"])
    const response = Either.getOrThrow(
      await send(resolver.layer, dev, post(`http://rebind.example.test:${http.port}/hook?attempt=1`))
    )
    expect(response.status).toBe(200)
    expect(response.address).toBe("127.0.0.1")
    expect(response.headers["x-receiver"]).toBe("yes")
    expect(resolver.calls).toEqual(["rebind.example.test"])
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({
      method: "POST",
      path: "/hook?attempt=1",
      host: `rebind.example.test:${http.port}`,
      body: `{"event":"ping"}`
    })
    expect(seen[0]!.headers["x-signature"]).toBe("t=1,v1=abc")
    expect(seen[0]!.headers["content-type"]).toBe("application/json")
    expect(seen[0]!.headers["traceparent"]).toBeUndefined()
  })

  test("refused under the policy: by the URL, or by an address of the name; nothing is sent", async () => {
    const byUrl = failure(await send(everythingLocal().layer, strict, post(`http://127.0.0.1:${http.port}/hook`)))
    expect(byUrl._tag).toBe("UnsafeUrl")
    const byAddress = failure(await send(everythingLocal().layer, strict, post("https://rebind.example.test/hook")))
    expect(byAddress._tag).toBe("UnsafeUrl")
    expect(byAddress.message).toContain("resolves to 127.0.0.1")
    expect(seen).toEqual([])
  })

  test("TLS is verified against the original name while connecting to the pinned address", async () => {
    const good = await send(everythingLocal().layer, dev, post(`https://photos.example.test:${https.port}/a`))
    expect(Either.getOrThrow(good).status).toBe(200)
    const other = outbound(await send(everythingLocal().layer, dev, post(`https://other.example.test:${https.port}/b`)))
    expect(other.kind).toBe("connect")
    expect(other.message).toContain("TLS certificate of other.example.test")
    expect(seen.map((s) => s.path)).toEqual(["/a"])
  })

  test("answers and failures as execute gives them: a redirect, too_large, timeout, connect", async () => {
    const local = (path: string) => post(`http://hooks.example.test:${http.port}${path}`)
    const layer = everythingLocal().layer
    expect(Either.getOrThrow(await send(layer, dev, local("/redirect"))).status).toBe(302)
    expect(outbound(await send(layer, dev, local("/bytes?n=2000"), { maxBodyBytes: 1000 })).kind).toBe("too_large")
    const timeout = outbound(await send(layer, dev, local("/hang"), { timeout: "300 millis" }))
    expect(timeout.kind).toBe("timeout")
    expect(timeout.message).toBe("no complete answer from hooks.example.test within 300ms")
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() })
    const port = closed.port
    closed.stop(true)
    expect(outbound(await send(layer, dev, post(`http://127.0.0.1:${port}/x`))).kind).toBe("connect")
    expect(seen.map((s) => s.path)).toEqual(["/redirect", "/bytes?n=2000", "/hang"])
  })

  test("an aborted signal rejects the promise instead of answering a failure", async () => {
    const stop = new AbortController()
    const pending = send(everythingLocal().layer, dev, post(`http://hooks.example.test:${http.port}/hang`), {
      signal: stop.signal
    })
    await Bun.sleep(100)
    stop.abort()
    expect(await pending.then(() => "answered", () => "rejected")).toBe("rejected")
  })

  test("with a trace: one http.client span under the given parent, attributes as execute sets them", async () => {
    const spans: Array<Tracer.Span> = []
    const native = Effect.runSync(Effect.tracer)
    const recording = Tracer.make({
      span: (...args) => {
        const span = native.span(...args)
        spans.push(span)
        return span
      },
      context: native.context
    })
    const parent = native.span("parent", Option.none(), Context.empty(), [], 0n, "internal")
    const trace = {
      tracer: recording,
      clock: Clock.make(),
      parent,
      redactedNames: ["x-signature"]
    }
    const ok = await send(everythingLocal().layer, dev, post(`http://hooks.example.test:${http.port}/hook`), { trace })
    expect(Either.getOrThrow(ok).status).toBe(200)
    const failed = await send(everythingLocal().layer, dev, post(`http://hooks.example.test:${http.port}/hang`), {
      trace,
      timeout: "200 millis"
    })
    expect(outbound(failed).kind).toBe("timeout")
    expect(spans.map((span) => span.name)).toEqual(["http.client POST", "http.client POST"])
    const [first, second] = spans
    expect(Option.getOrThrow(first!.parent).spanId).toBe(parent.spanId)
    expect(first!.kind).toBe("client")
    expect(first!.attributes.get("http.response.status_code")).toBe(200)
    expect(first!.attributes.get("url.full")).toBe(`http://hooks.example.test:${http.port}/hook`)
    expect(first!.attributes.get("http.request.header.x-signature")).toBe("<redacted>")
    expect(first!.attributes.get("http.response.header.x-receiver")).toBe("yes")
    expect(first!.status._tag).toBe("Ended")
    expect(second!.status._tag === "Ended" && Exit.isFailure(second!.status.exit)).toBe(true)
    // Aborted by the caller: the promise rejects and the span still ends, interrupted.
    spans.length = 0
    const stop = new AbortController()
    const aborted = send(everythingLocal().layer, dev, post(`http://hooks.example.test:${http.port}/hang`), {
      trace,
      signal: stop.signal
    })
    await Bun.sleep(100)
    stop.abort()
    expect(await aborted.then(() => "answered", () => "rejected")).toBe("rejected")
    expect(spans).toHaveLength(1)
    const cut = spans[0]!.status
    expect(cut._tag === "Ended" && Exit.isInterrupted(cut.exit)).toBe(true)
    // Without a trace, no span is made.
    spans.length = 0
    await send(everythingLocal().layer, dev, post(`http://hooks.example.test:${http.port}/hook`))
    expect(spans).toEqual([])
  })
})
