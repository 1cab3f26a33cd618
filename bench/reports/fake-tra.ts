/**
 * The fake MinCIT TRA of `bench/reports.sh`, as its own process: `startFakeTra` from test/support/fakeTra.ts
 * (the same fake the tests use: validates bodies, issues codes, checks `padre`), answering every request after
 * DELAY_MS (20). It shares no event loop with the service being measured.
 *
 * Every request's handling interval [start, end] is recorded exactly: `Bun.serve` is wrapped before the fake
 * starts, so the fake's own handler runs inside a timer (start = the handler is entered, end = the Response is
 * returned; the 20 ms delay lies inside). In-flight over time is computed from these intervals, not sampled.
 *
 * A second server (CONTROL_PORT, 127.0.0.1) answers the bench script, never the service:
 *   POST /__clear   forget requests, intervals and the in-flight maximum
 *   GET  /__stats   counts, exactly-once checks, span and in-flight profile of what arrived since the last clear
 *
 * Env: DELAY_MS (20), CONTROL_PORT (0 = any), BUCKET_MS (1000: width of the timeline buckets).
 * Prints one line `{"url": …, "control": …, "token": …}` once both listen.
 */
import { DEFAULT_TOKEN, startFakeTra } from "../../test/support/fakeTra.ts"

const DELAY_MS = Number(process.env.DELAY_MS ?? 20)
const CONTROL_PORT = Number(process.env.CONTROL_PORT ?? 0)
const BUCKET_MS = Number(process.env.BUCKET_MS ?? 1000)

/** Wall clock with sub-millisecond resolution (epoch ms). */
const now = () => performance.timeOrigin + performance.now()

interface Interval {
  start: number
  end: number
}
let intervals: Array<Interval> = []

const originalServe = Bun.serve
// The fake calls Bun.serve once, with a `fetch` handler: time every call of it.
;(Bun as { serve: typeof Bun.serve }).serve = ((options: Parameters<typeof Bun.serve>[0]) => {
  const inner = (options as { fetch: (request: Request, server: unknown) => Promise<Response> | Response }).fetch
  return originalServe({
    ...options,
    fetch: async (request: Request, server: unknown) => {
      const interval = { start: now(), end: 0 }
      intervals.push(interval)
      try {
        return await inner(request, server)
      } finally {
        interval.end = now()
      }
    }
  } as Parameters<typeof Bun.serve>[0])
}) as typeof Bun.serve

const fake = startFakeTra({ delayMs: DELAY_MS })
;(Bun as { serve: typeof Bun.serve }).serve = originalServe

/** In-flight profile from the exact intervals: time at each level, mean, timeline. */
const profile = (all: ReadonlyArray<Interval>) => {
  const done = all.filter((i) => i.end > 0)
  if (done.length === 0) return null
  const events: Array<[number, number]> = []
  for (const i of done) events.push([i.start, +1], [i.end, -1])
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]) // an end before a start at the same instant
  const first = events[0]![0]
  const last = events[events.length - 1]![0]
  const span = last - first
  const atLevel = new Map<number, number>()
  const buckets: Array<number> = Array.from({ length: Math.ceil(span / BUCKET_MS) || 1 }, () => 0)
  let level = 0
  let prev = first
  let longestIdle = 0
  const addToBuckets = (from: number, to: number, lvl: number) => {
    let t = from
    while (t < to) {
      const b = Math.min(Math.floor((t - first) / BUCKET_MS), buckets.length - 1)
      const bucketEnd = first + (b + 1) * BUCKET_MS
      const until = b === buckets.length - 1 ? to : Math.min(to, bucketEnd)
      buckets[b]! += lvl * (until - t)
      t = until
    }
  }
  for (const [t, delta] of events) {
    if (t > prev) {
      atLevel.set(level, (atLevel.get(level) ?? 0) + (t - prev))
      if (level === 0) longestIdle = Math.max(longestIdle, t - prev)
      addToBuckets(prev, t, level)
    }
    level += delta
    prev = t
  }
  let area = 0
  for (const [lvl, ms] of atLevel) area += lvl * ms
  const lastBucketWidth = span - (buckets.length - 1) * BUCKET_MS
  const durations = done.map((i) => i.end - i.start).sort((a, b) => a - b)
  const q = (p: number) => durations[Math.min(durations.length - 1, Math.floor(p * durations.length))]!
  return {
    first_start: first,
    last_end: last,
    span_ms: span,
    mean_in_flight: span > 0 ? area / span : 0,
    max_in_flight: Math.max(...atLevel.keys(), 0),
    ms_at_level: Object.fromEntries([...atLevel.entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => [k, Math.round(v)])),
    longest_idle_ms: longestIdle,
    handler_ms: { p50: q(0.5), p99: q(0.99), max: durations[durations.length - 1]! },
    timeline: {
      bucket_ms: BUCKET_MS,
      mean_in_flight: buckets.map((a, i) => +(a / (i === buckets.length - 1 ? lastBucketWidth || 1 : BUCKET_MS)).toFixed(2))
    }
  }
}

/** Exactly once: one /one/ per main guest, one /two/ per (padre, companion), every answer a 201 with a code. */
const checks = () => {
  const statuses: Record<string, number> = {}
  for (const r of fake.requests) statuses[String(r.status ?? "none")] = (statuses[String(r.status ?? "none")] ?? 0) + 1
  const mains = fake.mains()
  const companions = fake.companions()
  const mainKeys = new Map<string, number>()
  for (const r of mains) {
    const b = r.body as Record<string, string>
    const key = `${b.tipo_identificacion}|${b.numero_identificacion}|${b.check_in}`
    mainKeys.set(key, (mainKeys.get(key) ?? 0) + 1)
  }
  const companionKeys = new Map<string, number>()
  const perPadre = new Map<string, number>()
  for (const r of companions) {
    const b = r.body as Record<string, string>
    const key = `${b.padre}|${b.tipo_identificacion}|${b.numero_identificacion}`
    companionKeys.set(key, (companionKeys.get(key) ?? 0) + 1)
    perPadre.set(b.padre!, (perPadre.get(b.padre!) ?? 0) + 1)
  }
  const mainCodes = new Set(mains.map((r) => String(r.code ?? "")).filter((c) => c !== ""))
  const companionsPerMain: Record<string, number> = {}
  for (const code of mainCodes) {
    const n = String(perPadre.get(code) ?? 0)
    companionsPerMain[n] = (companionsPerMain[n] ?? 0) + 1
  }
  return {
    requests: fake.requests.length,
    mains: mains.length,
    companions: companions.length,
    statuses,
    distinct_mains: mainKeys.size,
    duplicate_mains: [...mainKeys.values()].filter((n) => n > 1).length,
    distinct_companions: companionKeys.size,
    duplicate_companions: [...companionKeys.values()].filter((n) => n > 1).length,
    companions_with_unknown_padre: [...perPadre.keys()].filter((p) => !mainCodes.has(p)).length,
    /** number of companions → how many main guests had that many */
    companions_per_main: companionsPerMain,
    auth_not_valid: fake.requests.filter((r) => r.auth !== "valid").length,
    fake_max_in_flight: fake.maxInFlight()
  }
}

const control = Bun.serve({
  port: CONTROL_PORT,
  hostname: "127.0.0.1",
  fetch: (request) => {
    const { pathname } = new URL(request.url)
    if (pathname === "/__clear" && request.method === "POST") {
      fake.clear()
      intervals = []
      return Response.json({ cleared: true })
    }
    if (pathname === "/__stats") return Response.json({ ...checks(), profile: profile(intervals), delay_ms: fake.delayMs })
    return new Response("not found", { status: 404 })
  }
})

console.log(JSON.stringify({ url: fake.url, control: `http://127.0.0.1:${control.port}`, token: DEFAULT_TOKEN }))

const shutdown = () => {
  fake.stop()
  control.stop(true)
  process.exit(0)
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
