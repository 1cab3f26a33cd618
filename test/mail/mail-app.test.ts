import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { simpleParser } from "mailparser"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { runMigrations } from "../../src/db/migrations.ts"
import { MailQueue } from "../../src/mail/MailQueue.ts"
import { MailTemplate } from "../../src/mail/Messages.ts"
import { type RunningApp, startApp, tempDir } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { serviceRuntime } from "../support/services.ts"
import { type FakeSmtp, startFakeSmtp } from "../support/smtp.ts"

/**
 * Mail through the real application (`App`, ROLE=all): a message queued in the app's database is sent by the
 * app's own delivery loop — over SMTP when `SMTP_URL` is set, as an `.eml` file under `DATA_DIR/mail` when not
 * (what `npm start` does on a fresh machine, on the embedded database).
 */

const BOOT = 60_000

/** Queues one message in the database `app` uses, from a runtime of its own (as a panel request would). */
const enqueueInto = async (app: Pick<RunningApp, "dataDir" | "env">, to: string, code: string) => {
  const runtime = serviceRuntime(app, MailQueue.Default)
  try {
    return await runtime.runPromise(
      Effect.flatMap(MailQueue, (queue) =>
        queue.enqueue({ to, language: "es", template: MailTemplate.signin_code({ code, minutes: 10 }) }))
    )
  } finally {
    await runtime.dispose()
  }
}

describe("with SMTP_URL, on PostgreSQL", () => {
  let smtp: FakeSmtp
  let db: TestDatabase
  let app: RunningApp

  beforeAll(async () => {
    smtp = await startFakeSmtp()
    db = await freshDatabase()
    app = await startApp({
      DATABASE_URL: db.url,
      SMTP_URL: smtp.url,
      MAIL_FROM: "Reservas <reservas@hotel.example.co>"
    })
  }, BOOT)

  afterAll(async () => {
    await app?.stop()
    await db?.drop()
    await smtp?.stop()
  }, BOOT)

  test("a queued message reaches the SMTP server through the app's loop, once", async () => {
    const id = await enqueueInto(app, "gerencia@hotel.example.co", "481516")
    expect(await smtp.waitForCode("gerencia@hotel.example.co", { since: 0, timeoutMs: 10_000 })).toBe("481516")
    const mail = smtp.messages[0]!
    expect(mail).toMatchObject({
      to: ["gerencia@hotel.example.co"],
      from: { name: "Reservas", address: "reservas@hotel.example.co" },
      subject: "Su código de acceso: 481516",
      user: "user"
    })
    const deadline = Date.now() + 5_000
    let state = ""
    while (state !== "sent" && Date.now() < deadline) {
      state = (await db.query<{ state: string }>("SELECT state FROM mail_outbox WHERE id = $1", [id]))[0]!.state
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(state).toBe("sent")
    expect(smtp.messages).toHaveLength(1)
  })
})

describe("without SMTP_URL, on the embedded database (npm start on a fresh machine)", () => {
  let dataDir: string
  let app: RunningApp | undefined

  beforeAll(async () => {
    dataDir = await tempDir("mail-embedded")
  })

  afterAll(async () => {
    await app?.stop()
    await NodeFs.rm(dataDir, { recursive: true, force: true })
  }, BOOT)

  test("a message queued while the service was down is written as DATA_DIR/mail/*.eml once it starts", async () => {
    // The embedded database is single-process: queue first (migrating it), then start the app on it.
    const before = serviceRuntime(
      { dataDir, env: {} },
      Layer.merge(MailQueue.Default, Layer.effectDiscard(runMigrations))
    )
    const template = MailTemplate.signin_code({ code: "271828", minutes: 10 })
    try {
      await before.runPromise(
        Effect.flatMap(MailQueue, (queue) => queue.enqueue({ to: "dev@example.co", language: "en", template }))
      )
    } finally {
      await before.dispose()
    }

    app = await startApp({ DATA_DIR: dataDir })
    const dir = NodePath.join(dataDir, "mail")
    const deadline = Date.now() + 10_000
    let names: Array<string> = []
    while (names.length === 0 && Date.now() < deadline) {
      // The mailer writes `.<name>.tmp` and renames it: only the finished file counts.
      names = (await NodeFs.readdir(dir).catch(() => [] as Array<string>)).filter((name) => !name.startsWith("."))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(names).toHaveLength(1)
    expect(names[0]).toMatch(/\.eml$/)
    const parsed = await simpleParser(await NodeFs.readFile(NodePath.join(dir, names[0]!)))
    expect(parsed.subject).toBe("Your sign-in code: 271828")
    expect(parsed.text).toContain("271828")
    expect((parsed.from as { text: string }).text).toBe("no-reply@localhost")
  }, BOOT)
})
