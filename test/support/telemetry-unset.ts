/**
 * Run as its own process by test/telemetry/traces.test.ts: boots the app with neither METRICS_PORT nor
 * OTEL_EXPORTER_OTLP_ENDPOINT, answers one request, and prints which OpenTelemetry modules the process loaded
 * (Bun's module registry lists ES modules too). A process of its own, since the test's process loaded them.
 */
import { call, startApp } from "./app.ts"

// The telemetry settings as the test gives them (empty: unset), so the same script shows what setting them loads.
const app = await startApp({
  DATABASE_URL: process.env.DATABASE_URL!,
  ROLE: "api",
  METRICS_PORT: process.env.METRICS_PORT ?? "",
  OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? ""
})
const status = (await call(app, "GET", "/readyz")).status
await app.stop()
const loaded = Object.keys(require.cache).filter((path) => path.includes("opentelemetry"))
console.log(JSON.stringify({ status, loaded }))
