import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"

/** How often the keys used since the last write are written (and once more when the service stops). */
export const KEY_USAGE_EVERY = Duration.minutes(1)

/**
 * When each API key was last used (the panel's key list). A verified request only notes its key in memory — no
 * statement on the request path, whose SQL the bench holds to the baseline's — and one statement writes the keys
 * noted, every minute and once more at shutdown, stamped with the database's clock. So `last_used_at` is exact to
 * the minute; a crash loses at most the last minute's notes, which the next use writes again.
 */
export class KeyUsage extends Effect.Service<KeyUsage>()("auth/KeyUsage", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let noted = new Set<string>()

    const write = Effect.suspend(() => {
      if (noted.size === 0) return Effect.void
      const keyIds = [...noted]
      noted = new Set()
      return sql`UPDATE api_keys SET last_used_at = now() WHERE id IN ${sql.in(keyIds)}`.pipe(
        Effect.asVoid,
        Effect.catchAll((error) => Effect.logWarning("the API keys' last use could not be written", error))
      )
    })

    yield* Effect.addFinalizer(() => write)
    yield* Effect.forkScoped(Effect.forever(Effect.delay(write, KEY_USAGE_EVERY)))
    return {
      /** Notes a verified request's key; written within a minute. */
      note: (keyId: string) => {
        noted.add(keyId)
      },
      write
    } as const
  })
}) {}
