import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test"
import { SqlClient } from "@effect/sql"
import {
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Logger,
  LogLevel,
  type ManagedRuntime,
  Option,
  Redacted,
  TestClock,
  TestContext
} from "effect"
import * as MailerModule from "../../src/mail/Mailer.ts"
import { enqueueMail, loop, MAIL_LEASE, MAIL_RETRIES, MailQueue, type MailToSend } from "../../src/mail/MailQueue.ts"
import { MailTemplate } from "../../src/mail/Messages.ts"
import { delayBeforeRetry } from "../../src/shared/DurableRetry.ts"
import { type RunningApp, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { serviceRuntime } from "../support/services.ts"
import { type FakeSmtp, startFakeSmtp } from "../support/smtp.ts"

/**
 * The mail outbox on real PostgreSQL against a real SMTP server. The app runs with ROLE=api (no delivery loop
 * of its own), so only the workers built here send, one explicit round at a time, on a `TestClock`.
 */

interface LogEntry {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

let smtp: FakeSmtp
let db: TestDatabase
let app: RunningApp
const logs: Array<LogEntry> = []
/** Two instances of the worker side: separate pools, as two processes would have. */
let workerA: ManagedRuntime.ManagedRuntime<MailQueue | MailerModule.Mailer | SqlClient.SqlClient, unknown>
let workerB: ManagedRuntime.ManagedRuntime<MailQueue | MailerModule.Mailer | SqlClient.SqlClient, unknown>

const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, logLevel, message }) => {
    logs.push({
      level: logLevel.label,
      message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
      annotations: Object.fromEntries(annotations)
    })
  })
)

const worker = () =>
  serviceRuntime(
    app,
    Layer.mergeAll(
      MailQueue.Default,
      MailerModule.smtp({ url: Redacted.make(smtp.url), from: "Panel <no-reply@hotel.example.co>" }),
      Layer.effect(SqlClient.SqlClient, SqlClient.SqlClient),
      capture,
      Logger.minimumLogLevel(LogLevel.Info)
    )
  )

beforeAll(async () => {
  smtp = await startFakeSmtp()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api" })
  workerA = worker()
  workerB = worker()
  await workerA.runPromise(Effect.void)
  await workerB.runPromise(Effect.void)
})

afterAll(async () => {
  await workerA?.dispose()
  await workerB?.dispose()
  await app?.stop()
  await db?.drop()
  await smtp?.stop()
})

beforeEach(async () => {
  await smtp.recover()
  smtp.clear()
  logs.length = 0
  // Each test starts with an empty queue: a leftover row would be claimed by the next test's rounds.
  await db.query("DELETE FROM mail_outbox")
})

let serial = 0
const mailTo = (to: string, language: "es" | "en" = "es"): MailToSend => ({
  to,
  language,
  template: MailTemplate.signin_code({ code: String(100000 + ++serial), minutes: 10 })
})

interface Row {
  readonly id: string
  readonly recipient: string
  readonly language: string
  readonly template: string
  readonly subject: string
  readonly state: string
  readonly attempts: number
  readonly next_attempt_at: Date
  readonly lease_until: Date | null
  readonly last_error: string | null
  readonly created_at: Date
  readonly sent_at: Date | null
}
const rows = () => db.query<Row & Record<string, unknown>>("SELECT * FROM mail_outbox ORDER BY created_at, id")
const rowOf = async (id: string) =>
  (await db.query<Row & Record<string, unknown>>("SELECT * FROM mail_outbox WHERE id = $1", [id]))[0]!

const enqueue = (mail: MailToSend) => workerA.runPromise(Effect.flatMap(MailQueue, (queue) => queue.enqueue(mail)))

/** Runs `program` with a TestClock that starts just after the wall clock's now (rows are queued at wall time). */
const withTestClock = <A, R extends MailQueue | MailerModule.Mailer | SqlClient.SqlClient>(
  runtime: typeof workerA,
  program: Effect.Effect<A, unknown, R>
) =>
  runtime.runPromise(
    Effect.zipRight(TestClock.setTime(Date.now() + 1_000), program).pipe(Effect.provide(TestContext.TestContext))
  )
const round = Effect.flatMap(MailQueue, (queue) => queue.runDue())

/** Polls (in real time) until `condition` holds. */
const until = async (condition: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("enqueue runs in the caller's transaction (design §8)", () => {
  test("a change that rolls back leaves no message; nothing is sent", async () => {
    const outcome = await workerA.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* MailQueue
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* queue.enqueue(mailTo("rollback@example.co"))
          yield* enqueueMail(mailTo("rollback2@example.co"))
          return yield* Effect.fail("the change failed" as const)
        }))
      }).pipe(Effect.exit)
    )
    expect(Exit.isFailure(outcome)).toBe(true)
    expect(await rows()).toEqual([])
    expect(await withTestClock(workerA, round)).toBe(0)
    expect(smtp.messages).toHaveLength(0)
  })

  test("a change that commits always has its message, sent exactly once", async () => {
    const id = await workerA.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* MailQueue
        return yield* sql.withTransaction(queue.enqueue(mailTo("commit@example.co", "en")))
      })
    )
    expect(await rowOf(id)).toMatchObject({
      recipient: "commit@example.co",
      language: "en",
      template: "signin_code",
      state: "pending",
      attempts: 0,
      lease_until: null,
      sent_at: null
    })
    const claimed = await withTestClock(workerA, Effect.all([round, round, round]))
    expect(claimed).toEqual([1, 0, 0])
    const row = await rowOf(id)
    expect(row).toMatchObject({ state: "sent", attempts: 1, lease_until: null, last_error: null })
    expect(row.sent_at).toBeInstanceOf(Date)
    expect(smtp.messages).toHaveLength(1)
    expect(smtp.messages[0]).toMatchObject({
      to: ["commit@example.co"],
      subject: row.subject,
      from: { name: "Panel", address: "no-reply@hotel.example.co" }
    })
    expect(smtp.messages[0]!.subject).toMatch(/^Your sign-in code: \d{6}$/)
    expect(smtp.lastCodeFor("commit@example.co")).toBe(smtp.messages[0]!.subject.slice(-6))
  })

  test("language defaults to Spanish", async () => {
    const template = MailTemplate.signin_code({ code: "123456", minutes: 10 })
    const id = await enqueue({ to: "es@example.co", template })
    expect(await rowOf(id)).toMatchObject({ language: "es", subject: "Su código de acceso: 123456" })
  })
})

describe("retries (TestClock)", () => {
  test("the schedule: 30 s, 1 min, 5 min, 15 min, then every hour (±20 %)", async () => {
    const gaps = await Effect.runPromise(
      Effect.forEach([1, 2, 3, 4, 5, 6, 40], (retry) => delayBeforeRetry(MAIL_RETRIES, retry, undefined))
    )
    const nominal = [30, 60, 300, 900, 3600, 3600, 3600]
    gaps.forEach((gap, i) => {
      const seconds = Duration.toSeconds(Option.getOrThrow(gap))
      expect(seconds).toBeGreaterThanOrEqual(nominal[i]! * 0.8)
      expect(seconds).toBeLessThanOrEqual(nominal[i]! * 1.2)
    })
  })

  test("SMTP down, then up: the message arrives, exactly once", async () => {
    await smtp.refuse()
    const id = await enqueue(mailTo("down-then-up@example.co"))
    const claimed = await withTestClock(workerA, Effect.gen(function*() {
      const counts = [yield* round] // refused
      counts.push(yield* round) // not due
      yield* TestClock.adjust("23 seconds")
      counts.push(yield* round) // 30 s - 20 % = 24 s: still not due
      yield* TestClock.adjust("13 seconds")
      counts.push(yield* round) // 36 s ≥ 30 s + 20 %: refused again
      yield* Effect.promise(() => smtp.recover())
      yield* TestClock.adjust("47 seconds")
      counts.push(yield* round) // 1 min - 20 % = 48 s: not due
      yield* TestClock.adjust("25 seconds")
      counts.push(yield* round) // 72 s ≥ 1 min + 20 %: delivered
      yield* TestClock.adjust("2 hours")
      counts.push(yield* round) // nothing left
      return counts
    }))
    expect(claimed).toEqual([1, 0, 0, 1, 0, 1, 0])
    expect(await rowOf(id)).toMatchObject({ state: "sent", attempts: 3, last_error: null, lease_until: null })
    expect(smtp.matching((m) => m.to.includes("down-then-up@example.co"))).toHaveLength(1)
    const warnings = logs.filter((l) => l.level === "WARN" && l.message === "e-mail not sent; will retry")
    expect(warnings).toHaveLength(2)
    expect(warnings[0]!.annotations).toMatchObject({ mail_id: id, template: "signin_code", attempts: 1 })
    expect(String(warnings[0]!.annotations.reason)).toContain("ECONNREFUSED")
    // Never the recipient or the body (the code) in the logs.
    expect(JSON.stringify(logs)).not.toContain("down-then-up@example.co")
  })

  test("a 451 reply is retried like a refused connection", async () => {
    smtp.reject({ code: 451 })
    const id = await enqueue(mailTo("greylisted@example.co"))
    const claimed = await withTestClock(workerA, Effect.gen(function*() {
      const counts = [yield* round] // 451
      yield* Effect.promise(() => smtp.recover())
      yield* TestClock.adjust("36 seconds")
      counts.push(yield* round)
      return counts
    }))
    expect(claimed).toEqual([1, 1])
    expect(await rowOf(id)).toMatchObject({ state: "sent", attempts: 2 })
    expect(smtp.rcptAttempts()).toBe(2)
    expect(smtp.messages).toHaveLength(1)
  })

  test("a permanent failure (550) ends failed at once, logged at Error, never retried", async () => {
    smtp.reject({ code: 550, message: "No such user here" })
    const id = await enqueue(mailTo("nobody@example.co"))
    const claimed = await withTestClock(workerA, Effect.gen(function*() {
      const counts = [yield* round]
      yield* TestClock.adjust("1 day")
      counts.push(yield* round)
      return counts
    }))
    expect(claimed).toEqual([1, 0])
    const row = await rowOf(id)
    expect(row).toMatchObject({ state: "failed", attempts: 1, lease_until: null, sent_at: null })
    expect(row.last_error).toContain("550 No such user here")
    expect(smtp.rcptAttempts()).toBe(1)
    const errors = logs.filter((l) => l.level === "ERROR")
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ message: "e-mail failed for good", annotations: { mail_id: id, attempts: 1 } })
  })

  test("after about 3 days of transient failures the message is failed, with the last error", async () => {
    await smtp.refuse()
    const id = await enqueue(mailTo("never-up@example.co"))
    const created = (await rowOf(id)).created_at.getTime()
    const attempts = await withTestClock(workerA, Effect.gen(function*() {
      let total = 0
      for (let hour = 0; hour < 24 * 4; hour++) {
        total += yield* round
        yield* TestClock.adjust("75 minutes")
      }
      return total
    }))
    const row = await rowOf(id)
    expect(row.state).toBe("failed")
    expect(row.attempts).toBe(attempts)
    // 4 quick retries, then hourly (±20 %) until 3 days after it was queued.
    expect(attempts).toBeGreaterThan(50)
    expect(attempts).toBeLessThan(80)
    expect(row.last_error).toContain("ECONNREFUSED")
    // The last attempt was within 3 days of queueing (TestClock time; `next_attempt_at` kept the last one).
    expect(row.next_attempt_at.getTime() - created).toBeLessThanOrEqual(Duration.toMillis(Duration.days(3)))
    expect(logs.filter((l) => l.level === "ERROR")).toHaveLength(1)
  }, 60_000)
})

describe("several workers (FOR UPDATE SKIP LOCKED, leases)", () => {
  test("two workers on real PostgreSQL share the queue without sending a message twice", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 12; i++) ids.push(await enqueue(mailTo(`shared-${i}@example.co`)))
    const drain = (runtime: typeof workerA) =>
      withTestClock(runtime, Effect.gen(function*() {
        let total = 0
        for (let claimed = yield* round; claimed > 0; claimed = yield* round) total += claimed
        return total
      }))
    const [a, b] = await Promise.all([drain(workerA), drain(workerB)])
    expect(a + b).toBe(12)
    expect(a).toBeGreaterThan(0)
    expect(b).toBeGreaterThan(0)
    expect(smtp.messages).toHaveLength(12)
    expect(new Set(smtp.messages.map((m) => m.to[0])).size).toBe(12)
    for (const id of ids) expect(await rowOf(id)).toMatchObject({ state: "sent", attempts: 1 })
  })

  test("a worker killed mid-send: the message stays claimable; another delivers it after the lease", async () => {
    smtp.stall()
    const id = await enqueue(mailTo("orphan@example.co"))
    // Worker A claims the message and is interrupted while the server holds its reply.
    await withTestClock(workerA, Effect.gen(function*() {
      const fiber = yield* Effect.fork(round)
      yield* Effect.promise(() => until(() => smtp.stalled() === 1))
      yield* Fiber.interrupt(fiber)
    }))
    const orphan = await rowOf(id)
    expect(orphan).toMatchObject({ state: "pending", attempts: 1, sent_at: null })
    expect(orphan.lease_until).toBeInstanceOf(Date)
    // The server that hung answers 451 for that transaction when it recovers: it never accepted the message.
    await smtp.recover()
    const claimed = await withTestClock(workerB, Effect.gen(function*() {
      const counts = [yield* round] // A's lease still holds
      yield* TestClock.adjust(Duration.sum(MAIL_LEASE, Duration.seconds(1)))
      counts.push(yield* round)
      return counts
    }))
    expect(claimed).toEqual([0, 1])
    expect(await rowOf(id)).toMatchObject({ state: "sent", attempts: 2, lease_until: null })
    expect(smtp.matching((m) => m.to.includes("orphan@example.co"))).toHaveLength(1)
  })
})

describe("the delivery loop", () => {
  test("sends what is queued unasked; on shutdown a send in flight finishes and is recorded", async () => {
    // As App.ts composes it: the loop over the queue service and a Mailer.
    const services = Layer.merge(
      MailQueue.Default,
      MailerModule.smtp({ url: Redacted.make(smtp.url), from: "no-reply@hotel.example.co" })
    )
    const loopRuntime = serviceRuntime(app, Layer.merge(loop.pipe(Layer.provide(services)), capture))
    try {
      await loopRuntime.runPromise(Effect.void)
      const first = await enqueue(mailTo("loop-1@example.co"))
      await smtp.waitFor((m) => m.to.includes("loop-1@example.co"), 5_000)
      await until(async () => (await rowOf(first)).state === "sent")

      smtp.stall()
      const second = await enqueue(mailTo("loop-2@example.co"))
      await until(() => smtp.stalled() === 1)
      // SIGTERM: the runtime closes while the server still holds the reply; it answers shortly after.
      const stopping = loopRuntime.dispose()
      await new Promise((resolve) => setTimeout(resolve, 300))
      await smtp.release()
      await stopping
      expect(await rowOf(second)).toMatchObject({ state: "sent", attempts: 1, lease_until: null })
      expect(smtp.matching((m) => m.to.includes("loop-2@example.co"))).toHaveLength(1)
    } finally {
      await loopRuntime.dispose()
    }
  })
})
