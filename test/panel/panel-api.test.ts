import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { admin, call, type RunningApp, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { colombian, foreigner, registrationBody, reservationBody } from "../support/guests.ts"
import { type PanelClient, panelClient } from "../support/panel.ts"
import { startReceiver, type Receiver } from "../support/receiver.ts"
import { openStored } from "../support/secrets.ts"
import { type FakeSmtp, startFakeSmtp } from "../support/smtp.ts"

/**
 * The account panel's JSON API (design §8) over HTTP: the real app on real PostgreSQL, e-mail through a real
 * SMTP server (codes are read from what it receives), webhooks to a real receiver.
 */
let smtp: FakeSmtp
let receiver: Receiver
let db: TestDatabase
let app: RunningApp

const HOLDER_A = "holder@andina.example.co"
const MEMBER_A = "member@andina.example.co"
const HOLDER_B = "holder@costa.example.co"
let accountA: string

const errorShape = (code: string) => ({ error: expect.any(String), code, details: expect.any(Object) })

beforeAll(async () => {
  smtp = await startFakeSmtp()
  receiver = startReceiver()
  db = await freshDatabase()
  app = await startApp({
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    MAIL_FROM: "panel@hotel.example.co",
    PANEL_SIGNUP: "open",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true"
  })
  accountA = (await admin(app, (c) => c.CreateAccount({ name: "Hotelera Andina", email: "Holder@Andina.example.co" }))).account_id
  await admin(app, (c) => c.CreateAccount({ name: "Hotelera Costa", email: HOLDER_B }))
  await admin(app, (c) => c.SetLimits({ account_id: accountA, reads: 10_000, writes: 10_000 }))
  holderA = client()
  await holderA.signIn(HOLDER_A)
  await holderA.request("GET", "/api/panel/account")
  holderB = client()
  await holderB.signIn(HOLDER_B)
  await holderB.request("GET", "/api/panel/account")
}, 60_000)

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  await smtp?.stop()
  receiver?.stop()
})

const client = () => panelClient(app, smtp)

/**
 * Signed-in clients shared by the tests: an e-mail may ask for 5 codes an hour (design §8), so the suite signs
 * each person in once; tests that end or age a session use members of their own.
 */
let holderA: PanelClient
let holderB: PanelClient
const freshMember = async (email: string) => {
  expect((await holderA.request("POST", "/api/panel/members", { json: { email } })).status).toBe(201)
  const member = client()
  await member.signIn(email)
  await member.request("GET", "/api/panel/account")
  return member
}

describe("sign-in by e-mailed code (design §8)", () => {
  test("a known e-mail gets a 6-digit code; an unknown one the same answer and no e-mail", async () => {
    const known = await call(app, "POST", "/api/panel/session/code", { json: { email: HOLDER_A } })
    const unknown = await call(app, "POST", "/api/panel/session/code", { json: { email: "nobody@example.co" } })
    expect([known.status, known.body]).toEqual([202, {}])
    expect([unknown.status, unknown.body]).toEqual([202, {}])
    expect(await smtp.waitForCode(HOLDER_A, { since: 0 })).toMatch(/^\d{6}$/)
    // Both requests wrote a code row: the same work whatever the e-mail.
    const rows = await db.query<{ email: string }>("SELECT email FROM panel_codes WHERE email IN ($1, $2)", [
      HOLDER_A,
      "nobody@example.co"
    ])
    expect([...new Set(rows.map((row) => row.email))].sort()).toEqual([HOLDER_A, "nobody@example.co"])
    await Bun.sleep(300)
    expect(smtp.matching((mail) => mail.to.includes("nobody@example.co"))).toEqual([])
  })

  test("the code signs in once: the cookie is HttpOnly, SameSite=Strict, Path=/; spent → 401 invalid_code", async () => {
    const since = Date.now()
    await call(app, "POST", "/api/panel/session/code", { json: { email: HOLDER_A } })
    const code = await smtp.waitForCode(HOLDER_A, { since })
    const signedIn = await call(app, "POST", "/api/panel/session", { json: { email: HOLDER_A, code } })
    expect(signedIn.status).toBe(200)
    expect(signedIn.body).toEqual({ account_id: accountA, account_name: "Hotelera Andina", email: HOLDER_A })
    const cookie = signedIn.headers.getSetCookie().find((line) => line.startsWith("panel_session="))
    expect(cookie).toMatch(/^panel_session=[A-Za-z0-9_-]{43};/)
    expect(cookie).toContain("HttpOnly")
    expect(cookie).toContain("SameSite=Strict")
    expect(cookie).toContain("Path=/")
    expect(cookie).not.toContain("Secure") // PUBLIC_BASE_URL is http here
    const again = await call(app, "POST", "/api/panel/session", { json: { email: HOLDER_A, code } })
    expect(again.status).toBe(401)
    expect(again.body).toEqual(errorShape("invalid_code"))
  })

  test("the session token is stored only hashed", async () => {
    const panel = holderA
    const rows = await db.query<{ token_hash: string }>("SELECT token_hash FROM panel_sessions")
    expect(rows.some((row) => row.token_hash === panel.cookie())).toBe(false)
    expect(rows.every((row) => /^[0-9a-f]{64}$/.test(row.token_hash))).toBe(true)
  })

  test("5 wrong tries burn the code; an expired code is refused", async () => {
    const since = Date.now()
    await call(app, "POST", "/api/panel/session/code", { json: { email: HOLDER_B } })
    const code = await smtp.waitForCode(HOLDER_B, { since })
    const wrong = code === "000000" ? "111111" : "000000"
    for (let i = 0; i < 5; i++) {
      const res = await call(app, "POST", "/api/panel/session", { json: { email: HOLDER_B, code: wrong } })
      expect(res.status).toBe(401)
    }
    const burnt = await call(app, "POST", "/api/panel/session", { json: { email: HOLDER_B, code } })
    expect(burnt.body).toEqual(errorShape("invalid_code"))

    const since2 = Date.now()
    await call(app, "POST", "/api/panel/session/code", { json: { email: HOLDER_B } })
    const late = await smtp.waitForCode(HOLDER_B, { since: since2 })
    await db.query("UPDATE panel_codes SET expires_at = now() - interval '1 second' WHERE email = $1", [HOLDER_B])
    const expired = await call(app, "POST", "/api/panel/session", { json: { email: HOLDER_B, code: late } })
    expect(expired.body).toEqual(errorShape("invalid_code"))
  })

  test("a malformed e-mail or code is 400 invalid_request naming the field", async () => {
    const res = await call(app, "POST", "/api/panel/session", { json: { email: "not-an-email", code: "12" } })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_request")
    expect(res.body.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(["code", "email"])
  })

  test("at most 5 codes per e-mail per hour: the sixth is 429 rate_limited with Retry-After", async () => {
    const email = "limits@example.co"
    for (let i = 0; i < 5; i++) {
      expect((await call(app, "POST", "/api/panel/session/code", { json: { email } })).status).toBe(202)
    }
    const refused = await call(app, "POST", "/api/panel/session/code", { json: { email } })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual(errorShape("rate_limited"))
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  test("signing out kills the session at once", async () => {
    const panel = await freshMember("leaving@andina.example.co")
    expect((await panel.request("GET", "/api/panel/account")).status).toBe(200)
    const before = panel.cookie()
    const out = await panel.request("DELETE", "/api/panel/session")
    expect([out.status, out.body]).toEqual([200, { ok: true }])
    const cookie = out.headers.getSetCookie().find((line) => line.startsWith("panel_session="))
    expect(cookie).toContain("Max-Age=0")
    const after = await call(app, "GET", "/api/panel/account", { headers: { cookie: `panel_session=${before}` } })
    expect(after.status).toBe(401)
  })

  test("an idle session (30 min) and an old one (12 h) are 401 unauthorized at once", async () => {
    const idle = await freshMember("idle@andina.example.co")
    const old = await freshMember("old@andina.example.co")
    await db.query("UPDATE panel_sessions SET last_seen_at = now() - interval '31 minutes' WHERE token_hash = encode(sha256($1::bytea), 'hex')", [idle.cookie()])
    await db.query("UPDATE panel_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = encode(sha256($1::bytea), 'hex')", [old.cookie()])
    for (const panel of [idle, old]) {
      const res = await panel.request("GET", "/api/panel/account")
      expect(res.status).toBe(401)
      expect(res.body).toEqual(errorShape("unauthorized"))
    }
  })

  test("no session → 401 unauthorized on every account route", async () => {
    for (const [method, path] of [["GET", "/api/panel/account"], ["GET", "/api/panel/keys"], ["POST", "/api/panel/sandbox"], ["GET", "/api/panel/audit"]] as const) {
      const res = await call(app, method, path)
      expect(res.status).toBe(401)
      expect(res.body).toEqual(errorShape("unauthorized"))
    }
  })
})

describe("CSRF (design §8)", () => {
  test("a state-changing request needs the X-Panel-CSRF of its session or a same-origin Origin", async () => {
    const panel = holderA
    const bare = await panel.request("POST", "/api/panel/keys", { json: { environment: "test" }, csrf: false })
    expect(bare.status).toBe(403)
    expect(bare.body).toEqual(errorShape("csrf_rejected"))
    const forged = await panel.request("POST", "/api/panel/keys", { json: { environment: "test" }, csrf: "forged" })
    expect(forged.body.code).toBe("csrf_rejected")
    const crossSite = await panel.request("POST", "/api/panel/keys", {
      json: { environment: "test" },
      csrf: false,
      headers: { origin: "https://evil.example" }
    })
    expect(crossSite.body.code).toBe("csrf_rejected")
    const sameOrigin = await panel.request("POST", "/api/panel/keys", {
      json: { environment: "test" },
      csrf: false,
      headers: { origin: app.baseUrl }
    })
    // PUBLIC_BASE_URL is unset: the expected origin is http:// + the request's Host.
    expect(sameOrigin.status).toBe(201)
    const withToken = await panel.request("POST", "/api/panel/keys", { json: { environment: "test" } })
    expect(withToken.status).toBe(201)
    // Reads need neither.
    expect((await panel.request("GET", "/api/panel/keys", { csrf: false })).status).toBe(200)
    // Clean up: this account's test keys are counted by later tests.
    for (const key of (await panel.request("GET", "/api/panel/keys")).body.keys) {
      if (key.revoked_at === null) await panel.request("DELETE", `/api/panel/keys/${key.key_id}`)
    }
  })

  test("before a session, a browser's cross-site Origin is refused", async () => {
    const res = await call(app, "POST", "/api/panel/session/code", {
      json: { email: HOLDER_A },
      headers: { origin: "https://evil.example" }
    })
    expect(res.status).toBe(403)
    expect(res.body).toEqual(errorShape("csrf_rejected"))
  })
})

describe("keys, the test environment, live keys (spec Authentication rules 6–9)", () => {
  test("the test environment once: two test properties and a first test key; again → 409 sandbox_exists", async () => {
    const panel = holderA
    const created = await panel.request("POST", "/api/panel/sandbox")
    expect(created.status).toBe(201)
    expect(created.body.api_key).toMatch(/^svc_test_/)
    expect(created.body.properties).toHaveLength(2)
    const again = await panel.request("POST", "/api/panel/sandbox")
    expect([again.status, again.body.code]).toEqual([409, "sandbox_exists"])
    expect((await panel.request("GET", "/api/panel/account")).body.sandbox).toBe(true)
    // The key works on the partner API at once.
    const properties = await call(app, "GET", "/api/partners/properties", { key: created.body.api_key })
    expect(properties.status).toBe(200)
  })

  test("test keys at once, at most 3 active (409 key_limit_reached); a revoked key answers 401 at once", async () => {
    const panel = holderA
    const active = (await panel.request("GET", "/api/panel/keys")).body.keys.filter(
      (key: { environment: string; revoked_at: string | null }) => key.environment === "test" && key.revoked_at === null
    ).length
    const made: Array<{ key_id: string; api_key: string }> = []
    // A name is refused when blank or over 60 characters, and changes nothing.
    for (const name of [" ", "x".repeat(61)]) {
      const refused = await panel.request("POST", "/api/panel/keys", { json: { environment: "test", name } })
      expect([refused.status, refused.body.code, refused.body.details.fields?.[0]?.field]).toEqual([400, "invalid_request", "name"])
    }
    expect((await panel.request("GET", "/api/panel/keys")).body.keys.filter((key: { revoked_at: string | null; environment: string }) =>
      key.environment === "test" && key.revoked_at === null)).toHaveLength(active)
    for (let i = active; i < 3; i++) {
      const res = await panel.request("POST", "/api/panel/keys", { json: { environment: "test", name: `PMS staging ${i}` } })
      expect(res.status).toBe(201)
      expect(res.body).toEqual({ key_id: expect.any(String), api_key: expect.stringMatching(/^svc_test_/), environment: "test", name: `PMS staging ${i}` })
      made.push(res.body)
    }
    const over = await panel.request("POST", "/api/panel/keys", { json: { environment: "test" } })
    expect([over.status, over.body.code]).toEqual([409, "key_limit_reached"])
    const victim = made[0] ?? (await panel.request("GET", "/api/panel/keys")).body.keys.find((k: { environment: string }) => k.environment === "test")
    const revoked = await panel.request("DELETE", `/api/panel/keys/${victim.key_id}`)
    expect(revoked.status).toBe(200)
    expect(revoked.body).toEqual({ key_id: victim.key_id, revoked_at: expect.any(String) })
    if (made[0] !== undefined) {
      expect((await call(app, "GET", "/api/partners/properties", { key: made[0].api_key })).status).toBe(401)
    }
    // The listing never shows a key, only its prefix; with the name it was given and when it was last used.
    const listed = await panel.request("GET", "/api/panel/keys")
    expect(JSON.stringify(listed.body)).not.toContain(made[1]?.api_key ?? "svc_test_x")
    for (const [index, key] of made.entries()) {
      expect(listed.body.keys.find((k: { key_id: string }) => k.key_id === key.key_id)).toMatchObject({
        name: `PMS staging ${active + index}`,
        last_used_at: null
      })
    }
  })

  test("a live key: the code goes to the account's e-mail, not the member's; then a notice e-mail", async () => {
    const member = await freshMember(MEMBER_A)
    const since = Date.now()
    const asked = await member.request("POST", "/api/panel/keys", { json: { environment: "live", name: "  PMS producción " } })
    expect(asked.status).toBe(202)
    expect(asked.body).toEqual({ confirmation_id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    const code = await smtp.waitForCode(HOLDER_A, { since })
    expect(smtp.matching((mail) => mail.to.includes(MEMBER_A) && mail.receivedAt >= since)).toEqual([])

    const wrong = await member.request("POST", "/api/panel/keys/confirm", {
      json: { confirmation_id: asked.body.confirmation_id, code: code === "123456" ? "654321" : "123456" }
    })
    expect([wrong.status, wrong.body.code]).toEqual([401, "invalid_code"])
    const confirmed = await member.request("POST", "/api/panel/keys/confirm", {
      json: { confirmation_id: asked.body.confirmation_id, code }
    })
    expect(confirmed.status).toBe(201)
    expect(confirmed.body).toEqual({ key_id: expect.any(String), api_key: expect.stringMatching(/^svc_live_/), environment: "live", name: "PMS producción" })
    // The name given when it was asked for, kept with the code, trimmed.
    const keys = (await member.request("GET", "/api/panel/keys")).body.keys
    expect(keys.find((k: { key_id: string }) => k.key_id === confirmed.body.key_id)?.name).toBe("PMS producción")
    const toHolder = (mail: { to: ReadonlyArray<string> }) => mail.to.some((to) => to.toLowerCase() === HOLDER_A)
    const notice = await smtp.waitFor((mail) => toHolder(mail) && mail.receivedAt >= since && /svc_live_/.test(mail.text))
    expect(notice.text).toContain(MEMBER_A)
    expect(notice.text).not.toContain(confirmed.body.api_key)
    // A spent confirmation is refused.
    const replay = await member.request("POST", "/api/panel/keys/confirm", { json: { confirmation_id: asked.body.confirmation_id, code } })
    expect(replay.body.code).toBe("invalid_code")
  })

  test("a member cannot change members (403 owner_required); removing a member ends their sessions", async () => {
    const member = client()
    await member.signIn(MEMBER_A)
    await member.request("GET", "/api/panel/account")
    const add = await member.request("POST", "/api/panel/members", { json: { email: "other@example.co" } })
    expect([add.status, add.body.code]).toEqual([403, "owner_required"])
    const remove = await member.request("DELETE", `/api/panel/members/${encodeURIComponent(HOLDER_A)}`)
    expect([remove.status, remove.body.code]).toEqual([403, "owner_required"])

    const holder = holderA
    const removed = await holder.request("DELETE", `/api/panel/members/${encodeURIComponent(MEMBER_A)}`)
    expect(removed.status).toBe(200)
    expect(removed.body.members.map((m: { email: string }) => m.email)).not.toContain(MEMBER_A)
    expect((await member.request("GET", "/api/panel/account")).status).toBe(401)
    const missing = await holder.request("DELETE", `/api/panel/members/${encodeURIComponent(MEMBER_A)}`)
    expect([missing.status, missing.body.code]).toEqual([404, "member_not_found"])
  })
})

describe("sign-up (PANEL_SIGNUP=open)", () => {
  test("creates a test-only account on sign-in; a live key is 403 live_not_enabled until an operator enables it", async () => {
    const email = "newhotel@example.co"
    const since = Date.now()
    const signup = await call(app, "POST", "/api/panel/signup", {
      json: { name: "Hotel Nuevo", email },
      headers: { "accept-language": "en-US,en;q=0.9" }
    })
    expect([signup.status, signup.body]).toEqual([202, {}])
    const mail = await smtp.waitFor((m) => m.to.includes(email) && m.receivedAt >= since)
    expect(mail.subject).toMatch(/[A-Za-z]/)
    const code = await smtp.waitForCode(email, { since })
    const panel = client()
    const signedIn = await panel.request("POST", "/api/panel/session", { json: { email, code } })
    expect(signedIn.status).toBe(200)
    expect(signedIn.body.account_name).toBe("Hotel Nuevo")
    const account = await panel.request("GET", "/api/panel/account")
    expect(account.body).toMatchObject({ live_enabled: false, sandbox: false, is_holder: true })
    const live = await panel.request("POST", "/api/panel/keys", { json: { environment: "live" } })
    expect([live.status, live.body.code]).toEqual([403, "live_not_enabled"])
    // Nor a live webhook endpoint (issue 26): the test environment's is made at once.
    const hook = { url: `${receiver.url}/new-hotel`, events: ["reservation.created"] }
    const liveHook = await panel.request("POST", "/api/panel/webhooks", { json: { environment: "live", ...hook } })
    expect([liveHook.status, liveHook.body.code]).toEqual([403, "live_not_enabled"])
    expect((await panel.request("POST", "/api/panel/webhooks", { json: { environment: "test", ...hook } })).status).toBe(201)
    expect((await panel.request("POST", "/api/panel/sandbox")).status).toBe(201)

    await admin(app, (c) => c.EnableLive({ account_id: signedIn.body.account_id }))
    const enabled = await panel.request("POST", "/api/panel/keys", { json: { environment: "live" } })
    expect(enabled.status).toBe(202)
  })

  test("with an e-mail that already has an account: the same 202, and a sign-in code instead", async () => {
    const since = Date.now()
    const res = await call(app, "POST", "/api/panel/signup", { json: { name: "Otra", email: HOLDER_B } })
    expect([res.status, res.body]).toEqual([202, {}])
    await smtp.waitForCode(HOLDER_B, { since })
    const accounts = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM accounts WHERE lower(email) = $1", [HOLDER_B])
    expect(accounts[0]?.n).toBe(1)
  })
})

describe("properties, webhooks, reservations: one account never sees another's", () => {
  let aPanel: PanelClient
  let bPanel: PanelClient
  let aTestKey: string
  let bSandbox: { api_key: string; properties: Array<{ property_id: string }> }

  beforeAll(async () => {
    aPanel = holderA
    bPanel = holderB
    bSandbox = (await bPanel.request("POST", "/api/panel/sandbox")).body
    aTestKey = (await admin(app, (c) => c.CreateKey({ account_id: accountA, environment: "test" }))).api_key
  })

  test("settings: the TRA token is write-only; another account's property is 404 property_not_found", async () => {
    const listed = await aPanel.request("GET", "/api/panel/properties")
    expect(listed.status).toBe(200)
    const property = listed.body.properties.find((p: { environment: string }) => p.environment === "test")
    expect(property.settings).toMatchObject({ tra_token_set: false })
    const patched = await aPanel.request("PATCH", `/api/panel/properties/${property.property_id}`, {
      json: { tra_token: "tok-very-secret", default_room: "101", sire_hotel_code: "12345" }
    })
    expect(patched.status).toBe(200)
    expect(patched.body.settings).toEqual({
      tra_token_set: true,
      establishment_name: null,
      tipo_acomodacion: null,
      default_room: "101",
      sire_hotel_code: "12345",
      sire_city_code: null
    })
    expect(JSON.stringify(patched.body)).not.toContain("tok-very-secret")
    expect(JSON.stringify((await aPanel.request("GET", "/api/panel/properties")).body)).not.toContain("tok-very-secret")
    // Stored sealed under SECRETS_KEY (design §3), as the operators' `properties update --tra-token` does
    const [stored] = await db.query("SELECT tra_token FROM properties WHERE id = $1", [property.property_id])
    expect(await openStored(stored!.tra_token)).toBe("tok-very-secret")
    const bad = await aPanel.request("PATCH", `/api/panel/properties/${property.property_id}`, { json: { sire_city_code: "abc" } })
    expect([bad.status, bad.body.code]).toEqual([400, "invalid_request"])
    const foreign = await aPanel.request("PATCH", `/api/panel/properties/${bSandbox.properties[0]!.property_id}`, {
      json: { default_room: "7" }
    })
    expect([foreign.status, foreign.body.code]).toEqual([404, "property_not_found"])
    expect(JSON.stringify((await aPanel.request("GET", "/api/panel/properties")).body)).not.toContain(bSandbox.properties[0]!.property_id)
    const audit = await aPanel.request("GET", "/api/panel/audit")
    expect(audit.body.entries[0]).toMatchObject({
      actor_email: HOLDER_A,
      action: "property.settings_changed",
      target: expect.stringContaining("tra_token")
    })
  })

  test("webhooks: a failed delivery is listed with its attempts and redelivered; another account's is 404", async () => {
    receiver.on("/panel-hook", 500)
    const created = await call(app, "POST", "/api/partners/webhooks", {
      key: aTestKey,
      json: { url: `${receiver.url}/panel-hook`, events: ["reservation.created"] }
    })
    expect(created.status).toBe(201)
    const properties = (await call(app, "GET", "/api/partners/properties", { key: aTestKey })).body.properties
    const reservation = await call(app, "POST", "/api/partners/reservations", {
      key: aTestKey,
      json: reservationBody(properties[0].property_id)
    })
    expect(reservation.status).toBe(201)
    await receiver.waitFor((r) => r.path === "/panel-hook")

    const hooks = await aPanel.request("GET", "/api/panel/webhooks?environment=test")
    expect(hooks.status).toBe(200)
    const endpoint = hooks.body.endpoints.find((e: { id: string }) => e.id === created.body.id)
    expect(endpoint.last_7_days).toMatchObject({ delivered: 0, failed: 0 })
    // The receiver has the request; the attempt is recorded once its answer is back: wait for that.
    const listed = async () => {
      const deliveries = await aPanel.request("GET", `/api/panel/deliveries?environment=test&external_id=${reservation.body.external_id}`)
      expect(deliveries.status).toBe(200)
      return deliveries.body.deliveries[0]
    }
    let delivery = await listed()
    for (let i = 0; i < 100 && delivery.attempt_log.length === 0; i++) {
      await Bun.sleep(20)
      delivery = await listed()
    }
    expect(delivery.attempt_log[0]).toMatchObject({ http_status: 500, duration_ms: expect.any(Number) })
    // Failed once and waiting for its retry: "retrying" in the counts (issue 26: not "delivered 0 · failed 0").
    expect(delivery).toMatchObject({ status: "pending", panel_status: "retrying", endpoint_url: `${receiver.url}/panel-hook` })
    const counted = (await aPanel.request("GET", "/api/panel/webhooks?environment=test")).body.endpoints
      .find((e: { id: string }) => e.id === created.body.id)
    expect(counted.last_7_days).toEqual({ pending: 0, retrying: 1, delivered: 0, failed: 0 })

    receiver.on("/panel-hook", 200)
    const redelivered = await aPanel.request("POST", `/api/panel/deliveries/${delivery.id}/redeliver`)
    expect(redelivered.status).toBe(200)
    expect(redelivered.body).toMatchObject({ ok: true, id: delivery.id, status: "pending" })
    await receiver.waitForCount(2, (r) => r.path === "/panel-hook")

    const ping = await aPanel.request("POST", `/api/panel/webhooks/${created.body.id}/test`)
    expect(ping.status).toBe(200)
    expect(ping.body.delivered).toBe(true)

    expect((await bPanel.request("POST", `/api/panel/deliveries/${delivery.id}/redeliver`)).body.code).toBe("delivery_not_found")
    expect((await bPanel.request("POST", `/api/panel/webhooks/${created.body.id}/test`)).body.code).toBe("webhook_not_found")

    // Recover (design §6.14): the delivery failed; the holder queues the endpoint's failed ones again.
    await db.query("UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1", [delivery.id])
    const since = new Date(Date.now() - 3_600_000).toISOString()
    const recovered = await aPanel.request("POST", `/api/panel/webhooks/${created.body.id}/recover`, { json: { since } })
    expect({ status: recovered.status, body: recovered.body }).toEqual({ status: 202, body: { recovered: 1 } })
    await receiver.waitForCount(3, (r) => r.path === "/panel-hook" && r.headers["x-service-event"] !== "ping")
    const foreign = await bPanel.request("POST", `/api/panel/webhooks/${created.body.id}/recover`, { json: { since } })
    expect({ status: foreign.status, code: foreign.body.code }).toEqual({ status: 404, code: "webhook_not_found" })
    expect((await bPanel.request("GET", "/api/panel/deliveries?environment=test")).body.deliveries).toEqual([])
    expect((await bPanel.request("GET", "/api/panel/webhooks?environment=test")).body.endpoints).toEqual([])
  })

  test("reservations: statuses and warnings, filters, cursor pages, no guest personal data", async () => {
    const properties = (await call(app, "GET", "/api/partners/properties", { key: aTestKey })).body.properties
    const made: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const body = registrationBody(properties[0].property_id, [colombian(), foreigner()], { sandbox_simulate: "tra_failed" })
      const res = await call(app, "POST", "/api/partners/registrations", { key: aTestKey, json: body })
      expect(res.status).toBe(201)
      made.push(body.external_id as string)
    }
    const first = await aPanel.request("GET", "/api/panel/reservations?environment=test&status=partial&limit=2")
    expect(first.status).toBe(200)
    expect(first.body.reservations).toHaveLength(2)
    expect(first.body.next_cursor).toEqual(expect.any(String))
    const row = first.body.reservations[0]
    expect(row).toMatchObject({ status: "partial", tra: { status: "error", warning: expect.any(String) } })
    expect(Object.keys(row)).toEqual(expect.arrayContaining(["check_in", "check_out", "property_id", "updated_at"]))
    for (const reservation of first.body.reservations) {
      expect(Object.keys(reservation)).not.toEqual(expect.arrayContaining(["guests"]))
      expect(Object.keys(reservation)).not.toEqual(expect.arrayContaining(["guest_name"]))
    }
    const text = JSON.stringify(first.body)
    for (const personal of ["numero_documento", "Smith", "Pérez", "AB123456", "1020304050"]) expect(text).not.toContain(personal)
    const second = await aPanel.request("GET", `/api/panel/reservations?environment=test&status=partial&limit=2&cursor=${first.body.next_cursor}`)
    const seen = [...first.body.reservations, ...second.body.reservations].map((r: { external_id: string }) => r.external_id)
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen).toEqual(expect.arrayContaining(made))
    const one = await aPanel.request("GET", `/api/panel/reservations?environment=test&q=${encodeURIComponent(made[1]!)}`)
    expect(one.body.reservations.map((r: { external_id: string }) => r.external_id)).toEqual([made[1]])
    const badCursor = await aPanel.request("GET", "/api/panel/reservations?cursor=nonsense")
    expect([badCursor.status, badCursor.body.code]).toEqual([400, "invalid_request"])
    expect((await bPanel.request("GET", "/api/panel/reservations?environment=test")).body.reservations).toEqual([])
  })

  test("record departure (design §6.8): the partner API's rules on a row of the account: 200 the row, 400, 409, another account's 404, audited", async () => {
    const properties = (await call(app, "GET", "/api/partners/properties", { key: aTestKey })).body.properties
    const today = new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10)
    const body = reservationBody(properties[0].property_id, { check_in: today, check_out: "2100-01-01" })
    const created = await call(app, "POST", "/api/partners/reservations", { key: aTestKey, json: body })
    expect(created.status).toBe(201)
    const path = `/api/panel/reservations/${created.body.reservation_id}/departure`

    const recorded = await aPanel.request("POST", path, { json: { departed_on: today } })
    expect(recorded.status).toBe(200)
    expect(recorded.body).toMatchObject({
      reservation_id: created.body.reservation_id,
      departed_on: today,
      check_in: today,
      check_out: "2100-01-01",
      updated_at: expect.any(String)
    })
    const partner = await call(app, "GET", `/api/partners/registrations/${body.external_id}`, { key: aTestKey })
    expect(partner.body.departed_on).toBe(today)

    const future = await aPanel.request("POST", path, { json: { departed_on: "2099-12-31" } })
    expect([future.status, future.body.code, future.body.details.fields[0].field]).toEqual([400, "invalid_request", "departed_on"])
    expect((await aPanel.request("POST", path, { json: {} })).body.code).toBe("invalid_request")
    const badId = await aPanel.request("POST", "/api/panel/reservations/not-a-uuid/departure", { json: { departed_on: today } })
    expect([badId.status, badId.body.code]).toEqual([400, "invalid_request"])

    const other = await bPanel.request("POST", path, { json: { departed_on: today } })
    expect([other.status, other.body]).toEqual([404, errorShape("registration_not_found")])
    const unknown = await aPanel.request("POST", "/api/panel/reservations/00000000-0000-4000-8000-000000000000/departure", {
      json: { departed_on: today }
    })
    expect(unknown.status).toBe(404)

    await call(app, "POST", "/api/partners/reservations/cancel", { key: aTestKey, json: { external_id: body.external_id } })
    const cancelled = await aPanel.request("POST", path, { json: { departed_on: today } })
    expect([cancelled.status, cancelled.body.code]).toEqual([409, "reservation_cancelled"])

    const audit = await aPanel.request("GET", "/api/panel/audit")
    expect(audit.body.entries.filter((entry: { action: string }) => entry.action === "reservation.departure_recorded"))
      .toEqual([expect.objectContaining({ target: `${body.external_id} ${today}` })])
  })
})

describe("webhooks managed from the panel, and the delivery log (issue 26)", () => {
  const HOLDER_C = "holder@sabana.example.co"
  let panel: PanelClient
  let key: string
  let propertyId: string

  beforeAll(async () => {
    const created = await admin(app, (c) => c.CreateAccount({ name: "Hotel Sabana", email: HOLDER_C }))
    await admin(app, (c) => c.SetLimits({ account_id: created.account_id, reads: 10_000, writes: 10_000 }))
    panel = client()
    await panel.signIn(HOLDER_C)
    await panel.request("GET", "/api/panel/account")
    const sandbox = (await panel.request("POST", "/api/panel/sandbox")).body
    key = sandbox.api_key
    propertyId = sandbox.properties[0].property_id
  })

  test("add, change, rotate, deactivate: the partner API's rules and answers, audited; another account's is 404", async () => {
    const url = `${receiver.url}/sabana`
    const created = await panel.request("POST", "/api/panel/webhooks", {
      json: { environment: "test", url, events: ["reservation.created", "tra.failed"], include_guests: true }
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      url,
      events: ["reservation.created", "tra.failed"],
      include_guests: true,
      is_active: true,
      secret: expect.stringMatching(/^whsec_/)
    })
    const id: string = created.body.id
    // The same endpoint the partner API sees with the account's test key.
    const partnerList = await call(app, "GET", "/api/partners/webhooks", { key })
    expect(partnerList.body.endpoints.map((e: { id: string }) => e.id)).toEqual([id])
    // The partner API's validation: no event, a URL that is not one.
    const noEvents = await panel.request("POST", "/api/panel/webhooks", { json: { environment: "test", url, events: [] } })
    expect([noEvents.status, noEvents.body.code]).toEqual([400, "invalid_request"])
    expect(noEvents.body.details.fields.map((f: { field: string }) => f.field)).toEqual(["events"])
    const badUrl = await panel.request("POST", "/api/panel/webhooks", { json: { environment: "test", url: "ftp://files.example.co/x" } })
    expect([badUrl.status, badUrl.body.code]).toEqual([400, "invalid_webhook_url"])
    const noEnvironment = await panel.request("POST", "/api/panel/webhooks", { json: { url } })
    expect([noEnvironment.status, noEnvironment.body.code]).toEqual([400, "invalid_request"])
    // A state-changing request without the session's CSRF token is refused.
    const forged = await panel.request("POST", "/api/panel/webhooks", { json: { environment: "test", url }, csrf: false })
    expect([forged.status, forged.body.code]).toEqual([403, "csrf_rejected"])
    // 5 active per environment, as on the partner API.
    for (let i = 2; i <= 5; i++) {
      const more = await panel.request("POST", "/api/panel/webhooks", { json: { environment: "test", url: `${url}-${i}` } })
      expect(more.status).toBe(201)
    }
    const sixth = await panel.request("POST", "/api/panel/webhooks", { json: { environment: "test", url: `${url}-6` } })
    expect([sixth.status, sixth.body.code]).toEqual([409, "webhook_limit_reached"])

    const changed = await panel.request("PATCH", `/api/panel/webhooks/${id}`, { json: { events: ["*"], include_guests: false } })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ id, events: ["*"], include_guests: false })
    expect(changed.body.secret).toBeUndefined()

    const rotated = await panel.request("POST", `/api/panel/webhooks/${id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(created.body.secret)
    const [stored] = await db.query("SELECT secret FROM webhook_endpoints WHERE id = $1", [id])
    expect(await openStored(stored!.secret)).toBe(rotated.body.secret)

    // Another account's panel cannot touch it.
    for (const [method, path] of [
      ["PATCH", `/api/panel/webhooks/${id}`],
      ["DELETE", `/api/panel/webhooks/${id}`],
      ["POST", `/api/panel/webhooks/${id}/rotate-secret`]
    ] as const) {
      const foreign = await holderB.request(method, path, method === "PATCH" ? { json: { include_guests: true } } : {})
      expect([method, foreign.status, foreign.body.code]).toEqual([method, 404, "webhook_not_found"])
    }

    const deactivated = await panel.request("DELETE", `/api/panel/webhooks/${id}`)
    expect([deactivated.status, deactivated.body]).toEqual([200, { ok: true, id, is_active: false }])
    const listed = (await panel.request("GET", "/api/panel/webhooks?environment=test")).body.endpoints
    expect(listed.map((e: { id: string }) => e.id)).not.toContain(id)
    expect((await panel.request("PATCH", `/api/panel/webhooks/${id}`, { json: { include_guests: true } })).status).toBe(404)
    // Room again for one more.
    expect((await panel.request("POST", "/api/panel/webhooks", { json: { environment: "test", url: `${url}-6` } })).status).toBe(201)

    const audit = (await panel.request("GET", "/api/panel/audit")).body.entries
      .map((entry: { action: string }) => entry.action)
      .filter((action: string) => action.startsWith("webhook."))
    expect(audit.filter((action: string) => action === "webhook.created")).toHaveLength(6)
    expect(audit).toEqual(expect.arrayContaining(["webhook.updated", "webhook.secret_rotated", "webhook.deactivated"]))
    // Each entry names the endpoint and, for a change, the fields whose value changed.
    const entries = (await panel.request("GET", "/api/panel/audit")).body.entries
    expect(entries.find((entry: { action: string }) => entry.action === "webhook.updated").details)
      .toEqual({ url, new_url: url, fields: ["events", "include_guests"] })
    expect(entries.find((entry: { action: string }) => entry.action === "webhook.deactivated").details).toEqual({ url })
  })

  test("the delivery log: endpoint and status filters, counts with retrying, cursor pages, one delivery's payload and answers", async () => {
    // The previous test's endpoints go; two of this test's own: one answers 503 with a body, the other 200.
    for (const endpoint of (await panel.request("GET", "/api/panel/webhooks?environment=test")).body.endpoints) {
      expect((await panel.request("DELETE", `/api/panel/webhooks/${endpoint.id}`)).status).toBe(200)
    }
    receiver.on("/sabana-down", { status: 503, body: "{\"error\":\"mantenimiento\"}" })
    receiver.on("/sabana-up", 200)
    const hook = async (path: string) => {
      const created = await panel.request("POST", "/api/panel/webhooks", {
        json: { environment: "test", url: `${receiver.url}${path}`, events: ["reservation.created"] }
      })
      expect(created.status).toBe(201)
      return created.body.id as string
    }
    const down = await hook("/sabana-down")
    const up = await hook("/sabana-up")
    const externalIds: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const made = await call(app, "POST", "/api/partners/reservations", { key, json: reservationBody(propertyId) })
      expect(made.status).toBe(201)
      externalIds.push(made.body.external_id)
    }
    // Every delivery has had its first attempt recorded.
    const log = (params: string) => panel.request("GET", `/api/panel/deliveries?environment=test&${params}`)
    for (let i = 0; i < 200; i++) {
      const all = (await log("limit=100")).body.deliveries
      if (all.length === 6 && all.every((d: { attempts: number; attempt_log: Array<unknown> }) => d.attempt_log.length > 0)) break
      await Bun.sleep(25)
    }

    const all = await log("limit=100")
    expect(all.status).toBe(200)
    expect(all.body.counts).toEqual({ pending: 0, retrying: 3, delivered: 3, failed: 0 })
    expect(all.body.next_cursor).toBeNull()
    const downOnly = await log(`endpoint_id=${down}`)
    expect(downOnly.body.deliveries.map((d: { endpoint_id: string }) => d.endpoint_id)).toEqual([down, down, down])
    expect(downOnly.body.deliveries[0]).toMatchObject({
      endpoint_url: `${receiver.url}/sabana-down`,
      panel_status: "retrying",
      status: "pending",
      event: "reservation.created",
      external_id: externalIds[2]
    })
    expect(downOnly.body.counts).toEqual({ pending: 0, retrying: 3, delivered: 0, failed: 0 })
    // The status filter narrows the rows, not the counts (they are what the other filters match).
    const retrying = await log("status=retrying")
    expect(retrying.body.deliveries.map((d: { endpoint_id: string }) => d.endpoint_id)).toEqual([down, down, down])
    expect(retrying.body.counts).toEqual(all.body.counts)
    const one = await log(`external_id=${externalIds[0]}`)
    expect(one.body.deliveries.map((d: { endpoint_id: string }) => d.endpoint_id).sort()).toEqual([down, up].sort())
    expect(one.body.counts).toEqual({ pending: 0, retrying: 1, delivered: 1, failed: 0 })

    // Pages of 4, most recent first: every delivery once, then no cursor.
    const first = await log("limit=4")
    expect(first.body.deliveries).toHaveLength(4)
    expect(first.body.next_cursor).toEqual(expect.any(String))
    const second = await log(`limit=4&cursor=${first.body.next_cursor}`)
    expect(second.body.deliveries).toHaveLength(2)
    expect(second.body.next_cursor).toBeNull()
    expect([...first.body.deliveries, ...second.body.deliveries].map((d: { id: string }) => d.id))
      .toEqual(all.body.deliveries.map((d: { id: string }) => d.id))
    const badCursor = await log("cursor=bm90LWEtY3Vyc29y")
    expect([badCursor.status, badCursor.body.code]).toEqual([400, "invalid_request"])
    const badEndpoint = await log("endpoint_id=nope")
    expect([badEndpoint.status, badEndpoint.body.code]).toEqual([400, "invalid_request"])

    // One delivery: the payload as sent and the attempt with the receiver's answer.
    const failing = downOnly.body.deliveries[0]
    const detail = await panel.request("GET", `/api/panel/deliveries/${failing.id}`)
    expect(detail.status).toBe(200)
    expect(detail.body).toMatchObject({ id: failing.id, endpoint_url: `${receiver.url}/sabana-down`, external_id: externalIds[2] })
    const sent = receiver.received.find((r) => r.path === "/sabana-down" && JSON.parse(r.body).id === failing.event_id)!
    expect(detail.body.payload).toEqual(JSON.parse(sent.body))
    expect(detail.body.attempts).toBe(1)
    expect(detail.body.attempt_details[0]).toEqual({
      at: expect.any(String),
      status_code: 503,
      duration_ms: expect.any(Number),
      error: "HTTP 503",
      response_excerpt: "{\"error\":\"mantenimiento\"}"
    })
    // Endpoint 15 shows the same attempt without the answer.
    const partner = await call(app, "GET", "/api/partners/webhooks/deliveries?limit=100", { key })
    const partnerView = partner.body.deliveries.find((d: { id: string }) => d.id === failing.id)
    expect(Object.keys(partnerView.attempt_log[0]).sort()).toEqual(["attempted_at", "duration_ms", "error", "http_status"])
    expect((await holderB.request("GET", `/api/panel/deliveries/${failing.id}`)).body.code).toBe("delivery_not_found")
    expect((await panel.request("GET", "/api/panel/deliveries/not-a-uuid")).status).toBe(404)
  })
})

describe("the panel's own OpenAPI document", () => {
  test("/api/panel/openapi.json lists the panel's routes; the partner document does not", async () => {
    const panelDoc = await call(app, "GET", "/api/panel/openapi.json")
    expect(panelDoc.status).toBe(200)
    expect(Object.keys(panelDoc.body.paths)).toEqual(expect.arrayContaining(["/api/panel/session/code", "/api/panel/keys"]))
    const partnerDoc = await call(app, "GET", "/openapi.json")
    expect(Object.keys(partnerDoc.body.paths).some((path) => path.startsWith("/api/panel"))).toBe(false)
  })
})
