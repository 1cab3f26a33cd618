/**
 * The JS heap under load: what the garbage collector does per request, with the heap settings `npm start` gives
 * the service (docs/performance.md, "Issue 28, fourth session: the JS heap").
 *
 * `npm run bench` gives throughput and CPU per request, ±10–15 % from round to round on a shared host; this shows
 * one part of that CPU the usual figures hide: JSC's own log of every collection (`BUN_JSC_logGC`) of the
 * production bundle (`dist/main.js`, `ROLE=api`, `LOG_LEVEL=Warning`, a fresh PostgreSQL database, as
 * `npm run bench` runs it), read while a client in another process sends N requests per case, 20 at a time. Per
 * case: the service's CPU per request, its eden and full collections, how much its heap grew between collections
 * per request (the bytes allocated, roughly: the window's edges and the collections the heap's timers start make
 * it vary ±10 % from run to run) and its peak RSS so far. The heap's settings are `npm start`'s
 * (`BUN_JSC_forceRAMSize=268435456`) unless BENCH_JSC_RAM says otherwise (as for the other bench scripts: a
 * number of bytes, or "" for Bun's sizing); any other `BUN_JSC_` variable of the environment is passed on:
 *
 *   npm run bench:gc
 *   BENCH_JSC_RAM= npm run bench:gc                         # Bun's sizing for this machine's RAM
 *   BUN_JSC_largeHeapGrowthFactor=2 npm run bench:gc        # a JSC option beside npm start's
 *   BENCH_GC_N=5000 BENCH_GC_CASES=healthz npm run bench:gc
 *
 * The same file is the client when BENCH_GC_URL is set.
 */
import * as NodeFs from "node:fs"
import * as NodeFsPromises from "node:fs/promises"
import { TEST_SECRETS_KEY, tempDir } from "../test/support/app.ts"
import { freshDatabase } from "../test/support/database.ts"
import { benchAccount } from "./account.ts"

const N = Number(process.env.BENCH_GC_N ?? 20_000)
const CONCURRENCY = 20
const PATHS: Record<string, string> = {
  healthz: "/healthz",
  properties: "/api/partners/properties",
  get: "/api/partners/registrations/GC-GET"
}

/** The client: `total` GETs of `url`, CONCURRENCY at a time; any answer but 200 stops it. */
const client = async (url: string, key: string, total: number) => {
  let sent = 0
  const worker = async () => {
    while (sent < total) {
      sent++
      const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}

/** Clock ticks per second of /proc's CPU times, as bench/run.sh reads it. */
const CLK_TCK = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100

/** utime + stime of a process, all its threads, in µs. */
const cpuMicros = (pid: number) => {
  const fields = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLK_TCK
}
const peakRssMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(NodeFs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024

interface Window {
  eden: number
  full: number
  grownKb: number
}

/** Reads JSC's collection log: per heap (a process may have more than one VM), its size after each collection. */
const makeLogReader = () => {
  const afterLast = new Map<string, number>()
  const other: Array<string> = []
  let window: Window | undefined
  const line = (text: string) => {
    const heap = /GC<(0x[0-9a-f]+)>/.exec(text)?.[1]
    if (heap === undefined) {
      // The service's own lines (a failure's) are kept for the report; the collector's other lines dropped.
      if (!/GC|^\s*$/.test(text)) other.push(text)
      return
    }
    const start = /START M (\d+)kb => (Eden|Full)Collection/.exec(text)
    if (start !== null && window !== undefined) {
      const previous = afterLast.get(heap)
      if (previous !== undefined) window.grownKb += Number(start[1]) - previous
      if (start[2] === "Eden") window.eden++
      else window.full++
    }
    const end = /=> (\d+)kb, p=/.exec(text)
    if (end !== null) afterLast.set(heap, Number(end[1]))
  }
  const read = async (stream: ReadableStream<Uint8Array>) => {
    let rest = ""
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      const lines = (rest + decoder.decode(chunk.value, { stream: true })).split("\n")
      rest = lines.pop()!
      for (const text of lines) line(text)
    }
  }
  return {
    read,
    other,
    open: () => {
      window = { eden: 0, full: 0, grownKb: 0 }
    },
    close: (): Window => {
      const closed = window!
      window = undefined
      return closed
    }
  }
}

const main = async () => {
  const cases = (process.env.BENCH_GC_CASES ?? "healthz,properties,get").split(",")
  for (const name of cases) if (PATHS[name] === undefined) throw new Error(`BENCH_GC_CASES: unknown case ${name}`)
  const root = new URL("..", import.meta.url).pathname
  const build = Bun.spawnSync([process.execPath, "scripts/build.ts", "--if-stale"], { cwd: root, stderr: "inherit" })
  if (build.exitCode !== 0) throw new Error("building the bundle failed")

  const heap: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) if (name.startsWith("BUN_JSC_") && value) heap[name] = value
  const ram = process.env.BENCH_JSC_RAM ?? "268435456"
  if (!/^\d*$/.test(ram)) throw new Error("BENCH_JSC_RAM must be a number of bytes or empty")
  if (ram === "") delete heap.BUN_JSC_forceRAMSize
  else heap.BUN_JSC_forceRAMSize = ram
  const db = await freshDatabase()
  const adminToken = `admin-${crypto.randomUUID()}`
  // A port the kernel hands out, as bench/lib.sh's free_port.
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  const dataDir = await tempDir("bench-gc")
  const baseUrl = `http://127.0.0.1:${port}`
  const service = Bun.spawn([process.execPath, "dist/main.js"], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: db.url,
      ROLE: "api",
      LOG_LEVEL: "Warning",
      LOG_FORMAT: "json",
      ADMIN_TOKEN: adminToken,
      SECRETS_KEY: TEST_SECRETS_KEY,
      PUBLIC_BASE_URL: "https://checkin.bench.invalid",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ...heap,
      BUN_JSC_logGC: "1"
    },
    stdout: "ignore",
    stderr: "pipe"
  })
  const log = makeLogReader()
  const reading = log.read(service.stderr)
  try {
    for (let attempt = 0; ; attempt++) {
      const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false)
      if (ready) break
      if (attempt > 300 || service.exitCode !== null) throw new Error("the service did not become ready")
      await Bun.sleep(100)
    }
    const account = await benchAccount({ baseUrl, adminToken })
    await account.create("GC-GET")

    console.log(
      `JS heap under load: dist/main.js, ROLE=api, ${N} requests per case, ${CONCURRENCY} at a time; ` +
        (Object.entries(heap).map(([name, value]) => `${name}=${value}`).join(" ") || "no BUN_JSC_ setting")
    )
    console.log("case        CPU µs/req  eden  full  heap grown KB/req  peak RSS MB")
    for (const name of cases) {
      const requests = (count: number) =>
        Bun.spawn([process.execPath, import.meta.path], {
          env: { PATH: process.env.PATH, BENCH_GC_URL: `${baseUrl}${PATHS[name]}`, BENCH_GC_KEY: account.key, BENCH_GC_N: String(count) },
          stdout: "inherit",
          stderr: "inherit"
        }).exited.then((code) => {
          if (code !== 0) throw new Error(`the client of ${name} failed`)
        })
      await requests(2_000) // warm-up: the JIT's tiers, the pool's connections
      await Bun.sleep(300) // the log of what came before is read before the window opens
      log.open()
      const before = cpuMicros(service.pid)
      await requests(N)
      const cpu = cpuMicros(service.pid) - before
      await Bun.sleep(300)
      const window = log.close()
      console.log(
        `${name.padEnd(11)} ${(cpu / N).toFixed(0).padStart(10)}  ${String(window.eden).padStart(4)}  ` +
          `${String(window.full).padStart(4)}  ${(window.grownKb / N).toFixed(1).padStart(17)}  ` +
          `${peakRssMb(service.pid).toFixed(0).padStart(11)}`
      )
    }
  } catch (error) {
    console.error(log.other.slice(-40).join("\n"))
    throw error
  } finally {
    service.kill("SIGTERM")
    await service.exited
    await reading
    await db.drop()
    await NodeFsPromises.rm(dataDir, { recursive: true, force: true })
  }
}

if (process.env.BENCH_GC_URL !== undefined) {
  await client(process.env.BENCH_GC_URL, process.env.BENCH_GC_KEY ?? "", N)
} else {
  await main()
}
