import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The account panel (design §8): who may sign in (the account's e-mail and its members), e-mailed codes and
 * sessions (stored hashed), the audit log, and what the panel shows of an account. E-mails are stored lower
 * case. `live_enabled` is false only for self-signed-up accounts until an operator enables live
 * (`cli accounts enable-live`); `default_room` is the property setting of design §6.10.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE accounts
      ADD COLUMN language text NOT NULL DEFAULT 'es' CHECK (language IN ('es', 'en')),
      ADD COLUMN live_enabled boolean NOT NULL DEFAULT true,
      ADD COLUMN sandbox_created_at timestamptz`
  yield* sql`CREATE INDEX accounts_email_idx ON accounts (lower(email))`
  yield* sql`ALTER TABLE properties ADD COLUMN default_room text`
  // A sandbox made by the CLI before the panel existed counts as the account's test environment.
  yield* sql`
    UPDATE accounts a SET sandbox_created_at = p.created_at
    FROM (SELECT account_id, min(created_at) AS created_at FROM properties WHERE environment = 'test' GROUP BY account_id) p
    WHERE p.account_id = a.id`
  yield* sql`
    CREATE TABLE account_members (
      account_id uuid NOT NULL REFERENCES accounts (id),
      email text NOT NULL CHECK (email = lower(email)),
      added_by text NOT NULL,
      added_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, email)
    )`
  yield* sql`CREATE INDEX account_members_email_idx ON account_members (email)`
  yield* sql`
    CREATE TABLE panel_codes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      purpose text NOT NULL CHECK (purpose IN ('signin', 'signup', 'live_key')),
      email text NOT NULL CHECK (email = lower(email)),
      account_id uuid REFERENCES accounts (id),
      signup_name text,
      language text NOT NULL DEFAULT 'es' CHECK (language IN ('es', 'en')),
      salt text NOT NULL,
      code_hash text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL,
      ip text
    )`
  yield* sql`CREATE INDEX panel_codes_email_idx ON panel_codes (email, created_at)`
  yield* sql`
    CREATE TABLE panel_sessions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      token_hash text NOT NULL UNIQUE,
      account_id uuid NOT NULL REFERENCES accounts (id),
      email text NOT NULL,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      ip text
    )`
  yield* sql`
    CREATE TABLE audit_log (
      id bigserial PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      at timestamptz NOT NULL,
      actor_email text NOT NULL,
      action text NOT NULL,
      target text,
      ip text
    )`
  yield* sql`CREATE INDEX audit_log_account_idx ON audit_log (account_id, id DESC)`
})
