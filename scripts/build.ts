/**
 * The production bundles: `dist/main.js` (the service) from src/main.ts and `dist/cli.js` (the ops CLI, what
 * `npm run cli` runs) from src/cli.ts, each one file with what it imports, minified, with a linked source map so
 * that stack traces name our files and lines. Running it instead of the sources
 * saves ~50 MB of memory and half the start-up CPU: `bun src/main.ts` parses and keeps every module of every
 * package barrel it imports (docs/performance.md, "Start and memory"); the CLI's bundle starts in 0.44 s instead
 * of 0.77 s. Each bundle comes with its bytecode cache (`main.js.jsc`, `cli.js.jsc`), which Bun loads in place of
 * parsing the bundle. Same code, same behaviour: test/build/bundle.test.ts boots the bundle, drives it over HTTP and
 * through the bundled CLI.
 *
 * `bun scripts/build.ts [--if-stale] [--outdir DIR]`. `--if-stale` (what `npm start` uses) builds only when a
 * source, migration or the package manifests are newer than the bundle, so a restart starts at once. DIR must be
 * a folder directly inside the checkout (default `dist`): the bundle finds the pages' files from there
 * (src/shared/ProjectRoot.ts).
 */
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { parseArgs } from "node:util"

const root = NodePath.resolve(import.meta.dir, "..")
const { values } = parseArgs({
  options: { "if-stale": { type: "boolean", default: false }, outdir: { type: "string", default: "dist" } }
})
const outdir = NodePath.resolve(root, values.outdir!)
if (NodePath.dirname(outdir) !== root) throw new Error(`--outdir must be a folder directly inside ${root}`)
const bundles = ["main.js", "cli.js"].map((name) => NodePath.join(outdir, name))

/** The newest modification time among the bundle's inputs. */
const newestInput = async (): Promise<number> => {
  let newest = 0
  for (const dir of ["src", "migrations"]) {
    for await (const file of new Bun.Glob("**/*").scan({ cwd: NodePath.join(root, dir), onlyFiles: true })) {
      newest = Math.max(newest, (await NodeFs.stat(NodePath.join(root, dir, file))).mtimeMs)
    }
  }
  for (const file of ["package.json", "package-lock.json", "tsconfig.json", "scripts/build.ts"]) {
    newest = Math.max(newest, await NodeFs.stat(NodePath.join(root, file)).then((s) => s.mtimeMs, () => 0))
  }
  return newest
}

if (values["if-stale"]) {
  const built = Math.min(...await Promise.all(bundles.map((bundle) => NodeFs.stat(bundle).then((s) => s.mtimeMs, () => -1))))
  if (built >= (await newestInput())) process.exit(0)
}

const started = performance.now()
const result = await Bun.build({
  entrypoints: [NodePath.join(root, "src/main.ts"), NodePath.join(root, "src/cli.ts")],
  outdir,
  target: "bun",
  // A bytecode cache beside each bundle (`main.js.jsc`), which Bun loads instead of parsing and compiling the
  // 1.9 MB of JavaScript: ~100 ms off every start (docs/performance.md, "Restart"). Bun writes bytecode only for
  // CommonJS output, and silently writes none when the code uses `import.meta.resolve` or a top-level `await`:
  // test/build/bundle.test.ts fails if a bundle comes without its cache.
  format: "cjs",
  bytecode: true,
  // Names kept: logs and errors show our class and function names even without the source map.
  minify: { whitespace: true, syntax: true, identifiers: true, keepNames: true },
  sourcemap: "linked",
  // PGlite loads its WebAssembly and data files from beside its own modules: it stays in node_modules.
  external: ["@electric-sql/pglite", "@electric-sql/pglite-socket"]
})
if (!result.success) {
  for (const message of result.logs) console.error(message)
  process.exit(1)
}
// On stderr: `npm run --silent cli` prints the CLI's JSON on stdout, which a script may read.
console.error(
  `built ${bundles.map((bundle) => NodePath.relative(root, bundle)).join(" and ")} in ${Math.round(performance.now() - started)} ms`
)
