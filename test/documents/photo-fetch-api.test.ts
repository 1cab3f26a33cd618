import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { JPEG, PDF, type PhotoServer, PNG, startPhotoServer } from "../support/photos.ts"

/**
 * Endpoint 7's `doc_photo_*_url` values are fetched in the background (design §6.5) by the app's own worker
 * loop, from a real local file host. Private addresses are allowed here (WEBHOOK_ALLOW_PRIVATE_URLS) because
 * the file host is on 127.0.0.1; the last suite runs the default policy and proves it refuses them.
 */
let photos: PhotoServer
let db: TestDatabase
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>

beforeAll(async () => {
  photos = startPhotoServer()
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
  account = await seedAccount(app)
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  photos?.stop()
})

let documentNumber = 70000000
const guest = (front?: string, back?: string) =>
  colombian({
    numero_documento: String(documentNumber++),
    ...(front === undefined ? {} : { doc_photo_front_url: `${photos.url}${front}` }),
    ...(back === undefined ? {} : { doc_photo_back_url: `${photos.url}${back}` })
  })

const submit = async (guests: Array<Record<string, unknown>>) => {
  const body = registrationBody(account.testProperties[1]!.property_id, guests)
  const response = await call(app, "POST", "/api/partners/registrations", { key: account.testKey, json: body })
  expect(response.status).toBe(201)
  return body.external_id as string
}

const guestsOf = async (externalId: string) => {
  const response = await call(app, "GET", `/api/partners/registrations?external_id=${externalId}&include=guests`, {
    key: account.testKey
  })
  expect(response.status).toBe(200)
  return response.body.guests as Array<{ numero_documento: string; document_uploaded: boolean | null }>
}

const fetchesOf = (externalId: string) =>
  db.query<{ numero_documento: string; guest_id: string; side: string; state: string; attempts: number; last_error: string | null }>(
    `SELECT g.numero_documento, f.guest_id, f.side, f.state, f.attempts, f.last_error
     FROM document_fetches f JOIN guests g ON g.id = f.guest_id JOIN reservations r ON r.id = g.reservation_id
     WHERE r.external_id = $1 ORDER BY g.position, f.side DESC`,
    [externalId]
  )

/** Waits (up to 15 s) until every fetch job of the reservation has finished, one way or the other. */
const settled = async (externalId: string) => {
  for (let i = 0; i < 150; i++) {
    const rows = await fetchesOf(externalId)
    if (rows.length > 0 && rows.every((row) => row.state !== "pending")) return rows
    await Bun.sleep(100)
  }
  throw new Error(`document fetches of ${externalId} did not finish: ${JSON.stringify(await fetchesOf(externalId))}`)
}

describe("document photos sent with endpoint 7 (design §6.5)", () => {
  test("front and back photos are fetched, kept in the document store, and document_uploaded turns true", async () => {
    photos.route("/ana-front.jpg", { body: JPEG, headers: { "content-type": "application/octet-stream" } })
    photos.route("/ana-back.png", { body: PNG })
    photos.route("/john-front.pdf", { body: PDF })
    const ana = guest("/ana-front.jpg", "/ana-back.png") as { numero_documento: string }
    const john = foreigner({ doc_photo_front_url: `${photos.url}/john-front.pdf`, doc_photo_back_url: undefined }) as {
      numero_documento: string
    }
    const externalId = await submit([ana, john])

    const rows = await settled(externalId)
    expect(rows.map((row) => [row.numero_documento, row.side, row.state, row.attempts])).toEqual([
      [ana.numero_documento, "front", "stored", 1],
      [ana.numero_documento, "back", "stored", 1],
      [john.numero_documento, "front", "stored", 1]
    ])
    expect((await guestsOf(externalId)).map((g) => g.document_uploaded)).toEqual([true, true])

    // The bytes on disk are the bytes served; the format is recognised by content, not by the header.
    const [anaFront, anaBack, johnFront] = rows
    const file = (row: typeof anaFront) => NodeFs.readFile(NodePath.join(app.dataDir, "documents", row!.guest_id, row!.side))
    expect(new Uint8Array(await file(anaFront))).toEqual(JPEG)
    expect(new Uint8Array(await file(anaBack))).toEqual(PNG)
    expect(new Uint8Array(await file(johnFront))).toEqual(PDF)
    expect((await NodeFs.stat(NodePath.join(app.dataDir, "documents", anaFront!.guest_id, "front"))).mode & 0o777).toBe(0o600)
    const stored = await db.query<{ side: string; content_type: string; size_bytes: number }>(
      "SELECT side, content_type, size_bytes FROM guest_documents WHERE guest_id = $1 ORDER BY side DESC",
      [anaFront!.guest_id]
    )
    expect(stored).toEqual([
      { side: "front", content_type: "image/jpeg", size_bytes: JPEG.byteLength },
      { side: "back", content_type: "image/png", size_bytes: PNG.byteLength }
    ])
  })

  test("a back photo alone does not make document_uploaded true (design §6.5: the front photo)", async () => {
    photos.route("/only-back.jpg", { body: JPEG })
    const externalId = await submit([guest(undefined, "/only-back.jpg")])
    const rows = await settled(externalId)
    expect(rows.map((row) => [row.side, row.state])).toEqual([["back", "stored"]])
    expect((await guestsOf(externalId)).map((g) => g.document_uploaded)).toEqual([false])
  })

  test("files that are not JPEG/PNG/PDF, over 10 MB, redirected or missing are refused for good and never stored", async () => {
    photos.route("/notes.txt", { body: "hello, not a photo", headers: { "content-type": "image/jpeg" } })
    const big = new Uint8Array(10 * 1024 * 1024 + 1)
    big.set(JPEG)
    photos.route("/big.jpg", { body: big })
    photos.route("/moved.jpg", { status: 302, headers: { location: `${photos.url}/redirect-target.jpg` } })
    photos.route("/redirect-target.jpg", { body: JPEG })
    const externalId = await submit([guest("/notes.txt"), guest("/big.jpg"), guest("/moved.jpg"), guest("/gone.jpg")])

    const rows = await settled(externalId)
    expect(rows.map((row) => [row.state, row.attempts])).toEqual([["failed", 1], ["failed", 1], ["failed", 1], ["failed", 1]])
    expect(rows[0]!.last_error).toContain("not a JPEG, PNG or PDF")
    expect(rows[1]!.last_error).toContain("larger than 10 MB")
    expect(rows[2]!.last_error).toContain("redirects are not followed")
    expect(rows[3]!.last_error).toContain("HTTP 404")
    expect(photos.requests).not.toContain("/redirect-target.jpg")
    expect((await guestsOf(externalId)).map((g) => g.document_uploaded)).toEqual([false, false, false, false])
    const stored = await db.query("SELECT 1 FROM guest_documents WHERE guest_id = ANY($1)", [rows.map((row) => row.guest_id)])
    expect(stored).toEqual([])
    for (const row of rows) {
      await expect(NodeFs.stat(NodePath.join(app.dataDir, "documents", row.guest_id, "front"))).rejects.toThrow()
    }
  })

  test("the registration itself never waits for, nor fails because of, a photo", async () => {
    photos.route("/slow.jpg", { hang: true })
    const started = performance.now()
    const externalId = await submit([guest("/slow.jpg")])
    expect(performance.now() - started).toBeLessThan(2_000)
    const [row] = await db.query<{ status: string }>("SELECT status FROM reservations WHERE external_id = $1", [externalId])
    expect(row!.status).toBe("compliant")
  })
})

describe("document photos under the default URL policy (design §7)", () => {
  let strictDb: TestDatabase
  let strict: RunningApp
  let strictAccount: Awaited<ReturnType<typeof seedAccount>>
  beforeAll(async () => {
    strictDb = await freshDatabase()
    strict = await startApp({ DATABASE_URL: strictDb.url })
    strictAccount = await seedAccount(strict)
  })
  afterAll(async () => {
    await strict?.stop()
    await strictDb?.drop()
  })

  test("http:// and loopback URLs are refused without a request ever reaching them", async () => {
    photos.route("/private.jpg", { body: JPEG })
    const port = new URL(photos.url).port
    const externalId = `PS-${Math.random().toString(36).slice(2, 10)}`
    const response = await call(strict, "POST", "/api/partners/registrations", {
      key: strictAccount.testKey,
      json: {
        external_id: externalId,
        property_id: strictAccount.testProperties[1]!.property_id,
        check_in: "2026-12-20",
        check_out: "2026-12-23",
        guest_name: "Ana Pérez",
        guests_count: 2,
        motivo: "Vacaciones, recreo y ocio",
        tipo_acomodacion: "Habitación",
        guests: [
          colombian({ numero_documento: "111", doc_photo_front_url: `${photos.url}/private.jpg` }),
          colombian({ numero_documento: "222", doc_photo_front_url: `https://127.0.0.1:${port}/private.jpg` })
        ]
      }
    })
    // The registration is accepted: a photo problem must never cost the hotel its report.
    expect(response.status).toBe(201)
    let rows: Array<{ state: string; last_error: string | null }> = []
    for (let i = 0; i < 150; i++) {
      rows = await strictDb.query(
        "SELECT f.state, f.last_error FROM document_fetches f JOIN guests g ON g.id = f.guest_id ORDER BY g.position"
      )
      if (rows.length === 2 && rows.every((row) => row.state !== "pending")) break
      await Bun.sleep(100)
    }
    expect(rows.map((row) => row.state)).toEqual(["failed", "failed"])
    expect(rows[0]!.last_error).toContain("https")
    expect(rows[1]!.last_error).toContain("127.0.0.1")
    expect(photos.requests).not.toContain("/private.jpg")
  })
})
