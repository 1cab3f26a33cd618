import { expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/**
 * docs/architecture.md's "Who owns which table" against the code: each table written in `src/` (`INSERT INTO`,
 * `UPDATE`, `DELETE FROM`) is written only by the folder the table names as its owner, in the files it lists; and
 * the `reservations` and `guests` tables are read outside `ReservationRepo.ts` only in the files it lists.
 */

const ROOT = NodePath.resolve(import.meta.dir, "../..")

const sourceFiles = async (): Promise<ReadonlyArray<{ readonly path: string; readonly text: string }>> => {
  const found: Array<{ path: string; text: string }> = []
  for await (const path of new Bun.Glob("src/**/*.ts").scan({ cwd: ROOT })) {
    if (path.startsWith("src/db/migrations/")) continue
    found.push({ path, text: await NodeFs.readFile(NodePath.join(ROOT, path), "utf8") })
  }
  return found
}

const section = async () => {
  const doc = await NodeFs.readFile(NodePath.join(ROOT, "docs/architecture.md"), "utf8")
  const start = doc.indexOf("## Who owns which table")
  expect(start).toBeGreaterThan(-1)
  const end = doc.indexOf("\n## ", start + 1)
  return doc.slice(start, end === -1 ? undefined : end)
}

const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)

/** Statements that write a table, in SQL text (a comment line mentioning one is not SQL). */
const WRITE = /^(?!\s*(?:\/\/|\*)).*?\b(?:INSERT INTO|UPDATE|DELETE FROM)\s+([a-z_]+)\b/gm

test("every table is written only by its owner, in the files docs/architecture.md lists", async () => {
  const rows = (await section()).split("\n").filter((line) => /^\| `[a-z_]+` \|/.test(line))
  const documented = new Map(rows.map((line) => {
    const [table, owner, files] = line.split("|").slice(1, 4).map((cell) => names(cell))
    return [table![0]!, { owner: owner![0]!, files: new Set(files) }] as const
  }))
  expect(documented.size).toBeGreaterThan(10)

  const written = new Map<string, Set<string>>()
  for (const { path, text } of await sourceFiles()) {
    for (const match of text.matchAll(WRITE)) {
      const table = match[1]!
      written.set(table, (written.get(table) ?? new Set()).add(path))
    }
  }
  const problems: Array<string> = []
  for (const [table, paths] of written) {
    const claim = documented.get(table)
    if (claim === undefined) {
      problems.push(`${table} is written in ${[...paths].join(", ")} but has no owner in docs/architecture.md`)
      continue
    }
    for (const path of paths) {
      const [, folder, ...rest] = path.split("/")
      if (folder !== claim.owner || !claim.files.has(rest.at(-1)!)) {
        problems.push(`${table} is written in ${path}; its owner is ${claim.owner} (${[...claim.files].join(", ")})`)
      }
    }
  }
  for (const table of documented.keys()) {
    if (!written.has(table)) problems.push(`docs/architecture.md names ${table}, which no code writes`)
  }
  expect(problems).toEqual([])
})

test("reservations and guests are read outside ReservationRepo.ts only where docs/architecture.md says", async () => {
  const text = await section()
  const listed = new Set(names(text.slice(text.indexOf("Readers of `reservations` and `guests`"))).filter((name) =>
    name.includes("/") && name.endsWith(".ts")
  ).map((name) => `src/${name}`))
  const readers = new Set<string>()
  for (const { path, text: source } of await sourceFiles()) {
    if (path === "src/reservations/ReservationRepo.ts") continue
    if (/\b(?:FROM|JOIN)\s+(?:reservations|guests)\b/.test(source)) readers.add(path)
  }
  expect([...readers].sort()).toEqual([...listed].sort())
})

/** The top-level folder of `src/` a path is in (`(root)` for App.ts, main.ts, cli.ts). */
const folderOf = (path: string) => {
  const parts = path.split("/")
  return parts.length > 2 ? parts[1]! : "(root)"
}

test("no two folders of src/ import each other (issue 24: modules in one order)", async () => {
  const imports = new Map<string, Set<string>>()
  for (const { path, text } of await sourceFiles()) {
    for (const match of text.matchAll(/^(?:import|export)\b[^"'\n]*?(?:from\s+)?["'](\.[^"']+)["']/gm)) {
      const target = NodePath.relative(ROOT, NodePath.resolve(ROOT, NodePath.dirname(path), match[1]!))
      if (!target.startsWith("src/")) continue // package.json and the like
      const [from, to] = [folderOf(path), folderOf(target)]
      if (from !== to) imports.set(from, (imports.get(from) ?? new Set()).add(to))
    }
  }
  expect(imports.get("reservations")?.has("shared")).toBe(true)
  const pairs = [...imports].flatMap(([from, targets]) =>
    [...targets].filter((to) => from < to && imports.get(to)?.has(from) === true).map((to) => `${from} <-> ${to}`)
  )
  expect(pairs).toEqual([])
})
