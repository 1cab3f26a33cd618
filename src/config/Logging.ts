import { Duration, Effect, Inspectable, Layer, Logger, Option } from "effect"
import { AppConfig } from "./AppConfig.ts"

/**
 * How long JSON lines wait to be written together. One write per window instead of one per line: with the
 * access log on (one line per request) that is most of the line's cost (docs/performance.md, "Access log").
 * A process killed with SIGKILL loses at most this much of its log; a normal exit flushes (scope finalizer).
 */
export const JSON_FLUSH_WINDOW = Duration.millis(50)

/**
 * Effect's `Logger.jsonLogger` document (the same `structuredLogger` record, so the same fields) serialized with
 * plain `JSON.stringify`; only a value it cannot serialize (a cycle, a bigint) takes `stringifyCircular`, the
 * slower path `jsonLogger` takes for every line.
 */
export const jsonLine = Logger.map(Logger.structuredLogger, (record) => {
  const message = Array.isArray(record.message) ? record.message.map(errorToJson) : errorToJson(record.message)
  const document = { ...record, message }
  try {
    return JSON.stringify(document)
  } catch {
    return Inspectable.stringifyCircular(document)
  }
})

// As jsonLogger does: an Error logged as the message keeps its name and message (JSON.stringify drops both).
const errorToJson = (value: unknown): unknown =>
  value instanceof Error && !("toJSON" in value) ? { ...value, name: value.name, message: value.message } : value

const batchedJson = Logger.replaceScoped(
  Logger.defaultLogger,
  Logger.batched(jsonLine, JSON_FLUSH_WINDOW, (lines) =>
    Effect.sync(() => {
      process.stdout.write(lines.join("\n") + "\n")
    }))
)

/** LOG_FORMAT (pretty on a TTY, json otherwise: one JSON document per line) and LOG_LEVEL (design §4). */
export const layer = Layer.unwrapEffect(Effect.map(AppConfig, (config) => {
  const format = Option.getOrElse(config.logFormat, () => process.stdout.isTTY ? "pretty" as const : "json" as const)
  return Layer.merge(format === "json" ? batchedJson : Logger.pretty, Logger.minimumLogLevel(config.logLevel))
}))
