/**
 * Effect operations per request: the one figure of the per-request path that does not move with the host.
 *
 * `npm run bench` measures req/s and CPU per request, and two runs of the same code minutes apart differ by up to
 * ±10 % on a shared machine (docs/performance.md), which hides any change of a few percent. This counts what the
 * service's code decides instead: how many steps Effect's run loop takes per request (every `flatMap`, `sync`,
 * service lookup, fiber-ref read or write is one), with a `Supervisor` that sees each of them
 * (`RuntimeFlags.enableOpSupervision`), and how many fibers each request starts. The real application runs
 * in-process (`ROLE=api`, `LOG_LEVEL=Warning`, as the bench) on a fresh PostgreSQL database, and is called over
 * HTTP one request at a time, so every step counted is a request's own (no loop runs in `ROLE=api` while it
 * waits; the figures are exact to the first decimal from one run to the next).
 *
 *   npm run bench:ops                  # 2,000 requests per case
 *   BENCH_OPS_N=500 npm run bench:ops
 *
 * Prints one line per case: steps and fibers per request. A step is not a fixed cost — a SQL statement's step
 * waits on PostgreSQL, an encoding step walks a schema — so compare a case with itself across commits.
 */
import { Effect, Layer, RuntimeFlags, Supervisor } from "effect"
import { startApp } from "../test/support/app.ts"
import { freshDatabase } from "../test/support/database.ts"
import { benchAccount } from "./account.ts"

const N = Number(process.env.BENCH_OPS_N ?? 2000)
const WARMUP = 200

/** Counts every step of every fiber and every fiber started, from the moment it is built. */
class StepCounter extends Supervisor.AbstractSupervisor<void> {
  steps = 0
  fibers = 0
  value = Effect.void
  override onStart() {
    this.fibers++
  }
  override onEffect() {
    this.steps++
  }
}

const counter = new StepCounter()
const db = await freshDatabase()
const app = await startApp(
  { DATABASE_URL: db.url, ROLE: "api", LOG_LEVEL: "Warning" },
  Layer.mergeAll(RuntimeFlags.enableOpSupervision, Supervisor.addSupervisor(counter))
)
try {
  const { key, reservation, create } = await benchAccount(app)
  await create("OPS-GET")

  let created = 0
  const cases: ReadonlyArray<{ readonly name: string; readonly status: number; readonly request: () => Promise<Response> }> = [
    { name: "healthz", status: 200, request: () => fetch(`${app.baseUrl}/healthz`) },
    {
      name: "properties",
      status: 200,
      request: () => fetch(`${app.baseUrl}/api/partners/properties`, { headers: { authorization: `Bearer ${key}` } })
    },
    {
      name: "get",
      status: 200,
      request: () => fetch(`${app.baseUrl}/api/partners/registrations/OPS-GET`, { headers: { authorization: `Bearer ${key}` } })
    },
    {
      name: "create",
      status: 201,
      request: () =>
        fetch(`${app.baseUrl}/api/partners/reservations`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(reservation(`OPS-${++created}`))
        })
    },
    {
      name: "unauthorized",
      status: 401,
      request: () => fetch(`${app.baseUrl}/api/partners/properties`, { headers: { authorization: "Bearer svc_test_nope" } })
    }
  ]

  const run = async (request: () => Promise<Response>, status: number, times: number) => {
    for (let i = 0; i < times; i++) {
      const response = await request()
      await response.arrayBuffer()
      if (response.status !== status) throw new Error(`answered ${response.status}, not ${status}`)
    }
  }

  console.log(`Effect steps and fibers per request (${N} requests per case, one at a time, ROLE=api)`)
  console.log("case          steps/req  fibers/req")
  for (const { name, request, status } of cases) {
    await run(request, status, WARMUP)
    const steps = counter.steps
    const fibers = counter.fibers
    await run(request, status, N)
    const perRequest = (count: number) => (count / N).toFixed(1)
    console.log(`${name.padEnd(13)} ${perRequest(counter.steps - steps).padStart(9)}  ${perRequest(counter.fibers - fibers).padStart(10)}`)
  }
} finally {
  await app.stop()
  await db.drop()
}
