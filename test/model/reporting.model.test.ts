import { afterAll, beforeAll, expect, test } from "bun:test"
import fc from "fast-check"
import { commandArbitraries, finishWeek } from "./commands.ts"
import { newModel } from "./model.ts"
import { newHotel, startWorld, type World } from "./world.ts"

/**
 * Issue 23 item 7: a model-based test of the reporting (design §6.8–§6.13, §7) against the real app and the fake
 * TRA and SIRE gateway. Each sequence is a hotel's week — creations through endpoints 3 (with the guests
 * registering through the check-in API) and 7, Colombian and foreign guests, updates, departures, cancels, report
 * runs on the model's clock, authorities down or losing their answers, credentials removed and restored, reference
 * overrides, and (in a fraction of the sequences) a worker killed at a failpoint — and after every step the
 * invariants of `model.ts` are checked. A failure shrinks to a short sequence; the seed is always printed.
 *
 * MODEL_RUNS (default 200) sequences within MODEL_TIME_LIMIT_MS (default 90 s, shrinking included; the count that
 * ran is printed); MODEL_SEED replays a seed and MODEL_PATH one failing path (both printed on failure);
 * MODEL_CRASH_SHARE (default 0.04) is the share of sequences that may kill a worker; MODEL_DEBUG=1 prints every
 * sequence's story. `npm run model` runs 20,000 with no time limit.
 */
const RUNS = Number(process.env.MODEL_RUNS ?? 200)
const SEED = process.env.MODEL_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.MODEL_SEED)
/** The share of sequences that may crash a worker (a process start each: expensive). */
const CRASH_SHARE = Number(process.env.MODEL_CRASH_SHARE ?? 0.04)
const MAX_COMMANDS = Number(process.env.MODEL_MAX_COMMANDS ?? 12)
/** CI's budget for the whole check, shrinking included (0: none); the count that ran is printed either way. */
const TIME_LIMIT_MS = Number(process.env.MODEL_TIME_LIMIT_MS ?? 90_000)

let world: World

beforeAll(async () => {
  world = await startWorld()
})

afterAll(async () => {
  await world?.stop()
})

test(`reporting model: ${RUNS} sequences of a hotel's week keep the invariants (seed ${SEED})`, async () => {
  console.log(`model: seed ${SEED}, ${RUNS} sequences (MODEL_SEED=${SEED} to replay); departure endpoint: ${world.hasDeparture ? "present" : "absent"}`)
  const crashWeight = Math.max(0, Math.round(CRASH_SHARE * 1000))
  const sequences = fc.oneof(
    { weight: 1000 - crashWeight, arbitrary: fc.commands(commandArbitraries({ crashes: false }), { maxCommands: MAX_COMMANDS, size: "max" }) },
    ...(crashWeight > 0
      ? [{ weight: crashWeight, arbitrary: fc.commands(commandArbitraries({ crashes: true }), { maxCommands: MAX_COMMANDS, size: "max" }) }]
      : [])
  )
  let passed = 0
  const started = performance.now()
  const property = fc.asyncProperty(sequences, async (commands) => {
    const hotel = await newHotel(world)
    const model = newModel(world, hotel)
    await fc.asyncModelRun(() => ({ model, real: undefined }), commands)
    await finishWeek(model)
    if (process.env.MODEL_DEBUG === "1") console.log(`sequence ${hotel.n}:\n  ${model.trace.join("\n  ")}`)
    passed++
  })
  const result = await fc.check(property, {
    numRuns: RUNS,
    seed: SEED,
    ...(process.env.MODEL_PATH === undefined ? {} : { path: process.env.MODEL_PATH }),
    endOnFailure: process.env.MODEL_NO_SHRINK === "1",
    ...(TIME_LIMIT_MS > 0 ? { interruptAfterTimeLimit: TIME_LIMIT_MS } : {})
  })
  const seconds = (performance.now() - started) / 1000
  if (result.failed) {
    console.log(`model: failed after ${passed} passing sequences, ${seconds.toFixed(1)} s (seed ${SEED}, path ${result.counterexamplePath})`)
    console.log(`model: shrunk counterexample: ${fc.stringify(result.counterexample)}`)
    console.log(String(result.errorInstance instanceof Error ? result.errorInstance.message : result.error))
    // An infrastructure error (an SqlError) says what happened only in its cause: a deadlock, a lost connection.
    const cause = result.errorInstance instanceof Error ? result.errorInstance.cause : undefined
    if (cause !== undefined) console.log(`model: caused by ${cause instanceof Error ? cause.message : String(cause)}`)
  } else {
    const cut = result.interrupted ? ` (stopped at the ${TIME_LIMIT_MS / 1000} s limit, of ${RUNS} drawn)` : ""
    console.log(`model: ${passed} sequences passed in ${seconds.toFixed(1)} s${cut} (${(seconds * 1000 / Math.max(1, passed)).toFixed(0)} ms each, seed ${SEED})`)
  }
  expect(result.failed ? fc.defaultReportMessage(result) : "ok").toBe("ok")
}, Math.max(300_000, RUNS * 5_000))
