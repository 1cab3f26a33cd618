import { afterAll, beforeAll, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { tempDir } from "../support/app.ts"
import { refusedStart, type ServiceProcess, spawnService, within } from "../support/process.ts"

/**
 * The embedded database is single-process (design §9): `DATA_DIR/service.lock` names the process that holds
 * the directory; a second process on it exits non-zero at once, naming the first; a lock whose process was
 * killed does not block the next start. Real processes (`bun src/main.ts`) on a temporary DATA_DIR.
 */

let dataDir: string
const running: Array<ServiceProcess> = []

const start = (env: Record<string, string> = {}) => {
  const service = spawnService({ DATA_DIR: dataDir, ADMIN_TOKEN: "t", LOG_FORMAT: "json", ...env })
  running.push(service)
  return service
}

const lockFile = () => NodePath.join(dataDir, "service.lock")
const readLock = async () => JSON.parse(await NodeFs.readFile(lockFile(), "utf8"))

beforeAll(async () => {
  dataDir = await tempDir("lock")
})

afterAll(async () => {
  for (const service of running) {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill("SIGKILL")
    await service.child.exited
  }
  await NodeFs.rm(dataDir, { recursive: true, force: true })
})

test("a second process on the same DATA_DIR exits non-zero at once, naming the running one; the first goes on", async () => {
  const first = start()
  const url = await first.ready(60_000)
  const lock = await readLock()
  // The port the server bound (PORT=0 lets the system choose), written once it listens.
  expect(lock).toEqual({ pid: first.child.pid, host: NodeOs.hostname(), started_at: expect.any(String), port: Number(new URL(url).port) })
  expect(Date.parse(lock.started_at)).toBeGreaterThan(Date.now() - 120_000)

  const second = start()
  const began = performance.now()
  const code = await within(15_000, "the second process's exit", second.child.exited)
  await second.stop()
  expect(code).not.toBe(0)
  // Refused before opening anything: far quicker than the embedded database's own start (seconds).
  expect(performance.now() - began).toBeLessThan(10_000)
  const output = second.output()
  expect(output).toContain("start-up failed: the embedded database in")
  expect(output).toContain(`is in use by another process of this service (pid ${first.child.pid} on ${NodeOs.hostname()}, started ${lock.started_at}`)
  expect(output).toContain("Stop that process first")
  expect(output).not.toContain("listening on")
  expect(output).not.toContain("applied migrations")

  // The first still holds the directory and serves.
  expect((await fetch(`${url}/readyz`)).status).toBe(200)
  expect(await readLock()).toEqual(lock)

  // A clean stop gives the lock back.
  expect(await first.stop()).toBe(0)
  await expect(NodeFs.stat(lockFile())).rejects.toThrow()
}, 120_000)

test("a process killed with SIGKILL leaves a stale lock that does not block the next start", async () => {
  const killed = start()
  await killed.ready(60_000)
  const stale = await readLock()
  killed.child.kill("SIGKILL")
  await killed.child.exited
  expect(killed.child.signalCode).toBe("SIGKILL")
  // The killed process could not remove its lock.
  expect(await readLock()).toEqual(stale)

  const next = start()
  const url = await next.ready(60_000)
  expect(next.output()).toContain(`took over the lock ${lockFile()} of pid ${stale.pid} (started ${stale.started_at}), which no longer runs`)
  expect(await readLock()).toMatchObject({ pid: next.child.pid })
  const ready = await fetch(`${url}/readyz`)
  expect(await ready.json()).toEqual({ status: "ready", database: "embedded", role: "all" })
  expect(await next.stop()).toBe(0)
  await expect(NodeFs.stat(lockFile())).rejects.toThrow()
}, 120_000)

test("a lock file that is not a lock is refused with a message saying what to do", async () => {
  await NodeFs.writeFile(lockFile(), "not a lock\n")
  try {
    const output = await refusedStart(start(), "exit on an unreadable lock")
    expect(output).toContain(`the lock file ${lockFile()} exists but is not a lock this service wrote`)
  } finally {
    await NodeFs.rm(lockFile(), { force: true })
  }
}, 30_000)

test("a backup script holding the lock as docs/operations.md shows keeps the service from starting until it is done", async () => {
  // The docs' lines, with a sleep standing in for the copy.
  const script = `cd "${dataDir}" && ( set -o noclobber
  printf '{"pid":%d,"host":"%s","started_at":"%s","port":0}\\n' $$ "$(hostname)" "$(date -u +%FT%TZ)" > service.lock
) || exit 1
exec sleep 60`
  const backup = Bun.spawn(["bash", "-c", script], { stdout: "ignore", stderr: "inherit" })
  try {
    for (let i = 0; i < 100 && (await NodeFs.stat(lockFile()).catch(() => undefined)) === undefined; i++) await Bun.sleep(20)
    expect(await readLock()).toMatchObject({ pid: backup.pid, host: NodeOs.hostname(), port: 0 })

    const refused = start()
    expect(await within(15_000, "the refused start's exit", refused.child.exited)).not.toBe(0)
    await refused.stop()
    expect(refused.output()).toContain(`is in use by another process of this service (pid ${backup.pid} on ${NodeOs.hostname()}`)
  } finally {
    backup.kill("SIGKILL")
    await backup.exited
  }
  // The script was killed before its `rm service.lock`: its lock is stale and the next start takes it over.
  const next = start()
  await next.ready(60_000)
  expect(next.output()).toContain(`took over the lock ${lockFile()} of pid ${backup.pid}`)
  expect(await next.stop()).toBe(0)
}, 120_000)

test("after a reboot the lock's pid may run another program, started after the lock: that lock is stale too", async () => {
  // A live process that is not the holder: it started long after the lock says its holder did.
  const other = Bun.spawn(["sleep", "60"], { stdout: "ignore", stderr: "ignore" })
  try {
    const startedAt = new Date(Date.now() - 3_600_000).toISOString()
    await NodeFs.writeFile(lockFile(), JSON.stringify({ pid: other.pid, host: NodeOs.hostname(), started_at: startedAt, port: 3000 }))
    const next = start()
    await next.ready(60_000)
    expect(next.output()).toContain(`took over the lock ${lockFile()} of pid ${other.pid} (started ${startedAt}), which no longer runs`)
    expect(await next.stop()).toBe(0)
  } finally {
    other.kill("SIGKILL")
    await other.exited
  }
}, 120_000)
