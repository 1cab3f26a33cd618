import Pg from "pg"

/** The PostgreSQL the suite runs against (CI and dev machines: 127.0.0.1:5432, trust auth, database `test`). */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const withAdminClient = async <A>(use: (client: Pg.Client) => Promise<A>) => {
  const client = new Pg.Client({ connectionString: ADMIN_DATABASE_URL })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/** What `schema_migrations` holds once every migration in migrations/ is applied, in id order. */
export const APPLIED_MIGRATIONS = [
  { migration_id: 1, name: "foundation" },
  { migration_id: 2, name: "reservations" },
  { migration_id: 3, name: "documents" },
  { migration_id: 4, name: "webhooks" },
  { migration_id: 5, name: "compliance" },
  { migration_id: 6, name: "checkin" },
  { migration_id: 7, name: "mail" },
  { migration_id: 8, name: "panel" },
  { migration_id: 9, name: "event_order" },
  { migration_id: 10, name: "report_safety" },
  { migration_id: 11, name: "reference_overrides" },
  { migration_id: 15, name: "alerts" },
  { migration_id: 16, name: "trace_context" },
  { migration_id: 17, name: "secrets_at_rest" },
  { migration_id: 18, name: "delivery_endpoint_due" },
  { migration_id: 19, name: "departure" },
  { migration_id: 20, name: "report_run_indexes" },
  { migration_id: 21, name: "key_names" },
  { migration_id: 22, name: "delivery_history_retention" }
]

export interface TestDatabase {
  readonly url: string
  readonly name: string
  readonly query: <R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: ReadonlyArray<unknown>
  ) => Promise<Array<R>>
  readonly drop: () => Promise<void>
}

/** A fresh, empty database per test file: files run in isolation and leave nothing behind. */
export const freshDatabase = async (): Promise<TestDatabase> => {
  const name = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(ADMIN_DATABASE_URL)
  url.pathname = `/${name}`
  const pool = new Pg.Pool({ connectionString: url.toString(), max: 2 })
  // drop() terminates connections that pg may still be closing; their error event must not crash the run.
  pool.on("error", () => {})
  return {
    url: url.toString(),
    name,
    query: async (text, values) => (await pool.query(text, values as Array<unknown>)).rows,
    drop: async () => {
      await pool.end()
      await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }
}
