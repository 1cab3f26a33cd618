import { afterAll, beforeAll, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import { tempDir } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { type ServiceProcess, spawnService } from "../support/process.ts"

/**
 * The image's HEALTHCHECK (`scripts/healthcheck.ts`) against the real service as a process: it asks `/readyz` on
 * the address the service listens on — `HOST`, or loopback for every address — not on a fixed 127.0.0.1 (issue 27).
 */
let db: TestDatabase
let dataDir: string
let service: ServiceProcess
let port: string

beforeAll(async () => {
  db = await freshDatabase()
  dataDir = await tempDir("healthcheck")
  // 127.0.0.2: a loopback address that is not 127.0.0.1, as a container's own address would be.
  service = spawnService({ DATABASE_URL: db.url, DATA_DIR: dataDir, ADMIN_TOKEN: "t", HOST: "127.0.0.2" })
  port = new URL(await service.ready()).port
}, 30_000)

afterAll(async () => {
  await service?.stop()
  await db?.drop()
  await NodeFs.rm(dataDir, { recursive: true, force: true })
})

const check = (env: Record<string, string>) =>
  Bun.spawnSync([process.execPath, "scripts/healthcheck.ts"], { env: { PATH: process.env.PATH ?? "", ...env } }).exitCode

test("healthy on the service's own HOST and PORT; unhealthy on another port or another address", () => {
  expect(check({ HOST: "127.0.0.2", PORT: port })).toBe(0)
  // The old check's fixed address: nothing listens there.
  expect(check({ HOST: "127.0.0.1", PORT: port })).toBe(1)
  expect(check({ HOST: "127.0.0.2", PORT: "1" })).toBe(1)
}, 30_000)

test("HOST=0.0.0.0 (every address, the image's default) asks loopback", async () => {
  const everywhere = spawnService({ DATABASE_URL: db.url, DATA_DIR: `${dataDir}/all`, ADMIN_TOKEN: "t", HOST: "0.0.0.0" })
  try {
    const allPort = new URL(await everywhere.ready()).port
    expect(check({ HOST: "0.0.0.0", PORT: allPort })).toBe(0)
    expect(check({ PORT: allPort })).toBe(0)
  } finally {
    await everywhere.stop()
  }
}, 30_000)
