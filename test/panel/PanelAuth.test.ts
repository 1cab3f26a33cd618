import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, type ManagedRuntime, Option, Redacted, TestClock, TestContext } from "effect"
import * as MailerModule from "../../src/mail/Mailer.ts"
import { MailQueue } from "../../src/mail/MailQueue.ts"
import { PanelAuth } from "../../src/panel/PanelAuth.ts"
import * as RateLimits from "../../src/ratelimit/RateLimits.ts"
import { admin, call, type RunningApp, startApp, stopAll } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { panelClient } from "../support/panel.ts"
import { serviceRuntime } from "../support/services.ts"
import { type FakeSmtp, startFakeSmtp } from "../support/smtp.ts"

/**
 * The panel's clocks on a `TestClock` (design §8): a code lasts 10 minutes, a session 30 minutes idle and 12 hours
 * at most, code requests are limited per client address per hour; and a live key's notice reaches the holder
 * even when the mail server is down at the time. The app runs with ROLE=api: no loop of its own sends mail.
 */
let smtp: FakeSmtp
let db: TestDatabase
let app: RunningApp
let auth: ManagedRuntime.ManagedRuntime<PanelAuth, unknown>
let mailWorker: ManagedRuntime.ManagedRuntime<MailQueue | MailerModule.Mailer, unknown>
const EMAIL = "clock@hotel.example.co"

beforeAll(async () => {
  smtp = await startFakeSmtp()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api", SMTP_URL: smtp.url })
  await admin(app, (c) => c.CreateAccount({ name: "Hotel Reloj", email: EMAIL }))
  auth = serviceRuntime(app, PanelAuth.Default.pipe(Layer.provide(RateLimits.layer)))
  mailWorker = serviceRuntime(
    app,
    Layer.mergeAll(
      MailQueue.Default,
      MailerModule.smtp({ url: Redacted.make(smtp.url), from: "no-reply@hotel.example.co" }),
      Layer.effect(SqlClient.SqlClient, SqlClient.SqlClient)
    )
  )
})

afterAll(() => stopAll(auth, mailWorker, app, db, smtp))

/** The code of the newest sign-in e-mail queued for `email` (read from the outbox: nothing sends it here). */
const queuedCode = async (email: string) => {
  const [row] = await db.query<{ text_body: string }>(
    "SELECT text_body FROM mail_outbox WHERE recipient = $1 ORDER BY created_at DESC LIMIT 1",
    [email]
  )
  const code = /\b(\d{6})\b/.exec(row?.text_body ?? "")?.[1]
  if (code === undefined) throw new Error(`no code queued for ${email}`)
  return code
}

const onTestClock = <A, E>(program: Effect.Effect<A, E, PanelAuth>) =>
  auth.runPromise(
    Effect.zipRight(TestClock.setTime(Date.now()), program).pipe(Effect.provide(TestContext.TestContext))
  )

const signedIn = Effect.gen(function*() {
  const service = yield* PanelAuth
  yield* service.requestCode(EMAIL, "10.0.0.1")
  const code = yield* Effect.promise(() => queuedCode(EMAIL))
  return yield* service.signIn(EMAIL, code, "10.0.0.1")
})

const alive = (token: string) =>
  Effect.flatMap(PanelAuth, (service) => Effect.map(service.authenticate(token, null), Option.isSome))

describe("sessions on a TestClock", () => {
  test("30 minutes without a request end a session; each request starts the idle clock again", async () => {
    const seen = await onTestClock(Effect.gen(function*() {
      const { token } = yield* signedIn
      const states = [yield* alive(token)]
      yield* TestClock.adjust("29 minutes")
      states.push(yield* alive(token)) // a request: the idle clock starts again
      yield* TestClock.adjust("29 minutes")
      states.push(yield* alive(token))
      yield* TestClock.adjust("30 minutes")
      states.push(yield* alive(token)) // 30 minutes idle: over
      yield* TestClock.adjust("1 minute")
      states.push(yield* alive(token))
      return states
    }))
    expect(seen).toEqual([true, true, true, false, false])
  })

  test("12 hours after sign-in a session ends, however busy", async () => {
    const seen = await onTestClock(Effect.gen(function*() {
      const { token } = yield* signedIn
      const states: Array<boolean> = []
      for (let minutes = 0; minutes < 12 * 60; minutes += 20) {
        states.push(yield* alive(token))
        yield* TestClock.adjust("20 minutes")
      }
      states.push(yield* alive(token)) // exactly 12 h
      return states
    }))
    expect(seen.slice(0, -1).every(Boolean)).toBe(true)
    expect(seen.at(-1)).toBe(false)
  })

  test("a code is valid 10 minutes", async () => {
    const outcome = await onTestClock(Effect.gen(function*() {
      const service = yield* PanelAuth
      yield* service.requestCode(EMAIL, "10.0.0.2")
      const code = yield* Effect.promise(() => queuedCode(EMAIL))
      yield* TestClock.adjust("10 minutes")
      return yield* Effect.flip(service.signIn(EMAIL, code, "10.0.0.2"))
    }))
    expect(outcome._tag).toBe("InvalidCode")
  })
})

test("at most 30 code requests per client address per hour, whatever the e-mails", async () => {
  const tags = await onTestClock(Effect.gen(function*() {
    const service = yield* PanelAuth
    const ip = "203.0.113.9"
    const results: Array<string> = []
    for (let i = 0; i < 31; i++) {
      results.push(yield* service.requestCode(`guest${i}@example.co`, ip).pipe(Effect.as("ok"), Effect.catchAll((e) => Effect.succeed(e._tag))))
    }
    yield* TestClock.adjust("1 hour")
    results.push(yield* service.requestCode("later@example.co", ip).pipe(Effect.as("ok"), Effect.catchAll((e) => Effect.succeed(e._tag))))
    return results
  }))
  expect(tags.slice(0, 30).every((tag) => tag === "ok")).toBe(true)
  expect(tags[30]).toBe("RateLimited")
  expect(tags[31]).toBe("ok")
})

test("the live-key notice reaches the holder even when the mail server is down when the key is created", async () => {
  const round = Effect.flatMap(MailQueue, (queue) => queue.runDue())
  const send = () =>
    mailWorker.runPromise(Effect.zipRight(TestClock.setTime(Date.now() + 1_000), round).pipe(Effect.provide(TestContext.TestContext)))
  const panel = panelClient(app, smtp)
  const holder = "notice@hotel.example.co"
  await admin(app, (c) => c.CreateAccount({ name: "Hotel Aviso", email: holder }))

  const asked = Date.now()
  expect((await call(app, "POST", "/api/panel/session/code", { json: { email: holder } })).status).toBe(202)
  await send()
  const code = await smtp.waitForCode(holder, { since: asked })
  expect((await panel.request("POST", "/api/panel/session", { json: { email: holder, code } })).status).toBe(200)
  const since = Date.now()
  const requested = await panel.request("POST", "/api/panel/keys", { json: { environment: "live" } })
  expect(requested.status).toBe(202)
  await send()
  const confirmation = await smtp.waitForCode(holder, { since })

  await smtp.refuse()
  const created = await panel.request("POST", "/api/panel/keys/confirm", {
    json: { confirmation_id: requested.body.confirmation_id, code: confirmation }
  })
  expect(created.status).toBe(201)
  const delivered = await mailWorker.runPromise(Effect.gen(function*() {
    yield* TestClock.setTime(Date.now() + 1_000)
    const first = yield* round // refused: the notice waits in the outbox
    yield* Effect.promise(() => smtp.recover())
    yield* TestClock.adjust("40 seconds")
    const second = yield* round
    return [first, second]
  }).pipe(Effect.provide(TestContext.TestContext)))
  expect(delivered).toEqual([1, 1])
  const notice = await smtp.waitFor((mail) => mail.receivedAt >= since && /svc_live_/.test(mail.text))
  expect(notice.to.map((to) => to.toLowerCase())).toEqual([holder])
})
