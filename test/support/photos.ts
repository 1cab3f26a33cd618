/** Small but valid-looking documents: only their leading bytes (magic numbers) matter to the service. */
export const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9])
export const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52])
export const PDF = new TextEncoder().encode("%PDF-1.7\n%âãÏÓ\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")

export interface PhotoServer {
  readonly url: string
  /** Paths requested so far, in order (each attempt counts). */
  readonly requests: Array<string>
  /** Serve `body` (or answer `status`) at `path`; `times` limits how often, after which `then` applies. */
  readonly route: (path: string, answer: PhotoAnswer) => void
  readonly stop: () => void
}

export type PhotoAnswer =
  | { readonly body: Uint8Array | string; readonly status?: number; readonly headers?: Record<string, string> }
  | { readonly status: number; readonly headers?: Record<string, string> }
  | { readonly sequence: ReadonlyArray<PhotoAnswer> }
  | { readonly hang: true }

/**
 * A real HTTP server standing in for a partner's file host: answers per path as told, records every request,
 * can fail on demand (status codes, a sequence of answers for retries, or never answering).
 */
export const startPhotoServer = (): PhotoServer => {
  const requests: Array<string> = []
  const routes = new Map<string, PhotoAnswer>()
  const served = new Map<string, number>()
  const respond = (answer: PhotoAnswer, path: string): Response | Promise<Response> => {
    if ("sequence" in answer) {
      const index = served.get(path) ?? 0
      served.set(path, index + 1)
      return respond(answer.sequence[Math.min(index, answer.sequence.length - 1)]!, `${path}#${index}`)
    }
    if ("hang" in answer) return new Promise<Response>(() => {})
    const body = "body" in answer ? answer.body as BodyInit : null
    return new Response(body, { status: answer.status ?? 200, headers: answer.headers ?? {} })
  }
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request) => {
      const path = new URL(request.url).pathname
      requests.push(path)
      const answer = routes.get(path)
      return answer === undefined ? new Response("not found", { status: 404 }) : respond(answer, path)
    }
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    route: (path, answer) => void routes.set(path, answer),
    stop: () => void server.stop(true)
  }
}
