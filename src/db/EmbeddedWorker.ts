/**
 * The embedded database's thread: PGlite and the pglite-socket server that the `pg` pool of Database.ts connects
 * to, run in a worker thread of the service's process (docs/performance.md, "Restart"). On the main thread,
 * compiling PGlite's WebAssembly, loading its modules and starting PostgreSQL took ~0.5 s of a restart in series
 * with evaluating the service's own modules and building its layers; here they run beside them, on the other
 * core. The worker starts with the process (EmbeddedWarmup.ts) and only compiles and loads: it opens the data
 * directory when Database.ts says so, after taking the directory's lock, and closes it (PostgreSQL's clean
 * shutdown) before Database.ts gives the lock back.
 *
 * Messages: `{ open: { dir, startParams } }` (ours, after PGlite's own: EmbeddedTemplate.startParams) → `{ port }`
 * (the socket server's, on 127.0.0.1) or `{ error }`; `{ close: true }` → `{ closed: true }`.
 */
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

declare const self: Worker

/** What the worker answers. */
export type Reply = { readonly port: number } | { readonly error: string } | { readonly closed: true }

/** What the worker is asked. */
export type Request =
  | { readonly open: { readonly dir: string; readonly startParams: ReadonlyArray<string> } }
  | { readonly close: true }

// Both at once, as soon as the thread exists: nothing here touches the data directory.
const modules = Promise.all([import("@electric-sql/pglite"), import("@electric-sql/pglite-socket")])
const wasmModule = (async () => {
  const dist = NodePath.dirname(fileURLToPath(import.meta.resolve("@electric-sql/pglite")))
  return WebAssembly.compile(await NodeFs.readFile(NodePath.join(dist, "pglite.wasm")))
})().catch(() => undefined) // PGlite then compiles it itself, as it always could

type Open = {
  readonly db: { close(): Promise<void> }
  readonly server: { stop(): Promise<void> }
}
let opened: Open | undefined

const open = async (dir: string, startParams: ReadonlyArray<string>): Promise<number> => {
  const [{ PGlite }, { PGLiteSocketServer }] = await modules
  const pgliteWasmModule = await wasmModule
  const db = await PGlite.create(dir, {
    startParams: [...PGlite.defaultStartParams, ...startParams],
    ...(pgliteWasmModule === undefined ? {} : { pgliteWasmModule })
  })
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
  try {
    await server.start()
  } catch (error) {
    await db.close().catch(() => {})
    throw error
  }
  opened = { db, server }
  return Number(server.getServerConn().split(":").pop())
}

const close = async (): Promise<void> => {
  const current = opened
  opened = undefined
  if (current === undefined) return
  await current.server.stop().catch(() => {})
  await current.db.close().catch(() => {})
}

self.onmessage = (event: MessageEvent<Request>) => {
  const request = event.data
  const reply = "open" in request
    ? open(request.open.dir, request.open.startParams).then(
      (port): Reply => ({ port }),
      (cause): Reply => ({ error: String(cause) })
    )
    : close().then((): Reply => ({ closed: true }))
  void reply.then((message) => postMessage(message))
}
