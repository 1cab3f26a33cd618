/**
 * The webhook receiver of `bench/webhooks.sh`: a minimal `Bun.serve` that answers every `POST /hook` with an
 * empty 200 at once, counts requests, and keeps the first arrival time of each `X-Service-Event-Id`. It runs as
 * its own process so that it shares no event loop with the sender being measured.
 *
 * Control routes (used by the script and by driver.ts, never by the measured senders):
 *   POST /__arm   {expected, pid, db, secret}  forget everything; watch process `pid` and the PostgreSQL
 *                 backends of database `db`; the run is complete when `expected` distinct ids arrived
 *   GET  /__wait?ms=N                  answers the stats when the run is complete, or after N ms
 *   GET  /__stats                      the stats now
 *   GET  /__arrivals                   {event id: first arrival, epoch ms with µs decimals}
 *
 * CPU is sampled from /proc at the first arrival and when the `expected`-th distinct id arrives, so process
 * start-up (and the database reads of the baseline) fall outside it: utime+stime of the watched process (all
 * threads), of every backend of `db` (matched by their process title), of this receiver, and of the machine.
 *
 * Connections: every request's client port is noted, so `sockets` says how many connections carried the run
 * (keep-alive reuses them). `max_concurrent` is the most requests it held at once.
 *
 * Env: PORT; DELAY_MS (0): answer each hook that much later (the slow receiver of the starvation scenario).
 * `/__arm` may also give `secret`, the endpoint's: the signature of the first request of the run is
 * then verified (`signature_ok`).
 */
import { createHmac } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"

const PORT = Number(process.env.PORT ?? 0)
const DELAY_MS = Number(process.env.DELAY_MS ?? 0)

/** Wall clock with sub-millisecond resolution (same formula in driver.ts). */
const now = () => performance.timeOrigin + performance.now()

/** utime + stime in clock ticks; fields after "(comm) ": state is [0], utime [11], stime [12]. */
const ticksOf = (pid: number | string): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1")
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(f[11]) + Number(f[12])
  } catch {
    return 0
  }
}
/** Busy ticks of the whole machine (user nice system irq softirq steal), as bench/run.sh counts them. */
const machineTicks = (): number => {
  const f = readFileSync("/proc/stat", "latin1").split("\n", 1)[0]!.trim().split(/\s+/)
  return [1, 2, 3, 6, 7, 8].reduce((s, i) => s + Number(f[i]), 0)
}
/** PostgreSQL backends of database `db`: process title "postgres: [cluster: ]user db host(port) state". */
const backendsOf = (db: string): Array<string> => {
  if (db === "") return []
  const title = new RegExp(`^postgres: (?:\\S+: )?\\S+ ${db} `)
  const found: Array<string> = []
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (title.test(readFileSync(`/proc/${pid}/cmdline`, "latin1"))) found.push(pid)
    } catch { /* gone */ }
  }
  return found
}
const ownTicks = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6 // seconds
}

interface Sample {
  readonly at: number
  readonly count: number
  readonly proc: number
  readonly backends: Record<string, number>
  readonly machine: number
  readonly receiverS: number
}

let expected = 0
let secret = ""
let watchPid = 0
let db = ""
let requests = 0
let arrivals = new Map<string, number>()
let first: Sample | undefined
let last: Sample | undefined
let lastArrival = 0
let headerNames: Array<string> = []
let userAgent = ""
let signatureOk: boolean | null = null
let badRequests = 0
let waiters: Array<() => void> = []
let sockets = new Set<number>()
let concurrent = 0
let maxConcurrent = 0

const sample = (): Sample => {
  const backends: Record<string, number> = {}
  for (const pid of backendsOf(db)) backends[pid] = ticksOf(pid)
  return {
    at: now(),
    count: arrivals.size,
    proc: watchPid > 0 ? ticksOf(watchPid) : 0,
    backends,
    machine: machineTicks(),
    receiverS: ownTicks()
  }
}

const stats = () => {
  let pgTicks = 0
  if (first !== undefined && last !== undefined) {
    for (const [pid, t] of Object.entries(last.backends)) pgTicks += t - (first.backends[pid] ?? 0)
  }
  const firstArrival = arrivals.size > 0 ? arrivals.values().next().value! : 0
  return {
    expected,
    requests,
    distinct: arrivals.size,
    bad_requests: badRequests,
    complete: expected > 0 && arrivals.size >= expected,
    first_arrival: firstArrival,
    last_arrival: lastArrival,
    seconds: (lastArrival - firstArrival) / 1000,
    header_names: headerNames,
    user_agent: userAgent,
    signature_ok: signatureOk,
    sockets: sockets.size,
    max_concurrent: maxConcurrent,
    cpu: first !== undefined && last !== undefined
      ? {
        sampled_deliveries: last.count - first.count,
        seconds: (last.at - first.at) / 1000,
        proc_ticks: last.proc - first.proc,
        pg_ticks: pgTicks,
        pg_backends: Object.keys(last.backends).length,
        machine_ticks: last.machine - first.machine,
        receiver_s: last.receiverS - first.receiverS
      }
      : null
  }
}

const finish = () => {
  for (const w of waiters) w()
  waiters = []
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: PORT,
  idleTimeout: 60,
  async fetch(req, srv) {
    const url = new URL(req.url)
    if (url.pathname === "/hook") {
      const at = now()
      requests++
      const peer = srv.requestIP(req)
      if (peer !== null) sockets.add(peer.port)

      const id = req.headers.get("x-service-event-id")
      if (id === null) {
        badRequests++
        return new Response(null, { status: 200 })
      }
      if (!arrivals.has(id)) {
        arrivals.set(id, at)
        lastArrival = at
        if (arrivals.size === 1) {
          const names: Array<string> = []
          req.headers.forEach((_, name) => names.push(name))
          headerNames = names.filter((h) => h !== "host" && h !== "content-length").sort()
          userAgent = req.headers.get("user-agent") ?? ""
          const ts = req.headers.get("x-service-timestamp") ?? ""
          const body = await req.text()
          const expectedSig = `sha256=${createHmac("sha256", secret).update(`${ts}.${body}`).digest("hex")}`
          signatureOk = secret !== "" && req.headers.get("x-service-signature") === expectedSig
          if (expected > 0) first = sample()
        }
        if (expected > 0 && arrivals.size === expected) {
          last = sample()
          finish()
        }
      }
      if (DELAY_MS > 0) {
        concurrent++
        if (concurrent > maxConcurrent) maxConcurrent = concurrent
        await Bun.sleep(DELAY_MS)
        concurrent--
      }
      return new Response(null, { status: 200 })
    }
    if (url.pathname === "/__arm" && req.method === "POST") {
      const body = (await req.json()) as { expected?: number; pid?: number; db?: string; secret?: string }
      expected = body.expected ?? 0
      secret = body.secret ?? ""
      watchPid = body.pid ?? 0
      db = body.db ?? ""
      requests = 0
      badRequests = 0
      arrivals = new Map()
      first = undefined
      last = undefined
      lastArrival = 0
      headerNames = []
      userAgent = ""
      signatureOk = null
      sockets = new Set()
      maxConcurrent = concurrent
      finish()
      return Response.json({ ok: true })
    }
    if (url.pathname === "/__wait") {
      const ms = Number(url.searchParams.get("ms") ?? 60000)
      if (!(expected > 0 && arrivals.size >= expected)) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms)
          waiters.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
      return Response.json(stats())
    }
    if (url.pathname === "/__stats") return Response.json(stats())
    if (url.pathname === "/__arrivals") return Response.json(Object.fromEntries(arrivals))
    return new Response("not found", { status: 404 })
  }
})

console.log(`receiver listening on 127.0.0.1:${server.port}`)
