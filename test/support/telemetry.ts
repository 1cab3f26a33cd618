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
