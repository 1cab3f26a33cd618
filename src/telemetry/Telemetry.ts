import { Headers, HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { BunHttpServer } from "@effect/platform-bun"
import type { ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import * as Sampler from "./Sampler.ts"

/**
 * Metrics and traces for the operators' own Prometheus and OpenTelemetry collector (design §9). Both are off
 * unless configured, and then nothing of OpenTelemetry is even loaded: the SDK modules are imported only by the
 * layer that needs them.
 */

/** Where the metrics listener answers (`http://host:port/metrics`); None when `METRICS_PORT` is unset. */
export class MetricsListener extends Context.Tag("telemetry/MetricsListener")<
  MetricsListener,
  { readonly url: Option.Option<string> }
>() {}

/** At most this long is spent reading the database's figures for one scrape; past it the last ones are served. */
const SAMPLE_BUDGET = Duration.seconds(2)

/**
 * The Prometheus listener on `METRICS_PORT`: `GET /metrics` answers every Effect `Metric` of the process in the
 * Prometheus text format, through @effect/opentelemetry's metric producer and the OpenTelemetry Prometheus
 * exporter (its own server is not started: ours is Bun's, closed with the app). The database gauges are sampled
 * at the scrape itself, so they are as fresh as Prometheus asks and cost nothing when nobody scrapes.
 */
const listen = (port: number, host: string, serviceName: string) =>
  Effect.gen(function*() {
    const [{ PrometheusExporter, PrometheusSerializer }, OtelMetrics, OtelResource] = yield* Effect.promise(() =>
      Promise.all([
        import("@opentelemetry/exporter-prometheus"),
        import("@effect/opentelemetry/Metrics"),
        import("@effect/opentelemetry/Resource")
      ])
    )
    const exporter = new PrometheusExporter({ preventServerStart: true })
    const serializer = new PrometheusSerializer()
    const producer = yield* OtelMetrics.makeProducer.pipe(Effect.provide(OtelResource.layer({ serviceName })))
    yield* OtelMetrics.registerProducer(producer, () => exporter)

    const sampler = yield* Sampler.make
    // Sampled afresh at every scrape (a few grouped counts; Prometheus asks every 15 s or so): a figure is never
    // older than the scrape that shows it.
    const sample = sampler.sample.pipe(
      Effect.timeout(SAMPLE_BUDGET),
      Effect.catchAllCause((cause) => Effect.logWarning("metrics: database figures not sampled", cause))
    )

    const scrape = Effect.gen(function*() {
      yield* sample
      const { resourceMetrics, errors } = yield* Effect.promise(() => exporter.collect())
      if (errors.length > 0) yield* Effect.logWarning("metrics: collection errors", errors)
      return HttpServerResponse.text(serializer.serialize(resourceMetrics), {
        contentType: "text/plain; version=0.0.4; charset=utf-8"
      })
    }).pipe(
      // A scrape every 15 s is no request of the service: no span, no access log line.
      Effect.withTracerEnabled(false)
    )

    const server = yield* BunHttpServer.make({ port, hostname: host })
    yield* HttpServer.serveEffect(HttpRouter.empty.pipe(HttpRouter.get("/metrics", scrape))).pipe(
      Effect.provideService(HttpServer.HttpServer, server)
    )
    const address = server.address
    const url = address._tag === "TcpAddress"
      ? `http://${address.hostname === "0.0.0.0" ? "127.0.0.1" : address.hostname}:${address.port}/metrics`
      : "(unix socket)"
    yield* Effect.logInfo(`metrics on ${url}`)
    return { url: Option.some(url) }
  })

/** The metrics listener when `METRICS_PORT` is set (ROLE any: every instance has its own figures). */
export const metrics = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Option.match(config.metricsPort, {
    onNone: () => Layer.succeed(MetricsListener, { url: Option.none() }),
    onSome: (port) => Layer.scoped(MetricsListener, listen(port, config.host, config.otelServiceName))
  })))

/** A guest's check-in token in a path (`/checkin/<token>`, `/api/checkin/<token>/…`): it opens the guest's data. */
const CHECKIN_TOKEN = /(\/checkin\/)[^/?#]+/g

/**
 * Rewrites what a span says before it is exported: a check-in token in any attribute (`url.full`, `url.path`, a
 * `referer` header) becomes `:token`, as in the route template. Request spans record the whole URL and the
 * headers (platform redacts only `authorization`, cookies and `x-api-key`); the collector is the operators', but
 * a token that opens a guest's data has no business there. First of the processors, so the batch exports what
 * it leaves.
 */
const redactCheckinTokens: SpanProcessor = {
  onStart: () => {},
  onEnd: (span: ReadableSpan) => {
    const attributes = span.attributes
    for (const [key, value] of Object.entries(attributes)) {
      if (typeof value === "string" && value.includes("/checkin/")) {
        attributes[key] = value.replace(CHECKIN_TOKEN, "$1:token")
      }
    }
  },
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve()
}

/** Request headers that are secrets of ours, recorded as `<redacted>` on request spans beside platform's own. */
const SECRET_HEADERS = ["x-panel-csrf"]

/**
 * Spans over OTLP/HTTP (JSON) to `OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces` when it is set, batched; unset: no
 * tracer is installed and no exporter loaded. Provide it beneath everything else so every layer's fibers run
 * with the tracer. `OTEL_EXPORTER_OTLP_HEADERS` (a collector's credentials) is read by the exporter itself.
 */
export const tracing = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isNone(config.otlpEndpoint)) return Layer.empty
  const endpoint = config.otlpEndpoint.value
  const [NodeSdk, { BatchSpanProcessor }, { OTLPTraceExporter }] = yield* Effect.promise(() =>
    Promise.all([
      import("@effect/opentelemetry/NodeSdk"),
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http")
    ])
  )
  yield* Effect.logInfo(`traces to ${endpoint}/v1/traces`)
  return Layer.mergeAll(
    NodeSdk.layer(() => ({
      resource: { serviceName: config.otelServiceName },
      spanProcessor: [
        redactCheckinTokens,
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }))
      ]
    })).pipe(Layer.discard),
    // Set as the tracer is, for every layer above: jobs keep the context of the span that made them
    // (TraceContext), and request spans leave out our own secret headers.
    Layer.scopedDiscard(Effect.locallyScoped(TraceContext.Exported, true)),
    Layer.scopedDiscard(
      Effect.locallyScopedWith(Headers.currentRedactedNames, (names) => [...names, ...SECRET_HEADERS])
    )
  )
}))
