import { Schema } from "effect"
import { addDays } from "../shared/Calendar.ts"
import { Environment } from "../shared/Environment.ts"
import {
  Currency,
  DocumentType,
  JsonObject,
  ReservationStatus,
  SandboxSimulate,
  SireReport,
  Status,
  TraReport
} from "./Reservation.ts"

/**
 * The rows of the `reservations` and `guests` tables as `ReservationRepo` decodes them: one schema per table,
 * the only shapes the rest of the code sees. Column types as the `pg` pool hands them over (db/Database.ts):
 * `timestamptz` → `Date`, `date` → "YYYY-MM-DD", `numeric` → its exact decimal text, `json`/`jsonb` → parsed.
 */

/** A `timestamptz` column. */
const Instant = Schema.DateFromSelf
/** A `date` column, kept as "YYYY-MM-DD" (the pool's type parser never makes a local-midnight Date of it). */
const Day = Schema.String
/** A `numeric` column: PostgreSQL's exact decimal text. */
const Decimal = Schema.String
const Nullable = Schema.NullOr

/** A reservation as stored. `tra`/`sire` are the spec's report objects exactly as the API shows them. */
export const ReservationRow = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  environment: Environment,
  property_id: Schema.String,
  external_id: Schema.String,
  /** `link`: created by endpoint 3, guests register through the check-in page; `registration`: endpoint 7. */
  flow: Schema.Literal("link", "registration"),
  source: Nullable(Schema.String),
  room_number: Nullable(Schema.String),
  check_in: Day,
  check_out: Day,
  guest_name: Schema.String,
  guests_count: Schema.Number,
  expected_guests: Nullable(Schema.Number),
  total_amount: Nullable(Decimal),
  currency: Nullable(Currency),
  total_amount_cop: Nullable(Decimal),
  trm_rate: Nullable(Decimal),
  trm_date: Nullable(Day),
  guest_email: Nullable(Schema.String),
  guest_phone: Nullable(Schema.String),
  notes: Nullable(Schema.String),
  metadata: JsonObject,
  sandbox_simulate: Nullable(SandboxSimulate),
  motivo: Nullable(Schema.String),
  tipo_acomodacion: Nullable(Schema.String),
  reservation_status: ReservationStatus,
  /** Derived from the rest (`State.deriveStatus` of the reservation machine), stored so lists and filters need no computation. */
  status: Status,
  checkin_token: Nullable(Schema.String),
  guests_registered: Schema.Number,
  registration_complete: Schema.Boolean,
  completed_at: Nullable(Instant),
  contract_required: Schema.Boolean,
  contract_signed_at: Nullable(Instant),
  contract_signer: Nullable(Schema.String),
  tra: TraReport,
  /** The authority may hold the TRA (accepted, or sent with an unknown outcome): design §6.6, §6.9. */
  tra_reported: Schema.Boolean,
  sire: SireReport,
  sire_reported: Schema.Boolean,
  /** design §6.7: of the original creation request. */
  fingerprint: Schema.String,
  cancelled_at: Nullable(Instant),
  cancel_reason: Nullable(Schema.String),
  created_at: Instant,
  updated_at: Instant,
  /** A report run holds the reservation until then (several instances share a run, design §7). */
  report_lease_until: Nullable(Instant),
  /** After a transient failure the next run waits until then (design §6.9). */
  report_retry_at: Nullable(Instant),
  report_failures: Schema.Number,
  /** An extension after the TRA was reported: the nights from this date to check_out still go to the TRA. */
  tra_extension_from: Nullable(Day),
  /**
   * The Bogotá day the guests actually left (design §6.8, departure): the SIRE exits are dated it; `check_out`
   * and the TRA keep the booked stay.
   */
  departed_on: Nullable(Day),
  /**
   * The retention job removed the guests' personal data from what was kept of the stay besides its own rows
   * (event bodies, SIRE files; design §3). Bookkeeping: it does not change `updated_at`.
   */
  personal_data_removed_at: Nullable(Instant)
}).annotations({ identifier: "ReservationRow" })
export type ReservationRow = typeof ReservationRow.Type

/** A guest as stored: personal data of the spec's GuestInput plus registration bookkeeping. */
export const GuestRow = Schema.Struct({
  id: Schema.String,
  reservation_id: Schema.String,
  /** Order of registration; 0 is the primary (the TRA main guest). */
  position: Schema.Number,
  is_primary: Schema.Boolean,
  tipo_documento: DocumentType,
  numero_documento: Schema.String,
  nombre: Schema.String,
  apellido: Schema.String,
  nacionalidad: Nullable(Schema.String),
  fecha_nacimiento: Nullable(Day),
  pais_procedencia: Nullable(Schema.String),
  ciudad_procedencia: Nullable(Schema.String),
  pais_residencia: Nullable(Schema.String),
  ciudad_residencia: Nullable(Schema.String),
  email: Nullable(Schema.String),
  phone: Nullable(Schema.String),
  address: Nullable(Schema.String),
  doc_photo_front_url: Nullable(Schema.String),
  doc_photo_back_url: Nullable(Schema.String),
  document_uploaded: Schema.Boolean,
  /** Null while the guest waits for its document photo where the property requires one (design §5). */
  registered_at: Nullable(Instant)
}).annotations({ identifier: "GuestRow" })
export type GuestRow = typeof GuestRow.Type

/** A guest about to be written: the row without what the database assigns. */
export type NewGuest = Omit<GuestRow, "id" | "reservation_id">

/** Photos are deleted 30 days after departure; from then on `document_uploaded` reads null (spec, design §6.4). */
export const photosRetained = (checkOut: string, today: string) => today <= addDays(checkOut, 30)
