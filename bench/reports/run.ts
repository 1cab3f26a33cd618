/**
 * Times one report run for `bench/reports.sh`: clears the fake TRA's records, resets the service's peak RSS
 * (`echo 5 > /proc/PID/clear_refs`), samples CPU (/proc), runs `bun CLI_FILE --url … --token … reports run`
 * (the admin RPC runs the whole run before it answers) and times it from the spawn to the CLI's exit, then
 * samples CPU again and reads the fake's stats and the service's VmHWM.
 *
 * CPU: utime+stime of the service (all threads), of the fake TRA, of the PostgreSQL backends of database DB
 * (matched by process title; a backend that exits during the run is not counted) and of every PostgreSQL
 * process (background writers included), and the machine's busy cores — all between the spawn and the exit.
 *
 * Env: BUN, SERVICE_PID, FAKE_PID, FAKE_CONTROL, ADMIN_URL, ADMIN_TOKEN, DB, TIMEOUT_S (600), CLI_FILE (dist/cli.js,
 * the bundle `npm run cli` runs, or src/cli.ts).
 * Prints one JSON document.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"

const env = (name: string) => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}
const BUN = env("BUN")
const SERVICE_PID = env("SERVICE_PID")
const FAKE_PID = env("FAKE_PID")
const FAKE_CONTROL = env("FAKE_CONTROL")
const DB = env("DB")
const TIMEOUT_S = Number(process.env.TIMEOUT_S ?? 600)
const HZ = Number(process.env.CLK_TCK ?? 100)

const now = () => performance.timeOrigin + performance.now()

const ticksOf = (pid: string): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1")
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(f[11]) + Number(f[12])
  } catch {
    return 0
  }
}
const machineTicks = (): number => {
  const f = readFileSync("/proc/stat", "latin1").split("\n", 1)[0]!.trim().split(/\s+/)
  return [1, 2, 3, 6, 7, 8].reduce((s, i) => s + Number(f[i]), 0)
}
/** Every PostgreSQL process: pid → {ticks, ours (a backend of DB)}. */
const postgres = () => {
  const title = new RegExp(`^postgres: (?:\\S+: )?\\S+ ${DB} `)
  const found = new Map<string, { ticks: number; ours: boolean }>()
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, "latin1").trim()
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "latin1")
      if (comm !== "postgres" && !cmdline.startsWith("postgres")) continue
      found.set(pid, { ticks: ticksOf(pid), ours: title.test(cmdline) })
    } catch { /* gone */ }
  }
  return found
}
const statusField = (pid: string, field: string) => {
  const m = readFileSync(`/proc/${pid}/status`, "latin1").match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))
  return m === null ? null : Math.round(Number(m[1]) / 1024)
}
const sample = () => ({
  at: now(),
  service: ticksOf(SERVICE_PID),
  fake: ticksOf(FAKE_PID),
  pg: postgres(),
  machine: machineTicks()
})

await fetch(`${FAKE_CONTROL}/__clear`, { method: "POST" })
let hwmReset = true
try {
  writeFileSync(`/proc/${SERVICE_PID}/clear_refs`, "5")
} catch {
  hwmReset = false
}
const rssBefore = statusField(SERVICE_PID, "VmRSS")

// The service's RSS every 250 ms during the run (VmHWM gives the peak; this shows when it is reached).
const rssTimeline: Array<number> = []
const rssTimer = setInterval(() => {
  try {
    rssTimeline.push(statusField(SERVICE_PID, "VmRSS") ?? 0)
  } catch { /* gone */ }
}, 250)

const before = sample()
const child = Bun.spawn([
  BUN,
  process.env.CLI_FILE || "dist/cli.js",
  "--url",
  env("ADMIN_URL"),
  "--token",
  env("ADMIN_TOKEN"),
  "reports",
  "run"
], { stdout: "pipe", stderr: "pipe" })
const timer = setTimeout(() => child.kill(), TIMEOUT_S * 1000)
const [stdout, stderr, exit] = await Promise.all([
  new Response(child.stdout).text(),
  new Response(child.stderr).text(),
  child.exited
])
clearTimeout(timer)
const after = sample()
clearInterval(rssTimer)

const seconds = (after.at - before.at) / 1000
const secs = (ticks: number) => +(ticks / HZ).toFixed(2)
const cores = (ticks: number) => +(ticks / HZ / seconds).toFixed(2)
let pgOurs = 0
let pgAll = 0
let backends = 0
for (const [pid, a] of after.pg) {
  const d = a.ticks - (before.pg.get(pid)?.ticks ?? 0)
  pgAll += d
  if (a.ours) {
    pgOurs += d
    backends++
  }
}
const serviceTicks = after.service - before.service
const fakeTicks = after.fake - before.fake
const machine = after.machine - before.machine

const stats = await (await fetch(`${FAKE_CONTROL}/__stats`)).json() as {
  profile: { first_start: number; last_end: number } | null
}
let summary: unknown = null
try {
  summary = JSON.parse(stdout)
} catch { /* reported below */ }

console.log(JSON.stringify({
  cli: { exit, summary, stdout: summary === null ? stdout.slice(0, 2000) : undefined, stderr: stderr.slice(0, 2000) },
  started_at: before.at,
  wall_s: +seconds.toFixed(3),
  /** spawn of the CLI → the first TRA request reaches the fake (CLI boot, RPC, first claim and loads) */
  lead_s: stats.profile === null ? null : +((stats.profile.first_start - before.at) / 1000).toFixed(3),
  /** last TRA answer → CLI exit (SIRE file, SIRE verdicts, release, RPC answer, CLI exit) */
  tail_s: stats.profile === null ? null : +((after.at - stats.profile.last_end) / 1000).toFixed(3),
  cpu: {
    service_s: secs(serviceTicks),
    service_cores: cores(serviceTicks),
    pg_backends_s: secs(pgOurs),
    pg_backends_cores: cores(pgOurs),
    pg_backends: backends,
    pg_all_s: secs(pgAll),
    pg_all_cores: cores(pgAll),
    fake_s: secs(fakeTicks),
    fake_cores: cores(fakeTicks),
    machine_cores: cores(machine),
    others_cores: +Math.max(0, (machine - serviceTicks - pgAll - fakeTicks) / HZ / seconds).toFixed(2)
  },
  rss: { before_mb: rssBefore, peak_mb: statusField(SERVICE_PID, "VmHWM"), after_mb: statusField(SERVICE_PID, "VmRSS"), hwm_reset: hwmReset, every_250ms: rssTimeline },
  fake: stats
}))
