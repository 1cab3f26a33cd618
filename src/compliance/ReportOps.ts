import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { type ReportCursor, ReservationRepo } from "../reservations/ReservationRepo.ts"
import type { ReservationRow } from "../reservations/ReservationRow.ts"
import { Command } from "../reservations/machine/Machine.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { todayInBogota } from "../shared/Calendar.ts"
import { InvalidRequest, ReservationNotFound } from "../shared/errors.ts"
import { isUuid } from "../shared/Uuid.ts"
import { SireRecords } from "./SireRecords.ts"
import { TraSubmissions } from "./TraSubmissions.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * What an operator does with reports (design §9, "Ops CLI for reports"): list those waiting or failed
 * (`cli reports list`), and re-queue a reservation's failed reports once the cause is fixed
 * (`cli reports retry`). The state change goes through `Reservations.apply` (the machine's `Requeue`); the
 * per-guest rows through their repositories, in the same transaction.
 */

/** One report of a reservation: the TRA, or SIRE's entry or exit movements. */
export const Authority = Schema.Literal("tra", "sire_entry", "sire_exit")
export type Authority = typeof Authority.Type

/** A report as `cli reports list` shows it. */
export interface ReportListing {
  readonly reservation_id: string
  readonly external_id: string
  readonly account_id: string
  readonly property_id: string
  readonly authority: Authority
  readonly status: ReservationRow["tra"]["status"]
  /** The Bogotá date it is (or was) due. */
  readonly sends_on: string | null
  readonly warning: string | null
  /** Past its due date (`sends_on` before today in Bogotá) and not `success`. */
  readonly overdue: boolean
}

/**
 * A reservation's reports as listed; `today` is the Bogotá date. A cancelled reservation's reports are listed too:
 * one that was in flight at the cancellation ends in `error` saying the authority may hold it (design §6.8), and
 * the hotel must check the authority's portal.
 */
export const listings = (row: ReservationRow, today: string): ReadonlyArray<ReportListing> => {
  const exit = row.sire.exit
  const reports = [
    { authority: "tra" as const, status: row.tra.status, sends_on: row.tra.sends_on, warning: row.tra.warning },
    // design §6.8: the SIRE entry is due on check_in.
    { authority: "sire_entry" as const, status: row.sire.status, sends_on: row.check_in, warning: row.sire.warning },
    { authority: "sire_exit" as const, status: exit.status, sends_on: exit.sends_on, warning: exit.warning }
  ]
  return reports.map((report) => ({
    reservation_id: row.id,
    external_id: row.external_id,
    account_id: row.account_id,
    property_id: row.property_id,
    authority: report.authority,
    status: report.status,
    sends_on: report.sends_on,
    warning: report.warning ?? null,
    overdue: report.status !== "success" && report.status !== "not_applicable" && report.sends_on !== null &&
      report.sends_on < today
  }))
}

export interface ListFilter {
  /** Default: both. */
  readonly status?: "pending" | "error" | undefined
  readonly overdue?: boolean | undefined
  readonly propertyId?: string | undefined
  /** `next_cursor` of the previous page. */
  readonly cursor?: string | undefined
  /** Reports per page: default 100, at most 1000. */
  readonly limit?: number | undefined
}

export const LIST_LIMIT = { default: 100, max: 1000 } as const

const AUTHORITY_ORDINAL: Record<Authority, number> = { tra: 1, sire_entry: 2, sire_exit: 3 }

const Cursor = Schema.parseJson(Schema.Struct({ sends_on: Schema.String, id: Schema.UUID, ordinal: Schema.Int }))
const encodeCursor = (cursor: ReportCursor) => Buffer.from(Schema.encodeSync(Cursor)(cursor)).toString("base64url")
const decodeCursor = (cursor: string) => Schema.decodeUnknownOption(Cursor)(Buffer.from(cursor, "base64url").toString("utf8"))

export class ReportOps extends Effect.Service<ReportOps>()("compliance/ReportOps", {
  dependencies: [ReservationRepo.Default, TraSubmissions.Default, SireRecords.Default],
  effect: Effect.gen(function*() {
    const { sql, repo, reservations, submissions, records } = yield* Effect.all({
      sql: SqlClient.SqlClient, repo: ReservationRepo, reservations: Reservations, submissions: TraSubmissions,
      records: SireRecords
    })

    /**
     * `cli reports list`: live reports pending or in error, by due date, a page at a time (`next_cursor`, null on
     * the last page).
     */
    const list = (filter: ListFilter) =>
      Effect.gen(function*() {
        const after = filter.cursor === undefined ? Option.none() : decodeCursor(filter.cursor)
        if (filter.cursor !== undefined && Option.isNone(after)) {
          return yield* new InvalidRequest({
            message: "invalid request: cursor",
            details: { fields: [{ field: "cursor", message: "must be the next_cursor of a previous page" }] }
          })
        }
        const limit = filter.limit ?? LIST_LIMIT.default
        if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT.max) {
          return yield* new InvalidRequest({
            message: "invalid request: limit",
            details: { fields: [{ field: "limit", message: `must be a whole number from 1 to ${LIST_LIMIT.max}` }] }
          })
        }
        // An id that is no uuid names no property (a uuid column would refuse it with an error).
        if (filter.propertyId !== undefined && !isUuid(filter.propertyId)) return { reports: [], next_cursor: null }
        const statuses = filter.status === undefined ? (["pending", "error"] as const) : [filter.status]
        const today = yield* todayInBogota
        const found = yield* repo.reportsPage({
          statuses,
          propertyId: filter.propertyId,
          overdueBefore: filter.overdue === true ? today : undefined,
          after: Option.getOrUndefined(after),
          limit
        })
        const page = found.slice(0, limit)
        const reports = page.flatMap(({ row, ordinal }) =>
          listings(row, today).filter((report) => AUTHORITY_ORDINAL[report.authority] === ordinal)
        )
        const last = page.at(-1)
        return {
          reports,
          next_cursor: found.length > limit && last !== undefined
            ? encodeCursor({ sends_on: last.sends_on, id: last.row.id, ordinal: last.ordinal })
            : null
        }
      }).pipe(TraceContext.withSpan("ReportOps.list"))

    /**
     * `cli reports retry`: every report of the reservation that is in `error` goes back to `pending` — the
     * TRA's rejected guests of the failed round, SIRE's rejected entry or exit movements with it — and the next
     * run sends them again. Accepted guests are not sent again.
     */
    const retry = (reservationId: string) =>
      Effect.gen(function*() {
        const notFound = new ReservationNotFound({ message: `no reservation ${reservationId}` })
        if (!isUuid(reservationId)) return yield* notFound
        if (Option.isNone(yield* repo.findById(reservationId))) return yield* notFound
        // The TRA's rejected guests belong to the stay (round 0) or to an extension's round (design §6.8).
        const failed = yield* submissions.failedRound(reservationId)
        const round = Option.match(failed, { onNone: () => 0, onSome: (found) => found.round })
        const traExtensionFrom = Option.match(failed, {
          onNone: () => null,
          onSome: (found) => found.round > 0 ? found.period_from : null
        })
        return yield* Effect.gen(function*() {
          const { row, result: requeued } = yield* reservations.apply(reservationId, Command.Requeue({ traExtensionFrom }))
          const at = DateTime.toDateUtc(yield* DateTime.now)
          const guests: Record<Authority, number> = {
            tra: requeued.tra ? yield* submissions.requeue(reservationId, round, at) : 0,
            sire_entry: requeued.sire_entry ? yield* records.requeue(reservationId, "E", at) : 0,
            sire_exit: requeued.sire_exit ? yield* records.requeue(reservationId, "S", at) : 0
          }
          return {
            reservation_id: reservationId,
            requeued: Authority.literals
              .filter((authority) => requeued[authority])
              .map((authority) => ({ authority, guests: guests[authority] })),
            reports: listings(row, yield* todayInBogota)
          }
        }).pipe(sql.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("ReportOps.retry"))

    return { list, retry } as const
  })
}) {}
