import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Either, Option } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import { Command } from "../reservations/machine/Machine.ts"
import { entryReadyForExit, type GuestPart, type Hold, verdictOf, waitingWarning } from "../reservations/machine/Outcomes.ts"
import { giveUpIfLate, Warnings as ReportWarnings, withdrawn } from "../reservations/machine/Reports.ts"
import { isForeign } from "../reservations/machine/State.ts"
import type { GuestRow } from "../reservations/ReservationRow.ts"
import { Reservations } from "../reservations/Reservations.ts"
import * as Failpoints from "../shared/Failpoints.ts"
import { type DueReservation, guestLabel } from "./DueReports.ts"
import { Reference } from "./Reference.ts"
import type { ReferenceData } from "./ReferenceData.ts"
import { mappingWarning, sireCityCodeMissing, sireFile, sireGuest, sireLine, type SirePlaces } from "./Sire.ts"
import { SireGateway } from "./SireGateway.ts"
import { type Movement, type MovementRow, SireRecords } from "./SireRecords.ts"

/**
 * The SIRE stage of a report run (design §6.8, §6.13): each reservation's pending movements — entries (E) of
 * its foreign guests on the arrival day, exits (S) of those whose entry went out on the exit's day — become
 * lines (build), each property's lines of a run become one file — kept for an operator (`SIRE_MODE=manual`) or
 * posted to the gateway (send) —, every line's outcome is recorded per movement, and each reservation's entry
 * and exit reports are settled through `Reservations.apply`. A gateway file is `sending` while its upload is
 * in flight: a run that stops there leaves it to a later run, which sends its movements again as possible
 * duplicates (design §7).
 */

/** Configuration warnings of SIRE beyond those set when reports become due (`Reports.Warnings` of the reservation machine). */
export const Warnings = {
  sireCityCodeMissing,
  inManualFile: waitingWarning("in a generated SIRE file, for the operator to upload it to Migración and run `cli sire confirm`")
} as const

/** One line waiting for its property's file in this run. */
export interface PendingLine {
  readonly reservationId: string
  readonly movementId: string
  readonly movement: Movement
  readonly line: string
}

/** A property's lines of one run, with the codes its file is sent under. */
export interface FileBatch {
  readonly hotelCode: string
  readonly cityCode: string
  readonly lines: ReadonlyArray<PendingLine>
}

/** What a file came to: the counts of the run, and what held each reservation's movements back, if anything. */
export interface FileResult {
  readonly accepted: number
  readonly rejected: number
  /** By `${reservationId}:${movement}`. */
  readonly holds: ReadonlyMap<string, Hold>
}

export const holdKey = (reservationId: string, movement: Movement) => `${reservationId}:${movement}`

const configuration = (warning: string): Hold => ({ _tag: "Configuration", warning })

/** The authority may hold these movements: accepted, in a kept or uploading file, or sent with an unknown outcome. */
export const mayHold = (movements: ReadonlyArray<MovementRow>) =>
  movements.some((movement) => movement.state === "accepted" || movement.state === "in_file" || movement.possible_duplicate)

/**
 * The lines of a reservation's movements of one kind, in guest order, and the mapping problems of the guests
 * whose line cannot be built (`found`: the movements to send, `places`: the configured SIRE places).
 */
const buildLines = (reference: ReferenceData, input: {
  readonly due: DueReservation
  readonly hotelCode: string
  readonly cityCode: string
  readonly movement: Movement
  readonly date: string
  readonly found: ReadonlyArray<MovementRow>
  readonly places: SirePlaces
}) => {
  const { due, movement, date } = input
  const guestsById = new Map(due.guests.map((guest) => [guest.id, guest]))
  const pending = input.found.flatMap((found) => {
    const guest = guestsById.get(found.guest_id)
    return guest === undefined ? [] : [{ movement: found, guest }]
  }).sort((a, b) => a.guest.position - b.guest.position)
  const built: Array<PendingLine> = []
  const problems: Array<string> = []
  for (const { movement: found, guest } of pending) {
    const line = sireLine(reference, {
      hotelCode: input.hotelCode,
      cityCode: input.cityCode,
      guest: sireGuest(guest),
      movement,
      date,
      places: input.places
    })
    if (Either.isLeft(line)) {
      problems.push(mappingWarning(guest.position, line.left))
    } else {
      built.push({ reservationId: due.row.id, movementId: found.id, movement, line: line.right })
    }
  }
  return { built, problems }
}

/** Each guest's part of a reservation's movements of one kind, for the report's verdict. */
const parts = (movements: ReadonlyArray<MovementRow>, guests: ReadonlyArray<GuestRow>) =>
  movements.map((movement): GuestPart => {
    const guest = guests.find((candidate) => candidate.id === movement.guest_id)
    return {
      guest: guest === undefined ? movement.guest_id : guestLabel(guest),
      state: movement.state === "accepted" ? "accepted" : movement.state === "rejected" ? "rejected" : "pending",
      code: null,
      reason: movement.last_error
    }
  })

export class SireReporting extends Effect.Service<SireReporting>()("compliance/SireReporting", {
  dependencies: [SireRecords.Default],
  effect: Effect.gen(function*() {
    const { sql, gateway, records, reservations, config } = yield* Effect.all({
      sql: SqlClient.SqlClient, gateway: SireGateway, records: SireRecords, reservations: Reservations,
      config: AppConfig
    })
    const failpoint = Failpoints.make(config.failpoints)

    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)

    /**
     * The reservation's lines of one kind for this run, or what holds them back. Entries: every foreign
     * guest, dated `check_in`. Exits: the foreign guests whose entry went out and was not refused, dated
     * `sire.exit.sends_on`.
     */
    const lines = (due: DueReservation, movement: Movement) =>
      Effect.gen(function*() {
        const { row, property } = due
        if (property.sire_hotel_code === null) {
          return { hold: configuration(ReportWarnings.sireHotelCodeMissing), batch: null }
        }
        if (property.sire_city_code === null) return { hold: configuration(Warnings.sireCityCodeMissing), batch: null }
        const at = yield* nowDate
        const date = movement === "E" ? row.check_in : row.sire.exit.sends_on ?? row.check_out
        const found = movement === "E"
          ? yield* records.ensurePending(
            row.id,
            "E",
            due.guests.filter((guest) => guest.nacionalidad !== null && isForeign(guest.nacionalidad)).map((guest) => guest.id),
            date,
            at
          )
          : yield* Effect.gen(function*() {
            const entries = yield* records.all(row.id, "E")
            // design §6.8: an exit for every entry Migración holds or may hold, once that entry is sent no more.
            const entryFinal = row.reservation_status === "cancelled" || row.sire.status !== "pending"
            const sent = entries.filter((entry) => entryReadyForExit({ ...entry, movement: "E" }, entryFinal))
            // A pending exit follows its date until it is in a file.
            yield* records.moveExits(row.id, date, at)
            return yield* records.ensurePending(row.id, "S", sent.map((entry) => entry.guest_id), date, at)
          })
        // The run's tables, with the operators' corrections as stored when it started (ReportRuns).
        const { built, problems } = buildLines(yield* Reference, {
          due,
          hotelCode: property.sire_hotel_code,
          cityCode: property.sire_city_code,
          movement,
          date,
          found,
          places: config.sirePlaces
        })
        return {
          hold: problems.length > 0 ? configuration(problems.join("; ")) : { _tag: "None" } as const,
          batch: { hotelCode: property.sire_hotel_code, cityCode: property.sire_city_code, lines: built }
        }
      })

    /** One file per property for this run's lines: kept (manual) or posted (gateway). */
    const send = (propertyId: string, batch: FileBatch) =>
      Effect.gen(function*() {
        const at = yield* nowDate
        const id = randomUUID()
        const stamp = at.toISOString().replace(/[-:]/g, "").slice(0, 15) // yyyymmddThhmmss
        // Once in a generated or posted file an entry counts as sent (design §6.8): a cancellation cannot take it
        // back, `already_reported.sire` says so, and its exit becomes due. The mark and the file are one
        // transaction, under the reservations' row locks: no instant exists where the file holds the line and a
        // cancel answers `sire: false`, and an entry a cancel withdrew while this run built it is left out.
        const entered = [...new Set(batch.lines.filter((line) => line.movement === "E").map((line) => line.reservationId))]
        const filed = yield* Effect.gen(function*() {
          const marked = yield* reservations.applyAll(
            entered.map((reservationId) => ({ id: reservationId, command: Command.MarkSent({ authority: "sire" }) }))
          )
          const dropped = new Set(marked.filter((row) => withdrawn(row, "sire")).map((row) => row.id))
          const kept = batch.lines.filter((line) => !(line.movement === "E" && dropped.has(line.reservationId)))
          if (kept.length === 0) return null
          const content = sireFile(kept.map((line) => line.line))
          yield* records.createFile(
            {
              id,
              propertyId,
              mode: config.sireMode,
              name: `SIRE-${batch.hotelCode}-${stamp.replace("T", "-")}-${id.slice(0, 8)}.txt`,
              content,
              lines: kept.length,
              at
            },
            kept.map((line, index) => ({ movementId: line.movementId, line: index + 1 }))
          )
          return { content, lines: kept }
        }).pipe(sql.withTransaction, Effect.orDie)
        if (filed === null) return { accepted: 0, rejected: 0, holds: new Map<string, Hold>() } satisfies FileResult
        const { content, lines } = filed
        const holds = new Map<string, Hold>()
        if (config.sireMode === "manual") return { accepted: 0, rejected: 0, holds } satisfies FileResult

        yield* failpoint("sire.before_send")
        const outcome = yield* gateway.submit({ hotelCode: batch.hotelCode, cityCode: batch.cityCode, content })
        yield* failpoint("sire.after_answer")
        const all = lines.map((line) => line.movementId)
        const holdAll = (hold: Hold) => {
          for (const line of lines) holds.set(holdKey(line.reservationId, line.movement), hold)
        }
        const result = yield* Effect.gen(function*() {
          switch (outcome._tag) {
            case "Answered": {
              yield* records.fileAnswered(id, outcome)
              const failed = new Map(outcome.errors.map((error) => [error.line, error.message]))
              yield* Effect.forEach(lines, (line, index) => {
                const message = failed.get(index + 1)
                return records.settleMovements([line.movementId], message === undefined ? "accepted" : "rejected", message ?? null, at)
              }, { discard: true })
              return { accepted: lines.length - failed.size, rejected: failed.size, holds } satisfies FileResult
            }
            case "Rejected":
              yield* records.fileAnswered(id, outcome)
              yield* records.settleMovements(all, "rejected", `the SIRE gateway refused the file (HTTP ${outcome.status}): ${outcome.reason}`, at)
              return { accepted: 0, rejected: lines.length, holds } satisfies FileResult
            case "Misconfigured": {
              // Refused credentials registered nothing: pending again, no duplicate possible.
              yield* records.fileFailed(id)
              const error = `the SIRE gateway refused the credentials (HTTP ${outcome.status}); check SIRE_GATEWAY_TOKEN`
              yield* records.settleMovements(all, "pending", error, at, false)
              holdAll(configuration(error))
              return { accepted: 0, rejected: 0, holds } satisfies FileResult
            }
            case "Unknown": {
              // The file may have reached Migración: sent again, marked as a possible duplicate (design §7).
              yield* records.fileFailed(id)
              yield* records.settleMovements(all, "pending", outcome.reason, at, true)
              holdAll({ _tag: "Transient", reason: outcome.reason })
              return { accepted: 0, rejected: 0, holds } satisfies FileResult
            }
          }
        })
        yield* failpoint("sire.after_record")
        return result
      })

    /**
     * How a reservation's entry or exit report settles after this run's files, or None while its movements
     * wait in a kept (manual) file for `cli sire confirm`: no failure, no retry, no give-up then. `since` is the
     * day the report fell due (72 h later a transient failure gives up); `recorded` are the reservation's
     * movements as recorded after the run's files (`SireRecords.allOf`).
     */
    const settlement = (
      reservationId: string,
      movement: Movement,
      hold: Hold,
      since: string,
      guests: ReadonlyArray<GuestRow>,
      recorded: ReadonlyArray<MovementRow>
    ) =>
      Effect.gen(function*() {
        const movements = recorded.filter((found) => found.movement === movement)
        if (movement === "S" && movements.length === 0) {
          // No exit line this run: the machine decides from the recorded movements whether it stays due
          // (`Reports.exitUnbuilt`).
          return Option.some({ id: reservationId, command: Command.SireExitUnbuilt({ movements: recorded }) })
        }
        const verdict = verdictOf(parts(movements, guests), hold, null)
        if (verdict.status === "pending" && hold._tag === "None" && movements.some((found) => found.state === "in_file")) {
          // Waiting for the operator is no failure: no retry count, no give-up; the warning says what it waits for.
          const waiting = { status: "pending", warning: Warnings.inManualFile, transient: false } as const
          return Option.some({
            id: reservationId,
            command: movement === "E"
              ? Command.SettleSireEntry({ verdict: waiting, mayHold: true, movements: recorded })
              : Command.SettleSireExit({ verdict: waiting })
          })
        }
        const final = giveUpIfLate(verdict, since, yield* nowDate, hold._tag === "Transient" ? hold.reason : "")
        return Option.some({
          id: reservationId,
          command: movement === "E"
            ? Command.SettleSireEntry({ verdict: final, mayHold: mayHold(movements), movements: recorded })
            : Command.SettleSireExit({ verdict: final })
        })
      })

    return { lines, send, settlement, parts, recoverLostFiles: records.recoverLostFiles } as const
  })
}) {}
