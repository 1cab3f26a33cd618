import * as Http from "node:http"

/**
 * An HTTP proxy in front of one fake authority (the fake TRA or the fake SIRE gateway), for the model-based test:
 * it decides per request — by a key the test derives from the request (the guest's document for the TRA, the
 * hotel code for SIRE) — whether the authority is up, down, or loses its answer, and it logs every request with
 * what became of it, so the model knows what the authority holds or may hold:
 *
 * - `up`: forwarded; the fake's answer is relayed.
 * - `5xx`: the authority answers 503 without looking at the request (nothing registered; the service cannot know
 *   that, so it may hold it).
 * - `drop`: the request is read, not forwarded, and the connection is closed without an answer (an outage after
 *   receipt: nothing registered, outcome unknown to the service).
 * - `lost`: forwarded — the fake registers what it accepts —, then the connection is closed before the answer
 *   reaches the service (the "answer lost after receipt" case).
 * - `refuse`: 403 without forwarding (credentials refused: nothing registered, and the service knows it).
 * - `reject`: a definite refusal of the content without forwarding — the TRA's 400 on the document, the SIRE
 *   gateway's 200 listing every line as invalid (nothing registered, and the service knows it).
 */
export type AuthorityMode = "up" | "5xx" | "drop" | "lost" | "refuse" | "reject"

export interface ProxiedRequest {
  /** The model's run counter when the request arrived (set by the test before each run). */
  readonly epoch: number
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly mode: AuthorityMode
  /** The fake's status and body, when the request was forwarded. */
  fakeStatus?: number
  fakeBody?: string
  /** Whether an answer reached the service. */
  delivered: boolean
}

export interface AuthorityProxy {
  readonly url: string
  readonly log: Array<ProxiedRequest>
  epoch: number
  /** Decides the mode of a request from its path, headers and body. */
  modeFor: (request: { readonly path: string; readonly headers: Readonly<Record<string, string>>; readonly body: string }) => AuthorityMode
  readonly stop: () => Promise<void>
}

export const startAuthorityProxy = async (target: string): Promise<AuthorityProxy> => {
  const targetUrl = new URL(target)
  const sockets = new Set<import("node:net").Socket>()
  const proxy: AuthorityProxy = {
    url: "",
    log: [],
    epoch: 0,
    modeFor: () => "up",
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers[name] = value
      }
      const path = new URL(req.url ?? "/", "http://proxy").pathname
      const mode = proxy.modeFor({ path, headers, body })
      const record: ProxiedRequest = { epoch: proxy.epoch, path, headers, body, mode, delivered: false }
      proxy.log.push(record)
      if (mode === "drop") return void req.socket.destroy()
      if (mode === "reject") {
        const lines = body.split("\r\n").filter((line) => line !== "").length
        const answer = path.endsWith("/one/") || path.endsWith("/two/")
          ? { status: 400, body: { numero_identificacion: ["Documento inválido (model test)."] } }
          : {
            status: 200,
            body: {
              processed: lines,
              valid: 0,
              invalid: lines,
              errors: Array.from({ length: lines }, (_, index) => ({ line: index + 1, message: "rejected by the model test" }))
            }
          }
        res.writeHead(answer.status, { "content-type": "application/json" })
        res.end(JSON.stringify(answer.body))
        record.delivered = true
        return
      }
      if (mode === "5xx" || mode === "refuse") {
        const status = mode === "5xx" ? 503 : 403
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify({ detail: mode === "5xx" ? "service unavailable" : "credentials refused" }))
        record.delivered = true
        return
      }
      try {
        const forwarded = { ...headers }
        delete forwarded["content-length"]
        delete forwarded["host"]
        delete forwarded["connection"]
        const answer = await fetch(new URL(path, targetUrl), { method: req.method ?? "POST", headers: forwarded, body })
        record.fakeStatus = answer.status
        record.fakeBody = await answer.text()
        if (mode === "lost") return void req.socket.destroy()
        res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" })
        res.end(record.fakeBody)
        record.delivered = true
      } catch {
        req.socket.destroy()
      }
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as { port: number }).port
  ;(proxy as { url: string }).url = `http://127.0.0.1:${port}${targetUrl.pathname === "/" ? "" : targetUrl.pathname}`
  return proxy
}
