import { afterAll, beforeAll } from "bun:test"
import { type RunningApp, seedAccount, startApp } from "./app.ts"
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
