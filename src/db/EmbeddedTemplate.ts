import { Schema } from "effect"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { migrations } from "../../migrations/index.ts"
import { projectFile } from "../shared/ProjectRoot.ts"
import { pgliteDist } from "./EmbeddedWarmup.ts"

/**
 * A freshly initialised PGlite data directory, kept aside, from which every new embedded database is copied
 * (docs/performance.md, "Start and memory"). Creating a cluster runs `initdb` inside WebAssembly: ~5 s and a
 * 1.1 GB peak on the bench machine, which made a new user's first `npm start` the slowest and largest start of
 * all; copying the same 40 MB of files takes a fraction of a second, and the process then opens the cluster
 * exactly as it does on every restart. (PGlite's own `loadDataDir` tarball unpacks through the WebAssembly
 * heap, which then keeps ~100 MB more for the life of the process.)
 *
 * The template is what `initdb` of this exact PGlite version writes plus this checkout's migrations (applied to
 * a fresh cluster they cost as much CPU again as the whole start), so it is keyed by both. It holds no data:
 * nothing but the schema and the migrator's own table. `npm install` makes it (`postinstall`:
 * scripts/embedded-template.ts), otherwise the first start that needs it does.
 */

const PackageManifest = Schema.parseJson(Schema.Struct({ version: Schema.String }))

/** PGlite's version: a tarball from another version is never loaded. */
const pgliteVersion = async (): Promise<string> => {
  // The package exports no package.json: read it beside its entry point's folder (dist/).
  const manifest = await NodeFs.readFile(NodePath.resolve(pgliteDist(), "../package.json"), "utf8")
  return Schema.decodeSync(PackageManifest)(manifest).version
}

/**
 * Which migrations the template holds: their names (append only, design §3), digested. A new migration makes a
 * new template, which the next fresh DATA_DIR builds once.
 */
const migrationsKey = () =>
  createHash("sha256").update(Object.keys(migrations).join("\n")).digest("base64url").slice(0, 12)

/** Where the template is kept: beside the installed packages, like other build caches. */
export const templatePath = async (): Promise<string> =>
  fileURLToPath(projectFile(
    `node_modules/.cache/partner-registration/pglite-${await pgliteVersion()}-${migrationsKey()}`
  ))

const exists = (path: string) => NodeFs.access(path).then(() => true, () => false)

/**
 * Shared buffers of the embedded database. PGlite keeps initdb's 128 MB, all of it inside the WebAssembly
 * memory of this process: 16 MB takes the idle process from ~390 MB to ~150 MB, and the embedded database of
 * a single hotel or a developer's machine is a few MB.
 */
export const EMBEDDED_SHARED_BUFFERS = "16MB"

/** PGlite's own start parameters plus ours (passing any replaces its defaults, so they are repeated). */
export const startParams = async (): Promise<Array<string>> => {
  const { PGlite } = await import("@electric-sql/pglite")
  return [...PGlite.defaultStartParams, "-c", `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`]
}

/** Sets the mode of `path` and of everything under it: `dirs` for directories, `files` for the rest. */
const chmodTree = async (path: string, dirs: number, files: number): Promise<void> => {
  await NodeFs.chmod(path, dirs)
  for (const entry of await NodeFs.readdir(path, { withFileTypes: true })) {
    const child = NodePath.join(path, entry.name)
    if (entry.isDirectory()) await chmodTree(child, dirs, files)
    else await NodeFs.chmod(child, files)
  }
}

/**
 * The template readable by every user (0644 files, 0755 directories): the image makes it as root at build time and
 * runs as its `bun` user, who got `EACCES` on initdb's 0600 files and made a cluster from scratch at every first
 * start (issue 27: 6.3 s and 888 MiB instead of ~2.5 s and 239 MiB). It holds no data, only the schema.
 */
export const makeReadable = (path: string) => chmodTree(path, 0o755, 0o644)

/** A copy in `DATA_DIR`: its owner's only (0600 files, 0700 directories), as `initdb` makes a cluster. */
const makePrivate = (path: string) => chmodTree(path, 0o700, 0o600)

/**
 * The template directory, made now if missing: `initdb` in a temporary directory beside it, `migrate` (the
 * migrations of this checkout, Database.ts), then moved into place in one rename, so that concurrent starts
 * (tests) never see half of it.
 */
export const ensureTemplate = async (migrate: (dir: string) => Promise<void>): Promise<string> => {
  const path = await templatePath()
  if (await exists(NodePath.join(path, "PG_VERSION"))) return path
  const { PGlite } = await import("@electric-sql/pglite")
  await NodeFs.mkdir(NodePath.dirname(path), { recursive: true })
  const scratch = `${path}.${process.pid}.partial`
  await NodeFs.rm(scratch, { recursive: true, force: true })
  try {
    const db = await PGlite.create(scratch)
    await db.close()
    await migrate(scratch)
    await makeReadable(scratch)
    await NodeFs.rename(scratch, path)
  } catch (error) {
    await NodeFs.rm(scratch, { recursive: true, force: true })
    // Another process put its template in place first: use that one.
    if (!(await exists(NodePath.join(path, "PG_VERSION")))) throw error
  }
  return path
}

/**
 * Puts a copy of the template at `dir` (which must not hold a cluster). Copied beside it and renamed, so that
 * a crash mid-copy leaves no half cluster that the next start would try to open.
 */
export const copyTemplateTo = async (dir: string, migrate: (dir: string) => Promise<void>): Promise<void> => {
  const template = await ensureTemplate(migrate)
  const partial = `${dir}.${process.pid}.partial`
  await NodeFs.rm(partial, { recursive: true, force: true })
  try {
    await NodeFs.cp(template, partial, { recursive: true })
    await makePrivate(partial)
    await NodeFs.rm(dir, { recursive: true, force: true })
    await NodeFs.rename(partial, dir)
  } catch (error) {
    // As before the attempt: an empty `dir`, nothing beside it.
    await NodeFs.rm(partial, { recursive: true, force: true })
    await NodeFs.mkdir(dir, { recursive: true })
    throw error
  }
}

/** Whether `dir` already holds a cluster (then it is opened as it is, never unpacked over). */
export const isInitialised = (dir: string) => exists(NodePath.join(dir, "PG_VERSION"))
