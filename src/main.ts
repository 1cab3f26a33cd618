// First: without DATABASE_URL, PGlite's WebAssembly compiles while the other modules load (EmbeddedWarmup.ts).
import "./db/EmbeddedWarmup.ts"
import { BunRuntime } from "@effect/platform-bun"
import { Cause, ConfigError, Console, Effect, Layer, Option } from "effect"
import { App } from "./App.ts"
import * as AppConfig from "./config/AppConfig.ts"
import { DataDirNotWritable } from "./config/DataDir.ts"
import * as Logging from "./config/Logging.ts"
import { DatabaseUnavailable } from "./db/Database.ts"
import { DataDirInUse, DataDirLockUnreadable } from "./db/DataDirLock.ts"
import { SecretsKeyRequired } from "./secrets/SecretBox.ts"

const startupFailure = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.squash(cause)
  if (failure instanceof DatabaseUnavailable) {
    return `start-up failed: ${failure.message}. Set DATABASE_URL to a reachable PostgreSQL, or unset it to use the embedded database.`
  }
  return failure instanceof DataDirInUse || failure instanceof DataDirLockUnreadable || failure instanceof SecretsKeyRequired ||
      failure instanceof DataDirNotWritable
    ? `start-up failed: ${failure.message}`
    : `start-up failed: ${Cause.pretty(cause)}`
}

/**
 * Process entry point. SIGTERM/SIGINT interrupt the main fiber; every layer then closes in reverse order
 * (App.ts: the listener closes and requests in flight get SHUTDOWN_DRAIN_SECONDS, loops stop, the job leases
 * still held are given back and the shutdown line written, then the pool and embedded database close with its
 * lock) and the process exits 0.
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
