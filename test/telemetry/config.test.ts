import { describe, expect, test } from "bun:test"
import { ConfigProvider, Effect, Either, Option } from "effect"
import * as AppConfig from "../../src/config/AppConfig.ts"

const read = (env: Record<string, string>) =>
  Effect.runSync(AppConfig.make.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either))

const refusal = (env: Record<string, string>) => {
  const result = read(env)
  if (Either.isRight(result)) throw new Error(`accepted ${JSON.stringify(env)}`)
  return String(result.left)
}

describe("telemetry settings (design §4, §9)", () => {
  test("off by default: no metrics listener, no traces; service.name partner-registration", () => {
    const config = Either.getOrThrow(read({}))
    expect(Option.isNone(config.metricsPort)).toBe(true)
    expect(Option.isNone(config.otlpEndpoint)).toBe(true)
    expect(config.otelServiceName).toBe("partner-registration")
  })

  test("an empty value means unset", () => {
    const config = Either.getOrThrow(read({ METRICS_PORT: " ", OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_SERVICE_NAME: "" }))
    expect(Option.isNone(config.metricsPort)).toBe(true)
    expect(Option.isNone(config.otlpEndpoint)).toBe(true)
    expect(config.otelServiceName).toBe("partner-registration")
  })

  test("set: the port, the collector's base URL without its trailing slash, the service name", () => {
    const config = Either.getOrThrow(read({
      METRICS_PORT: "9464",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
      OTEL_SERVICE_NAME: "registro-api"
    }))
    expect(config.metricsPort).toEqual(Option.some(9464))
    expect(config.otlpEndpoint).toEqual(Option.some("http://collector:4318"))
    expect(config.otelServiceName).toBe("registro-api")
  })

  test("never the public port; a port is a number up to 65535; the endpoint an http(s) URL", () => {
    expect(refusal({ PORT: "8080", METRICS_PORT: "8080" })).toContain("METRICS_PORT must differ from PORT")
    expect(refusal({ METRICS_PORT: "3000" })).toContain("METRICS_PORT must differ from PORT")
    expect(refusal({ METRICS_PORT: "70000" })).toContain("METRICS_PORT")
    expect(refusal({ METRICS_PORT: "metrics" })).toContain("METRICS_PORT")
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toContain("OTEL_EXPORTER_OTLP_ENDPOINT")
    // Both 0: two different free ports.
    expect(Either.isRight(read({ PORT: "0", METRICS_PORT: "0" }))).toBe(true)
  })
})
