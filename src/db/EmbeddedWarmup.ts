/**
 * The embedded database's worker thread (EmbeddedWorker.ts), started ahead: `main.ts` imports this module first,
 * so that without `DATABASE_URL` PGlite's WebAssembly (9 MB) compiles and its modules load on the other core
 * while the rest of the service's modules are still being evaluated and its layers built (docs/performance.md,
 * "Restart"). A hint only: read from the environment before the configuration is (AppConfig decides for real);
 * the thread opens nothing until Database.ts asks it to, after taking the data directory's lock. Unused, it
 * never keeps the process alive.
 */
import { Effect } from "effect"
import type { Reply, Request } from "./EmbeddedWorker.ts"

/** Bun's Worker, which can be told not to keep the process alive. */
type Thread = Worker & { ref(): void; unref(): void }

let ahead: Thread | undefined

const start = (): Thread => {
  // From the sources `src/db/EmbeddedWorker.ts`; from the bundle (scripts/build.ts) `dist/EmbeddedWorker.js`
  // beside `dist/main.js`, which inlines this module.
  const file = import.meta.url.endsWith(".ts") ? "./EmbeddedWorker.ts" : "./EmbeddedWorker.js"
  const worker = new Worker(new URL(file, import.meta.url).href) as Thread
  worker.unref()
  return worker
}

/** A worker for one embedded database: the one started ahead if it is still unused, else a new one. */
export const takeWorker = (): Thread => {
  const worker = ahead ?? start()
  ahead = undefined
  return worker
}

const ask = (worker: Worker, request: Request): Effect.Effect<Reply, string> =>
  Effect.async<Reply, string>((resume) => {
    worker.onmessage = (event: MessageEvent<Reply>) => resume(Effect.succeed(event.data))
    worker.onerror = (event: ErrorEvent) => resume(Effect.fail(event.message))
    worker.postMessage(request)
  })

/**
 * The PGlite cluster in `dir` opened in a worker thread and served there by pglite-socket on 127.0.0.1, for as long
 * as the scope lasts: the socket server's port, or why it could not be opened. Closing the scope closes the
 * cluster (PostgreSQL's clean shutdown) and ends the thread. `startParams` are ours, after PGlite's own.
 */
export const openInWorker = (dir: string, startParams: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const worker = takeWorker()
      // Held open while the cluster is: the process lives as long as its database does.
      worker.ref()
      return ask(worker, { open: { dir, startParams } }).pipe(
        Effect.flatMap((reply) => "port" in reply ? Effect.succeed({ worker, port: reply.port }) : Effect.fail("error" in reply ? reply.error : "no port")),
        Effect.tapError(() => Effect.sync(() => worker.terminate()))
      )
    }),
    ({ worker }) => ask(worker, { close: true }).pipe(Effect.ignore, Effect.ensuring(Effect.sync(() => worker.terminate())))
  ).pipe(Effect.map(({ port }) => port))

if ((process.env.DATABASE_URL ?? "").trim() === "") ahead = start()
