import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Accounts, API keys (hash only), properties with their authority settings, and worker heartbeats. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE accounts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      email text NOT NULL,
      reads_per_minute integer NOT NULL DEFAULT 120 CHECK (reads_per_minute > 0),
      writes_per_minute integer NOT NULL DEFAULT 60 CHECK (writes_per_minute > 0),
      tests_per_minute integer NOT NULL DEFAULT 10 CHECK (tests_per_minute > 0),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      key_hash text NOT NULL UNIQUE,
      prefix text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_account_idx ON api_keys (account_id, environment) WHERE revoked_at IS NULL`
  yield* sql`
    CREATE TABLE properties (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      name text NOT NULL,
      internal_name text,
      external_id text CHECK (char_length(external_id) <= 120),
      rnt_id text,
      checkin_enabled boolean NOT NULL DEFAULT true,
      reports_tra boolean NOT NULL DEFAULT true,
      reports_sire boolean NOT NULL DEFAULT true,
      requires_contract_signature boolean NOT NULL DEFAULT false,
      requires_document_photos boolean NOT NULL DEFAULT false,
      tra_token text,
      establishment_name text,
      tipo_acomodacion text,
      sire_hotel_code text,
      sire_city_code text,
      -- clock_timestamp(): properties created in one transaction still list in creation order
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX properties_scope_idx ON properties (account_id, environment, created_at, id)`
  // design §6.1: a partner's external_id names at most one property per (account, environment)
  yield* sql`
    CREATE UNIQUE INDEX properties_external_id_key ON properties (account_id, environment, external_id)
    WHERE external_id IS NOT NULL`
  yield* sql`CREATE INDEX properties_rnt_idx ON properties (account_id, rnt_id) WHERE rnt_id IS NOT NULL`
  yield* sql`
    CREATE TABLE worker_heartbeats (
      instance_id text PRIMARY KEY,
      role text NOT NULL,
      started_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL
    )`
})
