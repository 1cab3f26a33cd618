import { simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

/** One message as the fake SMTP server accepted it. */
export interface ReceivedMail {
  /** The envelope sender (`MAIL FROM`). */
  readonly envelopeFrom: string
  /** The envelope recipients (`RCPT TO`), as sent. */
  readonly to: ReadonlyArray<string>
  /** The `From` header: its address, and its display name ("" when none). */
  readonly from: { readonly name: string; readonly address: string }
  readonly subject: string
  readonly text: string
  readonly html: string
  /** Every header, names in lower case, values as mailparser decodes them. */
  readonly headers: ReadonlyMap<string, unknown>
  /** The message exactly as transmitted (RFC 5322). */
  readonly raw: string
  /** The user name of `AUTH`, when the client authenticated. */
  readonly user: string | undefined
  /** `Date.now()` when the message was accepted. */
  readonly receivedAt: number
}

/** A reply the server gives to `RCPT TO` instead of accepting: `451` (try later), `550` (no such user)… */
export interface Rejection {
  readonly code: number
  readonly message?: string
  /** Only for this recipient (case-insensitive); every recipient when absent. */
  readonly to?: string
}

export interface FakeSmtp {
  readonly host: string
  readonly port: number
  /** `smtp://user:secret@127.0.0.1:PORT`: what `SMTP_URL` is set to (any credentials are accepted). */
  readonly url: string
  /** Every accepted message, in arrival order. `clear()` empties this same array. */
  readonly messages: Array<ReceivedMail>
  /** How many `RCPT TO` commands arrived, accepted or not: attempts, including refused ones. */
  readonly rcptAttempts: () => number
  /** Stops listening (the port stays reserved for `recover`): clients see "connection refused". */
  readonly refuse: () => Promise<void>
  /** Answers `RCPT TO` with this reply from now on (per recipient with `to`) until `recover`. */
  readonly reject: (rejection: Rejection) => void
  /**
   * Takes the next messages' data but holds the final reply, as a server that hangs mid-transaction; `recover`
   * answers the held ones `451` (so they are not accepted). `stalled()` counts the held ones.
   */
  readonly stall: () => void
  /** How many messages are held by `stall` right now. */
  readonly stalled: () => number
  /** Accepts the messages `stall` held (recorded as if the server had just answered) and stops stalling. */
  readonly release: () => Promise<void>
  /** Back to normal: listening again, accepting every recipient, answering what `stall` held with 451. */
  readonly recover: () => Promise<void>
  /** The accepted messages that match. */
  readonly matching: (predicate?: (mail: ReceivedMail) => boolean) => Array<ReceivedMail>
  /** Resolves with the first accepted message (past or future) that matches; rejects after `timeoutMs`. */
  readonly waitFor: (predicate?: (mail: ReceivedMail) => boolean, timeoutMs?: number) => Promise<ReceivedMail>
  /** The last 6-digit code in the text of the newest message to `email` (case-insensitive), if any. */
  readonly lastCodeFor: (email: string) => string | undefined
  /**
   * Waits for a message to `email` with a 6-digit code, accepted at or after `since` (default: when this call
   * began; take `Date.now()` before the request when the message may already be in), and answers the code.
   */
  readonly waitForCode: (
    email: string,
    options?: { readonly since?: number; readonly timeoutMs?: number }
  ) => Promise<string>
  /** Forgets the accepted messages and the attempt count (the mode is kept). */
  readonly clear: () => void
  /** Closes every connection and stops. */
  readonly stop: () => Promise<void>
}

const CODE = /\b(\d{6})\b/g

const codeIn = (text: string): string | undefined => {
  const all = [...text.matchAll(CODE)]
  return all.length === 0 ? undefined : all[all.length - 1]![1]
}

const addressOf = (value: unknown): { readonly name: string; readonly address: string } => {
  const first = (value as { value?: Array<{ name?: string; address?: string }> } | undefined)?.value?.[0]
  return { name: first?.name ?? "", address: first?.address ?? "" }
}

/**
 * A real SMTP server (`smtp-server`) on 127.0.0.1 and a random port, without TLS (STARTTLS is not offered),
 * accepting any or no credentials, that records every message it accepts, parsed with `mailparser`. Tests
 * point `SMTP_URL` at `url`, read codes with `waitForCode`/`lastCodeFor`, and switch it to refuse connections,
 * reject recipients (`451`, `550`) or hang, then `recover`.
 */
export const startFakeSmtp = async (): Promise<FakeSmtp> => {
  const messages: Array<ReceivedMail> = []
  const waiters = new Set<(mail: ReceivedMail) => void>()
  let rejections: Array<Rejection> = []
  let stalling = false
  /** Messages whose final reply is held: `accept` records and answers 250, `refuse` answers with the error. */
  const held: Array<{ readonly accept: () => Promise<void>; readonly refuse: (error: Error) => void }> = []
  let attempts = 0

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    logger: false,
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username ?? "user" }),
    onRcptTo: (address, _session, callback) => {
      attempts++
      const rejection = rejections.find((r) =>
        r.to === undefined || r.to.toLowerCase() === address.address.toLowerCase()
      )
      if (rejection === undefined) return callback()
      const error = new Error(rejection.message ?? (rejection.code >= 500 ? "No such user here" : "Try again later"))
      ;(error as Error & { responseCode: number }).responseCode = rejection.code
      callback(error)
    },
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        const raw = Buffer.concat(chunks)
        const accept = () =>
          simpleParser(raw).then((parsed) => {
            const mail: ReceivedMail = {
              envelopeFrom: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
              to: session.envelope.rcptTo.map((r) => r.address),
              from: addressOf(parsed.from),
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
              html: typeof parsed.html === "string" ? parsed.html : "",
              headers: parsed.headers,
              raw: raw.toString("utf8"),
              user: typeof session.user === "string" ? session.user : undefined,
              receivedAt: Date.now()
            }
            messages.push(mail)
            for (const waiter of [...waiters]) waiter(mail)
            callback()
          }, (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))))
        if (stalling) held.push({ accept, refuse: (error) => callback(error) })
        else void accept()
      })
    }
  })
  // A client that drops its connection is not a test failure.
  server.on("error", () => {})

  const host = "127.0.0.1"
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()))
  const port = (server.server.address() as AddressInfo).port
  let listening = true

  const matching = (predicate: (mail: ReceivedMail) => boolean = () => true) => messages.filter(predicate)

  const waitFor = (predicate: (mail: ReceivedMail) => boolean = () => true, timeoutMs = 10_000) =>
    new Promise<ReceivedMail>((resolve, reject) => {
      const found = messages.find(predicate)
      if (found !== undefined) return resolve(found)
      const waiter = (mail: ReceivedMail) => {
        if (!predicate(mail)) return
        clearTimeout(timer)
        waiters.delete(waiter)
        resolve(mail)
      }
      const timer = setTimeout(() => {
        waiters.delete(waiter)
        reject(
          new Error(
            `no matching e-mail within ${timeoutMs} ms; received: ${
              JSON.stringify(messages.map((m) => ({ to: m.to, subject: m.subject })))
            }`
          )
        )
      }, timeoutMs)
      waiters.add(waiter)
    })

  const to = (email: string) => (mail: ReceivedMail) => mail.to.some((r) => r.toLowerCase() === email.toLowerCase())

  return {
    host,
    port,
    url: `smtp://user:secret@${host}:${port}`,
    messages,
    rcptAttempts: () => attempts,
    refuse: async () => {
      if (!listening) return
      listening = false
      // Stops accepting at once; connections already open finish on their own.
      server.server.close()
    },
    reject: (rejection) => {
      rejections = [...rejections, rejection]
    },
    stall: () => {
      stalling = true
    },
    stalled: () => held.length,
    release: async () => {
      stalling = false
      await Promise.all(held.splice(0).map((message) => message.accept()))
    },
    recover: async () => {
      rejections = []
      stalling = false
      for (const message of held.splice(0)) {
        message.refuse(Object.assign(new Error("Server restarted, try again later"), { responseCode: 451 }))
      }
      if (!listening) {
        await new Promise<void>((resolve) => server.server.listen(port, host, () => resolve()))
        listening = true
      }
    },
    matching,
    waitFor,
    lastCodeFor: (email) => {
      const mine = matching(to(email))
      return mine.length === 0 ? undefined : codeIn(mine[mine.length - 1]!.text)
    },
    waitForCode: async (email, options = {}) => {
      const since = options.since ?? Date.now()
      const mail = await waitFor(
        (m) => to(email)(m) && m.receivedAt >= since && codeIn(m.text) !== undefined,
        options.timeoutMs
      )
      return codeIn(mail.text)!
    },
    clear: () => {
      messages.length = 0
      attempts = 0
    },
    stop: async () => {
      stalling = false
      for (const message of held.splice(0)) message.refuse(new Error("Server shutting down"))
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
