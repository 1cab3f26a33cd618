import { Migrator } from "@effect/sql"
import { Effect } from "effect"
import { loader } from "../../migrations/index.ts"

/**
 * Applies pending migrations and answers their names. The migrator locks its table, so instances booting
 * together against one database apply each migration once.
 */
export const runMigrations = Migrator.make({})({ loader, table: "schema_migrations" }).pipe(
  Effect.map((applied) => applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)),
  Effect.withSpan("Database.migrate")
)
