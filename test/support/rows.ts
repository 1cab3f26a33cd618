import type { GuestRow, ReservationRow } from "../../src/reservations/ReservationRow.ts"
import { NO_EXIT } from "../../src/reservations/machine/State.ts"

/** A stored live reservation of two guests, nothing registered yet, as `ReservationRepo` hands it over. */
export const reservationRow = (overrides: Partial<ReservationRow> = {}): ReservationRow => ({
  id: "00000000-0000-4000-8000-000000000001",
  account_id: "00000000-0000-4000-8000-0000000000a1",
  environment: "live",
  property_id: "00000000-0000-4000-8000-0000000000b1",
  external_id: "PMS-1",
  flow: "link",
  source: null,
  room_number: null,
  check_in: "2026-12-10",
  check_out: "2026-12-13",
  guest_name: "Ana Gómez",
  guests_count: 2,
  expected_guests: null,
  total_amount: null,
  currency: null,
  total_amount_cop: null,
  trm_rate: null,
  trm_date: null,
  guest_email: null,
  guest_phone: null,
  notes: null,
  metadata: {},
  sandbox_simulate: null,
  motivo: null,
  tipo_acomodacion: null,
  reservation_status: "confirmed",
  status: "pending_checkin",
  checkin_token: "tok_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  guests_registered: 0,
  registration_complete: false,
  completed_at: null,
  contract_required: false,
  contract_signed_at: null,
  contract_signer: null,
  tra: { status: "not_applicable", reported_at: null, sends_on: null, mincit_code: null },
  tra_reported: false,
  sire: { status: "not_applicable", reported_at: null, foreign_guests: 0, exit: NO_EXIT },
  sire_reported: false,
  fingerprint: "f",
  cancelled_at: null,
  cancel_reason: null,
  created_at: new Date("2026-12-01T12:00:00Z"),
  updated_at: new Date("2026-12-01T12:00:00Z"),
  report_lease_until: null,
  report_retry_at: null,
  report_failures: 0,
  tra_extension_from: null,
  departed_on: null,
  personal_data_removed_at: null,
  ...overrides
})

/** A live reservation whose registration is complete and whose reports wait for a run. */
export const dueRow = (overrides: Partial<ReservationRow> = {}): ReservationRow =>
  reservationRow({
    guests_registered: 2,
    registration_complete: true,
    completed_at: new Date("2026-12-02T12:00:00Z"),
    status: "pending_compliance",
    tra: { status: "pending", reported_at: null, sends_on: "2026-12-10", mincit_code: null },
    sire: { status: "pending", reported_at: null, foreign_guests: 1, exit: NO_EXIT },
    ...overrides
  })

/** A `dueRow` whose SIRE entry went out (`reportedAt`) and whose exit waits for check_out, 2026-12-13. */
export const exitDueRow = (reportedAt: string, overrides: Partial<ReservationRow> = {}): ReservationRow =>
  dueRow({
    sire: {
      status: "success",
      reported_at: reportedAt,
      foreign_guests: 1,
      exit: { status: "pending", sends_on: "2026-12-13", reported_at: null }
    },
    sire_reported: true,
    ...overrides
  })

/** A stored guest. */
export const guestRow = (overrides: Partial<GuestRow> = {}): GuestRow => ({
  id: "00000000-0000-4000-8000-0000000000c1",
  reservation_id: "00000000-0000-4000-8000-000000000001",
  position: 0,
  is_primary: true,
  tipo_documento: "C.C",
  numero_documento: "1234567",
  nombre: "Ana",
  apellido: "Gómez",
  nacionalidad: "CO",
  fecha_nacimiento: null,
  pais_procedencia: "CO",
  ciudad_procedencia: "Medellín",
  pais_residencia: "CO",
  ciudad_residencia: "Medellín",
  email: null,
  phone: null,
  address: null,
  doc_photo_front_url: null,
  doc_photo_back_url: null,
  document_uploaded: false,
  registered_at: new Date("2026-12-02T12:00:00Z"),
  ...overrides
})
