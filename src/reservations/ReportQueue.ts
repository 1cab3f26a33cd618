import { SqlClient } from "@effect/sql"
import { type Duration, Effect } from "effect"
import * as JobQueue from "../jobs/JobQueue.ts"
import { claimDueReports, type DueReport } from "./ReservationRepo.ts"

/**
 * The report runs' queue (design §7): its jobs are the reservations themselves, leased through
 * `report_lease_until` with the one job queue (`jobs/JobQueue.ts`) — the claim (`ReservationRepo.claimDueReports`,
 * noted in this process's `JobLeases`), renewals while a run works and releases once it has recorded what it
 * claimed. Renewals and releases lock the rows in id order, as `ReservationRepo.lockAll` does: a run renewing its
 * leases once deadlocked with the same run settling a SIRE file (found by the model-based test).
 */

export interface ReportQueue {
  /** Leases up to `limit` reservations with a report due on or before `today` (whatever their backoff, if `force`). */
  readonly claimDue: (
    options: { readonly today: string; readonly force: boolean; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<DueReport>>
  /** A run still working keeps what it claimed: the leases still held are extended by one lease from now. */
  readonly renew: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /** The run recorded what it claimed: its leases are given back. */
  readonly release: (ids: ReadonlyArray<string>) => Effect.Effect<void>
  /** The leases of `ids` are left to lapse: this process no longer gives them back when it stops. */
  readonly settled: (ids: ReadonlyArray<string>) => Effect.Effect<void>
}

/** The queue, with leases of `lease` (`REPORT_LEASE`), registered with this process's `JobLeases`. */
export const make = (lease: Duration.DurationInput): Effect.Effect<ReportQueue, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const queue = yield* JobQueue.make({
      kind: "report",
      table: "reservations",
      leaseColumn: "report_lease_until",
      lease
    })
    return {
      claimDue: (options) =>
        queue.claim((taken) => claimDueReports(taken, options).pipe(Effect.provideService(SqlClient.SqlClient, sql))),
      renew: (ids) => queue.renew(ids),
      release: queue.release,
      settled: queue.settled
    }
  })
