import { checkinStatus } from "./machine/State.ts"
import type { RegistrationStatus, ReservationResponse } from "./Reservation.ts"
import type { ReservationRow } from "./ReservationRow.ts"

/** How a stored reservation reads in API answers and in webhook `data` (spec resources and "Events"). */
export const makeViews = (publicBaseUrl: string) => {
  const checkinUrl = (row: ReservationRow) =>
    row.checkin_token === null ? null : `${publicBaseUrl}/checkin/${row.checkin_token}`

  const registrationStatus = (row: ReservationRow): RegistrationStatus => ({
    ok: true,
    reservation_id: row.id,
    external_id: row.external_id,
    status: row.status,
    reservation_status: row.reservation_status,
    sandbox: row.environment === "test",
    checkin_token: row.checkin_token,
    checkin_status: checkinStatus(row),
    guests_registered: row.guests_registered,
    tra: row.tra,
    sire: row.sire,
    departed_on: row.departed_on
  })

  const reservationResponse = (row: ReservationRow, replay: boolean): ReservationResponse => ({
    ...registrationStatus(row),
    source: row.source,
    metadata: row.metadata,
    checkin_url: checkinUrl(row),
    created_at: row.created_at.toISOString(),
    idempotent_replay: replay
  })

  /** The webhook `data` of an event about this reservation (spec "Events"), without guests. */
  /** Checked against the webhooks' `ReservationEventData` schema where it is defined (`webhooks/Event.ts`). */
  const eventData = (row: ReservationRow) => ({
    reservation_id: row.id,
    external_id: row.external_id,
    source: row.source,
    property_id: row.property_id,
    reservation_status: row.reservation_status,
    status: row.status,
    check_in: row.check_in,
    check_out: row.check_out,
    guests_count: row.guests_count,
    checkin_url: checkinUrl(row),
    checkin_status: checkinStatus(row),
    guests_registered: row.guests_registered,
    contract_signed: row.contract_signed_at !== null,
    tra: row.tra,
    sire: row.sire,
    departed_on: row.departed_on,
    metadata: row.metadata
  })

  return { checkinUrl, registrationStatus, reservationResponse, eventData } as const
}

export type Views = ReturnType<typeof makeViews>
