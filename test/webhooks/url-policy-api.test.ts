import { describe, expect, test } from "bun:test"
import { call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"

/**
 * Spec rule 9 and design §7 under the default policy (no WEBHOOK_ALLOW_PRIVATE_URLS): only public HTTPS.
 * The full table of address forms is in test/net/UrlSafety.test.ts; this checks the API's answers.
 */
const f = appFixture()

const create = (url: string) => call(f.app, "POST", "/api/partners/webhooks", { key: f.account.testKey, json: { url } })

describe("webhook URLs under the default policy", () => {
  test.each([
    "http://hooks.example.com/pms",
    "https://127.0.0.1/hooks",
    "https://2130706433/hooks",
    "https://0x7f.0.0.1/hooks",
    "https://0177.0.0.1/hooks",
    "https://10.1.2.3/hooks",
    "https://172.16.0.1/hooks",
    "https://192.168.1.10/hooks",
    "https://100.64.0.1/hooks",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/hooks",
    "https://[::ffff:127.0.0.1]/hooks",
    "https://[fd00:ec2::254]/hooks",
    "https://[fe80::1]/hooks",
    "https://224.0.0.1/hooks",
    "https://0.0.0.0/hooks",
    "https://localhost/hooks",
    "https://hooks.localhost/hooks",
    "https://user:secret@hooks.example.com/pms",
    "ftp://hooks.example.com/pms",
    "hooks.example.com/pms"
  ])("%s → 400 invalid_webhook_url, nothing created", async (url) => {
    const res = await create(url)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ code: "invalid_webhook_url", details: { field: "url", reason: expect.any(String) } })
    expect(JSON.stringify(res.body)).not.toContain("secret@")
    const list = await call(f.app, "GET", "/api/partners/webhooks", { key: f.account.testKey })
    expect(list.body.endpoints).toEqual([])
  })

  test("a public HTTPS URL is accepted (a name is judged by its addresses at each attempt, not at creation)", async () => {
    const res = await create("https://hooks.example.com/pms?tenant=7")
    expect(res.status).toBe(201)
    expect(res.body.url).toBe("https://hooks.example.com/pms?tenant=7")
    const moved = await call(f.app, "PATCH", `/api/partners/webhooks/${res.body.id}`, {
      key: f.account.testKey,
      json: { url: "https://10.0.0.8/pms" }
    })
    expect(moved.status).toBe(400)
    expect(moved.body.code).toBe("invalid_webhook_url")
    const unchanged = await call(f.app, "GET", "/api/partners/webhooks", { key: f.account.testKey })
    expect(unchanged.body.endpoints[0].url).toBe("https://hooks.example.com/pms?tenant=7")
    await call(f.app, "DELETE", `/api/partners/webhooks/${res.body.id}`, { key: f.account.testKey })
  })

  test("a ping to a refused address is not sent: delivered false with the reason", async () => {
    const res = await create("https://hooks.example.com/pms")
    // The URL is switched to a loopback name behind the API's back, as a DNS change would do to a name.
    await f.db.query("UPDATE webhook_endpoints SET url = 'https://localhost:1/pms' WHERE id = $1", [res.body.id])
    const ping = await call(f.app, "POST", `/api/partners/webhooks/${res.body.id}/test`, { key: f.account.testKey })
    expect(ping.status).toBe(200)
    expect(ping.body).toMatchObject({ delivered: false, http_status: null })
    expect(ping.body.error).toContain("localhost")
  })
})
