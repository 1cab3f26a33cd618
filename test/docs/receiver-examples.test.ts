import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import type { Subprocess } from "bun"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import ts from "typescript"
import { admin, call, type RunningApp, seedAccount, startApp, tempDir } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { reservationBody } from "../support/guests.ts"
import { followOutput, outputOf, ROOT } from "../support/process.ts"
import { type ReceivedRequest, type Receiver, sign, startReceiver } from "../support/receiver.ts"
import { standardSignature } from "../../src/webhooks/Signature.ts"

/**
 * Issue 14, item 9: the receiver examples of docs/webhooks.md — TypeScript on Bun and on Node.js, Python (standard
 * library) and PHP (php-cli) — each run as a real HTTP receiver behind a real webhook endpoint of the running
 * service: the service's own deliveries are accepted (and recorded delivered), and a real delivery captured and
 * replayed is accepted as received and rejected tampered, signed with a wrong secret, or stale.
 * Nothing is skipped: a missing interpreter fails the test, saying what to install.
 */

const EXAMPLES = NodePath.join(ROOT, "docs/examples")
const BUN = NodePath.join(ROOT, "node_modules/.bin/bun")

/** An interpreter on PATH, or a failure that says how to get it (CI installs php; python3 and node are there). */
const required = (command: string, install: string): string => {
  const path = Bun.which(command)
  if (path === null) {
    throw new Error(`${command} is not installed, and the ${install.split(":")[0]} example must run: ${install}`)
  }
  return path
}

interface ExampleProcess {
  readonly url: string
  /** Everything printed so far, stdout and stderr. */
  readonly output: () => string
  /** Resolves once `text` has been printed after the first `since` characters of the output. */
  readonly printed: (text: string, since?: number) => Promise<void>
  readonly stop: () => Promise<void>
}

/** Starts an example and resolves with its URL once its output matches `ready` (the URL is the first group). */
const startExample = async (
  command: ReadonlyArray<string>,
  env: Record<string, string>,
  ready: RegExp,
  cwd: string = EXAMPLES
): Promise<ExampleProcess> => {
  const child: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn([...command], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe"
  })
  const { text, listeners, ended: pumped } = followOutput(child)
  const waitFor = <A>(find: () => A | undefined, what: string, timeoutMs: number) =>
    new Promise<A>((resolve, reject) => {
      const check = () => {
        const found = find()
        if (found === undefined) return
        done()
        resolve(found)
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`${command.join(" ")}: ${what} not within ${timeoutMs} ms; output:\n${text()}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      listeners.add(check)
      void child.exited.then(async (code) => {
        await pumped
        check()
        if (listeners.has(check)) {
          done()
          reject(new Error(`${command.join(" ")} exited with ${code} before ${what}; output:\n${text()}`))
        }
      })
      check()
    })
  const url = await waitFor(() => ready.exec(text())?.[1], "listening", 15_000)
  return {
    url,
    output: text,
    printed: (wanted, since = 0) =>
      waitFor(() => (text().indexOf(wanted, since) >= 0 ? true : undefined), `printing ${JSON.stringify(wanted)}`, 5_000)
        .then(() => undefined),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      await child.exited
      await pumped
    }
  }
}

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/

/**
 * Node.js 20 cannot run a `.ts` file: the two TypeScript files are compiled one by one by TypeScript's own
 * emitter (what `tsc` writes for them; `.ts` imports become `.js`) and the output runs under `node` as is.
 */
const compileForNode = async (): Promise<string> => {
  const out = await tempDir("receiver-node")
  for (const name of ["verify-webhook", "webhook-receiver"]) {
    const source = await NodeFs.readFile(NodePath.join(EXAMPLES, `${name}.ts`), "utf8")
    const { outputText } = ts.transpileModule(source, {
      fileName: `${name}.ts`,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
        rewriteRelativeImportExtensions: true
      }
    })
    await NodeFs.writeFile(NodePath.join(out, `${name}.js`), outputText)
  }
  await NodeFs.writeFile(NodePath.join(out, "package.json"), JSON.stringify({ type: "module" }))
  return out
}

interface Language {
  readonly name: string
  /** `env`: more of the example's environment (WEBHOOK_SIGNATURE=standard for the Standard Webhooks check). */
  readonly start: (secret: string, env?: Record<string, string>) => Promise<ExampleProcess>
}

let nodeBuild: string
let phpRoot: string

const LANGUAGES: ReadonlyArray<Language> = [
  {
    name: "TypeScript on Bun (docs/examples/webhook-receiver.ts)",
    start: (secret) => startExample([BUN, "webhook-receiver.ts"], { WEBHOOK_SECRET: secret, PORT: "0" }, LISTENING)
  },
  {
    name: "TypeScript on Node.js (docs/examples/webhook-receiver.ts, compiled)",
    start: (secret) =>
      startExample(
        [required("node", "Node.js: apt-get install nodejs"), NodePath.join(nodeBuild, "webhook-receiver.js")],
        { WEBHOOK_SECRET: secret, PORT: "0" },
        LISTENING,
        nodeBuild
      )
  },
  {
    name: "Python, standard library only (docs/examples/verify_webhook.py)",
    start: (secret, env = {}) =>
      startExample(
        [required("python3", "Python: apt-get install python3"), "verify_webhook.py"],
        { WEBHOOK_SECRET: secret, PORT: "0", PYTHONDONTWRITEBYTECODE: "1", ...env },
        LISTENING
      )
  },
  {
    name: "PHP, php-cli's built-in server (docs/examples/webhook-receiver.php)",
    // The built-in server runs the script for every request, as PHP-FPM would; its docroot is an empty folder.
    start: (secret, env = {}) =>
      startExample(
        [
          required("php", "PHP: apt-get install php-cli (.ci/run installs it)"),
          "-S",
          "127.0.0.1:0",
          NodePath.join(EXAMPLES, "webhook-receiver.php")
        ],
        { WEBHOOK_SECRET: secret, ...env },
        /Development Server \((http:\/\/127\.0\.0\.1:\d+)\) started/,
        phpRoot
      )
  }
]

test("the TypeScript example type-checks against Node.js's own types, in syntax Node.js can strip", () => {
  // `erasableSyntaxOnly`: only annotations to erase, nothing to transform, so Node.js ≥ 22.6 runs the files as they
  // are (--experimental-strip-types); `types: ["node"]`: no Bun global is used.
  const files = ["verify-webhook.ts", "webhook-receiver.ts"].map((name) => NodePath.join(EXAMPLES, name))
  const program = ts.createProgram(files, {
    noEmit: true,
    strict: true,
    erasableSyntaxOnly: true,
    verbatimModuleSyntax: true,
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ["node"],
    skipLibCheck: true
  })
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
  expect(diagnostics).toEqual([])
}, 30_000)

/** Runs `command` in docs/examples with `input` on stdin; answers its stdout. */
const run = async (command: ReadonlyArray<string>, input: string, env: Record<string, string> = {}) => {
  const child = Bun.spawn([...command], {
    cwd: EXAMPLES,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: new TextEncoder().encode(input),
    stdout: "pipe",
    stderr: "pipe"
  })
  const { code, stdout, stderr } = await outputOf(child)
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
  return stdout.trim()
}

const PYTHON_CHECK = `
import json, sys
from verify_webhook import Rejected, verify_webhook
v = json.load(sys.stdin)
headers = {"X-Service-Timestamp": v["timestamp"], "X-Service-Signature": v["signature"]}
try:
    print("accepted", verify_webhook(headers, v["body"].encode("utf-8"), v["secret"], now=v["now"])["type"])
except Rejected as rejected:
    print("rejected:", rejected)
`

const PHP_CHECK = `
require 'verify-webhook.php';
$v = json_decode(stream_get_contents(STDIN), true);
$headers = ['X-Service-Timestamp' => $v['timestamp'], 'X-Service-Signature' => $v['signature']];
try {
    $event = verify_webhook($headers, $v['body'], $v['secret'], $v['now']);
    echo 'accepted ', $event['type'], "\n";
} catch (WebhookRejected $rejected) {
    echo 'rejected: ', $rejected->getMessage(), "\n";
}
`

test("the guide's test vector: the Python and PHP functions accept it at its time, and not 301 s later", async () => {
  const guide = await Bun.file(NodePath.join(ROOT, "docs/webhooks.md")).text()
  const vector = guide.slice(guide.indexOf("### A test vector"))
  const field = (name: string) => new RegExp(`^${name}: +(.+)$`, "m").exec(vector)![1]!
  const input = {
    secret: field("secret"),
    timestamp: field("X-Service-Timestamp"),
    body: field("body"),
    signature: field("X-Service-Signature")
  }
  const python = required("python3", "Python: apt-get install python3")
  const php = required("php", "PHP: apt-get install php-cli (.ci/run installs it)")
  for (const [now, verdict] of [[0, "accepted ping"], [301, `rejected: ${REASON.stale}`]] as const) {
    const json = JSON.stringify({ ...input, now: Number(input.timestamp) + now })
    expect(await run([python, "-c", PYTHON_CHECK], json, { PYTHONDONTWRITEBYTECODE: "1" })).toBe(verdict)
    expect(await run([php, "-r", PHP_CHECK], json)).toBe(verdict)
  }
})

let db: TestDatabase
let app: RunningApp
let recorder: Receiver
let account: Awaited<ReturnType<typeof seedAccount>>

beforeAll(async () => {
  recorder = startReceiver()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
  account = await seedAccount(app, "Hotel Receptor")
  await admin(app, (c) => c.SetLimits({ account_id: account.accountId, writes: 10_000, reads: 10_000, tests: 1_000 }))
  nodeBuild = await compileForNode()
  phpRoot = await tempDir("receiver-php")
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  recorder?.stop()
  for (const dir of [nodeBuild, phpRoot]) if (dir !== undefined) await NodeFs.rm(dir, { recursive: true, force: true })
})

const key = () => account.testKey
const property = () => account.testProperties[0]!.property_id as string

/** A reservation with non-ASCII text in what its events carry: the HMAC is over the UTF-8 bytes. */
const createReservation = async () => {
  const body = reservationBody(property(), {
    guest_name: "María José Peña Núñez",
    metadata: { room: "Suite Ñandú 🏨", note: "línea 1\nlínea 2 \"citada\"" }
  })
  const res = await call(app, "POST", "/api/partners/reservations", { key: key(), json: body })
  expect(res.status).toBe(201)
  return body.external_id as string
}

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** The headers of a delivery as the service sends them (the recorder keeps names in lower case). */
const deliveryHeaders = (request: ReceivedRequest): Record<string, string> => {
  const names = [
    "content-type",
    "user-agent",
    "x-service-event-id",
    "x-service-event",
    "x-service-timestamp",
    "x-service-signature"
  ]
  return Object.fromEntries(names.map((name) => [name, request.headers[name]!]))
}

const post = async (url: string, body: string, headers: Record<string, string>) => {
  const res = await fetch(url, { method: "POST", body, headers })
  return { status: res.status, text: await res.text() }
}

const OTHER_SECRET = "whsec_AnotherEndpointsSecret0123456789"

const REASON = {
  mismatch: "signature mismatch",
  stale: "X-Service-Timestamp is more than 5 minutes away from this server's clock",
  noSignature: "missing X-Service-Signature header",
  noTimestamp: "missing X-Service-Timestamp header",
  malformedSignature: "malformed X-Service-Signature header (expected sha256= and 64 hex characters)",
  idMismatch: "X-Service-Event-Id does not match the body id"
} as const

/** An endpoint of the test key for reservation.created, delivering to the recorder at `path` until moved. */
const recordedEndpoint = async (path: string) => {
  const created = await call(app, "POST", "/api/partners/webhooks", {
    key: key(),
    json: { url: `${recorder.url}${path}`, events: ["reservation.created"] }
  })
  expect(created.status).toBe(201)
  return { id: created.body.id as string, secret: created.body.secret as string }
}

/** After a language's tests: its example stopped, its endpoint deactivated. */
const stopAndRemove = async (example: ExampleProcess | undefined, endpoint: { readonly id: string } | undefined) => {
  await example?.stop()
  if (endpoint !== undefined) await call(app, "DELETE", `/api/partners/webhooks/${endpoint.id}`, { key: key() })
}

/** Points the endpoint at a running example. */
const pointAt = async (endpointId: string, example: ExampleProcess) => {
  const moved = await call(app, "PATCH", `/api/partners/webhooks/${endpointId}`, {
    key: key(),
    json: { url: `${example.url}/webhooks/registration` }
  })
  expect(moved.status).toBe(200)
}

for (const language of LANGUAGES) {
  describe(language.name, () => {
    let example: ExampleProcess
    let endpoint: { id: string; secret: string }
    /** A real delivery of the service, recorded byte for byte before the endpoint was pointed at the example. */
    let captured: ReceivedRequest

    beforeAll(async () => {
      const path = `/capture/${LANGUAGES.indexOf(language)}`
      endpoint = await recordedEndpoint(path)
      const externalId = await createReservation()
      const [request] = await recorder.waitFor((r) => r.path === path, 15_000)
      captured = request!
      expect(JSON.parse(captured.body).data.external_id).toBe(externalId)
      expect(captured.headers["content-length"]).toBe(String(Buffer.byteLength(captured.body)))

      example = await language.start(endpoint.secret)
      await pointAt(endpoint.id, example)
    }, 60_000)

    afterAll(() => stopAndRemove(example, endpoint))

    test("the service's own deliveries are accepted: recorded delivered with the example's 204", async () => {
      const externalId = await createReservation()
      let delivery: any
      for (let i = 0; i < 150; i++) {
        const query = `?external_id=${encodeURIComponent(externalId)}`
        const list = await call(app, "GET", `/api/partners/webhooks/deliveries${query}`, { key: key() })
        delivery = list.body.deliveries.find((d: any) => d.endpoint_id === endpoint.id)
        if (delivery !== undefined && delivery.attempts > 0) break
        await Bun.sleep(100)
      }
      expect(delivery).toMatchObject({ event: "reservation.created", status: "delivered", last_http_status: 204 })
      await example.printed(`accepted ${delivery.event_id} reservation.created`)

      const ping = await call(app, "POST", `/api/partners/webhooks/${endpoint.id}/test`, { key: key() })
      expect(ping.body).toMatchObject({ delivered: true, http_status: 204 })
      await example.printed(`accepted ${ping.body.event_id} ping`)
    }, 30_000)

    test("a captured real delivery, replayed byte for byte within the 5 minutes: accepted", async () => {
      const since = example.output().length
      const res = await post(example.url, captured.body, deliveryHeaders(captured))
      expect(res.status).toBe(204)
      await example.printed(`accepted ${captured.headers["x-service-event-id"]} reservation.created`, since)
      // Signed again 299 s ago: still inside the tolerance.
      const timestamp = String(nowSeconds() - 299)
      const older = await post(example.url, captured.body, {
        ...deliveryHeaders(captured),
        "x-service-timestamp": timestamp,
        "x-service-signature": sign(endpoint.secret, timestamp, captured.body)
      })
      expect(older.status).toBe(204)
    })

    test("rejected with 401 and the reason: tampered, wrong secret, stale, malformed or mismatched", async () => {
      const body = captured.body
      const headers = deliveryHeaders(captured)
      const resigned = (secret: string, timestamp: string, text = body) => ({
        ...headers,
        "x-service-timestamp": timestamp,
        "x-service-signature": sign(secret, timestamp, text)
      })
      const now = String(nowSeconds())
      const { "x-service-signature": _signature, ...unsigned } = headers
      const { "x-service-timestamp": _timestamp, ...undated } = headers
      const otherEvent = body.replace(/"id":"evt_[0-9a-f]+"/, "\"id\":\"evt_00000000000000000000000000000000\"")
      const tampered = body.replace("Ñandú", "Nandu")
      expect([otherEvent, tampered]).not.toContain(body)
      const cases: ReadonlyArray<readonly [string, string, Record<string, string>, string]> = [
        ["the body with two letters changed", tampered, headers, REASON.mismatch],
        ["the body re-serialised", JSON.stringify(JSON.parse(body), null, 1), headers, REASON.mismatch],
        ["signed with another endpoint's secret", body, resigned(OTHER_SECRET, now), REASON.mismatch],
        ["signed with the secret without whsec_", body, resigned(endpoint.secret.slice(6), now), REASON.mismatch],
        ["the real signature with the timestamp moved by 1 s", body, {
          ...headers,
          "x-service-timestamp": String(Number(headers["x-service-timestamp"]) + 1)
        }, REASON.mismatch],
        ["signed correctly 301 s ago", body, resigned(endpoint.secret, String(nowSeconds() - 301)), REASON.stale],
        ["signed correctly 10 minutes ago", body, resigned(endpoint.secret, String(nowSeconds() - 600)), REASON.stale],
        ["signed correctly 6 minutes ahead", body, resigned(endpoint.secret, String(nowSeconds() + 360)), REASON.stale],
        ["a timestamp in milliseconds", body, resigned(endpoint.secret, String(Date.now())), REASON.stale],
        ["no signature", body, unsigned, REASON.noSignature],
        ["no timestamp", body, undated, REASON.noTimestamp],
        ["the signature in upper-case hex", body, {
          ...headers,
          "x-service-signature": `sha256=${headers["x-service-signature"]!.slice(7).toUpperCase()}`
        }, REASON.malformedSignature],
        ["another X-Service-Event-Id", otherEvent, resigned(endpoint.secret, now, otherEvent), REASON.idMismatch]
      ]
      for (const [name, text, sent, reason] of cases) {
        const since = example.output().length
        const res = await post(example.url, text, sent)
        expect({ name, status: res.status, text: res.text }).toEqual({ name, status: 401, text: reason })
        await example.printed(`rejected: ${reason}`, since)
      }
      const get = await fetch(example.url)
      expect(get.status).toBe(405)
    })

    test("after a rotation the service's deliveries get 401 until the receiver has the new secret", async () => {
      const rotated = await call(app, "POST", `/api/partners/webhooks/${endpoint.id}/rotate-secret`, { key: key() })
      expect(rotated.status).toBe(200)
      const since = example.output().length
      const refused = await call(app, "POST", `/api/partners/webhooks/${endpoint.id}/test`, { key: key() })
      expect(refused.body).toMatchObject({ delivered: false, http_status: 401 })
      await example.printed("rejected: signature mismatch", since)

      await example.stop()
      example = await language.start(rotated.body.secret)
      endpoint = { ...endpoint, secret: rotated.body.secret }
      await pointAt(endpoint.id, example)
      const accepted = await call(app, "POST", `/api/partners/webhooks/${endpoint.id}/test`, { key: key() })
      expect(accepted.body).toMatchObject({ delivered: true, http_status: 204 })
      await example.printed(`accepted ${accepted.body.event_id} ping`)
    }, 30_000)
  })
}

/** The same receivers checking the Standard Webhooks headers (design §6.14): the TypeScript one with the package. */
const STANDARD: ReadonlyArray<Language> = [
  {
    name: "TypeScript with the standardwebhooks package (docs/examples/standard-webhook-receiver.ts)",
    start: (secret) =>
      startExample([BUN, "standard-webhook-receiver.ts"], { WEBHOOK_SECRET: secret, PORT: "0" }, LISTENING)
  },
  ...LANGUAGES.slice(2).map((language) => ({
    name: `${language.name}, WEBHOOK_SIGNATURE=standard`,
    start: (secret: string) => language.start(secret, { WEBHOOK_SIGNATURE: "standard" })
  }))
]

for (const language of STANDARD) {
  describe(`Standard Webhooks: ${language.name}`, () => {
    let example: ExampleProcess
    let endpoint: { id: string; secret: string }

    beforeAll(async () => {
      endpoint = await recordedEndpoint(`/standard/${STANDARD.indexOf(language)}`)
      example = await language.start(endpoint.secret)
      await pointAt(endpoint.id, example)
    }, 60_000)

    afterAll(() => stopAndRemove(example, endpoint))

    test("the service's ping is accepted; the same delivery with another secret's signature or a changed body is not", async () => {
      const ping = await call(app, "POST", `/api/partners/webhooks/${endpoint.id}/test`, { key: key() })
      expect(ping.body).toMatchObject({ delivered: true, http_status: 204 })
      await example.printed(`accepted ${ping.body.event_id} ping`)

      const body = JSON.stringify({ id: ping.body.event_id, type: "ping", data: {} })
      const id = ping.body.event_id as string
      const timestamp = String(nowSeconds())
      const signed = (secret: string, text = body) => ({
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": timestamp,
        "webhook-signature": standardSignature(secret, id, Number(timestamp), text)
      })
      expect((await post(example.url, body, signed(endpoint.secret))).status).toBe(204)
      expect((await post(example.url, body, signed(OTHER_SECRET))).status).toBe(401)
      expect((await post(example.url, body.replace("ping", "pong"), signed(endpoint.secret))).status).toBe(401)
      const stale = String(nowSeconds() - 600)
      expect((await post(example.url, body, {
        ...signed(endpoint.secret),
        "webhook-timestamp": stale,
        "webhook-signature": standardSignature(endpoint.secret, id, Number(stale), body)
      })).status).toBe(401)
    }, 30_000)
  })
}
