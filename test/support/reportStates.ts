import type { ReportStatus } from "../../src/reservations/Reservation.ts"
import type { ReservationRow } from "../../src/reservations/ReservationRow.ts"
import { NO_EXIT } from "../../src/reservations/machine/State.ts"
import { reservationRow } from "./rows.ts"

/**
 * One report as the machine's rules read it from the row: its status, and whether the authority holds or may hold
 * it (`tra_reported`/`sire_reported`). Shared by the machine's unit tests.
 */
export interface ReportState {
  readonly status: ReportStatus
  readonly reported: boolean
}
// Report states: not applicable, waiting, in flight (outcome unknown), accepted, rejected.
export const NA: ReportState = { status: "not_applicable", reported: false }
export const PENDING: ReportState = { status: "pending", reported: false }
export const IN_FLIGHT: ReportState = { status: "pending", reported: true }
export const SUCCESS: ReportState = { status: "success", reported: true }
export const ERROR: ReportState = { status: "error", reported: false }

export type Fixture = Partial<Omit<ReservationRow, "tra" | "sire">> & {
  readonly tra?: ReportState
  readonly sire?: ReportState
}

const answered = (status: ReportStatus) => status === "success" || status === "error"

/**
 * Row builders for reports in these states, answered (if at all) at `reportedAt`, the TRA due on `checkIn`:
 * `snap`, a stored live reservation of two guests, both registered, no contract (default: reports not yet due);
 * `open`, the same with registration open (one of three guests registered).
 */
export const reportFixtures = (reportedAt: string, checkIn: string) => {
  const snap = ({ tra = NA, sire = NA, ...overrides }: Fixture = {}): ReservationRow =>
    reservationRow({
      guests_registered: 2,
      registration_complete: true,
      completed_at: new Date("2026-12-02T12:00:00Z"),
      ...overrides,
      tra: {
        status: tra.status,
        reported_at: answered(tra.status) ? reportedAt : null,
        sends_on: tra.status === "not_applicable" ? null : checkIn,
        mincit_code: tra.status === "success" ? 11 : null
      },
      tra_reported: tra.reported,
      sire: {
        status: sire.status,
        reported_at: answered(sire.status) ? reportedAt : null,
        foreign_guests: sire.status === "not_applicable" ? 0 : 1,
        exit: NO_EXIT
      },
      sire_reported: sire.reported
    })
  const open = (overrides: Fixture = {}) =>
    snap({ guests_count: 3, guests_registered: 1, registration_complete: false, completed_at: null, ...overrides })
  return { snap, open }
}
