/**
 * A tiny OTLP/HTTP sink for `BENCH_OTLP=1` (bench/run.sh): answers every `POST /v1/traces` as a collector does
 * (200 `{}`) after reading the body, and keeps nothing, so what is measured is the service's cost of making and
 * exporting spans, not a collector's. Prints the batches and bytes received when stopped.
 */
const port = Number(process.argv[2] ?? 4318)
let batches = 0
let bytes = 0
const server = Bun.serve({
  port,
  hostname: "127.0.0.1",
  fetch: async (request) => {
    if (request.method !== "POST" || new URL(request.url).pathname !== "/v1/traces") {
      return new Response("not found", { status: 404 })
    }
    bytes += (await request.arrayBuffer()).byteLength
    batches++
    return Response.json({})
  }
})
const stop = () => {
  console.log(`otlp-sink: ${batches} batches, ${bytes} bytes`)
  server.stop(true)
  process.exit(0)
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
console.log(`otlp-sink on 127.0.0.1:${port}`)
