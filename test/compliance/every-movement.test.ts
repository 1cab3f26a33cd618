import { describe, expect, test } from "bun:test"
import { admin } from "../support/app.ts"
import { colombian, foreigner } from "../support/guests.ts"
import {
  cancel,
  day,
  detail,
  eventsOf,
  registerGuests,
  runOn,
  scanAlerts,
  sireDate,
  sireLinesOf,
  reportWorlds
} from "../support/reportWorld.ts"

/**
 * Every movement reported, whatever happens (design §6.8, issue 23): the hotel-week situations that used to lose
 * or strand a movement, each as a named regression. The crash scenarios (a worker killed mid-upload or before a
 * TRA send, then a cancel) are in crash.test.ts, where real worker processes die.
 */

const start = reportWorlds()

let documents = 70_000_000
const passport = () => `E${documents++}`

/** A new world (`mode`, `options`) and one foreign guest staying from `checkIn` to `checkOut`, registered. */
const foreignerStaying = async (checkIn: string, checkOut: string, ...world: Parameters<typeof start>) => {
  const started = await start(...world)
  const document = passport()
  const externalId = await registerGuests(started, [foreigner({ numero_documento: document })], {
    check_in: checkIn,
    check_out: checkOut
  })
  return { world: started, document, externalId }
}

describe("an exit follows its guest's entry, whenever that entry goes out (design §6.8)", () => {
  test("gateway down on the arrival day: the entry goes out late, the exit still follows, dated check_out, once", async () => {
    const { world, document, externalId } = await foreignerStaying(day(0), day(1), "gateway")

    world.sire.fail("500")
    await runOn(world, day(0))
    world.sire.fail("500")
    await runOn(world, day(1))
    // The entry may be held (no answer) and is sent again: its exit waits for it instead of being withdrawn.
    const waiting = await detail(world, externalId)
    expect(waiting.sire.status).toBe("pending")
    expect(waiting.sire.exit.status).toBe("pending")
    expect(waiting.sire.exit.warning).toContain("waiting")
    expect(sireLinesOf(world, document).map(([movement]) => movement)).toEqual(["E", "E"])

    await runOn(world, day(2))
    const entered = await detail(world, externalId)
    expect(entered.sire.status).toBe("success")
    // Accepted by this run, whose exit lines were built before the answer: due at once, and it says so.
    expect(entered.sire.exit).toMatchObject({ status: "pending", sends_on: day(1), warning: `waiting: due on ${day(1)} and not sent yet; sent at the next report run` })

    // Past its date: due at once, dated the day the guest left.
    await runOn(world, day(2))
    expect(sireLinesOf(world, document).filter(([movement]) => movement === "S")).toEqual([["S", sireDate(day(1))]])
    expect((await detail(world, externalId)).sire.exit).toMatchObject({ status: "success", sends_on: day(1) })

    await runOn(world, day(3))
    expect(sireLinesOf(world, document).filter(([movement]) => movement === "S")).toHaveLength(1)
  })

  test("the only entry refused: no exit, and the exit is withdrawn without a date", async () => {
    const { world, document, externalId } = await foreignerStaying(day(0), day(1), "gateway")
    world.sire.rejectLine(1, "Documento inválido")
    await runOn(world, day(0))
    await runOn(world, day(1))
    const after = await detail(world, externalId)
    expect(after.sire.status).toBe("error")
    expect(after.sire.exit).toMatchObject({ status: "not_applicable", sends_on: null })
    expect(sireLinesOf(world, document).map(([movement]) => movement)).toEqual(["E"])
  })

  test("a country mapped after check-out: that guest's entry goes out then, and so does its exit", async () => {
    const world = await start("gateway", { reportsTra: false })
    const mapped = passport()
    const late = passport()
    // Japan's code withdrawn by an operator (as after finding it wrong), restored after the stay ended.
    await admin(world.app, (c) => c.SetReference({ table: "sire-countries", key: "JP", value: null }))
    const externalId = await registerGuests(world, [
      foreigner({ numero_documento: mapped }),
      foreigner({ numero_documento: late, nacionalidad: "JP", pais_procedencia: "JP", pais_residencia: "JP" })
    ], { check_in: day(0), check_out: day(1) })

    await runOn(world, day(0))
    await runOn(world, day(1))
    const before = await detail(world, externalId)
    expect(before.sire.status).toBe("pending")
    expect(before.sire.warning).toContain("nacionalidad")
    expect(before.sire.exit.status).toBe("success")
    expect(sireLinesOf(world, mapped)).toEqual([["E", sireDate(day(0))], ["S", sireDate(day(1))]])
    expect(sireLinesOf(world, late)).toEqual([])

    await admin(world.app, (c) => c.UnsetReference({ table: "sire-countries", key: "JP" }))
    await runOn(world, day(2))
    const entered = await detail(world, externalId)
    expect(entered.sire.status).toBe("success")
    // Armed again, past its date: due at once, and it says so until the next run sends it.
    expect(entered.sire.exit).toMatchObject({ status: "pending", sends_on: day(1), warning: expect.stringMatching(/^waiting: due on /) })
    await runOn(world, day(2))
    expect(sireLinesOf(world, late)).toEqual([["E", sireDate(day(0))], ["S", sireDate(day(1))]])
    expect(sireLinesOf(world, mapped)).toHaveLength(2)
    expect((await detail(world, externalId)).sire.exit.status).toBe("success")
  })
})

describe("nothing stays pending for ever (design §6.8)", () => {
  test("manual file written, then cancelled: already_reported from the file on; the entry ends in error, the exit goes out", async () => {
    const { world, document, externalId } = await foreignerStaying(day(0), day(3), "manual", { reportsTra: false })
    await runOn(world, day(0))
    const [entryFile] = (await admin(world.app, (c) => c.SireFiles({}))).files
    expect(entryFile!.content).toContain(document)
    const waiting = await detail(world, externalId)
    expect(waiting.sire.status).toBe("pending")
    expect(waiting.sire.warning).toContain("cli sire confirm")

    const cancelled = await cancel(world, externalId)
    expect(cancelled.already_reported).toEqual({ tra: false, sire: true })
    expect(cancelled.warning).toContain(entryFile!.name)
    const eventsAtCancel = await eventsOf(world, externalId)

    await runOn(world, day(0))
    const settled = await detail(world, externalId)
    expect(settled.sire.status).toBe("error")
    expect(settled.sire.warning).toContain("may hold it")
    expect(settled.sire.exit).toMatchObject({ status: "pending", sends_on: day(0) })
    const files = (await admin(world.app, (c) => c.SireFiles({}))).files
    expect(files).toHaveLength(2)
    const exitFile = files.find((file) => file.file_id !== entryFile!.file_id)!
    expect(exitFile.content.split("\r\n").filter((line) => line.includes(document)).map((line) => line.split("\t")[8]))
      .toEqual(["S"])
    expect(exitFile.content).toContain(sireDate(day(0)))

    // Listed for the operator and raised to the account holder; no event after reservation.cancelled.
    const listed = await admin(world.app, (c) => c.ListReports({ status: "error" }))
    expect(listed.reports).toContainEqual(expect.objectContaining({ external_id: externalId, authority: "sire_entry" }))
    await scanAlerts(world)
    expect(await world.db.query("SELECT kind, authority FROM alerts")).toEqual([{ kind: "report_error", authority: "sire" }])
    expect(await eventsOf(world, externalId)).toEqual(eventsAtCancel)

    // The operator uploads both files after all: Migración holds the entry, the report says so.
    await admin(world.app, (c) => c.ConfirmSireFile({ file_id: entryFile!.file_id }))
    await admin(world.app, (c) => c.ConfirmSireFile({ file_id: exitFile.file_id }))
    const confirmed = await detail(world, externalId)
    expect(confirmed.sire.status).toBe("success")
    expect(confirmed.sire.exit.status).toBe("success")
  })

  test("registered after its arrival day: pending with a warning saying it goes at the next run", async () => {
    const world = await start("gateway")
    const externalId = await registerGuests(world, [colombian({ numero_documento: String(documents++) }), foreigner({ numero_documento: passport() })], {
      check_in: day(-2),
      check_out: day(1)
    })
    const late = await detail(world, externalId)
    expect(late.tra).toMatchObject({ status: "pending", sends_on: day(-2), warning: `waiting: due on ${day(-2)} and not sent yet; sent at the next report run` })
    expect(late.sire).toMatchObject({ status: "pending", warning: expect.stringMatching(/^waiting: due on /) })
    await runOn(world, day(0))
    const sent = await detail(world, externalId)
    expect(sent.tra.status).toBe("success")
    expect(sent.tra.warning).not.toContain("waiting")
    expect(sent.sire.status).toBe("success")
  })

  test("a transient failure past the due date says why in the report", async () => {
    const world = await start("gateway")
    const externalId = await registerGuests(world, [colombian({ numero_documento: String(documents++) })], {
      check_in: day(0),
      check_out: day(2)
    })
    world.tra.faults.push("503")
    await runOn(world, day(1))
    const after = await detail(world, externalId)
    expect(after.tra.status).toBe("pending")
    expect(after.tra.warning).toMatch(/^waiting: /)
    // A wait is no fault to fix: no alert until it ends in error.
    await scanAlerts(world)
    expect(await world.db.query("SELECT kind FROM alerts")).toEqual([])
  })
})
