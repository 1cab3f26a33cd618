import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { Accounts } from "../accounts/Accounts.ts"
import { Audit } from "../audit/Audit.ts"
import { displayPrefix } from "../auth/ApiKey.ts"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { MailQueue } from "../mail/MailQueue.ts"
import { MailTemplate } from "../mail/Messages.ts"
import type { Environment } from "../shared/Environment.ts"
import { InvalidCode, LiveNotEnabled } from "../shared/errors.ts"
import { CodeRow, PanelAuth } from "./PanelAuth.ts"
import { CODE_MINUTES, CODE_TRIES, type PanelUser } from "./Panel.ts"
import { hashCode, sameDigest } from "./Secrets.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * The account's API keys in the panel (design §8): a test key at once, a live key only with the code e-mailed to
 * the account's e-mail (its confirmation and the notice of the new key commit together), revocation; each in the
 * audit log. The keys themselves are `ApiKeys`', the partner API's own.
 */

/** A live key's pending code: the code's own columns, the e-mail it went to and the name the key will get. */
const LiveKeyCode = Schema.Struct({
  ...CodeRow.pick("id", "salt", "code_hash").fields,
  email: Schema.String,
  key_name: Schema.NullOr(Schema.String)
})

export class PanelKeys extends Effect.Service<PanelKeys>()("panel/PanelKeys", {
  dependencies: [Audit.Default, MailQueue.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { issueCode } = yield* PanelAuth
    const accounts = yield* Accounts
    const keys = yield* ApiKeys
    const mail = yield* MailQueue
    const audit = yield* Audit
    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)

    const listKeys = (user: PanelUser) => keys.list(user.accountId).pipe(Effect.orDie)

    /**
     * A test key at once (201); a live key only after the code e-mailed to the account's e-mail (202), its name
     * kept with the code.
     */
    const requestKey = (user: PanelUser, environment: Environment, name?: string) =>
      Effect.gen(function*() {
        const keyName = name?.trim() ?? null
        if (environment === "test") {
          const created = yield* keys.create(user.accountId, "test", keyName).pipe(
            Effect.catchTag("AccountNotFound", Effect.die)
          )
          yield* audit.recordBy(user, "key.created", `${created.key_id} (test)`, {
            environment: "test",
            prefix: displayPrefix(created.api_key)
          })
          return { _tag: "Created" as const, key: created }
        }
        const row = yield* accounts.get(user.accountId).pipe(Effect.orDie)
        if (!row.live_enabled) {
          return yield* new LiveNotEnabled({
            message: "live keys are not enabled for this account yet; an operator enables them after checking it",
            details: {}
          })
        }
        const { id, code } = yield* issueCode({
          purpose: "live_key",
          email: user.email,
          accountId: user.accountId,
          language: row.language,
          ip: user.ip,
          keyName
        })
        yield* mail.enqueue({
          to: row.email,
          language: row.language,
          template: MailTemplate.live_key_code({ code, minutes: CODE_MINUTES, requested_by: user.email })
        })
        yield* audit.recordBy(user, "key.live_requested", null, { environment: "live" })
        return { _tag: "Confirm" as const, confirmation_id: id }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("PanelAccount.requestKey"))

    const liveKeyCode = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, accountId: Schema.String, at: Schema.DateFromSelf }),
      Result: LiveKeyCode,
      execute: ({ id, accountId, at }) =>
        sql`
          SELECT id, salt, code_hash, email, key_name FROM panel_codes
          WHERE id = ${id} AND purpose = 'live_key' AND account_id = ${accountId} AND used_at IS NULL
            AND expires_at > ${at} AND attempts < ${CODE_TRIES}
          FOR UPDATE`
    })

    /**
     * `POST /api/panel/keys/confirm`: the right code creates the live key, and a notice goes to the account's
     * e-mail in the same transaction (queued: it arrives even if the mail server is down right now).
     */
    const confirmLiveKey = (user: PanelUser, confirmationId: string, code: string) =>
      Effect.gen(function*() {
        const outcome = yield* Effect.gen(function*() {
          const at = yield* nowDate
          const found = yield* liveKeyCode({ id: confirmationId, accountId: user.accountId, at }).pipe(Effect.orDie)
          if (Option.isNone(found) || !sameDigest(hashCode(found.value.salt, code), found.value.code_hash)) {
            if (Option.isSome(found)) yield* sql`UPDATE panel_codes SET attempts = attempts + 1 WHERE id = ${found.value.id}`
            return Option.none()
          }
          const row = yield* accounts.get(user.accountId).pipe(Effect.orDie)
          if (!row.live_enabled) return yield* new LiveNotEnabled({ message: "live keys are not enabled for this account", details: {} })
          yield* sql`UPDATE panel_codes SET used_at = ${at} WHERE id = ${found.value.id}`
          const created = yield* keys.create(user.accountId, "live", found.value.key_name).pipe(
            Effect.catchTag("AccountNotFound", Effect.die)
          )
          const listed = yield* keys.list(user.accountId).pipe(Effect.orDie)
          const prefix = listed.keys.find((key) => key.key_id === created.key_id)?.prefix ?? created.api_key.slice(0, 15)
          yield* mail.enqueue({
            to: row.email,
            language: row.language,
            template: MailTemplate.live_key_notice({ prefix, created_at: at.toISOString(), created_by: user.email })
          })
          yield* audit.recordBy(user, "key.created", `${created.key_id} (live, ${prefix}…)`, { environment: "live", prefix })
          return Option.some(created)
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
        return yield* Option.match(outcome, {
          onNone: () => Effect.fail(new InvalidCode({ message: "the code is wrong or no longer valid; ask for a new key again", details: {} })),
          onSome: Effect.succeed
        })
      }).pipe(TraceContext.withSpan("PanelAccount.confirmLiveKey"))

    const revokeKey = (user: PanelUser, keyId: string) =>
      Effect.gen(function*() {
        const revoked = yield* keys.revoke(keyId, user.accountId)
        yield* audit.recordBy(user, "key.revoked", keyId, { environment: revoked.environment, prefix: revoked.prefix })
        return revoked
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { listKeys, requestKey, confirmLiveKey, revokeKey } as const
  })
}) {}
