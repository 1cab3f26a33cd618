/**
 * A webhook receiver for Node.js and Bun: `node:http` and ./verify-webhook.ts, nothing else. The test suite runs
 * this file against real deliveries under both (test/docs/receiver-examples.test.ts).
 *
 *     WEBHOOK_SECRET=whsec_… PORT=8000 bun webhook-receiver.ts
 *     WEBHOOK_SECRET=whsec_… PORT=8000 node --experimental-strip-types webhook-receiver.ts   # Node.js 22.6 or later
 *
 * On Node.js 20, compile both files as you compile the rest of your TypeScript (`tsc` with
 * `"rewriteRelativeImportExtensions": true`, or your bundler) and run the output with `node`.
 *
 * It answers 204 to an authentic event and 401 to anything else, and prints one line per request. PORT=0 picks
 * a free port; the first line printed says which.
 */
import { createServer } from "node:http"
import { verifyWebhook } from "./verify-webhook.ts"

const secret = process.env.WEBHOOK_SECRET ?? ""
if (!secret.startsWith("whsec_")) {
  console.error("set WEBHOOK_SECRET to the endpoint's secret (whsec_…), as POST /api/partners/webhooks returned it")
  process.exit(2)
}

const server = createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end()
    return
  }
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const rawBody = Buffer.concat(chunks).toString("utf8") // the raw body: no JSON parser before this point
    const result = verifyWebhook(req.headers, rawBody, secret)
    if (!result.ok) {
      console.log(`rejected: ${result.reason}`)
      res.writeHead(401, { "content-type": "text/plain; charset=utf-8" }).end(result.reason)
      return
    }
    console.log(`accepted ${result.event.id} ${result.event.type}`)
    // Store the event here, deduplicated by result.event.id, and process it after answering (§4, §7).
    res.writeHead(204).end()
  })
})

const host = process.env.HOST ?? "127.0.0.1"
server.listen(Number(process.env.PORT ?? 8000), host, () => {
  const address = server.address()
  console.log(`listening on http://${host}:${typeof address === "object" && address !== null ? address.port : ""}`)
})
