import { afterAll, beforeAll, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { tempDir } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"
import { DEFAULT_TOKEN as TRA_TOKEN, startFakeTra } from "../support/fakeTra.ts"
import { colombian } from "../support/guests.ts"
import { ROOT, runCli, spawnService, type ServiceProcess } from "../support/process.ts"

/**
 * The production bundle (scripts/build.ts, what `npm start` runs) is the same service as `bun src/main.ts`:
 * built here into its own folder of the checkout, started as a real process on PostgreSQL and on the embedded
 * database, and driven over HTTP — the admin RPC by the CLI's bundle (answering as the sources' CLI), a reservation through the partner API, the pages'
 * files (read at run time from the checkout) and the OpenAPI document, which must equal the sources' own.
 */

const OUT = `dist-test-${process.pid}`
const ADMIN_TOKEN = "bundle-admin-token"
let db: TestDatabase
let dataDir: string
let bundled: ServiceProcess | undefined
let sources: ServiceProcess | undefined

beforeAll(async () => {
  const build = Bun.spawn([`${ROOT}node_modules/.bin/bun`, "scripts/build.ts", "--outdir", OUT], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe"
  })
  const [code, stderr] = await Promise.all([build.exited, new Response(build.stderr).text()])
  if (code !== 0) throw new Error(`build failed: ${stderr}`)
  db = await freshDatabase()
  dataDir = await tempDir("bundle")
}, 60_000)

afterAll(async () => {
  await bundled?.stop()
  await sources?.stop()
  await db?.drop()
  await NodeFs.rm(NodePath.join(ROOT, OUT), { recursive: true, force: true })
  await NodeFs.rm(dataDir, { recursive: true, force: true })
}, 30_000)

const env = () => ({
  DATABASE_URL: db.url,
  DATA_DIR: dataDir,
  ADMIN_TOKEN,
  PUBLIC_BASE_URL: "https://checkin.bundle.example",
  WEBHOOK_ALLOW_PRIVATE_URLS: "1"
})

test("the bundle migrates, serves the partner API, the admin RPC, the pages and the sources' OpenAPI document", async () => {
  bundled = spawnService(env(), `${OUT}/main.js`)
  const url = await bundled.ready(30_000)
  expect(bundled.output()).toContain("applied migrations: 0001_foundation")
  expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: "ready", database: "postgres", role: "all" })

  // The admin RPC through the CLI's bundle (`npm run cli`), which answers as the CLI from the sources does.
  const cli = (...args: Array<string>) => runCli(["--url", url, "--token", ADMIN_TOKEN, ...args], {}, `${OUT}/cli.js`)
  const account = await cli("accounts", "create", "--name", "Bundle Partner", "--email", "ops@bundle.example")
  expect(account.code).toBe(0)
  const sandbox = await cli("sandbox", "create", "--account", account.json.account_id)
  expect(sandbox.code).toBe(0)
  const auth = { authorization: `Bearer ${sandbox.json.api_key}` }
  const listed = await Promise.all([`${OUT}/cli.js`, "src/cli.ts"].map((entry) =>
    runCli(["--url", url, "--token", ADMIN_TOKEN, "keys", "list", "--account", account.json.account_id], {}, entry)
  ))
  expect(listed.map(({ code }) => code)).toEqual([0, 0])
  expect(listed[0]!.json).toEqual(listed[1]!.json)
  expect(listed[0]!.json.keys.length).toBe(1)
  const helps = await Promise.all([`${OUT}/cli.js`, "src/cli.ts"].map((entry) => runCli(["--help"], {}, entry)))
  expect(helps[0]!.stdout).toContain("reports retry")
  expect(helps[0]!.stdout).toBe(helps[1]!.stdout)

  const properties = await fetch(`${url}/api/partners/properties`, { headers: auth })
  expect(properties.status).toBe(200)
  const property = (await properties.json()).properties[0]
  const created = await fetch(`${url}/api/partners/reservations`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      external_id: "BUNDLE-1",
      property_id: property.property_id,
      check_in: "2030-03-01",
      check_out: "2030-03-03",
      guest_name: "Ana Bundle",
      guests_count: 2,
      total_amount: 500000,
      currency: "COP"
    })
  })
  const body = await created.json()
  expect({ status: created.status, body }).toMatchObject({ status: 201, body: { external_id: "BUNDLE-1" } })
  expect(body.checkin_url).toStartWith("https://checkin.bundle.example/checkin/")
  const read = await fetch(`${url}/api/partners/registrations/BUNDLE-1`, { headers: auth })
  expect(read.status).toBe(200)
  // An expected failure keeps its code and shape.
  const missing = await fetch(`${url}/api/partners/registrations/NOPE`, { headers: auth })
  expect(missing.status).toBe(404)
  expect((await missing.json()).code).toBe("registration_not_found")

  // The pages' files come from the checkout, as they do for the sources.
  for (const [path, file] of [
    ["/panel/assets/panel.js", "src/panel/page/panel.js"],
    ["/checkin/assets/checkin.css", "src/checkin/page/checkin.css"],
    ["/checkin/assets/base.css", "src/http/page/base.css"]
  ] as const) {
    const answer = await fetch(`${url}${path}`)
    expect({ path, status: answer.status }).toEqual({ path, status: 200 })
    expect(await answer.text()).toBe(await NodeFs.readFile(NodePath.join(ROOT, file), "utf8"))
  }
  const panel = await fetch(`${url}/panel`)
  expect(panel.status).toBe(200)
  expect(await panel.text()).toContain("<html")
  const docs = await (await fetch(`${url}/docs`)).text()
  const script = /src="(\/docs\/assets\/scalar-[^"]+\.js)"/.exec(docs)?.[1]
  expect(script).toBeDefined()
  const scalar = await fetch(`${url}${script}`)
  expect(scalar.status).toBe(200)
  expect((await scalar.text()).length).toBeGreaterThan(1_000_000)

  sources = spawnService({ ...env(), DATA_DIR: await tempDir("bundle-sources") })
  const sourcesUrl = await sources.ready(30_000)
  const [fromBundle, fromSources] = await Promise.all(
    [url, sourcesUrl].map(async (base) => (await fetch(`${base}/openapi.json`)).json())
  )
  expect(fromBundle).toEqual(fromSources)
  await sources.stop()

  expect(await bundled.stop()).toBe(0)
  expect(bundled.output()).toContain("stopped: drained")
}, 120_000)

test("the bundle starts on a fresh embedded DATA_DIR (a copy of the migrated template) and again on the same one", async () => {
  const embeddedDir = await tempDir("bundle-embedded")
  try {
    for (const start of ["first", "restart"]) {
      const service = spawnService({ DATA_DIR: embeddedDir, ADMIN_TOKEN }, `${OUT}/main.js`)
      try {
        const url = await service.ready(60_000)
        const ready = await fetch(`${url}/readyz`)
        expect({ start, body: await ready.json() }).toEqual({
          start,
          body: { status: "ready", database: "embedded", role: "all" }
        })
        // The copy of the template is migrated already: neither start applies anything.
        expect(service.output()).not.toContain("applied migrations")
      } finally {
        expect(await service.stop()).toBe(0)
      }
    }
  } finally {
    await NodeFs.rm(embeddedDir, { recursive: true, force: true })
  }
}, 180_000)

test("each bundle comes with its bytecode cache, which Bun loads in place of parsing it", async () => {
  // Bun writes no cache, silently, for code that uses `import.meta.resolve` or a top-level `await`; without it a
  // start parses and compiles the whole bundle again (~100 ms of every restart, docs/performance.md "Restart").
  for (const bundle of ["main.js", "cli.js"]) {
    const source = await Bun.file(NodePath.join(ROOT, OUT, bundle)).text()
    expect({ bundle, header: source.split("\n", 1)[0] }).toEqual({ bundle, header: "// @bun @bytecode @bun-cjs" })
    const cache = Bun.file(NodePath.join(ROOT, OUT, `${bundle}.jsc`))
    expect({ bundle, cached: (await cache.exists()) && cache.size > source.length }).toEqual({ bundle, cached: true })
  }
})

test("the bundle's report run posts to the TRA through its TRA thread (src/tra-thread.ts, read from the checkout as the pages are)", async () => {
  const tra = startFakeTra()
  const reportDb = await freshDatabase()
  const service = spawnService({ ...env(), DATABASE_URL: reportDb.url, ROLE: "api", TRA_BASE_URL: tra.url }, `${OUT}/main.js`)
  try {
    const url = await service.ready(30_000)
    const cli = (...args: Array<string>) => runCli(["--url", url, "--token", ADMIN_TOKEN, ...args], {}, `${OUT}/cli.js`)
    const account = (await cli("accounts", "create", "--name", "Bundle Live", "--email", "live@bundle.example")).json
    const key = (await cli("keys", "create", "--account", account.account_id, "--env", "live")).json
    const property = (await cli(
      "properties", "create", "--account", account.account_id, "--name", "Hotel Bundle", "--env", "live",
      "--rnt", "98765", "--establishment-name", "Hotel Bundle SAS", "--tra-token", TRA_TOKEN,
      "--sire-hotel-code", "12345", "--sire-city-code", "11001"
    )).json
    const today = new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10) // Bogotá is UTC−5
    const registered = await fetch(`${url}/api/partners/registrations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.api_key}`, "content-type": "application/json" },
      body: JSON.stringify({
        external_id: "BUNDLE-TRA-1",
        property_id: property.property_id,
        check_in: today,
        check_out: new Date(Date.parse(today) + 2 * 86_400_000).toISOString().slice(0, 10),
        guest_name: "Laura Gómez",
        guests_count: 1,
        total_amount: 500000,
        currency: "COP",
        motivo: "Vacaciones, recreo y ocio",
        tipo_acomodacion: "Habitación",
        guests: [colombian({ numero_documento: "52123456", nombre: "Laura", apellido: "Gómez" })]
      })
    })
    expect(registered.status).toBe(201)

    const run = await cli("reports", "run")
    expect({ code: run.code, tra: run.json?.tra }).toEqual({ code: 0, tra: { sent: 1, accepted: 1, rejected: 0 } })
    expect(tra.mains().map((request) => (request.body as Record<string, string>)["numero_identificacion"])).toEqual(["52123456"])
  } finally {
    expect(await service.stop()).toBe(0)
    tra.stop()
    await reportDb.drop()
  }
}, 120_000)
