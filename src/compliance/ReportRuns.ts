import { Array as Arr, DateTime, Duration, Effect, Layer, Metric, Option, Schedule, Stream } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import type { GuestRow } from "../reservations/ReservationRow.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { todayInBogota } from "../shared/Calendar.ts"
import * as Failpoints from "../shared/Failpoints.ts"
import * as Metrics from "../shared/Metrics.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import type { DueReport } from "../reservations/ReservationRepo.ts"
import { type DueReservation, DueReports } from "./DueReports.ts"
import { Command } from "../reservations/machine/Machine.ts"
import type { Hold } from "../reservations/machine/Outcomes.ts"
import { Reference } from "./Reference.ts"
import { ReferenceStore } from "./ReferenceStore.ts"
import { holdKey, type PendingLine, SireReporting } from "./SireReporting.ts"
import { type Movement, SireRecords } from "./SireRecords.ts"
import { type TraCounts, TraReporting } from "./TraReporting.ts"

export { CLAIM_BATCH } from "./DueReports.ts"

export interface RunOptions {
  /** Bogotá date: everything due on or before it (default today). */
  readonly date?: string | undefined
  /** Also what waits for a backoff retry (`cli reports run`, design §6.8). */
  readonly force?: boolean | undefined
}

export interface RunSummary {
  readonly date: string
  readonly reservations: number
  readonly tra: { readonly sent: number; readonly accepted: number; readonly rejected: number }
  readonly sire: { readonly sent: number; readonly accepted: number; readonly rejected: number; readonly files: number }
}

/**
 * The compliance engine's run (design §6.8–§6.13, §7): claims the live reservations whose reports are due
 * (`FOR UPDATE SKIP LOCKED` under a lease, so several instances share a run and none sends twice), posts the
 * TRA (main guest, then each companion linked to its code), bundles each property's SIRE entry movements into
 * one file (kept for an operator, or posted to the gateway), and records every outcome — per guest in
 * `tra_submissions`/`sire_movements`, per reservation in its `tra`/`sire` report with the events of each
 * change, in the same transaction. Authority calls happen outside any transaction.
 */
export class ReportRuns extends Effect.Service<ReportRuns>()("compliance/ReportRuns", {
  dependencies: [
    DueReports.Default,
    TraReporting.Default,
    SireReporting.Default,
    SireRecords.Default,
    ReferenceStore.Default
  ],
  effect: Effect.gen(function*() {
    const { due, tra, sire, records, referenceStore, reservations, config } = yield* Effect.all({
      due: DueReports, tra: TraReporting, sire: SireReporting, records: SireRecords, referenceStore: ReferenceStore,
      reservations: Reservations, config: AppConfig
    })
    const failpoint = Failpoints.make(config.failpoints)

    const run = (options: RunOptions = {}) =>
      Effect.gen(function*() {
        const date = options.date ?? (yield* todayInBogota)
        const summary = {
          date,
          reservations: 0,
          tra: { sent: 0, accepted: 0, rejected: 0 },
          sire: { sent: 0, accepted: 0, rejected: 0, files: 0 }
        }
        const count = (into: { sent: number; accepted: number; rejected: number }, counts: TraCounts) => {
          into.sent += counts.sent
          into.accepted += counts.accepted
          into.rejected += counts.rejected
        }
        // The reference tables with the operators' corrections as stored now (`cli reference set`): read at the
        // start of every run, so a correction made on any instance is in effect at the next run, no restart.
        const reference = yield* referenceStore.effective
        // Gateway uploads a stopped run left in flight: their movements go out again as possible duplicates.
        yield* sire.recoverLostFiles(DateTime.toDateUtc(yield* DateTime.now))
        const claimed: Array<string> = []
        const files = new Map<string, { hotelCode: string; cityCode: string; lines: Array<PendingLine> }>()
        /** Entries and exits waiting for this run's files, by reservation and movement. */
        const waiting = new Map<string, { id: string; movement: Movement; hold: Hold; since: string; guests: ReadonlyArray<GuestRow> }>()
        const profiles = yield* due.profiles

        const collect = (reservation: DueReservation, movement: Movement, since: string) =>
          Effect.gen(function*() {
            const { row } = reservation
            const { hold, batch: lines } = yield* sire.lines(reservation, movement)
            waiting.set(holdKey(row.id, movement), { id: row.id, movement, hold, since, guests: reservation.guests })
            if (lines !== null && lines.lines.length > 0) {
              const file = files.get(row.property_id) ?? { hotelCode: lines.hotelCode, cityCode: lines.cityCode, lines: [] }
              file.lines.push(...lines.lines)
              files.set(row.property_id, file)
            }
          })

        // This run's span: each reservation's work is a child of the request that made the reservation, and
        // linked to the run that did it (design §9).
        const runSpan = yield* Effect.option(Effect.currentSpan)
        const links = Option.match(runSpan, {
          onNone: () => [],
          onSome: (span) => [{ _tag: "SpanLink" as const, span, attributes: {} }]
        })

        /** One claimed reservation: its TRA, then its SIRE lines for this run's files. */
        const one = ({ id, trace_parent }: DueReport) =>
          Effect.gen(function*() {
            const loaded = yield* due.load(id, profiles)
            // design §6.8: a report of a cancelled reservation still pending was in flight at the cancellation and
            // will not be sent again: it ends now (error, the authority may hold it), and the exit of every guest
            // whose entry may be held becomes due on the cancellation's date.
            const reservation = loaded.row.reservation_status === "cancelled" &&
                (loaded.row.tra.status === "pending" || loaded.row.sire.status === "pending")
              ? yield* Effect.gen(function*() {
                const movements = (yield* records.allOf([id])).get(id) ?? []
                yield* reservations.apply(id, Command.SettleCancelled({ movements }))
                return yield* due.load(id, profiles)
              })
              : loaded
            const { row } = reservation
            // A cancelled reservation is claimed only for its exits (design §6.8).
            if (row.reservation_status !== "cancelled") {
              if (row.tra.status === "pending" && row.tra_extension_from === null) {
                count(summary.tra, yield* tra.report(reservation))
              }
              // An extension owed after the TRA was accepted; pending when an operator re-queued the extension's
              // rejected guests (`cli reports retry`).
              if ((row.tra.status === "success" || row.tra.status === "pending") && row.tra_extension_from !== null) {
                count(summary.tra, yield* tra.reportExtension(reservation, row.tra_extension_from))
              }
              if (row.sire.status === "pending") yield* collect(reservation, "E", row.check_in)
            }
            const exit = row.sire.exit
            if (exit.status === "pending" && exit.sends_on !== null && exit.sends_on <= date) {
              yield* collect(reservation, "S", exit.sends_on)
            }
          }).pipe(TraceContext.withSpan("ReportRuns.reservation", {
            attributes: { "reservation.id": id },
            links,
            ...TraceContext.parentOf(trace_parent)
          }))

        return yield* due.holding(claimed, Effect.gen(function*() {
          // Claim and work through the claims as one stream: the next batch is claimed when the last reservation
          // of the previous one starts, not when it ends, so the authority's slots never wait for a batch to drain.
          yield* Stream.repeatEffectOption(
            Effect.flatMap(due.claim(date, options.force ?? false), (batch) =>
              batch.length === 0 ? Effect.fail(Option.none()) : Effect.succeed(batch))
          ).pipe(
            Stream.tap((batch) =>
              Effect.zipRight(
                Effect.sync(() => {
                  claimed.push(...batch.map((due) => due.id))
                  summary.reservations += batch.length
                }),
                failpoint("report.after_claim")
              )
            ),
            Stream.flattenIterables,
            Stream.mapEffect(one, { concurrency: Math.max(config.traConcurrency * 2, 4), unordered: true }),
            Stream.runDrain
          )

          // One SIRE file per property, then each reservation's SIRE entry and exit reports.
          for (const [propertyId, file] of files) {
            const result = yield* sire.send(propertyId, file)
            summary.sire.files++
            summary.sire.sent += file.lines.length
            summary.sire.accepted += result.accepted
            summary.sire.rejected += result.rejected
            for (const [key, hold] of result.holds) {
              const entry = waiting.get(key)
              if (entry !== undefined && entry.hold._tag === "None") waiting.set(key, { ...entry, hold })
            }
          }
          const recorded = yield* records.allOf([...new Set([...waiting.values()].map((entry) => entry.id))])
          const settlements = yield* Effect.forEach(waiting.values(), ({ id, movement, hold, since, guests }) =>
            sire.settlement(id, movement, hold, since, guests, recorded.get(id) ?? []))
          yield* reservations.applyAll(Arr.getSomes(settlements))
          yield* due.release(claimed)
          return summary satisfies RunSummary
        }).pipe(Effect.provideService(Reference, reference)))
      }).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Metric.trackDurationWith(Metrics.reportRunDuration, Duration.toSeconds),
        TraceContext.withSpan("ReportRuns.run")
      )

    // ---------------------------------------------------------------------------------------- manual SIRE

    const files = (propertyId?: string) =>
      Effect.map(records.manualFiles(propertyId), (rows) => ({
        files: rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }))
      }))

    /** `cli sire confirm`: the operator uploaded the file; its movements are accepted (design §6.8). */
    const confirm = (fileId: string) =>
      Effect.gen(function*() {
        const affected = yield* records.confirmFile(fileId, DateTime.toDateUtc(yield* DateTime.now))
        if (Option.isNone(affected)) return Option.none()
        const profiles = yield* due.profiles
        const recorded = yield* records.allOf([...new Set(affected.value.map(({ reservationId }) => reservationId))])
        const settled = yield* Effect.forEach(affected.value, ({ reservationId, movement }) =>
          Effect.gen(function*() {
            const { row, guests } = yield* due.load(reservationId, profiles)
            const since = movement === "E" ? row.check_in : row.sire.exit.sends_on ?? row.check_out
            return yield* sire.settlement(reservationId, movement, { _tag: "None" }, since, guests, recorded.get(reservationId) ?? [])
          }))
        yield* reservations.applyAll(Arr.getSomes(settled))
        return Option.some({ file_id: fileId, status: "confirmed" })
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    return { run, files, confirm } as const
  })
}) {}

/** A run now, then one every `every`, each logged and never failing the loop (design §6.8). */
export const periodic = (every: Duration.DurationInput) =>
  Effect.flatMap(ReportRuns, (runs) =>
    Effect.repeat(
      runs.run().pipe(
        Effect.tap((summary) => summary.reservations > 0 ? Effect.logInfo("report run", summary) : Effect.void),
        Effect.catchAllCause((cause) => Effect.logError("report run failed", cause))
      ),
      Schedule.spaced(every)
    ))

/** The periodic run (ROLE=worker|all): at start, then every `REPORTS_EVERY`. */
export const loop = Layer.scopedDiscard(
  Effect.flatMap(AppConfig, ({ reportsEvery }) => Effect.forkScoped(periodic(reportsEvery)))
)
