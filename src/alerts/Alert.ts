import { Schema } from "effect"
import { isWaiting } from "../reservations/machine/Outcomes.ts"
import { isRequeued } from "../reservations/machine/Reports.ts"
import type { ReservationRow } from "../reservations/ReservationRow.ts"

/**
 * What the account holder is told about (design §9), as pure rules: each alert has a `cause`, a stable key —
 * the same cause is alerted once (one e-mail, one line in the panel), however many scans see it — and is
 * resolved when the cause is gone.
 *
 * | kind | raised when | cause |
 * |---|---|---|
 * | `report_error` | a live report (TRA or SIRE entry) ends `error` | `report_error:<authority>:<reservation>` |
 * | `report_blocked` | a live report is still `pending` with a configuration warning on or after its due date | `report_blocked:<authority>:<reservation>` |
 * | `exit_error` | a live SIRE exit movement ends `error` | `exit_error:<reservation>` |
 * | `webhook_failing` | every delivery to an active live endpoint has failed for 24 h | `webhook_failing:<endpoint>:<failing since>` |
 *
 * Test-environment reservations and endpoints raise nothing: their authorities are simulated and a sandbox
 * would fill the holder's inbox.
 */

export const AlertKind = Schema.Literal("report_error", "report_blocked", "exit_error", "webhook_failing")
export type AlertKind = typeof AlertKind.Type

export const Authority = Schema.Literal("tra", "sire")
export type Authority = typeof Authority.Type

/** An alert a scan found, before it is stored. */
export interface FoundAlert {
  readonly kind: AlertKind
  readonly cause: string
  readonly authority: Authority | null
  readonly reservationId: string | null
  readonly endpointId: string | null
  /** What happened, in the report's or the delivery's own words (the warning, the last error). */
  readonly message: string
}

/**
 * Warnings that travel with a report that is not held by them (design §6.10: the room number sent blank): a
 * report pending with only such a warning is waiting for a retry, not for a fix.
 */
export interface ReportRules {
  readonly notices: ReadonlyArray<string>
}

/** The alerts a live reservation's reports call for on `today` (Bogotá). */
export type ReportsOf = Pick<ReservationRow, "id" | "tra" | "sire" | "check_in" | "reservation_status">

export const reportAlerts = (row: ReportsOf, today: string, rules: ReportRules): ReadonlyArray<FoundAlert> => {
  const found: Array<FoundAlert> = []
  const base = { reservationId: row.id, endpointId: null }
  for (const authority of ["tra", "sire"] as const) {
    const report = row[authority]
    const warning = report.warning ?? null
    if (report.status === "error") {
      found.push({ ...base, kind: "report_error", authority, cause: `report_error:${authority}:${row.id}`, message: warning ?? "error" })
    } else if (
      // A report an operator re-queued (`cli reports retry`), or one waiting for an answer, waits for the next run,
      // not for a fix (a transient failure alerts when it ends in error, 72 h past due).
      report.status === "pending" && warning !== null && !rules.notices.includes(warning) && !isRequeued(warning) &&
      !isWaiting(warning) &&
      row.reservation_status !== "cancelled" && row.check_in <= today
    ) {
      found.push({ ...base, kind: "report_blocked", authority, cause: `report_blocked:${authority}:${row.id}`, message: warning })
    }
  }
  const exit = row.sire.exit
  if (exit.status === "error") {
    found.push({ ...base, kind: "exit_error", authority: "sire", cause: `exit_error:${row.id}`, message: exit.warning ?? "error" })
  }
  return found
}

/** A webhook endpoint failing since `failingSince` (its first failed delivery after the last success). */
export const webhookAlert = (endpoint: {
  readonly id: string
  readonly failingSince: Date
  readonly lastError: string | null
}): FoundAlert => ({
  kind: "webhook_failing",
  cause: `webhook_failing:${endpoint.id}:${endpoint.failingSince.toISOString()}`,
  authority: null,
  reservationId: null,
  endpointId: endpoint.id,
  message: endpoint.lastError ?? "every delivery failed"
})

// ---------------------------------------------------------------------------------------------------------------
// As the panel lists them

export const AlertView = Schema.Struct({
  id: Schema.String,
  kind: AlertKind,
  authority: Schema.NullOr(Authority),
  reservation_id: Schema.NullOr(Schema.String),
  external_id: Schema.NullOr(Schema.String),
  endpoint_id: Schema.NullOr(Schema.String),
  endpoint_url: Schema.NullOr(Schema.String),
  message: Schema.String,
  created_at: Schema.String,
  resolved_at: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "PanelAlert",
  description: "Something the account holder was told by e-mail (design §9); `resolved_at` once the cause is gone."
})
export type AlertView = typeof AlertView.Type

const EXAMPLE_ALERT: AlertView = {
  id: "3c2b1a09-8f7e-4d6c-b5a4-930281706f5e",
  kind: "report_blocked",
  authority: "tra",
  reservation_id: "5f0c7c1e-3b2a-4d9e-8f61-2a7b9c0d1e23",
  external_id: "PMS-2026-0042",
  endpoint_id: null,
  endpoint_url: null,
  message: "the property has no TRA token; configure it so the TRA report can be sent",
  created_at: "2026-12-01T05:05:00.000Z",
  resolved_at: null
}

export const AlertList = Schema.Struct({ alerts: Schema.Array(AlertView) }).annotations({
  identifier: "PanelAlertList",
  examples: [{ alerts: [EXAMPLE_ALERT] }]
})
export type AlertList = typeof AlertList.Type
