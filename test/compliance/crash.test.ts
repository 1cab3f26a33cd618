import { afterEach, describe, expect, test } from "bun:test"
import { admin, call, seedAccount, startApp, tempDir, traProperty } from "../support/app.ts"
import { freshDatabase } from "../support/database.ts"
import { gatewayEnv, startFakeSire } from "../support/fakeSire.ts"
import { startFakeTra } from "../support/fakeTra.ts"
import { colombian, foreigner, registrationBody } from "../support/guests.ts"
import { type ServiceProcess, spawnService, within } from "../support/process.ts"
import type { LiveHotel } from "../support/reportWorld.ts"
import { bogotaToday } from "../support/trm.ts"

/**
 * Nothing stuck, ever (design §7, issue 15 item 5): a worker process is killed with SIGKILL — by a failpoint
 * (`FAILPOINTS`, `shared/Failpoints.ts`) at each step of a TRA post and of a SIRE gateway file, or from outside
 * while a request hangs at the authority — and a new worker on the same PostgreSQL database ends every report
 * in exactly one of: accepted; sent again with "possible duplicate" in its history; or `error` with a reason.
 * Recovery starts within one report interval of the restart: the crashed run's leases (REPORT_LEASE) lapse and
 * the next run picks its work up.
 *
 * The API runs in-process (ROLE=api, no loop); the workers are real processes (ROLE=worker).
 */
const GATEWAY_TOKEN = "crash-gateway-token"
const REPORTS_EVERY = "1 second"
const REPORT_LEASE = "2 seconds"

interface World extends LiveHotel {
  readonly workers: Array<ServiceProcess>
}

let worlds: Array<World> = []

afterEach(async () => {
  for (const world of worlds) {
    for (const worker of world.workers) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL")
      await worker.child.exited
    }
    await world.app.stop()
    await world.db.drop()
    world.tra.stop()
    world.sire.stop()
  }
  worlds = []
})

const start = async (): Promise<World> => {
  const tra = startFakeTra()
  const sire = startFakeSire({ token: GATEWAY_TOKEN })
  const db = await freshDatabase()
  const app = await startApp({ DATABASE_URL: db.url, ROLE: "api", TRA_BASE_URL: tra.url })
  const account = await seedAccount(app)
  const property = await traProperty(app, account.accountId, "Hotel Apagón", "86420", {
    sire_hotel_code: "3579",
    sire_city_code: "5001"
  })
  const world = { tra, sire, db, app, liveKey: account.liveKey, propertyId: property.property_id, workers: [] }
  worlds.push(world)
  return world
}

/** A worker process on the world's database: its report loop runs at start, then every second. */
const worker = async (world: World, failpoints?: string) => {
  const process = spawnService({
    DATABASE_URL: world.db.url,
    DATA_DIR: await tempDir("crash-worker"),
    ROLE: "worker",
    LOG_LEVEL: "Warning",
    REPORTS_EVERY,
    REPORT_LEASE,
    TRA_BASE_URL: world.tra.url,
    ...gatewayEnv(world.sire, GATEWAY_TOKEN),
    ...(failpoints === undefined ? {} : { FAILPOINTS: failpoints })
  })
  world.workers.push(process)
  return process
}

/** Resolves when the process died of SIGKILL (what a failpoint does, and `kill -9`). */
const killed = async (process: ServiceProcess) => {
  await within(30_000, "the worker's death", process.child.exited)
  expect({ signal: process.child.signalCode, output: process.output() }).toMatchObject({ signal: "SIGKILL" })
}

let documents = 40_000_000
/** A live stay arriving today: a Colombian main guest (TRA) and a foreign companion (TRA and SIRE). */
const register = async (world: World) => {
  const main = colombian({ numero_documento: String(documents++) })
  const companion = foreigner({ numero_documento: `K${documents++}` })
  const body = registrationBody(world.propertyId, [main, companion], { check_in: bogotaToday(), check_out: "2099-03-01" })
  const res = await call(world.app, "POST", "/api/partners/registrations", { key: world.liveKey, json: body })
  expect(res.status).toBe(201)
  return { externalId: body.external_id as string, main: main.numero_documento as string, companion: companion.numero_documento as string }
}
const detail = async (world: World, externalId: string) =>
  (await call(world.app, "GET", `/api/partners/registrations?external_id=${externalId}`, { key: world.liveKey })).body

/** Waits for both reports to leave `pending`; answers the detail and how long it took. */
const settled = async (world: World, externalId: string, timeoutMs = 20_000) => {
  const started = performance.now()
  for (;;) {
    const body = await detail(world, externalId)
    if (body.tra.status !== "pending" && body.sire.status !== "pending") return { body, ms: performance.now() - started }
    if (performance.now() - started > timeoutMs) {
      throw new Error(`still pending after ${timeoutMs} ms: ${JSON.stringify({ tra: body.tra, sire: body.sire })}`)
    }
    await Bun.sleep(100)
  }
}

const submissions = (world: World) =>
  world.db.query<{ role: string; state: string; possible_duplicate: boolean; history: Array<Record<string, unknown>> }>(
    "SELECT role, state, possible_duplicate, history FROM tra_submissions ORDER BY role DESC"
  )
const movements = (world: World) =>
  world.db.query<{ movement: string; state: string; possible_duplicate: boolean }>(
    "SELECT movement, state, possible_duplicate FROM sire_movements"
  )
const files = (world: World) => world.db.query<{ state: string }>("SELECT state FROM sire_files ORDER BY created_at")
const mainsOf = (world: World, document: string) =>
  world.tra.mains().filter((request) => (request.body as Record<string, string>).numero_identificacion === document)
const linesOf = (world: World, document: string) =>
  world.sire.uploads.flatMap((upload) => upload.rows.filter((row) => row[3] === document))

/** A new world with a stay registered, and a worker on it that died at `failpoint`. */
const killedAt = async (failpoint: string) => {
  const world = await start()
  const stay = await register(world)
  await killed(await worker(world, failpoint))
  return { world, stay }
}

/** The TRA and SIRE were each accepted; the reservation is compliant. */
const expectCompliant = (body: any) => {
  expect(body.status).toBe("compliant")
  expect(body.tra.status).toBe("success")
  expect(body.sire.status).toBe("success")
}

/** Kills `first` with SIGKILL from outside, starts a new worker, and waits for the stay to end compliant. */
const killedFromOutsideThenCompliant = async (world: World, first: ServiceProcess, externalId: string) => {
  first.child.kill("SIGKILL")
  await killed(first)
  await worker(world)
  expectCompliant((await settled(world, externalId)).body)
}

describe("a worker killed at each step of a TRA post recovers after restart", () => {
  test("report.after_claim (claimed, nothing sent): cancelling now answers already_reported false; nothing is ever sent", async () => {
    const { world, stay } = await killedAt("report.after_claim")
    expect(world.tra.requests).toHaveLength(0)
    const cancelled = await call(world.app, "POST", "/api/partners/reservations/cancel", {
      key: world.liveKey,
      json: { external_id: stay.externalId }
    })
    expect(cancelled.body.already_reported).toEqual({ tra: false, sire: false })

    const restarted = await worker(world)
    await restarted.ready()
    await Bun.sleep(4_000) // past the lease and a few runs
    expect(world.tra.requests).toHaveLength(0)
    expect(world.sire.uploads).toHaveLength(0)
    const after = await detail(world, stay.externalId)
    expect(after.tra.status).toBe("not_applicable")
    expect(after.sire.status).toBe("not_applicable")
  })

  test("report.after_claim, then a restart: sent once, as if nothing happened", async () => {
    const { world, stay } = await killedAt("report.after_claim")
    await worker(world)
    const { body } = await settled(world, stay.externalId)
    expectCompliant(body)
    expect(mainsOf(world, stay.main)).toHaveLength(1)
    expect((await submissions(world)).every((row) => !row.possible_duplicate)).toBe(true)
  })

  test("tra.before_send (marked in flight, the request never left): sent after restart, marked possible duplicate", async () => {
    const { world, stay } = await killedAt("tra.before_send")
    expect(world.tra.requests).toHaveLength(0)
    const restarted = await worker(world)
    const { body, ms } = await settled(world, stay.externalId)
    expectCompliant(body)
    expect(ms).toBeLessThan(10_000)
    expect(mainsOf(world, stay.main)).toHaveLength(1)
    const [main] = await submissions(world)
    expect(main).toMatchObject({ role: "main", state: "accepted", possible_duplicate: true })
    expect(main!.history.map((entry) => entry.outcome)).toEqual(["Unknown", "Accepted"])
    expect(main!.history[1]).toMatchObject({ possible_duplicate: true })
    void restarted
  })

  test("tra.after_answer (the TRA registered the guest, the answer was lost): posted again as a possible duplicate", async () => {
    const { world, stay } = await killedAt("tra.after_answer")
    expect(mainsOf(world, stay.main)).toHaveLength(1)
    const beforeRestart = await submissions(world)
    expect(beforeRestart.find((row) => row.role === "main")).toMatchObject({ state: "pending", history: [] })

    await worker(world)
    const { body } = await settled(world, stay.externalId)
    expectCompliant(body)
    expect(mainsOf(world, stay.main)).toHaveLength(2)
    const rows = await submissions(world)
    expect(rows.find((row) => row.role === "main")).toMatchObject({ state: "accepted", possible_duplicate: true })
    expect(rows.find((row) => row.role === "companion")).toMatchObject({ state: "accepted", possible_duplicate: false })
    // The companion is linked to the code the TRA gave the second post: the one the report carries.
    const companions = world.tra.companions()
    expect(companions).toHaveLength(1)
    expect(Number((companions[0]!.body as { padre: string }).padre)).toBe(body.tra.mincit_code)
  })

  test("tra.after_answer on a rejection: sent again, rejected again, error with the TRA's reason", async () => {
    const world = await start()
    const stay = await register(world)
    world.tra.faultFor = (request) =>
      request.path === "/one/" ? { kind: "400-reject", field: "numero_identificacion", reason: "Documento inválido" } : undefined
    await killed(await worker(world, "tra.after_answer"))
    await worker(world)
    const { body } = await settled(world, stay.externalId)
    expect(body.tra.status).toBe("error")
    expect(body.tra.warning).toContain("Documento inválido")
    expect(mainsOf(world, stay.main)).toHaveLength(2)
  })

  test("tra.after_record (main accepted and recorded, companion not yet sent): the main guest is never posted again", async () => {
    const { world, stay } = await killedAt("tra.after_record")
    expect((await submissions(world)).find((row) => row.role === "main")?.state).toBe("accepted")
    await worker(world)
    const { body } = await settled(world, stay.externalId)
    expectCompliant(body)
    expect(mainsOf(world, stay.main)).toHaveLength(1)
    expect(world.tra.companions()).toHaveLength(1)
    expect((await submissions(world)).every((row) => !row.possible_duplicate)).toBe(true)
  })

  test("killed from outside while the TRA holds the request: posted again after restart as a possible duplicate", async () => {
    const world = await start()
    const stay = await register(world)
    // The TRA registers the guest, then never answers.
    world.tra.faults.push("lost-answer")
    const first = await worker(world)
    await world.tra.waitForCount(1, undefined, 20_000)
    await killedFromOutsideThenCompliant(world, first, stay.externalId)
    expect(mainsOf(world, stay.main)).toHaveLength(2)
    expect((await submissions(world)).find((row) => row.role === "main")).toMatchObject({ possible_duplicate: true })
  })
})

describe("a worker killed at each step of a SIRE gateway file recovers after restart", () => {
  test("sire.before_send (file built, upload not started): uploaded after restart as a possible duplicate", async () => {
    const { world, stay } = await killedAt("sire.before_send")
    expect(world.sire.uploads).toHaveLength(0)
    expect(await files(world)).toEqual([{ state: "sending" }])
    expect(await movements(world)).toEqual([{ movement: "E", state: "in_file", possible_duplicate: false }])

    await worker(world)
    const { body, ms } = await settled(world, stay.externalId)
    expectCompliant(body)
    expect(ms).toBeLessThan(10_000)
    expect(linesOf(world, stay.companion)).toHaveLength(1)
    expect((await files(world)).map((file) => file.state)).toEqual(["unknown", "posted"])
    expect(await movements(world)).toContainEqual({ movement: "E", state: "accepted", possible_duplicate: true })
    expect(mainsOf(world, stay.main)).toHaveLength(1)
  })

  test("sire.after_answer (uploaded and answered, answer not recorded): uploaded again as a possible duplicate", async () => {
    const { world, stay } = await killedAt("sire.after_answer")
    expect(linesOf(world, stay.companion)).toHaveLength(1)
    await worker(world)
    const { body } = await settled(world, stay.externalId)
    expectCompliant(body)
    expect(linesOf(world, stay.companion)).toHaveLength(2)
    expect(await movements(world)).toContainEqual({ movement: "E", state: "accepted", possible_duplicate: true })
  })

  test("sire.after_record (movements recorded, the report not yet settled): settled after restart, not uploaded again", async () => {
    const { world, stay } = await killedAt("sire.after_record")
    expect(await movements(world)).toEqual([{ movement: "E", state: "accepted", possible_duplicate: false }])
    expect((await detail(world, stay.externalId)).sire.status).toBe("pending")
    await worker(world)
    const { body } = await settled(world, stay.externalId)
    expectCompliant(body)
    expect(linesOf(world, stay.companion)).toHaveLength(1)
    // Its exit is due on check_out, as for any entry that went out.
    expect(body.sire.exit).toEqual({ status: "pending", sends_on: "2099-03-01", reported_at: null })
  })

  test("killed from outside while the gateway holds the upload: uploaded again after restart, possible duplicate", async () => {
    const world = await start()
    const stay = await register(world)
    world.sire.fail("hang")
    const first = await worker(world)
    const started = performance.now()
    while (world.sire.uploads.length === 0) {
      if (performance.now() - started > 20_000) throw new Error("no upload arrived")
      await Bun.sleep(50)
    }
    await killedFromOutsideThenCompliant(world, first, stay.externalId)
    expect(linesOf(world, stay.companion)).toHaveLength(2)
    expect((await files(world)).map((file) => file.state)).toEqual(["unknown", "posted"])
  })
})

/** Waits until `done` holds for the reservation's detail; answers that detail. */
const until = async (world: World, externalId: string, done: (body: any) => boolean, timeoutMs = 20_000) => {
  const started = performance.now()
  for (;;) {
    const body = await detail(world, externalId)
    if (done(body)) return body
    if (performance.now() - started > timeoutMs) throw new Error(`not reached in ${timeoutMs} ms: ${JSON.stringify(body)}`)
    await Bun.sleep(100)
  }
}
const cancelStay = async (world: World, externalId: string) =>
  (await call(world.app, "POST", "/api/partners/reservations/cancel", { key: world.liveKey, json: { external_id: externalId } })).body

describe("killed, then cancelled: nothing stays pending for ever (design §6.8)", () => {
  test("crash during the SIRE upload, then cancel: the entry ends in error (may be held), its exit goes out dated the cancellation", async () => {
    const { world, stay } = await killedAt("sire.after_answer")
    expect(linesOf(world, stay.companion).map((row) => row[8])).toEqual(["E"])
    const cancelled = await cancelStay(world, stay.externalId)
    expect(cancelled.already_reported).toEqual({ tra: true, sire: true })

    await worker(world)
    const body = await until(world, stay.externalId, (body) => body.sire.exit.status === "success")
    expect(body.sire.status).toBe("error")
    expect(body.sire.warning).toContain("may hold it")
    expect(body.sire.exit).toMatchObject({ sends_on: bogotaToday() })
    // The entry is not sent again (cancelled); its exit follows it, once, dated the day of the cancellation.
    const today = bogotaToday().split("-").reverse().join("/")
    expect(linesOf(world, stay.companion).map((row) => [row[8], row[9]])).toEqual([["E", today], ["S", today]])
    const listed = await admin(world.app, (c) => c.ListReports({ status: "error" }))
    expect(listed.reports).toContainEqual(expect.objectContaining({ external_id: stay.externalId, authority: "sire_entry" }))
  })

  test("crash before a TRA send, then cancel: already_reported.tra (it may have left); settled as error at the next run, nothing posted", async () => {
    const { world, stay } = await killedAt("tra.before_send")
    expect(world.tra.requests).toHaveLength(0)
    const cancelled = await cancelStay(world, stay.externalId)
    expect(cancelled.already_reported).toEqual({ tra: true, sire: false })

    await worker(world)
    const body = await until(world, stay.externalId, (body) => body.tra.status !== "pending")
    expect(body.tra.status).toBe("error")
    expect(body.tra.warning).toContain("may hold it")
    expect(body.sire.status).toBe("not_applicable")
    await Bun.sleep(2_000) // a few more runs
    expect(world.tra.requests).toHaveLength(0)
    expect(world.sire.uploads).toHaveLength(0)
  })

  test("the TRA mark order: the report counts as sent exactly when its request is marked in flight, in one transaction", async () => {
    const world = await start()
    const claimedOnly = await register(world)
    await killed(await worker(world, "report.after_claim"))
    const flags = () =>
      world.db.query<{ tra_reported: boolean; sending: boolean }>(
        `SELECT r.tra_reported, bool_or(s.sending_since IS NOT NULL) IS TRUE AS sending
         FROM reservations r LEFT JOIN tra_submissions s ON s.reservation_id = r.id
         WHERE r.external_id = $1 GROUP BY r.tra_reported`,
        [claimedOnly.externalId]
      )
    expect(await flags()).toEqual([{ tra_reported: false, sending: false }])

    await killed(await worker(world, "tra.before_send"))
    expect(await flags()).toEqual([{ tra_reported: true, sending: true }])
  })
})
