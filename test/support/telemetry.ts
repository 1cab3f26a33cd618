/**
 * Helpers of the telemetry tests: a free port for the metrics listener, a Prometheus text scrape read into
 * series, and a real OTLP/HTTP receiver recording the spans exported to it.
 */

/** A port nobody listens on right now (the metrics listener is then started on it). */
export const freePort = (): number => {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  return port!
}

export interface Series {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** The samples of a Prometheus text exposition (comments skipped). */
export const parsePrometheus = (text: string): ReadonlyArray<Series> =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\"/g, "\"").replace(/\\n/g, "\n").replace(/\\\\/g, "\\")
    }
    return { name: match[1]!, labels, value: Number(match[3]) }
  })

export interface Scrape {
  readonly text: string
  readonly series: ReadonlyArray<Series>
  /** The sum of the series named `name` whose labels include `labels` (0 when there is none). */
  readonly value: (name: string, labels?: Readonly<Record<string, string>>) => number
}

export const scrape = async (url: string): Promise<Scrape> => {
  const response = await fetch(url)
  if (response.status !== 200) throw new Error(`scrape of ${url}: HTTP ${response.status}`)
  const text = await response.text()
  const series = parsePrometheus(text)
  return {
    text,
    series,
    value: (name, labels = {}) =>
      series
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0)
  }
}

/** One span as an OTLP/HTTP JSON export carries it (ids in hex, attributes flattened to plain values). */
export interface ExportedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
  readonly serviceName: unknown
}

export interface OtlpReceiver {
  readonly url: string
  readonly spans: Array<ExportedSpan>
  /** Requests that were not a JSON `POST /v1/traces` (content types and paths), to show in a failure. */
  readonly refused: Array<string>
  readonly stop: () => void
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number }
const plain = (value: AnyValue | undefined): unknown =>
  value === undefined
    ? undefined
    : value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ??
      value.doubleValue
const attributesOf = (list: ReadonlyArray<{ key: string; value: AnyValue }> | undefined) =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]))

/**
 * A real OTLP/HTTP receiver (an in-process collector): records every span POSTed as JSON to `/v1/traces` and
 * answers as a collector does (200, `{}`).
 */
export const startOtlpReceiver = (): OtlpReceiver => {
  const spans: Array<ExportedSpan> = []
  const refused: Array<string> = []
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      const path = new URL(request.url).pathname
      const type = request.headers.get("content-type") ?? ""
      if (request.method !== "POST" || path !== "/v1/traces" || !type.startsWith("application/json")) {
        refused.push(`${request.method} ${path} ${type}`)
        return new Response("unsupported", { status: 415 })
      }
      const body = await request.json() as any
      for (const resourceSpans of body.resourceSpans ?? []) {
        const serviceName = attributesOf(resourceSpans.resource?.attributes)["service.name"]
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId })),
              serviceName
            })
          }
        }
      }
      return Response.json({})
    }
  })
  return { url: `http://127.0.0.1:${server.port}`, spans, refused, stop: () => server.stop(true) }
}
