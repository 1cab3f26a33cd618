import { FileSystem, Path } from "@effect/platform"
import { BunFileSystem, BunPath } from "@effect/platform-bun"
import { Context, DateTime, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/** One message as the `Mailer` sends it: a single recipient, both bodies already rendered. */
export interface OutgoingMail {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

/**
 * A message that did not leave. `transient`: worth another try later (the server was unreachable, timed out,
 * answered 4xx, refused our credentials); otherwise never going to work (a 5xx answer such as an unknown
 * recipient, a malformed address). `reason` is for operators and never contains credentials.
 */
export class MailFailed extends Schema.TaggedError<MailFailed>()("MailFailed", {
  transient: Schema.Boolean,
  reason: Schema.String
}) {}

/** Outbound e-mail (design §8): SMTP when `SMTP_URL` is set, otherwise `.eml` files under `DATA_DIR/mail`. */
export class Mailer extends Context.Tag("mail/Mailer")<Mailer, {
  readonly send: (message: OutgoingMail) => Effect.Effect<void, MailFailed>
}>() {}

/**
 * Network limits of one SMTP exchange: reaching the server, its greeting, and silence on an open socket.
 * nodemailer's own socket default (10 minutes) would hold a job far beyond its lease.
 */
export const SMTP_TIMEOUTS = {
  connection: Duration.seconds(10),
  greeting: Duration.seconds(10),
  socket: Duration.seconds(30),
  dns: Duration.seconds(10)
} as const

/** An upper bound on one whole send, whatever the server does; shorter than the queue's lease. */
export const SMTP_SEND_TIMEOUT = Duration.seconds(60)

/** What nodemailer puts on its errors (`lib/smtp-connection`): a code of its own, and the server's reply if any. */
interface SmtpError {
  readonly code?: unknown
  readonly responseCode?: unknown
  readonly response?: unknown
  readonly command?: unknown
  readonly message?: unknown
}

/**
 * nodemailer's codes, without a server reply, for a message that cannot be sent as it is (no or malformed
 * recipient, too large). Every other failure without a reply — `ECONNECTION`, `ETIMEDOUT`, `ESOCKET` (refused,
 * reset), `EDNS`, `ETLS`, `EPROTOCOL` — is on the sending side: try again later.
 */
const PERMANENT_CODES = new Set(["EENVELOPE", "EMESSAGE"])

const MAX_REASON = 500

/**
 * Classifies a nodemailer failure. An SMTP reply decides by its class: 4xx is transient, 5xx permanent, except
 * an authentication failure (`EAUTH`), which is our configuration, not the message: it is retried, so fixing
 * `SMTP_URL` still delivers what is queued. Without a reply, connection trouble is transient and a message
 * nodemailer refused to send is permanent. `secrets` are cut out of the reason.
 */
export const classifySmtpError = (error: unknown, secrets: ReadonlyArray<string> = []): MailFailed => {
  const e: SmtpError = typeof error === "object" && error !== null ? error : { message: String(error) }
  const code = typeof e.code === "string" ? e.code : undefined
  const replyCode = typeof e.responseCode === "number" ? e.responseCode : undefined
  const command = typeof e.command === "string" && e.command !== "API" ? `${e.command}: ` : ""
  const detail = typeof e.response === "string"
    ? e.response
    : typeof e.message === "string"
    ? e.message
    : "unknown error"
  let reason = `${code === undefined ? "" : `${code} `}${command}${detail}`.replace(/\s+/g, " ").trim()
  for (const secret of secrets) if (secret.length > 0) reason = reason.split(secret).join("***")
  reason = reason.slice(0, MAX_REASON)
  const transient = code === "EAUTH" || (replyCode !== undefined ? replyCode < 500 : !PERMANENT_CODES.has(code ?? ""))
  return new MailFailed({ transient, reason })
}

const safeDecode = (value: string) => {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** nodemailer, loaded by the worker's mail layer only: a process that serves the API never sends mail. */
const loadNodemailer = Effect.promise(() => import("nodemailer")).pipe(Effect.map((module) => module.default))

/**
 * SMTP through nodemailer, one connection per message (mail is rare; nothing idles between messages). Plain
 * `smtp://` upgrades with STARTTLS when the server offers it; `smtps://` is TLS from the start; nodemailer
 * options may follow as query parameters (`?requireTLS=true`).
 */
export const smtp = (options: { readonly url: Redacted.Redacted; readonly from: string }) =>
  Layer.scoped(
    Mailer,
    Effect.gen(function*() {
      const url = Redacted.value(options.url)
      const parsed = new URL(url)
      // Credentials may appear percent-encoded in the URL and decoded in a server's echo: hide both forms.
      const secrets = [url, parsed.password, safeDecode(parsed.password)]
      const nodemailer = yield* loadNodemailer
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() =>
          nodemailer.createTransport({
            url,
            connectionTimeout: Duration.toMillis(SMTP_TIMEOUTS.connection),
            greetingTimeout: Duration.toMillis(SMTP_TIMEOUTS.greeting),
            socketTimeout: Duration.toMillis(SMTP_TIMEOUTS.socket),
            dnsTimeout: Duration.toMillis(SMTP_TIMEOUTS.dns),
            logger: false,
            debug: false
          })
        ),
        (transport) => Effect.sync(() => transport.close())
      )
      return Mailer.of({
        send: (message) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from: options.from, ...message }),
            catch: (error) => classifySmtpError(error, secrets)
          }).pipe(
            Effect.timeoutFail({
              duration: SMTP_SEND_TIMEOUT,
              onTimeout: () => new MailFailed({ transient: true, reason: "the SMTP exchange took longer than 60 s" })
            }),
            Effect.asVoid,
            TraceContext.withSpan("Mailer.send", { kind: "client" })
          )
      })
    })
  )

/** `2026-03-05T140312.123Z`: sorts by time, and has no `:` (not allowed in Windows file names). */
const fileStamp = (now: DateTime.Utc) => DateTime.formatIso(now).replace(/:/g, "")

/**
 * Without SMTP (first run, development; design §8): each message becomes an RFC 5322 file
 * `DATA_DIR/mail/<time>-<id>.eml` (mode 0600), composed by nodemailer exactly as it would go over SMTP, and one
 * Info log line names the file and the subject, so a sign-in code can be read from either. Written to a
 * temporary name first and renamed, so a reader never sees half a message.
 */
export const files = (options: { readonly dir: string; readonly from: string }) =>
  Layer.effect(
    Mailer,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = path.resolve(options.dir)
      yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 }).pipe(Effect.orDie)
      const nodemailer = yield* loadNodemailer
      const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows" })
      return Mailer.of({
        send: (message) =>
          Effect.gen(function*() {
            const composed = yield* Effect.tryPromise({
              try: () => composer.sendMail({ from: options.from, ...message }),
              catch: (error) => classifySmtpError(error)
            })
            // `buffer: true` makes it a Buffer; nodemailer's type also allows the stream of `buffer: false`.
            const content = composed.message
            if (!(content instanceof Uint8Array)) return yield* Effect.dieMessage("nodemailer composed a stream")
            const name = `${fileStamp(yield* DateTime.now)}-${randomUUID().slice(0, 8)}.eml`
            const temporary = path.join(dir, `.${name}.tmp`)
            const file = path.join(dir, name)
            yield* Effect.gen(function*() {
              yield* fs.writeFile(temporary, content, { mode: 0o600 })
              yield* fs.rename(temporary, file)
            }).pipe(
              Effect.mapError((error) =>
                new MailFailed({ transient: true, reason: `could not write ${file}: ${error.message}` })
              )
            )
            yield* Effect.logInfo(`e-mail written to ${file}: ${message.subject}`)
          })
      })
    })
  ).pipe(Layer.provide([BunFileSystem.layer, BunPath.layer]))

/** The `Mailer` the configuration asks for: SMTP with `SMTP_URL`, otherwise files under `DATA_DIR/mail`. */
export const layer = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* AppConfig
  return Option.match(config.smtpUrl, {
    onSome: (url) => smtp({ url, from: config.mailFrom }),
    onNone: () => {
      const dir = `${config.dataDir.replace(/\/+$/, "")}/mail`
      return Layer.merge(
        files({ dir, from: config.mailFrom }),
        Layer.effectDiscard(
          Effect.logInfo(`SMTP_URL is not set: e-mail is written as .eml files under ${dir}, not sent`)
        )
      )
    }
  })
}))
