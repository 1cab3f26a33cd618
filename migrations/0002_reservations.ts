import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Reservations, their guests, and the event outbox (design §7: a change and its events commit together).
 * `metadata` and event bodies are `json`, not `jsonb`: partner data is kept exactly as sent (key order,
 * duplicate-free text), and an event body is delivered byte for byte as written.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE reservations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      property_id uuid NOT NULL REFERENCES properties (id),
      external_id text NOT NULL,
      flow text NOT NULL CHECK (flow IN ('link', 'registration')),
      source text,
      room_number text,
      check_in date NOT NULL,
      check_out date NOT NULL CHECK (check_out > check_in),
      guest_name text NOT NULL,
      guests_count integer NOT NULL CHECK (guests_count >= 1),
      expected_guests integer,
      total_amount numeric,
      currency text CHECK (currency IN ('COP', 'USD')),
      total_amount_cop numeric,
      trm_rate numeric,
      trm_date date,
      guest_email text,
      guest_phone text,
      notes text,
      metadata json NOT NULL,
      sandbox_simulate text CHECK (sandbox_simulate IN ('tra_failed', 'sire_failed')),
      motivo text,
      tipo_acomodacion text,
      reservation_status text NOT NULL CHECK (reservation_status IN ('confirmed', 'cancelled')),
      status text NOT NULL,
      checkin_token text UNIQUE,
      guests_registered integer NOT NULL DEFAULT 0,
      registration_complete boolean NOT NULL DEFAULT false,
      completed_at timestamptz,
      contract_required boolean NOT NULL,
      contract_signed_at timestamptz,
      tra jsonb NOT NULL,
      tra_reported boolean NOT NULL DEFAULT false,
      sire jsonb NOT NULL,
      sire_reported boolean NOT NULL DEFAULT false,
      fingerprint text NOT NULL,
      cancelled_at timestamptz,
      cancel_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  // design §6.1: external_id is unique per (account, environment)
  yield* sql`CREATE UNIQUE INDEX reservations_external_id_key ON reservations (account_id, environment, external_id)`
  yield* sql`CREATE INDEX reservations_property_idx ON reservations (property_id, check_in)`
  yield* sql`
    CREATE TABLE guests (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      reservation_id uuid NOT NULL REFERENCES reservations (id),
      position integer NOT NULL,
      is_primary boolean NOT NULL,
      tipo_documento text NOT NULL,
      numero_documento text NOT NULL,
      nombre text NOT NULL,
      apellido text NOT NULL,
      nacionalidad text,
      fecha_nacimiento date,
      pais_procedencia text,
      ciudad_procedencia text,
      pais_residencia text,
      ciudad_residencia text,
      email text,
      phone text,
      address text,
      doc_photo_front_url text,
      doc_photo_back_url text,
      document_uploaded boolean NOT NULL DEFAULT false,
      registered_at timestamptz,
      UNIQUE (reservation_id, position)
    )`
  yield* sql`CREATE UNIQUE INDEX guests_document_key ON guests (reservation_id, lower(numero_documento))`
  yield* sql`
    CREATE TABLE events (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      account_id uuid NOT NULL REFERENCES accounts (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      reservation_id uuid NOT NULL REFERENCES reservations (id),
      type text NOT NULL,
      created_at timestamptz NOT NULL,
      body json NOT NULL
    )`
  yield* sql`CREATE INDEX events_reservation_idx ON events (reservation_id, seq)`
})
