/**
 * Seeds `bench/reports.sh`'s due reservations through the partner API: N live registrations with endpoint 7
 * (`POST /api/partners/registrations`, live key), CONCURRENCY requests at a time. Each has 3 guests, the bodies
 * of test/support/guests.ts: the main guest and one companion Colombian (C.C), one companion a US passport
 * holder with a birth date (so one SIRE entry movement each); check_in = CHECK_IN (today in Bogotá), so the
 * reservation is due at once. Document numbers are unique across the run, so the fake can spot duplicates.
 * Not timed by the benchmark (the time is printed for information).
 *
 * Env: BASE_URL, API_KEY, PROPERTY_ID, CHECK_IN, CHECK_OUT, N (2000), CONCURRENCY (8), PREFIX (external_id prefix).
 * Prints {created, seconds, per_second, statuses}; exits 1 if any answer is not 201.
 */
import { colombian, foreigner } from "../../test/support/guests.ts"

const env = (name: string) => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}
const BASE_URL = env("BASE_URL")
const API_KEY = env("API_KEY")
const PROPERTY_ID = env("PROPERTY_ID")
const CHECK_IN = env("CHECK_IN")
const CHECK_OUT = env("CHECK_OUT")
const N = Number(process.env.N ?? 2000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8)
const PREFIX = process.env.PREFIX ?? "BENCH-RPT"

const body = (i: number) => {
  const doc = 10_000_000 + i * 3
  const { doc_photo_front_url: _front, doc_photo_back_url: _back, ...visitor } = foreigner({
    numero_documento: `P${doc + 1}`,
    nombre: "James",
    apellido: "Miller"
  })
  return {
    external_id: `${PREFIX}-${i}`,
    property_id: PROPERTY_ID,
    check_in: CHECK_IN,
    check_out: CHECK_OUT,
    guest_name: "Laura Gómez Restrepo",
    guests_count: 3,
    room_number: String(100 + (i % 400)),
    total_amount: 1_250_000,
    currency: "COP",
    motivo: "Vacaciones, recreo y ocio",
    tipo_acomodacion: "Habitación",
    guests: [
      colombian({ numero_documento: String(doc), nombre: "Laura", apellido: "Gómez Restrepo" }),
      visitor, // no photo URLs: nothing for the photo fetcher (which does not run with ROLE=api anyway)
      colombian({ numero_documento: String(doc + 2), nombre: "Tomás", apellido: "Gómez" })
    ]
  }
}

const statuses: Record<string, number> = {}
let firstError: string | undefined
let next = 0
const started = performance.now()
const worker = async () => {
  for (;;) {
    const i = next++
    if (i >= N) return
    const response = await fetch(`${BASE_URL}/api/partners/registrations`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body(i))
    })
    const text = await response.text()
    statuses[response.status] = (statuses[response.status] ?? 0) + 1
    if (response.status !== 201) firstError ??= `${response.status} ${text.slice(0, 500)}`
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker))
const seconds = (performance.now() - started) / 1000
const created = statuses["201"] ?? 0
console.log(JSON.stringify({ created, seconds: +seconds.toFixed(2), per_second: +(created / seconds).toFixed(0), statuses }))
if (firstError !== undefined) {
  console.error(`first failure: ${firstError}`)
  process.exit(1)
}
