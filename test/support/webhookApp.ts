import { admin, type RunningApp, seedAccount, startApp } from "./app.ts"
import { freshDatabase, type TestDatabase } from "./database.ts"
import { type Receiver, startReceiver } from "./receiver.ts"

/** What the webhook tests run against: a receiver, a fresh database, the app on it and a seeded account. */
export interface WebhookApp {
  readonly receiver: Receiver
  readonly db: TestDatabase
  readonly app: RunningApp
  readonly account: Awaited<ReturnType<typeof seedAccount>>
}

/**
 * Starts a local receiver, a fresh database and the app on it (private webhook URLs allowed, `env` added), seeds
 * an account and raises its rate limits so that a test's bursts are never refused.
 */
export const startWebhookApp = async (options: {
  readonly env?: Readonly<Record<string, string>>
  readonly accountName?: string
  readonly limits?: { readonly writes?: number; readonly reads?: number }
} = {}): Promise<WebhookApp> => {
  const receiver = startReceiver()
  const db = await freshDatabase()
  const app = await startApp({ DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_URLS: "true", ...options.env })
  const account = await seedAccount(app, options.accountName)
  await admin(app, (c) => c.SetLimits({ account_id: account.accountId, ...(options.limits ?? { writes: 10_000 }) }))
  return { receiver, db, app, account }
}

/** Stops what `startWebhookApp` started (whatever of it did start). */
export const stopWebhookApp = async (started: Partial<WebhookApp>) => {
  await started.app?.stop()
  await started.db?.drop()
  started.receiver?.stop()
}
