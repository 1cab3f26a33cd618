import { afterAll, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { call, type RunningApp, seedAccount, startApp, tempDir } from "../support/app.ts"
import { freshDatabase } from "../support/database.ts"
import { reservationBody } from "../support/guests.ts"
import { startReceiver } from "../support/receiver.ts"

/**
 * The backup and restore procedures of docs/operations.md ("Backups"), followed as written, for both modes: a
 * backup restored into a fresh instance answers the same reservations, and a stored secret (a webhook signing
 * secret, sealed under the secrets key) still opens.
 */
const cleanup: Array<() => Promise<unknown>> = []
const receiver = startReceiver()
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined)
  receiver.stop()
})
const PRIVATE = { WEBHOOK_ALLOW_PRIVATE_URLS: "true" }

/** Two reservations and a webhook endpoint made through the partner API; answers what to read back. */
const arrange = async (app: RunningApp) => {
  const account = await seedAccount(app, "Hotel Respaldo")
  const propertyId = account.testProperties[0]!.property_id
  const made: Array<string> = []
  for (const guest of ["Ana Pérez", "Luis Gómez"]) {
    const res = await call(app, "POST", "/api/partners/reservations", {
      key: account.testKey,
      json: reservationBody(propertyId, { guest_name: guest })
    })
    expect(res.status).toBe(201)
    made.push(res.body.external_id)
  }
  const hook = await call(app, "POST", "/api/partners/webhooks", {
    key: account.testKey,
    json: { url: `${receiver.url}/backup`, events: ["reservation.created"] }
  })
  expect(hook.status).toBe(201)
  return { key: account.testKey, externalIds: made, hookId: hook.body.id as string }
}

/** What an instance answers about them: the reservations as endpoint 6 reads them, and the endpoint. */
const readBack = async (app: RunningApp, arranged: Awaited<ReturnType<typeof arrange>>) => ({
  reservations: await Promise.all(arranged.externalIds.map(async (externalId) => {
    const res = await call(app, "GET", `/api/partners/registrations?external_id=${externalId}`, { key: arranged.key })
    expect(res.status).toBe(200)
    return res.body
  })),
  // A test ping is signed with the stored secret: it fails if the restored secret cannot be opened.
  ping: await (async () => {
    const res = await call(app, "POST", `/api/partners/webhooks/${arranged.hookId}/test`, { key: arranged.key })
    return [res.status, res.body.delivered, res.body.http_status]
  })()
})

test("PostgreSQL: pg_dump while the service runs, pg_restore into an empty database, same answers", async () => {
  const source = await freshDatabase()
  const target = await freshDatabase()
  const dir = await tempDir("backup-pg")
  cleanup.push(() => source.drop(), () => target.drop(), () => NodeFs.rm(dir, { recursive: true, force: true }))
  const app = await startApp({ DATABASE_URL: source.url, ...PRIVATE })
  const arranged = await arrange(app)
  const dump = NodePath.join(dir, "partner.dump")
  const dumped = Bun.spawnSync(["pg_dump", "--format=custom", `--file=${dump}`, source.url], { stderr: "pipe" })
  expect([dumped.exitCode, dumped.stderr.toString()]).toEqual([0, ""])
  const before = await readBack(app, arranged)
  await app.stop()

  const restored = Bun.spawnSync(["pg_restore", "--no-owner", `--dbname=${target.url}`, dump], { stderr: "pipe" })
  expect([restored.exitCode, restored.stderr.toString()]).toEqual([0, ""])
  // The same SECRETS_KEY (startApp's), a new DATA_DIR: what the procedure says to keep apart from the dump.
  const again = await startApp({ DATABASE_URL: target.url, ...PRIVATE })
  cleanup.push(() => again.stop())
  const after = await readBack(again, arranged)
  expect(after.reservations).toEqual(before.reservations)
  expect([before.ping, after.ping]).toEqual([[200, true, 200], [200, true, 200]])
}, 120_000)

test("embedded: DATA_DIR copied with the service stopped, started elsewhere, same answers", async () => {
  const dir = await tempDir("backup-embedded")
  const copy = await tempDir("backup-embedded-copy")
  cleanup.push(() => NodeFs.rm(dir, { recursive: true, force: true }), () => NodeFs.rm(copy, { recursive: true, force: true }))
  const app = await startApp({ DATA_DIR: dir, ...PRIVATE })
  const arranged = await arrange(app)
  const before = await readBack(app, arranged)
  await app.stop()
  // `tar -C DATA_DIR -czf …` then `tar -xzf` elsewhere: the procedure's own commands.
  const archive = NodePath.join(copy, "partner-data.tar.gz")
  expect(Bun.spawnSync(["tar", "-C", dir, "-czf", archive, "."]).exitCode).toBe(0)
  const restoredDir = NodePath.join(copy, "data")
  await NodeFs.mkdir(restoredDir)
  expect(Bun.spawnSync(["tar", "-C", restoredDir, "-xzf", archive]).exitCode).toBe(0)
  await NodeFs.rm(dir, { recursive: true, force: true })

  const again = await startApp({ DATA_DIR: restoredDir, ...PRIVATE })
  cleanup.push(() => again.stop())
  const after = await readBack(again, arranged)
  expect(after.reservations).toEqual(before.reservations)
  expect([before.ping, after.ping]).toEqual([[200, true, 200], [200, true, 200]])
}, 120_000)
