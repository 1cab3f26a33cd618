/**
 * Latency at a fixed request rate, for bench/run.sh (issue 17: p99 at 200 req/s). Open loop: request i is sent
 * at start + i / RATE whatever the earlier ones are doing, and its latency is counted from that planned time, so
 * a stall shows in the figures instead of slowing the sender down (no coordinated omission). Keep-alive
 * connections through Bun's fetch pool.
 *
 * Usage: bun bench/rate.ts URL METHOD RATE SECONDS AUTH_HEADER [BODY_FILE PREFIX]
 *   BODY_FILE (create): bench/create-body.json, its __EXTERNAL_ID__ replaced by PREFIX-<n> per request.
 * Prints one JSON line: {sent, ok, failed, achieved_rate, p50, p90, p99, max} (milliseconds).
 */
const [url, method, rateText, secondsText, auth, bodyFile, prefix] = process.argv.slice(2)
if (url === undefined || method === undefined || auth === undefined) {
  console.error("usage: bun bench/rate.ts URL METHOD RATE SECONDS AUTH_HEADER [BODY_FILE PREFIX]")
  process.exit(2)
}
const rate = Number(rateText)
const seconds = Number(secondsText)
const template = bodyFile === undefined ? undefined : (await Bun.file(bodyFile).text()).trim()
const [authName, ...authValue] = auth.split(": ")
const headers: Record<string, string> = { [authName!.toLowerCase()]: authValue.join(": ") }
if (template !== undefined) headers["content-type"] = "application/json"

const total = Math.round(rate * seconds)
const latencies: Array<number> = []
let failed = 0
const started = performance.now()
const inFlight: Array<Promise<void>> = []
for (let i = 0; i < total; i++) {
  const planned = started + (i * 1000) / rate
  const wait = planned - performance.now()
  if (wait > 0) await Bun.sleep(wait)
  const body = template?.replace("__EXTERNAL_ID__", `${prefix ?? "rate"}-${i}`)
  inFlight.push(
    fetch(url, { method, headers, ...(body === undefined ? {} : { body }) }).then(async (response) => {
      await response.arrayBuffer()
      if (response.status >= 200 && response.status < 300) latencies.push(performance.now() - planned)
      else failed++
    }, () => void failed++)
  )
}
await Promise.all(inFlight)
const elapsed = (performance.now() - started) / 1000
latencies.sort((a, b) => a - b)
const at = (q: number) => latencies.length === 0 ? NaN : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
const round = (ms: number) => Math.round(ms * 100) / 100
console.log(JSON.stringify({
  sent: total,
  ok: latencies.length,
  failed,
  achieved_rate: round(total / elapsed),
  p50: round(at(0.5)),
  p90: round(at(0.9)),
  p99: round(at(0.99)),
  max: round(latencies.at(-1) ?? NaN)
}))
