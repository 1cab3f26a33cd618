import { addDays } from "../shared/Calendar.ts"
import type * as Lifecycle from "./Lifecycle.ts"
import type { Guest, RegistrationStatus } from "./Reservation.ts"
import type { Environment } from "../shared/Environment.ts"

/** A reservation row as stored (json columns arrive parsed). */
export interface ReservationRow {
  readonly id: string
  readonly account_id: string
  readonly environment: Environment
  readonly property_id: string
  readonly external_id: string
  readonly flow: "link" | "registration"
  readonly source: string | null
  readonly guest_name: string
  readonly guest_email: string | null
  readonly guest_phone: string | null
  readonly notes: string | null
  readonly sandbox_simulate: "tra_failed" | "sire_failed" | null
  readonly check_in: string
  readonly check_out: string
  readonly guests_count: number
  readonly metadata: Record<string, unknown>
  readonly reservation_status: Lifecycle.LifecycleSnapshot["reservation_status"]
  readonly status: RegistrationStatus["status"]
  readonly checkin_token: string | null
  readonly guests_registered: number
  readonly registration_complete: boolean
  readonly completed_at: Date | null
  readonly contract_required: boolean
  readonly contract_signed_at: Date | null
  readonly tra: RegistrationStatus["tra"]
  readonly tra_reported: boolean
  readonly sire: RegistrationStatus["sire"]
  readonly sire_reported: boolean
  readonly fingerprint: string
  readonly created_at: Date
}

export interface GuestRow {
  readonly is_primary: boolean
  readonly tipo_documento: Guest["tipo_documento"]
  readonly numero_documento: string
  readonly nombre: string
  readonly apellido: string
  readonly nacionalidad: string | null
  readonly fecha_nacimiento: string | null
  readonly email: string | null
  readonly phone: string | null
  readonly address: string | null
  readonly ciudad_residencia: string | null
  readonly pais_residencia: string | null
  readonly registered_at: Date | null
  readonly document_uploaded: boolean
}

/** Photos are deleted 30 days after departure; from then on `document_uploaded` reads null (spec, design §6.4). */
export const photosRetained = (checkOut: string, today: string) => today <= addDays(checkOut, 30)

export const snapshotOf = (row: ReservationRow): Lifecycle.LifecycleSnapshot => ({
  reservation_status: row.reservation_status,
  guests_count: row.guests_count,
  guests_registered: row.guests_registered,
  registration_complete: row.registration_complete,
  contract_required: row.contract_required,
  contract_signed: row.contract_signed_at !== null,
  tra: { status: row.tra.status, reported: row.tra_reported },
  sire: { status: row.sire.status, reported: row.sire_reported },
  check_in: row.check_in,
  check_out: row.check_out
})

