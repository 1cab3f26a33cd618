import { afterAll, beforeAll } from "bun:test"
import { type RunningApp, seedAccount, startApp, stopAll } from "./app.ts"
import { freshDatabase, type TestDatabase } from "./database.ts"

export interface AppFixture {
  db: TestDatabase
  app: RunningApp
  account: Awaited<ReturnType<typeof seedAccount>>
}

/**
 * The usual file set-up: a fresh database, the real app on it (extra `env` on top), and one seeded account
 * (sandbox + live key). Registers its own beforeAll/afterAll; read the fields inside tests.
 */
export const appFixture = (env: Record<string, string> = {}): AppFixture => {
  const fixture = {} as AppFixture
  beforeAll(async () => {
    fixture.db = await freshDatabase()
    fixture.app = await startApp({ DATABASE_URL: fixture.db.url, ...env })
    fixture.account = await seedAccount(fixture.app)
  })
  afterAll(async () => {
    await fixture.app?.stop()
    await fixture.db?.drop()
  })
  return fixture
}

export interface AppOnDatabase {
  readonly db: TestDatabase
  readonly app: RunningApp
}

const notStarted = (): never => {
  throw new Error("the database and app start in beforeAll: read them inside tests")
}

/**
 * A fresh database and the real app on it (extra `env` on top), without an account: for files that arrange
 * their own. Registers its own beforeAll/afterAll; read the fields inside tests.
 */
export const appOnFreshDatabase = (env: Record<string, string> = {}): AppOnDatabase => {
  let db: TestDatabase | undefined
  let app: RunningApp | undefined
  beforeAll(async () => {
    db = await freshDatabase()
    app = await startApp({ DATABASE_URL: db.url, ...env })
  })
  afterAll(() => stopAll(app, db))
  return {
    get db() {
      return db ?? notStarted()
    },
    get app() {
      return app ?? notStarted()
    }
  }
}
