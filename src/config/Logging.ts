import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { AppConfig } from "./AppConfig.ts"

/** LOG_FORMAT (pretty on a TTY, json otherwise: one JSON document per line) and LOG_LEVEL (design §4). */
export const layer = Layer.unwrapEffect(Effect.map(AppConfig, (config) => {
  const format = Option.getOrElse(config.logFormat, () => process.stdout.isTTY ? "pretty" as const : "json" as const)
  const level = LogLevel.allLevels.find((l) => l.label.toLowerCase() === config.logLevel.toLowerCase()) ??
    LogLevel.Info
  return Layer.merge(format === "json" ? Logger.json : Logger.pretty, Logger.minimumLogLevel(level))
}))
