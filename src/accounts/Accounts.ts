import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { AccountNotFound, MemberNotFound } from "../shared/errors.ts"
import type { KeyLimits } from "./KeyLimits.ts"
import { lookupId } from "../shared/Uuid.ts"
import * as TraceContext from "../shared/TraceContext.ts"

export interface Account {
  readonly account_id: string
  readonly name: string
  readonly email: string
}

/** The language an account's e-mails are written in (design §8): Spanish unless the holder chose English. */
export const Language = Schema.Literal("es", "en")
export type Language = typeof Language.Type

/** An account as the panel shows it. */
export const AccountRow = Schema.Struct({
  account_id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  language: Language,
  live_enabled: Schema.Boolean,
  sandbox_created_at: Schema.NullOr(Schema.DateFromSelf)
})
export type AccountRow = typeof AccountRow.Type

/** A member of an account: someone besides the holder who may sign in to the panel. */
export const MemberRow = Schema.Struct({
  email: Schema.String,
  added_by: Schema.String,
  added_at: Schema.DateFromSelf
})
export type MemberRow = typeof MemberRow.Type

/** Where an e-mail may sign in: the accounts it holds (first) or is a member of, oldest first. */
export const SignInTarget = Schema.Struct({ account_id: Schema.String, language: Language })

/** The spec's per-key limits per minute ("Limits"), restored by `accounts limits --reset`. */
export const DEFAULT_LIMITS: KeyLimits = { reads: 120, writes: 60, tests: 10 }

/** Accounts: the tenants. Every key, property and reservation belongs to exactly one. */
export class Accounts extends Effect.Service<Accounts>()("accounts/Accounts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * A new account. Operators' accounts (`cli accounts create`) may create live keys at once; a self-signed-up
     * one (`liveEnabled: false`) has only the test environment until an operator enables live (design §8).
     */
    const create = (input: {
      readonly name: string
      readonly email: string
      readonly liveEnabled?: boolean
      readonly language?: Language
    }) =>
      sql<Account>`
        INSERT INTO accounts (name, email, live_enabled, language)
        VALUES (${input.name}, ${input.email}, ${input.liveEnabled ?? true}, ${input.language ?? "es"})
        RETURNING id AS account_id, name, email`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.dieMessage("INSERT returned no account") : Effect.succeed(rows[0])),
        TraceContext.withSpan("Accounts.create")
      )

    const view = SqlSchema.findOne({
      Request: Schema.String,
      Result: AccountRow,
      execute: (accountId) =>
        sql`SELECT id AS account_id, name, email, language, live_enabled, sandbox_created_at FROM accounts WHERE id = ${lookupId(accountId)}`
    })

    /** The account, or `AccountNotFound`. */
    const get = (accountId: string) =>
      view(accountId).pipe(
        Effect.orDie,
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new AccountNotFound({ message: `no account ${accountId}` })),
          onSome: Effect.succeed
        }))
      )

    const signInTargets = SqlSchema.findAll({
      Request: Schema.String,
      Result: SignInTarget,
      execute: (email) =>
        sql`
          SELECT account_id, language FROM (
            SELECT a.id AS account_id, a.language, 0 AS rank, a.created_at FROM accounts a WHERE lower(a.email) = ${email}
            UNION ALL
            SELECT a.id, a.language, 1, a.created_at FROM account_members m JOIN accounts a ON a.id = m.account_id
            WHERE m.email = ${email}
          ) t ORDER BY rank, created_at, account_id`
    })

    /**
     * The account an e-mail signs in to: the oldest it holds, else the oldest it is a member of (a person in
     * several accounts signs in to that one; docs/panel.md).
     */
    const signInTarget = (email: string) =>
      Effect.map(signInTargets(email.toLowerCase()), (rows) => Option.fromNullable(rows[0])).pipe(Effect.orDie)

    /** `cli accounts enable-live`: a self-signed-up account may now create live keys. */
    const enableLive = (accountId: string) =>
      sql<{ id: string }>`UPDATE accounts SET live_enabled = true WHERE id = ${lookupId(accountId)} RETURNING id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows[0] === undefined
            ? Effect.fail(new AccountNotFound({ message: `no account ${accountId}` }))
            : Effect.succeed({ account_id: rows[0].id, live_enabled: true as const })
        ),
        TraceContext.withSpan("Accounts.enableLive")
      )

    /** The account's test environment exists from now on (panel: once per account). */
    const markSandbox = (accountId: string) =>
      Effect.flatMap(DateTime.now, (now) =>
        sql`UPDATE accounts SET sandbox_created_at = COALESCE(sandbox_created_at, ${DateTime.toDateUtc(now)})
            WHERE id = ${accountId}`).pipe(Effect.asVoid, Effect.orDie)

    const membersOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: MemberRow,
      execute: (accountId) =>
        sql`SELECT email, added_by, added_at FROM account_members WHERE account_id = ${accountId} ORDER BY added_at, email`
    })

    /** Adding a member twice keeps the first addition. */
    const addMember = (accountId: string, email: string, addedBy: string) =>
      Effect.flatMap(DateTime.now, (now) =>
        sql`
          INSERT INTO account_members (account_id, email, added_by, added_at)
          VALUES (${accountId}, ${email.toLowerCase()}, ${addedBy}, ${DateTime.toDateUtc(now)})
          ON CONFLICT (account_id, email) DO NOTHING`).pipe(Effect.asVoid, Effect.orDie)

    const removeMember = (accountId: string, email: string) =>
      sql<{ email: string }>`
        DELETE FROM account_members WHERE account_id = ${accountId} AND email = ${email.toLowerCase()} RETURNING email`
        .pipe(
          Effect.orDie,
          Effect.flatMap((rows) =>
            rows.length === 0
              ? Effect.fail(new MemberNotFound({ message: `${email} is not a member of this account`, details: { email } }))
              : Effect.void
          )
        )

    /** Fails with `AccountNotFound`; locks the row when called inside a transaction. */
    const lock = (accountId: string) =>
      sql<{ id: string }>`SELECT id FROM accounts WHERE id = ${lookupId(accountId)} FOR UPDATE`.pipe(
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
        WHERE id = ${lookupId(accountId)}
        RETURNING reads_per_minute AS reads, writes_per_minute AS writes, tests_per_minute AS tests`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows[0] === undefined
            ? Effect.fail(new AccountNotFound({ message: `no account ${accountId}` }))
            : Effect.succeed({ account_id: accountId, limits: rows[0] })
        ),
        TraceContext.withSpan("Accounts.setLimits")
      )
    }

    return {
      create,
      get,
      lock,
      setLimits,
      signInTarget,
      enableLive,
      markSandbox,
      members: (accountId: string) => membersOf(accountId).pipe(Effect.orDie),
      addMember,
      removeMember
    } as const
  })
}) {}
