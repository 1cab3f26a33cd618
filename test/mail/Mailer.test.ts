import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test"
import { ConfigProvider, Effect, Either, Layer, Logger, Redacted } from "effect"
import { simpleParser } from "mailparser"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { classifySmtpError, type MailFailed, Mailer, type OutgoingMail } from "../../src/mail/Mailer.ts"
import * as MailerModule from "../../src/mail/Mailer.ts"
import { tempDir } from "../support/app.ts"
import { type FakeSmtp, startFakeSmtp } from "../support/smtp.ts"

let smtp: FakeSmtp

beforeAll(async () => {
  smtp = await startFakeSmtp()
})

afterAll(async () => {
  await smtp?.stop()
})

beforeEach(async () => {
  await smtp.recover()
  smtp.clear()
})

const message: OutgoingMail = {
  to: "señora.peña@example.co",
  subject: "Tu código de acceso: 123456 — niño, café",
  text: "Tu código es 123456.\nAñadido: é, ñ, ü, “comillas”.\n",
  html: "<p>Tu código es <strong>123456</strong>. Año, café, ñandú.</p>"
}

/** Sends one message through a layer; answers the failure, if any. */
const send = (layer: Layer.Layer<Mailer>, mail: OutgoingMail = message) =>
  Effect.runPromise(
    Effect.flatMap(Mailer, (mailer) => mailer.send(mail)).pipe(Effect.provide(layer), Effect.either)
  )

const smtpLayer = (url = smtp.url, from = "Panel de reservas <no-reply@hotel.example.co>") =>
  MailerModule.smtp({ url: Redacted.make(url), from })

const failureOf = (result: Either.Either<void, MailFailed>): MailFailed => {
  if (Either.isRight(result)) throw new Error("expected the send to fail")
  return result.left
}

describe("Mailer over SMTP (nodemailer → smtp-server)", () => {
  test("delivers from, to, subject, text and HTML; UTF-8 survives; the credentials authenticate", async () => {
    const result = await send(smtpLayer())
    expect(Either.isRight(result)).toBe(true)
    const mail = await smtp.waitFor()
    expect(mail).toMatchObject({
      envelopeFrom: "no-reply@hotel.example.co",
      to: ["señora.peña@example.co"],
      from: { name: "Panel de reservas", address: "no-reply@hotel.example.co" },
      subject: message.subject,
      text: message.text,
      user: "user"
    })
    expect(mail.html).toContain("<strong>123456</strong>. Año, café, ñandú.")
    expect(smtp.lastCodeFor("SEÑORA.peña@example.co")).toBe("123456")
  })

  test("451 to RCPT TO (try later) is transient", async () => {
    smtp.reject({ code: 451, message: "Greylisted, try again later" })
    const failure = failureOf(await send(smtpLayer()))
    expect(failure).toMatchObject({ _tag: "MailFailed", transient: true })
    expect(failure.reason).toContain("451")
    expect(smtp.messages).toHaveLength(0)
  })

  test("550 to RCPT TO (no such recipient) is permanent", async () => {
    smtp.reject({ code: 550, message: "No such user here", to: "nadie@example.co" })
    const failure = failureOf(await send(smtpLayer(), { ...message, to: "nadie@example.co" }))
    expect(failure).toMatchObject({ transient: false })
    expect(failure.reason).toContain("550")
    // Other recipients still get through.
    expect(Either.isRight(await send(smtpLayer()))).toBe(true)
  })

  test("a refused connection is transient; the password never appears in the reason", async () => {
    await smtp.refuse()
    const failure = failureOf(await send(smtpLayer(`smtp://user:Sup3r%2Fs3cret@127.0.0.1:${smtp.port}`)))
    expect(failure.transient).toBe(true)
    expect(failure.reason).toMatch(/ECONNREFUSED|ESOCKET|ECONNECTION/)
    expect(failure.reason).not.toContain("Sup3r")
    await smtp.recover()
    expect(Either.isRight(await send(smtpLayer()))).toBe(true)
  })
})

describe("classifySmtpError", () => {
  const error = (fields: Record<string, unknown>) =>
    Object.assign(new Error(String(fields.message ?? "failed")), fields)

  test.each([
    ["a 4xx reply", true, { code: "EENVELOPE", responseCode: 452, response: "452 Mailbox full", command: "RCPT TO" }],
    ["a 5xx reply", false, { code: "EMESSAGE", responseCode: 554, response: "554 Message rejected", command: "DATA" }],
    ["refused credentials (ours)", true, { code: "EAUTH", responseCode: 535, response: "535 Auth failed" }],
    ["a timeout", true, { code: "ETIMEDOUT", message: "Greeting never received", command: "CONN" }],
    ["a reset connection", true, { code: "ESOCKET", message: "read ECONNRESET", command: "CONN" }],
    ["DNS", true, { code: "EDNS", message: "getaddrinfo ENOTFOUND mail.example.co", command: "CONN" }],
    ["a malformed recipient", false, { code: "EENVELOPE", message: "Invalid recipient \"x\"", command: "API" }],
    ["a message too large", false, { code: "EMESSAGE", message: "Message too large", command: "MAIL FROM" }],
    ["an unknown failure", true, { message: "something odd" }]
  ])("%s → transient: %p", (_name, transient, fields) => {
    expect(classifySmtpError(error(fields)).transient).toBe(transient)
  })

  test("the reason names the code, the command and the reply, without the secrets", () => {
    const failure = classifySmtpError(
      error({
        code: "EAUTH",
        responseCode: 535,
        response: "535 5.7.8 bad password hunter2 for smtp://u:hunter2@h",
        command: "AUTH PLAIN"
      }),
      ["smtp://u:hunter2@h", "hunter2"]
    )
    expect(failure.reason).toBe("EAUTH AUTH PLAIN: 535 5.7.8 bad password *** for ***")
  })
})

describe("Mailer without SMTP: .eml files under DATA_DIR/mail", () => {
  /** Sends through `layer` and answers what was logged. */
  const sendLogged = async (layer: Layer.Layer<Mailer>) => {
    const lines: Array<string> = []
    const capture = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ message }) => lines.push((Array.isArray(message) ? message : [message]).map(String).join(" ")))
    )
    const result = await Effect.runPromise(
      Effect.flatMap(Mailer, (mailer) => mailer.send(message)).pipe(
        Effect.provide(layer),
        Effect.provide(capture),
        Effect.either
      )
    )
    return { result, lines }
  }

  test("each message is an RFC 5322 file, mode 0600, named by time and id, and one Info line names it", async () => {
    const dir = NodePath.join(await tempDir("mail-files"), "mail")
    const { result, lines } = await sendLogged(MailerModule.files({ dir, from: "no-reply@localhost" }))
    expect(Either.isRight(result)).toBe(true)
    const names = await NodeFs.readdir(dir)
    expect(names).toHaveLength(1) // no temporary file left behind
    const name = names[0]!
    expect(name).toMatch(/^\d{4}-\d{2}-\d{2}T\d{6}\.\d{3}Z-[0-9a-f]{8}\.eml$/)
    const file = NodePath.join(dir, name)
    expect((await NodeFs.stat(file)).mode & 0o777).toBe(0o600)
    const raw = await NodeFs.readFile(file)
    expect(raw.toString("latin1")).toContain("\r\n") // RFC 5322 line ends
    const parsed = await simpleParser(raw)
    expect(parsed.subject).toBe(message.subject)
    expect(parsed.text).toBe(message.text)
    expect(parsed.html).toContain("ñandú")
    expect((parsed.to as { text: string }).text).toBe("señora.peña@example.co")
    expect((parsed.from as { text: string }).text).toBe("no-reply@localhost")
    expect(lines).toEqual([`e-mail written to ${file}: ${message.subject}`])
  })

  test("file names sort in the order the messages were written", async () => {
    const dir = NodePath.join(await tempDir("mail-order"), "mail")
    const layer = MailerModule.files({ dir, from: "no-reply@localhost" })
    for (const subject of ["first", "second", "third"]) {
      await Effect.runPromise(
        Effect.flatMap(Mailer, (mailer) => mailer.send({ ...message, subject })).pipe(
          Effect.zipLeft(Effect.sleep("5 millis")),
          Effect.provide(layer),
          Effect.provide(Logger.remove(Logger.defaultLogger))
        )
      )
    }
    const names = (await NodeFs.readdir(dir)).sort()
    const subjects = await Promise.all(
      names.map(async (name) => (await simpleParser(await NodeFs.readFile(NodePath.join(dir, name)))).subject)
    )
    expect(subjects).toEqual(["first", "second", "third"])
  })
})

describe("Mailer.layer follows the configuration", () => {
  const configured = (env: Record<string, string>) =>
    MailerModule.layer.pipe(
      Layer.provide(AppConfig.layer),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
      Layer.orDie
    )

  test("SMTP_URL set → SMTP, from MAIL_FROM", async () => {
    const dataDir = await tempDir("mail-smtp")
    const result = await send(
      configured({ SMTP_URL: smtp.url, MAIL_FROM: "Reservas <reservas@hotel.example.co>", DATA_DIR: dataDir })
    )
    expect(Either.isRight(result)).toBe(true)
    expect((await smtp.waitFor()).from).toEqual({ name: "Reservas", address: "reservas@hotel.example.co" })
    expect(await NodeFs.readdir(dataDir)).toEqual([])
  })

  test("SMTP_URL unset → a file under DATA_DIR/mail, nothing sent", async () => {
    const dataDir = await tempDir("mail-eml")
    const result = await send(configured({ DATA_DIR: dataDir }))
    expect(Either.isRight(result)).toBe(true)
    expect(await NodeFs.readdir(NodePath.join(dataDir, "mail"))).toHaveLength(1)
    expect(smtp.messages).toHaveLength(0)
  })
})
