import { BunRuntime } from "@effect/platform-bun"
import { Cause, ConfigError, Console, Effect, Layer, Option } from "effect"
import { App } from "./App.ts"
import * as AppConfig from "./config/AppConfig.ts"
import * as Logging from "./config/Logging.ts"
import { DatabaseUnavailable } from "./db/Database.ts"
import { SecretsKeyRequired } from "./secrets/SecretBox.ts"

const startupFailure = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.squash(cause)
  return failure instanceof DatabaseUnavailable
    ? `start-up failed: ${failure.message}. Set DATABASE_URL to a reachable PostgreSQL, or unset it to use the embedded database.`
    : failure instanceof SecretsKeyRequired
    ? `start-up failed: ${failure.message}.`
    : `start-up failed: ${Cause.pretty(cause)}`
}

/**
 * Process entry point. SIGTERM/SIGINT interrupt the main fiber; every layer then closes in reverse order
 * (HTTP server stops accepting, loops stop, pool and embedded database close) and the process exits 0.
 */
const program = Layer.launch(App).pipe(
  Effect.tapErrorCause((cause) => Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logFatal(startupFailure(cause))),
  Effect.provide(Logging.layer),
  Effect.provide(AppConfig.layer),
  // Before the logger exists, a bad setting can only be reported on stderr.
  Effect.tapErrorCause((cause) =>
    Option.match(Option.filter(Cause.failureOption(cause), ConfigError.isConfigError), {
      onNone: () => Effect.void,
      onSome: (error) => Console.error(`start-up failed: invalid configuration: ${String(error)}`)
    })
  )
)

BunRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
