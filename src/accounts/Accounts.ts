import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { KeyLimits } from "../auth/CurrentKey.ts"
import { AccountNotFound } from "../shared/errors.ts"

export interface Account {
  readonly account_id: string
  readonly name: string
  readonly email: string
}

/** The spec's per-key limits per minute ("Limits"), restored by `accounts limits --reset`. */
export const DEFAULT_LIMITS: KeyLimits = { reads: 120, writes: 60, tests: 10 }

/** Accounts: the tenants. Every key, property and reservation belongs to exactly one. */
export class Accounts extends Effect.Service<Accounts>()("accounts/Accounts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const create = (input: { readonly name: string; readonly email: string }) =>
      sql<Account>`
        INSERT INTO accounts (name, email) VALUES (${input.name}, ${input.email})
        RETURNING id AS account_id, name, email`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie,
        Effect.withSpan("Accounts.create")
      )

    /** Fails with `AccountNotFound`; locks the row when called inside a transaction. */
    const lock = (accountId: string) =>
      sql<{ id: string }>`SELECT id FROM accounts WHERE id::text = ${accountId} FOR UPDATE`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows.length === 1
            ? Effect.void
            : Effect.fail(new AccountNotFound({ message: `no account ${accountId}` }))
        )
      )

    const setLimits = (
      accountId: string,
      limits: { readonly [K in keyof KeyLimits]?: number | undefined } | "reset"
    ) => {
      const next = limits === "reset" ? DEFAULT_LIMITS : limits
      return sql<{ reads: number; writes: number; tests: number }>`
        UPDATE accounts SET
          reads_per_minute = COALESCE(${next.reads ?? null}::integer, reads_per_minute),
          writes_per_minute = COALESCE(${next.writes ?? null}::integer, writes_per_minute),
          tests_per_minute = COALESCE(${next.tests ?? null}::integer, tests_per_minute)
        WHERE id::text = ${accountId}
        RETURNING reads_per_minute AS reads, writes_per_minute AS writes, tests_per_minute AS tests`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows[0] === undefined
            ? Effect.fail(new AccountNotFound({ message: `no account ${accountId}` }))
            : Effect.succeed({ account_id: accountId, limits: rows[0] })
        ),
        Effect.withSpan("Accounts.setLimits")
      )
    }

    return { create, lock, setLimits } as const
  })
}) {}
