import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { Database } from "../db/Database.ts"
import { PartnerApi, WorkerApi } from "./PartnerApi.ts"

/** Liveness answers from the process alone; readiness asks the database (2 s budget). */
const handlers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const database = yield* Database
  const { role } = yield* AppConfig
  return {
    healthz: () => Effect.succeed({ status: "ok" as const }),
    readyz: () =>
      sql`SELECT 1`.pipe(
        Effect.timeout("2 seconds"),
        Effect.as({ status: "ready" as const, database: database.mode, role }),
        Effect.catchAll(() => Effect.fail({ status: "unavailable" as const, database: database.mode, role }))
      )
  }
})

export const PartnerHealthLive = HttpApiBuilder.group(PartnerApi, "health", (group) =>
  Effect.map(handlers, (h) => group.handle("healthz", h.healthz).handle("readyz", h.readyz)))

export const WorkerHealthLive = HttpApiBuilder.group(WorkerApi, "health", (group) =>
  Effect.map(handlers, (h) => group.handle("healthz", h.healthz).handle("readyz", h.readyz)))
