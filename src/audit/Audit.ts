import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Schema } from "effect"

/**
 * The account's audit log (design §8): sign-ins, keys created and revoked, the test environment, settings and
 * members changed — who, what, on what, from where. Written in the transaction of the change it records.
 * Operators' changes to the whole deployment (`cli reference set|unset`) are written here too, with no account:
 * no account's panel lists them.
 */

export type AuditAction =
  | "signin"
  | "signout"
  | "signup"
  | "key.created"
  | "key.revoked"
  | "key.live_requested"
  | "sandbox.created"
  | "property.settings_changed"
  | "member.added"
  | "member.removed"
  | "reservation.departure_recorded"
  | "webhook.created"
  | "webhook.updated"
  | "webhook.deactivated"
  | "webhook.secret_rotated"
  | "reference.set"
  | "reference.unset"

export interface AuditRecord {
  /** Null: a change to the whole deployment, made by an operator. */
  readonly accountId: string | null
  readonly actor: string
  readonly action: AuditAction
  /** What it was done to: a key id and prefix, a property id and the settings' names (never their values)… */
  readonly target?: string | null
  readonly ip: string | null
  /**
   * What it was done to and what changed, as data the panel words (issue 26: "who did what to which named thing"):
   * a key's prefix and environment, a property's name and the settings' names, an endpoint's URL, a member's
   * e-mail; a reference override's table, key, old and new value.
   */
  readonly details?: Readonly<Record<string, unknown>>
}

const EntryRow = Schema.Struct({
  at: Schema.DateFromSelf,
  actor_email: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  ip: Schema.NullOr(Schema.String),
  details: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

export class Audit extends Effect.Service<Audit>()("audit/Audit", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const entries = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, limit: Schema.Number }),
      Result: EntryRow,
      execute: ({ accountId, limit }) =>
        sql`
          SELECT at, actor_email, action, target, ip, details FROM audit_log WHERE account_id = ${accountId}
          ORDER BY id DESC LIMIT ${limit}`
    })

    const record = (entry: AuditRecord) =>
      Effect.flatMap(DateTime.now, (now) =>
        sql`
          INSERT INTO audit_log (account_id, at, actor_email, action, target, ip, details)
          VALUES (${entry.accountId}, ${DateTime.toDateUtc(now)}, ${entry.actor}, ${entry.action}, ${entry.target ?? null},
            ${entry.ip}, ${entry.details === undefined ? null : JSON.stringify(entry.details)}::jsonb)`).pipe(
          Effect.asVoid,
          Effect.orDie
        )

    /** An entry by a signed-in person of an account (a panel session): who, from where, did `action`. */
    const recordBy = (
      who: { readonly accountId: string; readonly email: string; readonly ip: string | null },
      action: AuditAction,
      target: string | null,
      details?: Readonly<Record<string, unknown>>
    ) =>
      record({
        accountId: who.accountId,
        actor: who.email,
        action,
        target,
        ip: who.ip,
        ...(details === undefined ? {} : { details })
      })

    /** The newest `limit` entries first. */
    const list = (accountId: string, limit: number) =>
      Effect.map(entries({ accountId, limit }), (rows) => ({
        entries: rows.map((row) => ({ ...row, at: row.at.toISOString() }))
      })).pipe(Effect.orDie)

    return { record, recordBy, list } as const
  })
}) {}
