import { Migrator } from "@effect/sql"
import { Effect, Schedule } from "effect"
import { loader } from "../../migrations/index.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * Applies pending migrations and answers their names. The migrator locks its table, so instances booting
 * together against one database apply each migration once.
 */
export const runMigrations = Migrator.make({})({ loader, table: "schema_migrations" }).pipe(
  // The migrator creates its table before taking the lock: instances booting together on an empty database
  // race there (23505 on pg_type). The loser retries; then the table exists and the lock serialises them.
  Effect.retry({ times: 3, schedule: Schedule.spaced("200 millis"), while: (error) => error._tag === "SqlError" }),
  Effect.map((applied) => applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)),
  TraceContext.withSpan("Database.migrate")
)
