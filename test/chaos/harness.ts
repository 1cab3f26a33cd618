import { Redacted } from "effect"
import * as NodeNet from "node:net"
import { ReservationEvent } from "../../src/reservations/machine/State.ts"
import { admin, call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.ts"
import { colombian, registrationBody, reservationBody } from "../support/guests.ts"
import { type Receiver, startReceiver } from "../support/receiver.ts"
import { startRedis, type TestRedis } from "../support/redis.ts"
import { type FakeSmtp, startFakeSmtp } from "../support/smtp.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * The chaos run (issue 16 item 5, docs/reliability.md): the real app with a fault proxy in front of each of its
 * dependencies — PostgreSQL, Redis, the SMTP test server, the TRA fake and a webhook receiver — and a steady
 * load of reservation creates, guest registrations (each a TRA report), panel sign-in codes (each an e-mail)
 * and the webhook deliveries of their events. Each fault is applied to one dependency while the load runs, then
 * restored; the load goes on, then stops, and what it started is followed to its end. Figures per fault:
 * requests answered and their statuses, the slowest answer, recovery time after the restore, and what was lost
 * (compared between the database, the receivers and what the API answered) or delivered twice.
 */

export type Dependency = "postgres" | "redis" | "smtp" | "tra" | "webhook"

export interface Fault {
  readonly dependency: Dependency
  readonly kind: "cut" | "delay"
  /** For `delay`: held this long each way, per packet. */
  readonly delayMs?: number
}

export interface ChaosOptions {
  readonly faults: ReadonlyArray<Fault>
  /** How long each fault lasts while the load runs. */
  readonly faultMs: number
  /** Load before the fault, and after the restore. */
  readonly calmMs: number
  /** How long the run waits, at most, for everything started to be delivered after the load stops. */
  readonly settleMs: number
  /** More of the app's environment (a shorter `REPORT_LEASE`, say). */
  readonly env?: Readonly<Record<string, string>>
  readonly log?: (line: string) => void
}

export interface ChaosRow {
  readonly fault: string
  readonly faultMs: number
  /** API and panel requests sent during the phase, and those that got an answer within 10 s. */
  readonly sent: number
  readonly answered: number
  /** Status → count (`timeout` for no answer within 10 s). */
  readonly statuses: Readonly<Record<string, number>>
  readonly slowestMs: number
  /**
   * From the restore to the first success through the restored dependency; null when none came before the load
   * stopped.
   */
  readonly recoveryMs: number | null
  /** From the load's stop until everything it started had arrived (or the settle limit). */
  readonly settledMs: number
  readonly eventsLost: number
  readonly reportsLost: number
  readonly mailsLost: number
  /** Creates answered 2xx whose reservation is not in the database. */
  readonly writesLost: number
  /** Webhook events the receiver got more than once (at-least-once allows it): extra copies. */
  readonly duplicateEvents: number
  /** TRA main-guest reports the fake registered more than once for the same guest ("possible duplicate"). */
  readonly duplicateReports: number
  readonly duplicateMails: number
}

export const faultName = (fault: Fault) =>
  fault.kind === "cut" ? `${fault.dependency} cut` : `${fault.dependency} delayed ${fault.delayMs ?? 0} ms`

const ANSWER_LIMIT_MS = 10_000
/** Every event a reservation emits: the endpoint subscribes to them all (the domain's list, not a copy). */
const LIFECYCLE_EVENTS = [...ReservationEvent.literals]
/** Design §8: 5 codes per e-mail and 30 per client address per hour. */
const CODES_PER_EMAIL = 5
const CODES_PER_ADDRESS = 30

interface World {
  readonly db: TestDatabase
  readonly redis: TestRedis
  readonly smtp: FakeSmtp
  readonly tra: FakeTra
  readonly receiver: Receiver
  readonly proxies: Readonly<Record<Dependency, FaultProxy>>
  readonly app: RunningApp
  readonly appPort: number
  readonly liveKey: string
  readonly accountId: string
  readonly propertyId: string
  readonly mailboxes: ReadonlyArray<string>
}

const portOf = (url: string) => Number(new URL(url).port)

const startWorld = async (mailboxes: number, env: Readonly<Record<string, string>>): Promise<World> => {
  const db = await freshDatabase()
  const redis = await startRedis()
  const smtp = await startFakeSmtp()
  const tra = startFakeTra()
  const receiver = startReceiver()
  const pgUrl = new URL(db.url)
  const proxies = {
    postgres: await startFaultProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) }),
    redis: await startFaultProxy({ port: redis.port }),
    smtp: await startFaultProxy({ port: smtp.port }),
    tra: await startFaultProxy({ port: portOf(tra.url) }),
    webhook: await startFaultProxy({ port: portOf(receiver.url) })
  }
  pgUrl.port = String(proxies.postgres.port)
  const app = await startApp({
    DATABASE_URL: pgUrl.toString(),
    REDIS_URL: `redis://127.0.0.1:${proxies.redis.port}`,
    SMTP_URL: `smtp://chaos:secret@127.0.0.1:${proxies.smtp.port}`,
    TRA_BASE_URL: `http://127.0.0.1:${proxies.tra.port}`,
    SIRE_MODE: "manual",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    ...env
  })
  const account = await seedAccount(app, "Hotel Caos")
  await admin(app, (c) => c.SetLimits({ account_id: account.accountId, reads: 100_000, writes: 100_000 }))
  const property = await admin(app, (c) =>
    c.CreateProperty({
      account_id: account.accountId,
      name: "Hotel Caos",
      rnt_id: "55555",
      tra_token: Redacted.make(DEFAULT_TOKEN)
    }))
  const endpoint = await call(app, "POST", "/api/partners/webhooks", {
    key: account.liveKey,
    json: { url: `http://127.0.0.1:${proxies.webhook.port}/hooks/chaos`, events: LIFECYCLE_EVENTS }
  })
  if (endpoint.status !== 201) throw new Error(`webhook endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`)
  const emails: Array<string> = []
  for (let i = 0; i < mailboxes; i++) {
    const email = `caos${i}@example.co`
    await admin(app, (c) => c.CreateAccount({ name: `Caos ${i}`, email }))
    emails.push(email)
  }
  return {
    db,
    redis,
    smtp,
    tra,
    receiver,
    proxies,
    app,
    appPort: portOf(app.baseUrl),
    liveKey: account.liveKey,
    accountId: account.accountId,
    propertyId: property.property_id,
    mailboxes: emails
  }
}

const stopWorld = async (world: World) => {
  for (const proxy of Object.values(world.proxies)) await proxy.restore()
  await world.app.stop()
  for (const proxy of Object.values(world.proxies)) await proxy.stop()
  world.receiver.stop()
  world.tra.stop()
  await world.smtp.stop()
  await world.redis.stop()
  await world.db.drop()
}

/**
 * One panel request from a loopback address of our choosing (the panel limits code requests per client
 * address, as the socket sees it): plain HTTP/1.1 over a socket bound to `from`.
 */
const requestCode = (port: number, from: string, email: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify({ email })
    const socket = NodeNet.connect({ host: "127.0.0.1", port, localAddress: from })
    let reply = ""
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error("timeout"))
    }, ANSWER_LIMIT_MS)
    socket.on("connect", () =>
      socket.write(
        `POST /api/panel/session/code HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`
      ))
    socket.on("data", (chunk) => {
      reply += chunk.toString("latin1")
    })
    socket.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.on("close", () => {
      clearTimeout(timer)
      const status = /^HTTP\/1\.1 (\d{3})/.exec(reply)
      status === null ? reject(new Error("no answer")) : resolve(Number(status[1]))
    })
  })

/** What one phase's load sent and what came back. */
interface PhaseLoad {
  readonly statuses: Map<string, number>
  sent: number
  answered: number
  slowestMs: number
  /** Creates answered 2xx: their external ids. */
  readonly created: Array<string>
  /** Registrations answered 201: external id and the guest's document number. */
  readonly registered: Array<{ readonly externalId: string; readonly document: string }>
  /** E-mail → codes requested and answered 202. */
  readonly mailed: Map<string, number>
  /** Answers with their time, for the recovery of PostgreSQL (a 2xx) and Redis (a counted request). */
  readonly answers: Array<{ readonly at: number; readonly status: number; readonly counted: boolean }>
}

let sequence = 0
const unique = () => `${Date.now().toString(36)}${(++sequence).toString(36)}`

/**
 * Which mailbox and client address the next code request uses: each mailbox gets its 5 codes, each address
 * its 30; a 429 (the limiter counted requests that then failed) moves on to fresh ones.
 */
interface MailCursor {
  mailbox: number
  onMailbox: number
  address: number
  onAddress: number
}

const nextMailbox = (cursor: MailCursor) => Object.assign(cursor, { mailbox: cursor.mailbox + 1, onMailbox: 0 })
const nextAddress = (cursor: MailCursor) => Object.assign(cursor, { address: cursor.address + 1, onAddress: 0 })

const startLoad = (world: World, phase: string, mailCursor: MailCursor) => {
  const load: PhaseLoad = {
    statuses: new Map(),
    sent: 0,
    answered: 0,
    slowestMs: 0,
    created: [],
    registered: [],
    mailed: new Map(),
    answers: []
  }
  let running = true
  const count = (status: string) => load.statuses.set(status, (load.statuses.get(status) ?? 0) + 1)
  const api = async (path: string, json: Record<string, unknown>) => {
    load.sent++
    const started = performance.now()
    try {
      const response = await fetch(`${world.app.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${world.liveKey}`, "content-type": "application/json" },
        body: JSON.stringify(json),
        signal: AbortSignal.timeout(ANSWER_LIMIT_MS)
      })
      await response.arrayBuffer()
      load.answered++
      load.slowestMs = Math.max(load.slowestMs, performance.now() - started)
      count(String(response.status))
      const remaining = Number(response.headers.get("x-ratelimit-remaining"))
      const limit = Number(response.headers.get("x-ratelimit-limit"))
      load.answers.push({ at: Date.now(), status: response.status, counted: limit > 0 && remaining < limit })
      return response.status
    } catch {
      load.slowestMs = Math.max(load.slowestMs, performance.now() - started)
      count("timeout")
      return 0
    }
  }
  const apiWorker = async (worker: number) => {
    for (let n = 0; running; n++) {
      const id = `${phase}-${worker}-${unique()}`
      if (n % 2 === 0) {
        const body = reservationBody(world.propertyId, { external_id: `C-${id}` })
        const status = await api("/api/partners/reservations", body)
        if (status === 200 || status === 201) load.created.push(`C-${id}`)
      } else {
        const document = String(10_000_000 + (++sequence))
        const body = registrationBody(world.propertyId, [colombian({ numero_documento: document })], {
          external_id: `G-${id}`,
          check_in: bogotaToday(),
          check_out: "2099-01-05"
        })
        const status = await api("/api/partners/registrations", body)
        if (status === 201 || status === 200) load.registered.push({ externalId: `G-${id}`, document })
      }
      await Bun.sleep(30)
    }
  }
  const mailWorker = async () => {
    while (running) {
      const email = world.mailboxes[mailCursor.mailbox]
      if (email !== undefined) {
        const from = `127.0.${1 + Math.floor(mailCursor.address / 250)}.${1 + (mailCursor.address % 250)}`
        load.sent++
        const started = performance.now()
        try {
          const status = await requestCode(world.appPort, from, email)
          load.answered++
          count(String(status))
          if (status === 202) {
            load.mailed.set(email, (load.mailed.get(email) ?? 0) + 1)
            if (++mailCursor.onMailbox === CODES_PER_EMAIL) nextMailbox(mailCursor)
            if (++mailCursor.onAddress === CODES_PER_ADDRESS) nextAddress(mailCursor)
          } else if (status === 429) {
            nextMailbox(mailCursor)
            nextAddress(mailCursor)
          }
        } catch {
          count("timeout")
        }
        load.slowestMs = Math.max(load.slowestMs, performance.now() - started)
      }
      await Bun.sleep(250)
    }
  }
  const reportWorker = async () => {
    while (running) {
      await Promise.race([admin(world.app, (c) => c.RunReports({})).catch(() => undefined), Bun.sleep(ANSWER_LIMIT_MS)])
      await Bun.sleep(500)
    }
  }
  const workers = [apiWorker(0), apiWorker(1), mailWorker(), reportWorker()]
  return {
    load,
    stop: async () => {
      running = false
      await Promise.all(workers)
    }
  }
}

/** What the receivers hold right now, per key: the webhook receiver by event id, the fakes by guest and e-mail. */
const received = (world: World) => {
  const events = new Map<string, number>()
  for (const request of world.receiver.received) {
    const id = request.headers["x-service-event-id"]
    if (id !== undefined) events.set(id, (events.get(id) ?? 0) + 1)
  }
  const reports = new Map<string, number>()
  for (const request of world.tra.mains()) {
    if (request.code === undefined) continue
    const document = (request.body as Record<string, string>).numero_identificacion ?? ""
    reports.set(document, (reports.get(document) ?? 0) + 1)
  }
  const mails = new Map<string, number>()
  for (const mail of world.smtp.messages) {
    for (const to of mail.to) mails.set(to.toLowerCase(), (mails.get(to.toLowerCase()) ?? 0) + 1)
  }
  return { events, reports, mails }
}

const extra = (counts: ReadonlyMap<string, number>) =>
  [...counts.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0)

/** What the phase started and has not arrived yet. */
const missing = async (world: World, load: PhaseLoad, mailsBefore: ReadonlyMap<string, number>) => {
  const now = received(world)
  const events = await world.db.query<{ id: string }>(
    "SELECT id FROM events WHERE account_id = $1 AND environment = 'live' AND type = ANY($2)",
    [world.accountId, LIFECYCLE_EVENTS]
  )
  const eventsLost = events.filter((event) => !now.events.has(event.id)).length
  const stored = await world.db.query<{ external_id: string; tra: string | null }>(
    "SELECT external_id, tra->>'status' AS tra FROM reservations WHERE external_id = ANY($1)",
    [[...load.created, ...load.registered.map((r) => r.externalId)]]
  )
  const byId = new Map(stored.map((row) => [row.external_id, row.tra]))
  const writesLost = load.created.filter((id) => !byId.has(id)).length +
    load.registered.filter((r) => !byId.has(r.externalId)).length
  const reportsLost = load.registered.filter((r) =>
    byId.get(r.externalId) !== "success" || !now.reports.has(r.document)
  ).length
  let mailsLost = 0
  for (const [email, asked] of load.mailed) {
    const got = (now.mails.get(email) ?? 0) - (mailsBefore.get(email) ?? 0)
    mailsLost += Math.max(0, asked - got)
  }
  return { eventsLost, writesLost, reportsLost, mailsLost }
}

/**
 * Pushes work that waits for a retry to now — what an operator's redelivery would do — so the run measures
 * loss, not the backoff schedule (webhooks retry after minutes, mail after 30 s); report runs are forced.
 */
const hurry = async (world: World) => {
  await world.db.query(
    "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE status = 'pending' AND next_attempt_at > now()"
  )
  await world.db.query(
    "UPDATE mail_outbox SET next_attempt_at = now() WHERE state = 'pending' AND next_attempt_at > now()"
  )
  await world.db.query("SELECT pg_notify('webhook_deliveries', '1')")
  await admin(world.app, (c) => c.RunReports({})).catch(() => undefined)
}

const firstAfter = (times: ReadonlyArray<number>, from: number) => {
  const after = times.filter((t) => t >= from)
  return after.length === 0 ? null : Math.min(...after) - from
}

/** When the restored dependency was first used with success after `restoredAt`. */
const recovery = (world: World, fault: Fault, load: PhaseLoad, restoredAt: number): number | null => {
  switch (fault.dependency) {
    case "postgres":
      return firstAfter(load.answers.filter((a) => a.status >= 200 && a.status < 300).map((a) => a.at), restoredAt)
    case "redis":
      return firstAfter(load.answers.filter((a) => a.counted).map((a) => a.at), restoredAt)
    case "smtp":
      return firstAfter(world.smtp.messages.map((m) => m.receivedAt), restoredAt)
    case "tra":
      return firstAfter(world.tra.requests.filter((r) => r.code !== undefined).map((r) => r.at), restoredAt)
    case "webhook":
      return firstAfter(world.receiver.received.map((r) => r.receivedAt), restoredAt)
  }
}

const apply = (proxy: FaultProxy, fault: Fault) => fault.kind === "cut" ? proxy.cut() : proxy.delay(fault.delayMs ?? 0)

export const runChaos = async (options: ChaosOptions): Promise<Array<ChaosRow>> => {
  const log = options.log ?? (() => {})
  // Codes the whole run may ask for: 5 per mailbox, 4 a second at most.
  const phaseMs = options.faultMs + 2 * options.calmMs
  const mailboxes = Math.ceil((options.faults.length * phaseMs / 250) / CODES_PER_EMAIL * 1.5) + 5
  const world = await startWorld(mailboxes, options.env ?? {})
  const mailCursor: MailCursor = { mailbox: 0, onMailbox: 0, address: 0, onAddress: 0 }
  const rows: Array<ChaosRow> = []
  try {
    for (const fault of options.faults) {
      const name = faultName(fault)
      const before = received(world)
      const { load, stop } = startLoad(world, name.replace(/\W+/g, ""), mailCursor)
      await Bun.sleep(options.calmMs)
      log(`${name}: applied`)
      await apply(world.proxies[fault.dependency], fault)
      await Bun.sleep(options.faultMs)
      await world.proxies[fault.dependency].restore()
      const restoredAt = Date.now()
      log(`${name}: restored`)
      await Bun.sleep(options.calmMs)
      await stop()
      const stoppedAt = Date.now()
      let left = await missing(world, load, before.mails)
      while (Object.values(left).some((n) => n > 0) && Date.now() - stoppedAt < options.settleMs) {
        await hurry(world)
        await Bun.sleep(500)
        left = await missing(world, load, before.mails)
      }
      const settledMs = Date.now() - stoppedAt
      const after = received(world)
      rows.push({
        fault: name,
        faultMs: options.faultMs,
        sent: load.sent,
        answered: load.answered,
        statuses: Object.fromEntries([...load.statuses].sort(([a], [b]) => a.localeCompare(b))),
        slowestMs: Math.round(load.slowestMs),
        recoveryMs: recovery(world, fault, load, restoredAt),
        settledMs,
        ...left,
        duplicateEvents: extra(after.events) - extra(before.events),
        duplicateReports: extra(after.reports) - extra(before.reports),
        duplicateMails: Math.max(
          0,
          [...load.mailed].reduce(
            (sum, [email, asked]) => sum + ((after.mails.get(email) ?? 0) - (before.mails.get(email) ?? 0) - asked),
            0
          )
        )
      })
      log(`${name}: ${JSON.stringify(rows.at(-1))}`)
    }
  } finally {
    await stopWorld(world)
  }
  return rows
}

/** The table as docs/reliability.md shows it. */
export const markdownTable = (rows: ReadonlyArray<ChaosRow>): string => {
  const header = [
    "fault",
    "for",
    "answered / sent",
    "statuses",
    "slowest",
    "recovery after restore",
    "settled in",
    "lost: writes / events / reports / mails",
    "duplicates: events / reports / mails"
  ]
  const ms = (n: number | null) => n === null ? "—" : n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${n} ms`
  const lines = rows.map((row) => [
    row.fault,
    ms(row.faultMs),
    `${row.answered} / ${row.sent}`,
    Object.entries(row.statuses).map(([status, n]) => `${status}×${n}`).join(" "),
    ms(row.slowestMs),
    ms(row.recoveryMs),
    ms(row.settledMs),
    `${row.writesLost} / ${row.eventsLost} / ${row.reportsLost} / ${row.mailsLost}`,
    `${row.duplicateEvents} / ${row.duplicateReports} / ${row.duplicateMails}`
  ])
  return [header, header.map(() => "---"), ...lines].map((cells) => `| ${cells.join(" | ")} |`).join("\n")
}
