import { afterAll, beforeAll, test } from "bun:test"
import fc from "fast-check"
import { Create, Outage, Run } from "./commands.ts"
import { newModel } from "./model.ts"
import { newHotel, startWorld, type World } from "./world.ts"

let world: World
beforeAll(async () => { world = await startWorld() })
afterAll(async () => { await world?.stop() })

test("sanity: SIRE down on the arrival day", async () => {
  const hotel = await newHotel(world)
  const model = newModel(world, hotel)
  try {
    await fc.asyncModelRun(() => ({ model, real: undefined }), [
      new Create("one", ["US"], -2, 1, 0),
      new Outage("sire", "5xx"),
      new Run(2),
      new Outage("sire", "up"),
      new Run(1),
      new Run(1),
      new Run(1)
    ])
  } finally {
    console.log(model.trace.join("\n"))
    console.log(JSON.stringify(world.sireProxy.log.map((r) => ({ e: r.epoch, m: r.mode, s: r.fakeStatus, b: r.body, a: r.fakeBody })), null, 1))
  }
}, 60_000)
