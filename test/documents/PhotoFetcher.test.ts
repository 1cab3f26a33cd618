import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, Layer, type ManagedRuntime, TestClock, TestContext } from "effect"
import * as DocumentStore from "../../src/documents/DocumentStore.ts"
import { PhotoFetcher } from "../../src/documents/PhotoFetcher.ts"
import { call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { colombian, registrationBody } from "../support/guests.ts"
import { JPEG, type PhotoServer, startPhotoServer } from "../support/photos.ts"
import { serviceRuntime } from "../support/services.ts"

/**
 * The fetcher's retry schedule and lease, driven by `TestClock`. The app runs with ROLE=api (no background
 * loop of its own), so only the fetcher built here works the jobs, one explicit round at a time.
 */
let photos: PhotoServer
let db: TestDatabase
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>
let fetcher: ManagedRuntime.ManagedRuntime<PhotoFetcher, unknown>

beforeAll(async () => {
  photos = startPhotoServer()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api", WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
  account = await seedAccount(app)
  fetcher = serviceRuntime(app, PhotoFetcher.Default.pipe(Layer.provide(DocumentStore.filesystem)))
})

afterAll(async () => {
  await fetcher?.dispose()
  await app?.stop()
  await db?.drop()
  photos?.stop()
})

let documentNumber = 80000000
const submitWithFront = async (path: string) => {
  const body = registrationBody(account.testProperties[1]!.property_id, [
    colombian({ numero_documento: String(documentNumber++), doc_photo_front_url: `${photos.url}${path}` })
  ])
  const response = await call(app, "POST", "/api/partners/registrations", { key: account.testKey, json: body })
  expect(response.status).toBe(201)
  return body.external_id as string
}

const jobOf = async (externalId: string) => {
  const [row] = await db.query<{ state: string; attempts: number; last_error: string | null; next_attempt_at: Date; guest_id: string }>(
    `SELECT f.state, f.attempts, f.last_error, f.next_attempt_at, f.guest_id
     FROM document_fetches f JOIN guests g ON g.id = f.guest_id JOIN reservations r ON r.id = g.reservation_id
     WHERE r.external_id = $1`,
    [externalId]
  )
  return row!
}
const uploaded = async (guestId: string) =>
  (await db.query<{ document_uploaded: boolean }>("SELECT document_uploaded FROM guests WHERE id = $1", [guestId]))[0]!
    .document_uploaded

/** Runs `program` on the fetcher's services with a TestClock that starts at the wall clock's now. */
const withTestClock = <A>(program: Effect.Effect<A, unknown, PhotoFetcher>) =>
  fetcher.runPromise(
    Effect.zipRight(TestClock.setTime(Date.now() + 1_000), program).pipe(Effect.provide(TestContext.TestContext))
  )
const round = Effect.flatMap(PhotoFetcher, (f) => f.runDue())

describe("PhotoFetcher retries and leases (TestClock)", () => {
  test("a transient failure (5xx) is retried after 1 then 3 minutes (±20 %), and the photo lands", async () => {
    photos.route("/flaky.jpg", { sequence: [{ status: 500 }, { status: 503 }, { body: JPEG }] })
    const externalId = await submitWithFront("/flaky.jpg")
    const steps = await withTestClock(Effect.gen(function*() {
      const claimed = [yield* round] // 500
      claimed.push(yield* round) // not due yet
      yield* TestClock.adjust("47 seconds")
      claimed.push(yield* round) // 1 min - 20 % = 48 s: still not due
      yield* TestClock.adjust("25 seconds")
      claimed.push(yield* round) // 72 s ≥ 1 min + 20 %: 503
      yield* TestClock.adjust("143 seconds")
      claimed.push(yield* round) // 3 min - 20 % = 144 s: not due
      yield* TestClock.adjust("74 seconds")
      claimed.push(yield* round) // 3 min + 20 %: the photo
      return claimed
    }))
    expect(steps).toEqual([1, 0, 0, 1, 0, 1])
    const job = await jobOf(externalId)
    expect(job).toMatchObject({ state: "stored", attempts: 3, last_error: null })
    expect(await uploaded(job.guest_id)).toBe(true)
    expect(photos.requests.filter((path) => path === "/flaky.jpg")).toHaveLength(3)
  })

  test("after 6 attempts (5 retries) a photo that keeps failing is failed for good, with the last error", async () => {
    photos.route("/down.jpg", { status: 502 })
    const externalId = await submitWithFront("/down.jpg")
    const claimed = await withTestClock(Effect.gen(function*() {
      const counts: Array<number> = []
      for (let attempt = 0; attempt < 8; attempt++) {
        counts.push(yield* round)
        yield* TestClock.adjust("2 hours")
      }
      return counts
    }))
    expect(claimed).toEqual([1, 1, 1, 1, 1, 1, 0, 0])
    expect(await jobOf(externalId)).toMatchObject({ state: "failed", attempts: 6, last_error: "HTTP 502" })
  })

  test("a job claimed by a worker that died is taken over once its lease (2 minutes) runs out", async () => {
    photos.route("/orphan.jpg", { body: JPEG })
    const externalId = await submitWithFront("/orphan.jpg")
    const job = await jobOf(externalId)
    // What a crashed worker leaves behind: the claim (attempt counted, lease set), never an outcome.
    await db.query(
      "UPDATE document_fetches SET attempts = 1, lease_until = $2 WHERE guest_id = $1",
      [job.guest_id, new Date(Date.now() + 120_000)]
    )
    const claimed = await withTestClock(Effect.gen(function*() {
      const counts = [yield* round]
      yield* TestClock.adjust("2 minutes")
      counts.push(yield* round)
      return counts
    }))
    expect(claimed).toEqual([0, 1])
    expect(await jobOf(externalId)).toMatchObject({ state: "stored", attempts: 2 })
    expect(await uploaded(job.guest_id)).toBe(true)
  })

  test("two fetchers working at once claim each job once (FOR UPDATE SKIP LOCKED)", async () => {
    photos.route("/shared.jpg", { body: JPEG })
    const ids = [await submitWithFront("/shared.jpg"), await submitWithFront("/shared.jpg"), await submitWithFront("/shared.jpg")]
    const before = photos.requests.filter((path) => path === "/shared.jpg").length
    const claimed = await withTestClock(
      Effect.all([round, round, round, round], { concurrency: "unbounded" })
    )
    expect(claimed.reduce((a, b) => a + b, 0)).toBe(3)
    expect(photos.requests.filter((path) => path === "/shared.jpg").length - before).toBe(3)
    for (const id of ids) expect(await jobOf(id)).toMatchObject({ state: "stored", attempts: 1 })
  })
})
