import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { SecretBox, SecretUnreadable } from "./SecretBox.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * Every secret the database holds (design §3): the columns sealed by `SecretBox`. The SIRE gateway token and
 * the SMTP credentials are configuration (`SIRE_GATEWAY_TOKEN`, `SMTP_URL`), never stored; API keys, panel
 * codes and sessions are stored as hashes only.
 */
export const SECRET_COLUMNS = [
  { table: "properties", column: "tra_token" },
  { table: "webhook_endpoints", column: "secret" }
] as const

/** How many values were sealed or re-sealed; `unreadable`: values neither key opens, left as they are. */
export interface Resealed {
  readonly reencrypted: number
  readonly unreadable: ReadonlyArray<{ readonly table: string; readonly column: string; readonly id: string; readonly key_id: string }>
}

/**
 * Sealing what is not sealed under the current key: plaintext at start-up (rows written before secrets were
 * sealed, migration 0017; a migration cannot know the key), and everything under an older key on
 * `secrets rotate`. Each row is rewritten only if it still holds the value that was read, so a secret changed
 * meanwhile (a webhook secret rotated by its partner) is never overwritten with an older one.
 */
export class StoredSecrets extends Effect.Service<StoredSecrets>()("secrets/StoredSecrets", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox

    const reseal = (which: "plaintext" | "not-current") =>
      Effect.gen(function*() {
        let reencrypted = 0
        const unreadable: Array<Resealed["unreadable"][number]> = []
        for (const { column, table } of SECRET_COLUMNS) {
          const rows = yield* sql<{ id: string; value: string }>`
            SELECT id::text AS id, ${sql(column)} AS value FROM ${sql(table)}
            WHERE ${sql(column)} IS NOT NULL AND ${
            which === "plaintext"
              ? sql`${sql(column)} NOT LIKE 'v1:%'`
              : sql`${sql(column)} NOT LIKE ${`v1:${box.keyId}:%`}`
          }`
          for (const row of rows) {
            const plain = yield* box.open(row.value).pipe(
              Effect.catchTag("SecretUnreadable", (error: SecretUnreadable) =>
                Effect.as(Effect.sync(() => unreadable.push({ table, column, id: row.id, key_id: error.key_id })), undefined))
            )
            if (plain === undefined) continue
            const updated = yield* sql`
              UPDATE ${sql(table)} SET ${sql(column)} = ${box.seal(plain)}
              WHERE id::text = ${row.id} AND ${sql(column)} = ${row.value}
              RETURNING id`
            reencrypted += updated.length
          }
        }
        return { reencrypted, unreadable } satisfies Resealed
      }).pipe(Effect.orDie)

    /** Sealed values under a key neither `SECRETS_KEY` nor `SECRETS_KEY_PREVIOUS` (a wrong key at start). */
    const unknownKeys = Effect.gen(function*() {
      const found: Array<{ readonly where: string; readonly key_id: string; readonly count: number }> = []
      for (const { column, table } of SECRET_COLUMNS) {
        const rows = yield* sql<{ key_id: string; count: number }>`
          SELECT split_part(${sql(column)}, ':', 2) AS key_id, count(*)::int AS count FROM ${sql(table)}
          WHERE ${sql(column)} LIKE 'v1:%' AND split_part(${sql(column)}, ':', 2) NOT IN ${sql.in(box.keyIds)}
          GROUP BY 1`
        found.push(...rows.map((row) => ({ where: `${table}.${column}`, ...row })))
      }
      return found
    }).pipe(Effect.orDie)

    return {
      unknownKeys,
      /** Seals plaintext secrets (start-up). */
      sealPlaintext: reseal("plaintext").pipe(TraceContext.withSpan("StoredSecrets.sealPlaintext")),
      /** `secrets rotate`: every secret not under the current key, sealed under it. */
      rotate: reseal("not-current").pipe(TraceContext.withSpan("StoredSecrets.rotate"))
    } as const
  })
}) {}

/**
 * Start-up step, after the migrations: plaintext secrets are sealed before any request or loop runs, and the
 * log says how many, and names any key no setting holds (a wrong `SECRETS_KEY`).
 */
export const sealOnStart = Layer.effectDiscard(Effect.gen(function*() {
  const secrets = yield* StoredSecrets
  const { reencrypted } = yield* secrets.sealPlaintext
  if (reencrypted > 0) yield* Effect.logInfo(`sealed ${reencrypted} plaintext secrets stored in the database`)
  const unknown = yield* secrets.unknownKeys
  if (unknown.length > 0) {
    // Not fatal: the rest works; what needs these secrets fails, naming the key, until the key is set.
    yield* Effect.logError(
      "stored secrets are sealed under a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS: "
        + unknown.map((u) => `${u.count} in ${u.where} under key ${u.key_id}`).join(", ")
    )
  }
}))
