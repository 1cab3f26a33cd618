import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { call, type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { type FakeSire, gatewayEnv, startFakeSire } from "../support/fakeSire.ts"
import { DEFAULT_TOKEN, type FakeTra, startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { type CliResult, expectCliFailure, expectCliSuccess, runCli } from "../support/process.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * `cli reports list` and `cli reports retry` (design §9) as real processes against a running service in SIRE
 * gateway mode, with the fake TRA and the fake SIRE gateway: the reports that need someone, filtered; a TRA
 * companion the TRA rejected, re-queued and accepted (the main guest never posted twice); an extension's
 * rejected companion likewise; a refused SIRE exit movement, re-queued and accepted; and what cannot be retried.
 */

const GATEWAY_TOKEN = "sire-gateway-token"
let tra: FakeTra
let sire: FakeSire
let db: TestDatabase
let app: RunningApp
let cli: (...args: Array<string>) => Promise<CliResult>
let account: Awaited<ReturnType<typeof seedAccount>>
/** Fully configured: TRA and SIRE go out. */
let reporting: string
/** No TRA token: its TRA waits with a configuration warning. */
let untokened: string

beforeAll(async () => {
  tra = startFakeTra()
  sire = startFakeSire({ token: GATEWAY_TOKEN })
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url, ROLE: "api", TRA_BASE_URL: tra.url, ...gatewayEnv(sire, GATEWAY_TOKEN) })
  cli = (...args) => runCli(["--url", app.baseUrl, "--token", app.adminToken, ...args])
  account = await seedAccount(app)
  const property = async (...flags: Array<string>) =>
    (await ok("properties", "create", "--account", account.accountId, "--rnt", "13579", "--sire-hotel-code", "2468",
      "--sire-city-code", "76001", ...flags)).property_id as string
  reporting = await property("--name", "Hotel Reportes", "--tra-token", DEFAULT_TOKEN)
  untokened = await property("--name", "Hotel Sin Token")
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
  tra?.stop()
  sire?.stop()
})

const ok = async (...args: Array<string>) => expectCliSuccess(args, await cli(...args))

const failed = expectCliFailure

/** The Bogotá date `days` after today's. */
const day = (days: number) =>
  new Date(Date.parse(`${bogotaToday()}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

let documentNumber = 70_000_000
const guest = (make: typeof colombian, overrides: Record<string, unknown> = {}) =>
  make({ numero_documento: String(documentNumber++), ...overrides })

/** A live endpoint-7 registration; answers its ids. */
const register = async (
  propertyId: string,
  guests: ReadonlyArray<Record<string, unknown>>,
  dates: { readonly check_in: string; readonly check_out: string }
) => {
  const created = await call(app, "POST", "/api/partners/registrations", {
    key: account.liveKey,
    json: registrationBody(propertyId, guests, dates)
  })
  expect(created.status).toBe(201)
  return { id: created.body.reservation_id as string, externalId: created.body.external_id as string }
}

const detail = async (externalId: string) =>
  (await call(app, "GET", `/api/partners/registrations?external_id=${externalId}`, { key: account.liveKey })).body

const submissionsOf = (reservationId: string) =>
  db.query<{ round: number; role: string; state: string; code: string | null; history: Array<{ outcome: string }> }>(
    `SELECT round, role, state, code::text AS code, history FROM tra_submissions s JOIN guests g ON g.id = s.guest_id
     WHERE s.reservation_id = $1 ORDER BY round, g.position`,
    [reservationId]
  )

const rejectCompanions = () => {
  tra.faultFor = (request) =>
    request.path === "/two/"
      ? { kind: "400-reject", field: "numero_identificacion", reason: "Número de identificación no válido." }
      : undefined
}

interface Listed {
  readonly reservation_id: string
  readonly authority: string
  readonly status: string
  readonly sends_on: string | null
  readonly warning: string | null
  readonly overdue: boolean
}

/** `reports list` with `args`, as `[reservation, authority, status, overdue]` rows of the given reservations. */
const listed = async (ids: ReadonlyArray<string>, ...args: Array<string>) =>
  ((await ok("reports", "list", ...args)).reports as Array<Listed>)
    .filter((report) => ids.includes(report.reservation_id))
    .map((report) => [ids.indexOf(report.reservation_id), report.authority, report.status, report.overdue])

let late: { id: string; externalId: string }
let early: { id: string; externalId: string }
let rejected: { id: string; externalId: string }

describe("reports list", () => {
  test("pending and failed reports, filtered by status, overdue and property", async () => {
    // 0: due yesterday, held by the missing TRA token; 1: due tomorrow; 2: the TRA rejects its companion today.
    late = await register(untokened, [guest(colombian)], { check_in: day(-1), check_out: day(2) })
    early = await register(untokened, [guest(colombian)], { check_in: day(1), check_out: day(3) })
    rejectCompanions()
    rejected = await register(reporting, [guest(colombian), guest(foreigner)], { check_in: day(0), check_out: day(3) })
    const run = await ok("reports", "run")
    expect(run.tra).toEqual({ sent: 2, accepted: 1, rejected: 1 })
    tra.faultFor = undefined

    const ids = [late.id, early.id, rejected.id]
    expect(await listed(ids)).toEqual([
      [0, "tra", "pending", true],
      [2, "tra", "error", false],
      [1, "tra", "pending", false],
      [2, "sire_exit", "pending", false]
    ])
    expect(await listed(ids, "--status", "error")).toEqual([[2, "tra", "error", false]])
    expect(await listed(ids, "--status", "pending")).toEqual([
      [0, "tra", "pending", true],
      [1, "tra", "pending", false],
      [2, "sire_exit", "pending", false]
    ])
    expect(await listed(ids, "--overdue")).toEqual([[0, "tra", "pending", true]])
    expect(await listed(ids, "--property", untokened)).toEqual([[0, "tra", "pending", true], [1, "tra", "pending", false]])
    expect(await listed(ids, "--property", untokened, "--status", "pending", "--overdue")).toEqual([
      [0, "tra", "pending", true]
    ])

    const all = (await ok("reports", "list", "--property", untokened)).reports as Array<Listed & Record<string, unknown>>
    expect(all.find((report) => report.reservation_id === late.id)).toEqual({
      reservation_id: late.id,
      external_id: late.externalId,
      account_id: account.accountId,
      property_id: untokened,
      authority: "tra",
      status: "pending",
      sends_on: day(-1),
      warning: expect.stringContaining("TRA token"),
      overdue: true
    })
    const failure = ((await ok("reports", "list", "--status", "error")).reports as Array<Listed>)
      .find((report) => report.reservation_id === rejected.id)!
    expect(failure.warning).toContain("was rejected")

    expect((await ok("reports", "list", "--property", "not-a-uuid")).reports).toEqual([])
    expect(failed(await cli("reports", "list", "--status", "failed"), "invalid_request", 2)).toBe(
      "--status must be pending or error (got \"failed\"); see cli reports list --help"
    )
  })

  test("pages with a cursor: every report once, in the same order, whatever the page size", async () => {
    const whole = await ok("reports", "list")
    expect(whole.next_cursor).toBeNull()
    expect(whole.reports.length).toBeGreaterThanOrEqual(4)
    const paged: Array<unknown> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: { reports: Array<unknown>; next_cursor: string | null } = await ok(
        "reports",
        "list",
        "--limit",
        "1",
        ...(cursor === null ? [] : ["--cursor", cursor])
      )
      expect(page.reports).toHaveLength(1)
      paged.push(...page.reports)
      cursor = page.next_cursor
      pages++
    } while (cursor !== null && pages < 50)
    expect(paged).toEqual(whole.reports)
    expect(failed(await cli("reports", "list", "--limit", "0"), "invalid_request", 2)).toContain("--limit must be a whole number from 1 to 1000")
    expect(failed(await cli("reports", "list", "--cursor", "not-a-cursor"), "invalid_request", 1)).toContain("cursor")
  })
})

describe("reports retry", () => {
  test("a companion the TRA rejected: re-queued alone, then accepted; the main guest is not posted again", async () => {
    const [main] = await submissionsOf(rejected.id)
    const retried = await ok("reports", "retry", "--reservation", rejected.id)
    expect(retried.reservation_id).toBe(rejected.id)
    expect(retried.requeued).toEqual([{ authority: "tra", guests: 1 }])
    expect(retried.reports.map((report: Listed) => [report.authority, report.status])).toEqual([
      ["tra", "pending"],
      ["sire_entry", "success"],
      ["sire_exit", "pending"]
    ])
    expect(retried.reports[0].warning).toMatch(/^re-queued by an operator; sent again at the next report run \(it had failed: .*was rejected/)

    const rows = await submissionsOf(rejected.id)
    expect(rows.map((row) => [row.role, row.state])).toEqual([["main", "accepted"], ["companion", "pending"]])
    expect(rows[0]!.code).toBe(main!.code)
    expect(rows[1]!.history.at(-1)).toMatchObject({ outcome: "Requeued" })
    const waiting = await detail(rejected.externalId)
    expect(waiting.tra.status).toBe("pending")
    expect(waiting.status).toBe("pending_compliance")

    tra.clear()
    const run = await ok("reports", "run")
    expect(run.tra).toEqual({ sent: 1, accepted: 1, rejected: 0 })
    expect(tra.mains()).toHaveLength(0)
    expect(tra.companions().map((request) => (request.body as { padre: string }).padre)).toEqual([main!.code!])
    const after = await detail(rejected.externalId)
    expect(after.tra).toMatchObject({ status: "success", mincit_code: Number(main!.code) })
    // The re-queue notice is gone with the outcome (a notice about the blank room number may remain).
    expect(after.tra.warning ?? "").not.toContain("re-queued")
    expect(after.status).toBe("compliant")
  })

  test("an extension's rejected companion: re-queued, that round posted again, the new code reported", async () => {
    const stay = await register(reporting, [guest(colombian), guest(colombian)], { check_in: day(0), check_out: day(2) })
    await ok("reports", "run")
    const patched = await call(app, "PATCH", "/api/partners/reservations", {
      key: account.liveKey,
      json: { external_id: stay.externalId, check_out: day(4) }
    })
    expect(patched.status).toBe(200)
    rejectCompanions()
    expect((await ok("reports", "run")).tra).toEqual({ sent: 2, accepted: 1, rejected: 1 })
    tra.faultFor = undefined
    expect((await detail(stay.externalId)).tra.status).toBe("error")

    const retried = await ok("reports", "retry", "--reservation", stay.id)
    expect(retried.requeued).toEqual([{ authority: "tra", guests: 1 }])
    const extensionMain = (await submissionsOf(stay.id)).find((row) => row.round === 1 && row.role === "main")!
    tra.clear()
    expect((await ok("reports", "run")).tra).toEqual({ sent: 1, accepted: 1, rejected: 0 })
    expect(tra.mains()).toHaveLength(0)
    expect(tra.companions().map((request) => request.body)).toEqual([
      expect.objectContaining({ padre: extensionMain.code, check_in: day(2), check_out: day(4) })
    ])
    const after = await detail(stay.externalId)
    expect(after.tra).toMatchObject({ status: "success", mincit_code: Number(extensionMain.code) })
    // Nothing owed any more.
    tra.clear()
    expect((await ok("reports", "run")).tra.sent).toBe(0)
  })

  test("a SIRE exit movement the gateway refused: re-queued, then accepted on its day", async () => {
    const stay = await register(reporting, [guest(foreigner)], { check_in: day(0), check_out: day(1) })
    await ok("reports", "run")
    expect((await detail(stay.externalId)).sire.exit).toMatchObject({ status: "pending", sends_on: day(1) })

    sire.reset()
    sire.rejectLine(1, "El documento no coincide con la entrada")
    const refused = await ok("reports", "run", "--date", day(1))
    expect(refused.sire).toEqual({ sent: 1, accepted: 0, rejected: 1 })
    expect((await detail(stay.externalId)).sire.exit).toMatchObject({
      status: "error",
      warning: expect.stringContaining("El documento no coincide con la entrada")
    })
    expect(await listed([stay.id], "--status", "error")).toEqual([[0, "sire_exit", "error", false]])

    const retried = await ok("reports", "retry", "--reservation", stay.id)
    expect(retried.requeued).toEqual([{ authority: "sire_exit", guests: 1 }])
    expect(retried.reports.find((report: Listed) => report.authority === "sire_exit")).toMatchObject({
      status: "pending",
      sends_on: day(1),
      warning: expect.stringContaining("re-queued by an operator")
    })
    expect(await db.query("SELECT movement, state FROM sire_movements WHERE reservation_id = $1 ORDER BY movement", [stay.id]))
      .toEqual([{ movement: "E", state: "accepted" }, { movement: "S", state: "pending" }])

    sire.reset()
    const again = await ok("reports", "run", "--date", day(1))
    expect(again.sire).toEqual({ sent: 1, accepted: 1, rejected: 0 })
    expect(sire.last().rows.map((row) => row[8])).toEqual(["S"])
    const after = await detail(stay.externalId)
    expect(after.sire.exit).toMatchObject({ status: "success" })
    expect(after.sire.exit).not.toHaveProperty("warning")
    expect(after.sire.status).toBe("success")
  })

  test("nothing in error → nothing_to_retry, nothing changed; an unknown reservation → reservation_not_found", async () => {
    const before = await db.query("SELECT tra, sire, updated_at FROM reservations WHERE id = $1", [early.id])
    const message = failed(await cli("reports", "retry", "--reservation", early.id), "nothing_to_retry", 1)
    expect(message).toBe(
      `no report of reservation ${early.id} is in error (tra pending, sire not_applicable, sire exit not_applicable); `
        + "nothing to retry"
    )
    expect(await db.query("SELECT tra, sire, updated_at FROM reservations WHERE id = $1", [early.id])).toEqual(before)
    // Retried and accepted: nothing left in error either.
    failed(await cli("reports", "retry", "--reservation", rejected.id), "nothing_to_retry", 1)
    for (const id of ["00000000-0000-4000-8000-000000000000", "nope"]) {
      expect(failed(await cli("reports", "retry", "--reservation", id), "reservation_not_found", 1)).toBe(
        `no reservation ${id}`
      )
    }
  })
})
