import { createRequire } from "node:module"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/**
 * The folder of PGlite's files (its modules, `pglite.wasm`, `pglite.data`). Resolved with `require.resolve`, not
 * `import.meta.resolve`: a bundle that uses `import.meta.resolve` gets no bytecode cache (scripts/build.ts).
 */
export const pgliteDist = (): string => NodePath.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"))

/**
 * PGlite's WebAssembly (9 MB), compiled ahead: `main.ts` imports this module first, so that without
 * `DATABASE_URL` the compilation runs on Bun's background threads while the rest of the service's modules are
 * still being evaluated (~250 ms of an embedded start on the bench machine; docs/performance.md, "Start and
 * memory"). A hint only: read from the environment before the configuration is (AppConfig decides for real),
 * and any failure leaves PGlite to compile it itself, as it always did.
 */
let compiling: Promise<WebAssembly.Module | undefined> | undefined

/** PGlite's compiled module, compiling it now unless it already is; undefined if that failed. */
export const pgliteModule = (): Promise<WebAssembly.Module | undefined> => {
  compiling ??= (async () => {
    return WebAssembly.compile(await NodeFs.readFile(NodePath.join(pgliteDist(), "pglite.wasm")))
  })().catch(() => undefined)
  return compiling
}

if ((process.env.DATABASE_URL ?? "").trim() === "") void pgliteModule()
