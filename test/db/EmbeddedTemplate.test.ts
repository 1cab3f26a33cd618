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

test("a missing template is made by initdb and the migrations, put in place whole, nothing partial left", async () => {
  const path = await EmbeddedTemplate.templatePath()
  const aside = `${path}.aside-${process.pid}`
  const had = await NodeFs.rename(path, aside).then(() => true, () => false)
  try {
    expect(await ensureEmbeddedTemplate()).toBe(path)
    expect(await EmbeddedTemplate.isInitialised(path)).toBe(true)
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
