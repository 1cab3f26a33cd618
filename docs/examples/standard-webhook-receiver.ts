/**
 * A webhook receiver that verifies the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) with the official `standardwebhooks` package (npm install standardwebhooks), which every
 * delivery carries beside the spec's X-Service-* headers. The test suite runs it against real deliveries
 * (test/docs/receiver-examples.test.ts).
 *
 *     WEBHOOK_SECRET=whsec_… PORT=8000 bun standard-webhook-receiver.ts
 *
 * The package reads the secret's part after `whsec_` as standard base64, the form of every secret issued since
 * 2026-11-28. An older secret (base64url) is signed the same way with the bytes it encodes: rotate it
 * (POST /api/partners/webhooks/{id}/rotate-secret) to get one the package reads as is.
 *
 * It answers 204 to an authentic event and 401 to anything else, and prints one line per request. PORT=0 picks
 * a free port; the first line printed says which.
 */
import { createServer } from "node:http"
import { Webhook } from "standardwebhooks"

const secret = process.env.WEBHOOK_SECRET ?? ""
if (!secret.startsWith("whsec_")) {
  console.error("set WEBHOOK_SECRET to the endpoint's secret (whsec_…), as POST /api/partners/webhooks returned it")
  process.exit(2)
}
const webhook = new Webhook(secret)

const server = createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end()
    return
  }
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const rawBody = Buffer.concat(chunks).toString("utf8") // the raw body: no JSON parser before this point
    let event: { readonly id: string; readonly type: string }
    try {
      // Checks the signature and that webhook-timestamp is within 5 minutes of this clock; answers the parsed body.
      event = webhook.verify(rawBody, {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? "")
      }) as { readonly id: string; readonly type: string }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      console.log(`rejected: ${reason}`)
      res.writeHead(401, { "content-type": "text/plain; charset=utf-8" }).end(reason)
      return
    }
    console.log(`accepted ${event.id} ${event.type}`)
    // Store the event here, deduplicated by event.id (equal to webhook-id), and process it after answering.
    res.writeHead(204).end()
  })
})

const host = process.env.HOST ?? "127.0.0.1"
server.listen(Number(process.env.PORT ?? 8000), host, () => {
  const address = server.address()
  console.log(`listening on http://${host}:${typeof address === "object" && address !== null ? address.port : ""}`)
})
