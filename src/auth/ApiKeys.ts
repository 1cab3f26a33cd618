import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Accounts } from "../accounts/Accounts.ts"
import { query } from "../db/Database.ts"
import type { Environment } from "../shared/Environment.ts"
import { KeyLimitReached, KeyNotFound } from "../shared/errors.ts"
import * as ApiKey from "./ApiKey.ts"
import type { AuthenticatedKey } from "./CurrentKey.ts"
import { KeyUsage } from "./KeyUsage.ts"
import { lookupId } from "../shared/Uuid.ts"
import * as TraceContext from "../shared/TraceContext.ts"

export interface KeyListing {
  readonly key_id: string
  readonly environment: Environment
  readonly prefix: string
  /** The name its creator gave it in the panel, if any. */
  readonly name: string | null
  readonly created_at: string
  /** Within a minute (`KeyUsage`); null if never used. */
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

interface VerifiedRow {
  readonly key_id: string
  readonly account_id: string
  readonly environment: Environment
  readonly reads: number
  readonly writes: number
  readonly tests: number
}

/** Issue, revoke, list and verify API keys. Keys are stored only as SHA-256 hashes (design §3). */
export class ApiKeys extends Effect.Service<ApiKeys>()("auth/ApiKeys", {
  dependencies: [Accounts.Default, KeyUsage.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    /**
     * The key by its hash, with its account's limits: the lookup of every partner request, run with `query`
     * (docs/performance.md). bench/baseline.ts sends the same text, and bench/run.sh checks that PostgreSQL
     * receives identical statements from both.
     */
    const verifyStatement = (keyHash: string) =>
      sql<VerifiedRow>`
            SELECT k.id AS key_id, k.account_id, k.environment,
                   a.reads_per_minute AS reads, a.writes_per_minute AS writes, a.tests_per_minute AS tests
            FROM api_keys k JOIN accounts a ON a.id = k.account_id
            WHERE k.key_hash = ${keyHash} AND k.revoked_at IS NULL`
    const accounts = yield* Accounts
    const usage = yield* KeyUsage

    /** At most 3 active keys per environment: the account row lock serialises concurrent creations. */
    const create = (accountId: string, environment: Environment, name: string | null = null) =>
      Effect.gen(function*() {
        yield* accounts.lock(accountId)
        const [counted] = yield* sql<{ active: number }>`
          SELECT count(*)::int AS active FROM api_keys
          WHERE account_id = ${accountId} AND environment = ${environment} AND revoked_at IS NULL`
        const active = counted?.active ?? 0
        if (active >= ApiKey.MAX_ACTIVE_KEYS_PER_TYPE) {
          return yield* new KeyLimitReached({
            message:
              `account ${accountId} already has ${active} active ${environment} keys (at most ${ApiKey.MAX_ACTIVE_KEYS_PER_TYPE}); revoke one first`
          })
        }
        const generated = yield* ApiKey.generate(environment)
        const [row] = yield* sql<{ key_id: string }>`
          INSERT INTO api_keys (account_id, environment, key_hash, prefix, name)
          VALUES (${accountId}, ${environment}, ${generated.hash}, ${generated.displayPrefix}, ${name})
          RETURNING id AS key_id`
        return { key_id: row!.key_id, api_key: generated.key, environment, name }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("ApiKeys.create"))

    /** Revokes a key at once; `accountId` limits it to one account's keys (the panel). Revoking again is a no-op. */
    const revoke = (keyId: string, accountId?: string) =>
      sql<{ key_id: string; revoked_at: Date; prefix: string; environment: string }>`
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
        WHERE id = ${lookupId(keyId)} ${accountId === undefined ? sql`` : sql`AND account_id = ${accountId}`}
        RETURNING id AS key_id, revoked_at, prefix, environment`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows[0] === undefined
            ? Effect.fail(new KeyNotFound({ message: `no key ${keyId}` }))
            : Effect.succeed({
              key_id: rows[0].key_id,
              revoked_at: rows[0].revoked_at.toISOString(),
              // for the audit log's words; the answers' schemas leave them out
              prefix: rows[0].prefix,
              environment: rows[0].environment
            })
        ),
        TraceContext.withSpan("ApiKeys.revoke")
      )

    const list = (accountId: string) =>
      Effect.gen(function*() {
        yield* accounts.lock(accountId)
        const rows = yield* sql<{
          key_id: string
          environment: Environment
          prefix: string
          name: string | null
          created_at: Date
          last_used_at: Date | null
          revoked_at: Date | null
        }>`
          SELECT id AS key_id, environment, prefix, name, created_at, last_used_at, revoked_at FROM api_keys
          WHERE account_id = ${accountId} ORDER BY created_at, id`
        return {
          keys: rows.map((row): KeyListing => ({
            ...row,
            created_at: row.created_at.toISOString(),
            last_used_at: row.last_used_at?.toISOString() ?? null,
            revoked_at: row.revoked_at?.toISOString() ?? null
          }))
        }
      }).pipe(Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("ApiKeys.list"))

    /**
     * The key's account, environment and limits, or none for a malformed, unknown or revoked key.
     * One indexed statement: it runs on every partner request. A key found is noted as used (`KeyUsage`).
     */
    const verify = (key: string): Effect.Effect<Option.Option<AuthenticatedKey>> =>
      ApiKey.parse(key)._tag === "None"
        ? Effect.succeed(Option.none())
        : Effect.map(Effect.orDie(query(verifyStatement(ApiKey.hash(key)))), (rows) => {
          const row = rows[0]
          if (row === undefined) return Option.none()
          usage.note(row.key_id)
          return Option.some({
            keyId: row.key_id,
            accountId: row.account_id,
            environment: row.environment,
            limits: { reads: row.reads, writes: row.writes, tests: row.tests }
          })
        })

    return { create, revoke, list, verify } as const
  })
}) {}
