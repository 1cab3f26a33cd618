import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Duration, Effect, Option, Schema } from "effect"
import { randomBytes, randomInt } from "node:crypto"
import { Accounts, Language } from "../accounts/Accounts.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { MailQueue } from "../mail/MailQueue.ts"
import { MailTemplate } from "../mail/Messages.ts"
import { RateLimits } from "../ratelimit/RateLimits.ts"
import { InvalidCode, NotFound } from "../shared/errors.ts"
import { Audit } from "../audit/Audit.ts"
import {
  CODE_MINUTES,
  CODE_TRIES,
  CODES_PER_EMAIL_PER_HOUR,
  CODES_PER_IP_PER_HOUR,
  type PanelUser,
  SESSION_HOURS,
  SESSION_IDLE_MINUTES
} from "./Panel.ts"
import { csrfToken, hashCode, hashToken, sameDigest } from "./Secrets.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * Signing in to the account panel (design §8): passwordless, with 6-digit codes e-mailed to the account's
 * e-mail or a member's; sessions of 30 min idle and 12 h at most. No account enumeration: a code request and a
 * sign-up answer the same, and write the same rows, whether or not the e-mail has an account — only the e-mail
 * itself differs, and it leaves later, from the mail queue.
 */

/** A row of `panel_codes` as a sign-in, sign-up or live key's confirmation reads it. */
export const CodeRow = Schema.Struct({
  id: Schema.String,
  purpose: Schema.Literal("signin", "signup", "live_key"),
  account_id: Schema.NullOr(Schema.String),
  signup_name: Schema.NullOr(Schema.String),
  language: Language,
  salt: Schema.String,
  code_hash: Schema.String
})
type CodeRow = typeof CodeRow.Type

const SessionRow = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  email: Schema.String,
  last_seen_at: Schema.DateFromSelf,
  account_name: Schema.String,
  account_email: Schema.String
})

/**
 * What a code is issued for: its purpose, the e-mail it goes to, and the account it opens (none for a sign-up or
 * an unknown e-mail).
 */
interface CodeRequest {
  readonly purpose: CodeRow["purpose"]
  readonly email: string
  readonly accountId: string | null
  readonly signupName?: string | null
  /** A live key's name, given when it was asked for (`PanelKeys`). */
  readonly keyName?: string | null
  readonly language: Language
  readonly ip: string | null
}

/** A freshly signed-in session: the token goes into the cookie and is never stored. */
export interface NewSession {
  readonly token: string
  readonly csrf: string
  readonly expiresAt: Date
  readonly view: { readonly account_id: string; readonly account_name: string; readonly email: string }
}

/** A code: six decimal digits from a CSPRNG. */
const newCode = () => String(randomInt(0, 1_000_000)).padStart(6, "0")

/** A refused code, whatever the reason (wrong, expired, spent, burnt): one answer, nothing to learn from it. */
const invalidCode = () =>
  new InvalidCode({ message: "the code is wrong or no longer valid; ask for a new one", details: {} })

/** The session's last activity is refreshed at most this often (one write per request would be wasted). */
const TOUCH_EVERY = Duration.seconds(30)

/** Writes a code (`salt` and `codeHash`, never the code), valid for `CODE_MINUTES`; answers its id. */
const insertCode = (
  sql: SqlClient.SqlClient,
  row: CodeRequest,
  secret: { readonly salt: string; readonly codeHash: string; readonly now: Date }
) =>
  sql<{ id: string }>`
    INSERT INTO panel_codes ${
    sql.insert({
      purpose: row.purpose,
      email: row.email,
      account_id: row.accountId,
      signup_name: row.signupName ?? null,
      key_name: row.keyName ?? null,
      language: row.language,
      salt: secret.salt,
      code_hash: secret.codeHash,
      expires_at: new Date(secret.now.getTime() + CODE_MINUTES * 60_000),
      created_at: secret.now,
      ip: row.ip
    })
  } RETURNING id`

/** The sign-in and sign-up codes an e-mail holds that may still be used, newest first, locked. */
const liveCodes = (sql: SqlClient.SqlClient) =>
  SqlSchema.findAll({
    Request: Schema.Struct({ email: Schema.String, at: Schema.DateFromSelf }),
    Result: CodeRow,
    execute: ({ email, at }) =>
      sql`
        SELECT id, purpose, account_id, signup_name, language, salt, code_hash FROM panel_codes
        WHERE email = ${email} AND purpose IN ('signin', 'signup') AND used_at IS NULL
          AND expires_at > ${at} AND attempts < ${CODE_TRIES}
        ORDER BY created_at DESC
        FOR UPDATE`
  })

/** May this e-mail still sign in to this account (a member removed since the code was sent may not)? */
const mayEnter = (sql: SqlClient.SqlClient, accountId: string, email: string) =>
  Effect.map(sql<{ ok: boolean }>`
    SELECT EXISTS (SELECT 1 FROM accounts WHERE id = ${accountId} AND lower(email) = ${email})
      OR EXISTS (SELECT 1 FROM account_members WHERE account_id = ${accountId} AND email = ${email}) AS ok`, (rows) =>
    rows[0]?.ok === true)

/** A session of this token that is neither signed out, past its 12 hours, nor idle since `idleSince`. */
const sessionByToken = (sql: SqlClient.SqlClient) =>
  SqlSchema.findOne({
    Request: Schema.Struct({ hash: Schema.String, at: Schema.DateFromSelf, idleSince: Schema.DateFromSelf }),
    Result: SessionRow,
    execute: ({ hash, at, idleSince }) =>
      sql`
        SELECT s.id, s.account_id, s.email, s.last_seen_at, a.name AS account_name, a.email AS account_email
        FROM panel_sessions s JOIN accounts a ON a.id = s.account_id
        WHERE s.token_hash = ${hash} AND s.revoked_at IS NULL AND s.expires_at > ${at} AND s.last_seen_at > ${idleSince}`
  })

export class PanelAuth extends Effect.Service<PanelAuth>()("panel/PanelAuth", {
  dependencies: [Accounts.Default, MailQueue.Default, Audit.Default],
  effect: Effect.gen(function*() {
    const { sql, accounts, mail, audit, limits, config } = yield* Effect.all({
      sql: SqlClient.SqlClient, accounts: Accounts, mail: MailQueue, audit: Audit, limits: RateLimits, config: AppConfig
    })

    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)
    const codesOf = liveCodes(sql)
    const sessionOf = sessionByToken(sql)

    /**
     * Design §8: at most 5 codes per e-mail and 30 per client IP per hour (429 rate_limited). A request spends
     * the e-mail's budget first, then the address's (when known); the first one spent stops it.
     */
    const limitCodeRequests = (email: string, ip: string | null) =>
      Effect.forEach(
        [
          { key: `panel:code:email:${email}`, limit: CODES_PER_EMAIL_PER_HOUR, what: "code requests for this e-mail" },
          ...(ip === null
            ? []
            : [{ key: `panel:code:ip:${ip}`, limit: CODES_PER_IP_PER_HOUR, what: "code requests from this address" }])
        ],
        (budget) =>
          Effect.flatMap(limits.consumeKey({ ...budget, window: Duration.hours(1) }), (decision) =>
            decision.allowed ? Effect.void : decision.error),
        { discard: true }
      )

    /** Writes a code (hashed) and answers its id and the code itself, for the e-mail. */
    const issueCode = (row: CodeRequest) =>
      Effect.gen(function*() {
        const code = newCode()
        const salt = randomBytes(16).toString("hex")
        const now = yield* nowDate
        const [inserted] = yield* insertCode(sql, row, { salt, codeHash: hashCode(salt, code), now })
        return inserted === undefined ? yield* Effect.dieMessage("INSERT returned no code") : { id: inserted.id, code }
      })

    /** `POST /api/panel/session/code`: 202 whatever the e-mail; a code is e-mailed only to a known one. */
    const requestCode = (email: string, ip: string | null) =>
      Effect.gen(function*() {
        yield* limitCodeRequests(email, ip)
        const target = yield* accounts.signInTarget(email)
        yield* Effect.gen(function*() {
          const language = Option.match(target, { onNone: () => "es" as const, onSome: (t) => t.language })
          const { code } = yield* issueCode({
            purpose: "signin",
            email,
            accountId: Option.getOrNull(Option.map(target, (t) => t.account_id)),
            language,
            ip
          })
          if (Option.isSome(target)) {
            yield* mail.enqueue({ to: email, language, template: MailTemplate.signin_code({ code, minutes: CODE_MINUTES }) })
          }
        }).pipe(sql.withTransaction, Effect.orDie)
      }).pipe(TraceContext.withSpan("PanelAuth.requestCode"))

    /**
     * `POST /api/panel/signup` (only with `PANEL_SIGNUP=open`): 202 whatever the e-mail. A new e-mail gets the
     * code that creates the account; one that already signs in somewhere gets a sign-in code instead.
     */
    const signup = (name: string, email: string, language: Language, ip: string | null) =>
      Effect.gen(function*() {
        if (config.panelSignup !== "open") {
          return yield* new NotFound({ message: "self-service sign-up is not open on this service", details: {} })
        }
        yield* limitCodeRequests(email, ip)
        const target = yield* accounts.signInTarget(email)
        yield* Effect.gen(function*() {
          if (Option.isSome(target)) {
            const { code } = yield* issueCode({
              purpose: "signin",
              email,
              accountId: target.value.account_id,
              language: target.value.language,
              ip
            })
            yield* mail.enqueue({
              to: email,
              language: target.value.language,
              template: MailTemplate.signup_existing({ code, minutes: CODE_MINUTES })
            })
          } else {
            const { code } = yield* issueCode({ purpose: "signup", email, accountId: null, signupName: name, language, ip })
            yield* mail.enqueue({ to: email, language, template: MailTemplate.signup_code({ code, name, minutes: CODE_MINUTES }) })
          }
        }).pipe(sql.withTransaction, Effect.orDie)
      }).pipe(TraceContext.withSpan("PanelAuth.signup"))

    const createSession = (accountId: string, email: string, ip: string | null) =>
      Effect.gen(function*() {
        const token = randomBytes(32).toString("base64url")
        const now = yield* nowDate
        const expiresAt = new Date(now.getTime() + SESSION_HOURS * 3_600_000)
        yield* sql`
          INSERT INTO panel_sessions (token_hash, account_id, email, created_at, last_seen_at, expires_at, ip)
          VALUES (${hashToken(token)}, ${accountId}, ${email}, ${now}, ${now}, ${expiresAt}, ${ip})`
        return { token, expiresAt }
      })

    /**
     * `POST /api/panel/session`: a right code signs in (a sign-up code creates the account first, test
     * environment only); a wrong one counts against every code the e-mail holds, and 5 wrong tries burn them.
     */
    const signIn = (email: string, code: string, ip: string | null) =>
      Effect.gen(function*() {
        const outcome = yield* Effect.gen(function*() {
          const at = yield* nowDate
          const candidates = yield* codesOf({ email, at })
          const match = candidates.find((candidate) => sameDigest(hashCode(candidate.salt, code), candidate.code_hash))
          if (match === undefined) {
            if (candidates.length > 0) {
              yield* sql`UPDATE panel_codes SET attempts = attempts + 1 WHERE id IN ${sql.in(candidates.map((c) => c.id))}`
            }
            return Option.none<NewSession>()
          }
          yield* sql`UPDATE panel_codes SET used_at = ${at} WHERE id = ${match.id}`
          let accountId = match.account_id
          if (match.purpose === "signup" && accountId === null) {
            const created = yield* accounts.create({
              name: match.signup_name ?? email,
              email,
              liveEnabled: false,
              language: match.language
            })
            accountId = created.account_id
            yield* audit.record({ accountId, actor: email, action: "signup", ip })
          }
          // A code of an e-mail with no account was never sent: nobody can hold it.
          if (accountId === null || !(yield* mayEnter(sql, accountId, email))) return Option.none<NewSession>()
          const account = yield* accounts.get(accountId).pipe(Effect.orDie)
          const session = yield* createSession(accountId, email, ip)
          yield* audit.record({ accountId, actor: email, action: "signin", ip })
          return Option.some<NewSession>({
            ...session,
            csrf: csrfToken(session.token),
            view: { account_id: account.account_id, account_name: account.name, email }
          })
        }).pipe(sql.withTransaction, Effect.orDie)
        return yield* Option.match(outcome, { onNone: () => Effect.fail(invalidCode()), onSome: Effect.succeed })
      }).pipe(TraceContext.withSpan("PanelAuth.signIn"))

    /**
     * The session of a cookie, or None: unknown, signed out, idle 30 minutes or older than 12 hours — from that
     * instant on, never later (design §8). A live session's idle clock starts again.
     */
    const authenticate = (token: string, ip: string | null) =>
      Effect.gen(function*() {
        const at = yield* nowDate
        const found = yield* sessionOf({
          hash: hashToken(token),
          at,
          idleSince: new Date(at.getTime() - SESSION_IDLE_MINUTES * 60_000)
        })
        if (Option.isNone(found)) return Option.none<PanelUser>()
        const session = found.value
        if (at.getTime() - session.last_seen_at.getTime() >= Duration.toMillis(TOUCH_EVERY)) {
          yield* sql`UPDATE panel_sessions SET last_seen_at = ${at} WHERE id = ${session.id}`
        }
        return Option.some<PanelUser>({
          sessionId: session.id,
          accountId: session.account_id,
          accountName: session.account_name,
          accountEmail: session.account_email,
          email: session.email,
          ip,
          csrf: csrfToken(token)
        })
      }).pipe(Effect.orDie)

    /** `DELETE /api/panel/session`: the session is dead at once. */
    const signOut = (user: PanelUser) =>
      Effect.gen(function*() {
        yield* sql`UPDATE panel_sessions SET revoked_at = ${yield* nowDate} WHERE id = ${user.sessionId} AND revoked_at IS NULL`
        yield* audit.record({ accountId: user.accountId, actor: user.email, action: "signout", ip: user.ip })
      }).pipe(sql.withTransaction, Effect.orDie)

    /** A removed member's sessions end with the removal. */
    const endSessionsOf = (accountId: string, email: string) =>
      Effect.flatMap(nowDate, (at) =>
        sql`UPDATE panel_sessions SET revoked_at = ${at}
            WHERE account_id = ${accountId} AND email = ${email} AND revoked_at IS NULL`).pipe(Effect.asVoid, Effect.orDie)

    return { requestCode, signup, signIn, authenticate, signOut, endSessionsOf, issueCode } as const
  })
}) {}
