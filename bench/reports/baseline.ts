/**
 * The informational baseline of `bench/reports.sh`: the same TRA traffic as a report run, sent by a plain
 * `fetch` loop with no database. N reservations, RESERVATIONS at a time (the run's `Math.max(c × 2, 4)`), each
 * posting its main guest to `/one/`, then its two companions to `/two/` in parallel with the code as `padre`;
 * at most CONCURRENCY requests in flight in total (one semaphore, as TraClient has). Bodies are built by the
 * service's own `mainBody`/`companionBody` (src/compliance/Tra.ts), headers as TraClient sends them. It shows
 * how close to the ideal a client can get against this fake on this machine; the difference between the
 * service and it is the service's own cost (SQL round trips, batching, CPU).
 *
 * Env: TRA_URL, TOKEN, N (2000), CONCURRENCY (4), RESERVATIONS (max(2 × CONCURRENCY, 4)), CHECK_IN, CHECK_OUT.
 * Prints {seconds, requests, failures}.
 */
import { companionBody, mainBody, type TraGuest, type TraStay } from "../../src/compliance/Tra.ts"

const TRA_URL = process.env.TRA_URL!
const TOKEN = process.env.TOKEN!
const N = Number(process.env.N ?? 2000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4)
const RESERVATIONS = Number(process.env.RESERVATIONS ?? Math.max(CONCURRENCY * 2, 4))
const CHECK_IN = process.env.CHECK_IN!
const CHECK_OUT = process.env.CHECK_OUT!

/** A FIFO semaphore: the same limit across every reservation in flight. */
let free = CONCURRENCY
const waiting: Array<() => void> = []
const withPermit = async <A>(task: () => Promise<A>): Promise<A> => {
  if (free > 0) free--
  else await new Promise<void>((resolve) => waiting.push(resolve))
  try {
    return await task()
  } finally {
    const next = waiting.shift()
    if (next !== undefined) next()
    else free++
  }
}

let requests = 0
let failures = 0
const post = (path: "/one/" | "/two/", body: unknown) =>
  withPermit(async () => {
    requests++
    const response = await fetch(`${TRA_URL}${path}`, {
      method: "POST",
      headers: { authorization: `token ${TOKEN}`, accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify(body),
      redirect: "manual"
    })
    const text = await response.text()
    if (response.status !== 201) failures++
    return JSON.parse(text) as { code?: number }
  })

const guest = (doc: string, nombres: string, apellidos: string, tipo = "C.C"): TraGuest => ({
  tipo_identificacion: tipo,
  numero_identificacion: doc,
  nombres,
  apellidos,
  cuidad_residencia: "Medellín",
  cuidad_procedencia: "Medellín"
})

const reservation = async (i: number) => {
  const doc = 50_000_000 + i * 3
  const stay: TraStay = {
    check_in: CHECK_IN,
    check_out: CHECK_OUT,
    numero_habitacion: String(100 + (i % 400)),
    motivo: "Vacaciones/Recreo/Ocio",
    tipo_acomodacion: "Habitación",
    costo: "1250000",
    nombre_establecimiento: "Hotel Bench Reportes SAS",
    rnt_establecimiento: "98765"
  }
  const main = await post("/one/", mainBody(stay, guest(String(doc), "Laura", "Gómez Restrepo"), 2))
  if (typeof main.code !== "number") return
  await Promise.all([
    post("/two/", companionBody(stay, guest(`P${doc + 1}`, "James", "Miller", "Pasaporte"), main.code)),
    post("/two/", companionBody(stay, guest(String(doc + 2), "Tomás", "Gómez"), main.code))
  ])
}

let next = 0
const worker = async () => {
  for (;;) {
    const i = next++
    if (i >= N) return
    await reservation(i)
  }
}
const started = performance.now()
await Promise.all(Array.from({ length: RESERVATIONS }, worker))
console.log(JSON.stringify({ seconds: +((performance.now() - started) / 1000).toFixed(3), requests, failures }))
