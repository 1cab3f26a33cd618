import { expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { ensureEmbeddedTemplate } from "../../src/db/Database.ts"
import * as EmbeddedTemplate from "../../src/db/EmbeddedTemplate.ts"
import { migrations } from "../../migrations/index.ts"
import { tempDir } from "../support/app.ts"

/**
 * The embedded database's template (src/db/EmbeddedTemplate.ts: `initdb` and the migrations): a fresh DATA_DIR
 * gets a copy of it instead of a new cluster; a missing template is made on demand. test/db/embedded.test.ts and
 * test/build/bundle.test.ts start the service on fresh and existing data directories.
 */

const listing = async (dir: string) =>
  (await NodeFs.readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => NodePath.relative(dir, NodePath.join(entry.parentPath, entry.name)))
    .sort()

/** The distinct permission bits of a tree's directories (itself included) and files. */
const modes = async (dir: string) => {
  const entries = await NodeFs.readdir(dir, { recursive: true, withFileTypes: true })
  const of = async (path: string) => (await NodeFs.stat(path)).mode & 0o777
  const dirs = new Set([await of(dir)])
  const files = new Set<number>()
  for (const entry of entries) {
    const path = NodePath.join(entry.parentPath, entry.name)
    if (entry.isDirectory()) dirs.add(await of(path))
    else if (entry.isFile()) files.add(await of(path))
  }
  return { dirs: [...dirs].sort(), files: [...files].sort() }
}

test("the template script (the image's build step, --strict) leaves the template readable by every user", async () => {
  const path = await EmbeddedTemplate.templatePath()
  await ensureEmbeddedTemplate()
  // As initdb leaves it when run as root: 0600 files (the image's `bun` user got EACCES on them).
  await NodeFs.chmod(NodePath.join(path, "PG_VERSION"), 0o600)
  const script = Bun.spawnSync([process.execPath, "scripts/embedded-template.ts", "--strict"], { stdout: "pipe", stderr: "pipe" })
  expect(script.exitCode).toBe(0)
  expect(script.stdout.toString()).toContain(`embedded database template ready in`)
  expect(await modes(path)).toEqual({ dirs: [0o755], files: [0o644] })
}, 120_000)

test("a missing template is made by initdb and the migrations, put in place whole, nothing partial left", async () => {
  const path = await EmbeddedTemplate.templatePath()
  const aside = `${path}.aside-${process.pid}`
  const had = await NodeFs.rename(path, aside).then(() => true, () => false)
  try {
    expect(await ensureEmbeddedTemplate()).toBe(path)
    expect(await EmbeddedTemplate.isInitialised(path)).toBe(true)
    // Readable by every user: the image makes it as root and runs as `bun` (issue 27).
    expect(await modes(path)).toEqual({ dirs: [0o755], files: [0o644] })
    const siblings = await NodeFs.readdir(NodePath.dirname(path))
    expect(siblings.filter((name) => name.includes(".partial"))).toEqual([])
  } finally {
    if (had) {
      await NodeFs.rm(path, { recursive: true, force: true })
      await NodeFs.rename(aside, path)
    }
  }
}, 120_000)

test("a fresh directory receives a whole copy of the template, every migration applied", async () => {
  const root = await tempDir("template-copy")
  try {
    const dir = NodePath.join(root, "pg")
    await NodeFs.mkdir(dir)
    expect(await EmbeddedTemplate.isInitialised(dir)).toBe(false)
    await EmbeddedTemplate.copyTemplateTo(dir, () => Promise.reject(new Error("the template exists: not made again")))
    expect(await EmbeddedTemplate.isInitialised(dir)).toBe(true)
    expect(await listing(dir)).toEqual(await listing(await ensureEmbeddedTemplate()))
    expect((await NodeFs.readdir(root)).sort()).toEqual(["pg"])
    // The copy is the owner's only, as initdb makes a cluster.
    expect(await modes(dir)).toEqual({ dirs: [0o700], files: [0o600] })
    const { PGlite } = await import("@electric-sql/pglite")
    const db = await PGlite.create(dir, { startParams: await EmbeddedTemplate.startParams() })
    try {
      const applied = await db.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY migration_id")
      expect(applied.rows.map((row) => row.name)).toEqual(Object.keys(migrations).map((id) => id.slice(5)))
      const shared = await db.query<{ shared_buffers: string }>("SHOW shared_buffers")
      expect(shared.rows).toEqual([{ shared_buffers: EmbeddedTemplate.EMBEDDED_SHARED_BUFFERS }])
    } finally {
      await db.close()
    }
  } finally {
    await NodeFs.rm(root, { recursive: true, force: true })
  }
}, 60_000)

test("a template that cannot be made fails the copy and leaves the directory as it was, nothing beside it", async () => {
  const path = await EmbeddedTemplate.templatePath()
  const aside = `${path}.aside-${process.pid}`
  const had = await NodeFs.rename(path, aside).then(() => true, () => false)
  const root = await tempDir("template-fails")
  try {
    const dir = NodePath.join(root, "pg")
    await NodeFs.mkdir(dir)
    await expect(EmbeddedTemplate.copyTemplateTo(dir, () => Promise.reject(new Error("migrations failed"))))
      .rejects.toThrow("migrations failed")
    expect(await NodeFs.readdir(dir)).toEqual([])
    expect(await NodeFs.readdir(root)).toEqual(["pg"])
    expect(await EmbeddedTemplate.isInitialised(path)).toBe(false)
    const siblings = await NodeFs.readdir(NodePath.dirname(path))
    expect(siblings.filter((name) => name.includes(".partial"))).toEqual([])
  } finally {
    await NodeFs.rm(root, { recursive: true, force: true })
    if (had) {
      await NodeFs.rm(path, { recursive: true, force: true })
      await NodeFs.rename(aside, path)
    }
  }
}, 120_000)

test("the embedded database starts with PGlite's own parameters and small shared buffers", async () => {
  const params = await EmbeddedTemplate.startParams()
  expect(params.slice(-2)).toEqual(["-c", `shared_buffers=${EmbeddedTemplate.EMBEDDED_SHARED_BUFFERS}`])
  expect(params).toContain("--single")
})
