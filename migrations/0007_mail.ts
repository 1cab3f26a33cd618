import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Outbound e-mail (design §8). `mail_outbox` holds each message as rendered when it was queued — in the same
 * transaction as the change that causes it — and is worked like every durable job (design §7): due `pending`
 * rows are claimed with `FOR UPDATE SKIP LOCKED` under a lease, then end `sent` or `failed`. `template` is
 * the template's tag, for operators; the bodies are what is sent.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE mail_outbox (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      recipient text NOT NULL,
      language text NOT NULL CHECK (language IN ('es', 'en')),
      template text NOT NULL,
      subject text NOT NULL,
      text_body text NOT NULL,
      html_body text NOT NULL,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      lease_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL,
      sent_at timestamptz
    )`
  yield* sql`CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE state = 'pending'`
})
