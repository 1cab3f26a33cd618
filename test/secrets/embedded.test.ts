import { afterAll, beforeAll, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { admin, call, type RunningApp, startApp, tempDir } from "../support/app.ts"
import { type Receiver, startReceiver, verifyReceived } from "../support/receiver.ts"

/**
 * Embedded mode without SECRETS_KEY (design §9): the key is generated into DATA_DIR/secrets-key (0600) on the
 * first start and read back on the next, so the secrets sealed before a restart still open after it.
 */

const BOOT = 60_000
let dataDir: string
let receiver: Receiver
let app: RunningApp | undefined

beforeAll(async () => {
  dataDir = await tempDir("embedded-secrets")
  receiver = startReceiver()
})

afterAll(async () => {
  await app?.stop()
  receiver?.stop()
  await NodeFs.rm(dataDir, { recursive: true, force: true })
}, BOOT)

const pingVerifies = async (key: string, endpointId: string, secret: string) => {
  receiver.clear()
  const res = await call(app!, "POST", `/api/partners/webhooks/${endpointId}/test`, { key })
  expect(res.status).toBe(200)
  const [request] = await receiver.waitFor((r) => r.path === "/hooks/embedded")
  return verifyReceived(request!, secret)
}

test("the generated key outlives a restart: a webhook secret sealed before it still signs after it", async () => {
  app = await startApp({ DATA_DIR: dataDir, ROLE: "api", WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
  const file = NodePath.join(dataDir, "secrets-key")
  expect((await NodeFs.stat(file)).mode & 0o777).toBe(0o600)
  const key = await NodeFs.readFile(file, "utf8")
  expect(Buffer.from(key.trim(), "base64")).toHaveLength(32)

  const account = await admin(app, (c) => c.CreateAccount({ name: "Embebida", email: "dev@embebida.co" }))
  const live = await admin(app, (c) => c.CreateKey({ account_id: account.account_id, environment: "live" }))
  const created = await call(app, "POST", "/api/partners/webhooks", {
    key: live.api_key,
    json: { url: `${receiver.url}/hooks/embedded` }
  })
  expect(created.status).toBe(201)
  expect(await pingVerifies(live.api_key, created.body.id, created.body.secret)).toBe(true)

  await app.stop()
  app = await startApp({ DATA_DIR: dataDir, ROLE: "api", WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
  expect(await NodeFs.readFile(file, "utf8")).toBe(key)
  expect(await pingVerifies(live.api_key, created.body.id, created.body.secret)).toBe(true)
}, BOOT * 2)
