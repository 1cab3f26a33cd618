import { BunRuntime } from "@effect/platform-bun"
import { Cause, Effect, Layer } from "effect"
import { App } from "./App.ts"
import * as AppConfig from "./config/AppConfig.ts"
import * as Logging from "./config/Logging.ts"
import { DatabaseUnavailable } from "./db/Database.ts"

/**
 * Process entry point. SIGTERM/SIGINT interrupt the main fiber; every layer then closes in reverse order
 * (HTTP server stops accepting, loops stop, pool and embedded database close).
 */
const program = Layer.launch(App).pipe(
  Effect.tapErrorCause((cause) => {
    const failure = Cause.squash(cause)
    const message = failure instanceof DatabaseUnavailable
      ? `start-up failed: ${failure.message}. Set DATABASE_URL to a reachable PostgreSQL, or unset it to use the embedded database.`
      : `start-up failed: ${Cause.pretty(cause)}`
    return Effect.logFatal(message)
  }),
  Effect.provide(Logging.layer),
  Effect.provide(AppConfig.layer)
)

BunRuntime.runMain(program, { disableErrorReporting: true })
