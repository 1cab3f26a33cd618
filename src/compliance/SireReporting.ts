import { DateTime, Effect, Either, Option } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import * as Lifecycle from "../reservations/Lifecycle.ts"
import type { GuestRow } from "../reservations/ReservationRow.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { type DueReservation, guestLabel } from "./DueReports.ts"
import { type GuestPart, type Hold, verdictOf } from "./Outcomes.ts"
import { Reference } from "./Reference.ts"
import * as Settlement from "./Settlement.ts"
import { sireFile, sireLine } from "./Sire.ts"
import { SireGateway } from "./SireGateway.ts"
import { SireRecords } from "./SireRecords.ts"

/**
 * The SIRE stage of a report run (design §6.8, §6.13): each reservation's pending entry movements become lines
 * (build), each property's lines of a run become one file — kept for an operator (`SIRE_MODE=manual`) or
 * posted to the gateway (send) —, every line's outcome is recorded per movement, and each reservation's report
 * is settled through `Reservations.apply`.
 */

/** Configuration warnings of SIRE beyond those set when reports become due (Lifecycle.Warnings). */
export const Warnings = {
  sireCityCodeMissing: "the property has no SIRE city code; configure it so the SIRE report can be sent"
} as const

/** One line waiting for its property's file in this run. */
export interface PendingLine {
  readonly reservationId: string
  readonly movementId: string
  readonly line: string
}

/** A property's lines of one run, with the codes its file is sent under. */
export interface FileBatch {
  readonly hotelCode: string
  readonly cityCode: string
  readonly lines: ReadonlyArray<PendingLine>
}

/** What a file came to: the counts of the run, and what held each reservation back, if anything. */
export interface FileResult {
  readonly accepted: number
  readonly rejected: number
  readonly holds: ReadonlyMap<string, Hold>
}

const configuration = (warning: string): Hold => ({ _tag: "Configuration", warning })

export class SireReporting extends Effect.Service<SireReporting>()("compliance/SireReporting", {
  dependencies: [SireRecords.Default],
  effect: Effect.gen(function*() {
    const gateway = yield* SireGateway
    const reference = yield* Reference
    const records = yield* SireRecords
    const reservations = yield* Reservations
    const { sireMode } = yield* AppConfig

    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)

    /** The reservation's lines for this run (its pending entry movements), or what holds them back. */
    const lines = (due: DueReservation) =>
      Effect.gen(function*() {
        const { row, property } = due
        if (property.sire_hotel_code === null) {
          return { hold: configuration(Lifecycle.Warnings.sireHotelCodeMissing), batch: null }
        }
        if (property.sire_city_code === null) return { hold: configuration(Warnings.sireCityCodeMissing), batch: null }
        const foreign = due.guests.filter((guest) => guest.nacionalidad !== null && Lifecycle.isForeign(guest.nacionalidad))
        yield* records.ensureEntries(row.id, foreign.map((guest) => guest.id), row.check_in, yield* nowDate)
        const guestsById = new Map(due.guests.map((guest) => [guest.id, guest]))
        const pending = (yield* records.pendingEntries(row.id)).flatMap((movement) => {
          const guest = guestsById.get(movement.guest_id)
          return guest === undefined ? [] : [{ movement, guest }]
        }).sort((a, b) => a.guest.position - b.guest.position)
        const built: Array<PendingLine> = []
        const problems: Array<string> = []
        for (const { movement, guest } of pending) {
          const line = sireLine(reference, {
            hotelCode: property.sire_hotel_code,
            cityCode: property.sire_city_code,
            guest: {
              tipo_documento: guest.tipo_documento,
              numero_documento: guest.numero_documento,
              nacionalidad: guest.nacionalidad ?? "",
              apellido: guest.apellido,
              nombre: guest.nombre,
              fecha_nacimiento: guest.fecha_nacimiento,
              pais_procedencia: guest.pais_procedencia
            },
            movement: "E",
            date: row.check_in
          })
          if (Either.isLeft(line)) {
            problems.push(`SIRE cannot map guests[${guest.position}].${line.left.field.replace(/^.*\./, "")}: ${line.left.message}`)
          } else {
            built.push({ reservationId: row.id, movementId: movement.id, line: line.right })
          }
        }
        return {
          hold: problems.length > 0 ? configuration(problems.join("; ")) : { _tag: "None" } as const,
          batch: { hotelCode: property.sire_hotel_code, cityCode: property.sire_city_code, lines: built }
        }
      })

    /** One file per property for this run's lines: kept (manual) or posted (gateway). */
    const send = (propertyId: string, batch: FileBatch) =>
      Effect.gen(function*() {
        const at = yield* nowDate
        const content = sireFile(batch.lines.map((line) => line.line))
        const id = randomUUID()
        const stamp = at.toISOString().replace(/[-:]/g, "").slice(0, 15) // yyyymmddThhmmss
        yield* records.createFile(
          {
            id,
            propertyId,
            mode: sireMode,
            name: `SIRE-${batch.hotelCode}-${stamp.replace("T", "-")}-${id.slice(0, 8)}.txt`,
            content,
            lines: batch.lines.length,
            at
          },
          batch.lines.map((line, index) => ({ movementId: line.movementId, line: index + 1 }))
        )
        // Once in a generated or posted file a movement counts as sent (design §6.8): a cancellation cannot
        // take it back, and `already_reported.sire` says so.
        const reservationIds = [...new Set(batch.lines.map((line) => line.reservationId))]
        yield* reservations.applyAll(reservationIds.map((id) => ({ id, plan: Settlement.markSent("sire") })))
        const holds = new Map<string, Hold>()
        if (sireMode === "manual") return { accepted: 0, rejected: 0, holds } satisfies FileResult

        const outcome = yield* gateway.submit({ hotelCode: batch.hotelCode, cityCode: batch.cityCode, content })
        const all = batch.lines.map((line) => line.movementId)
        switch (outcome._tag) {
          case "Answered": {
            yield* records.fileAnswered(id, outcome)
            const failed = new Map(outcome.errors.map((error) => [error.line, error.message]))
            yield* Effect.forEach(batch.lines, (line, index) => {
              const message = failed.get(index + 1)
              return records.settleMovements([line.movementId], message === undefined ? "accepted" : "rejected", message ?? null, at)
            }, { discard: true })
            return { accepted: batch.lines.length - failed.size, rejected: failed.size, holds } satisfies FileResult
          }
          case "Rejected":
            yield* records.settleMovements(all, "rejected", `the SIRE gateway refused the file (HTTP ${outcome.status}): ${outcome.reason}`, at)
            return { accepted: 0, rejected: batch.lines.length, holds } satisfies FileResult
          case "Misconfigured":
          case "Unknown": {
            yield* records.fileFailed(id)
            const error = outcome._tag === "Misconfigured"
              ? `the SIRE gateway refused the credentials (HTTP ${outcome.status}); check SIRE_GATEWAY_TOKEN`
              : outcome.reason
            yield* records.settleMovements(all, "pending", error, at)
            for (const reservationId of reservationIds) {
              holds.set(
                reservationId,
                outcome._tag === "Misconfigured" ? configuration(error) : { _tag: "Transient", reason: error }
              )
            }
            return { accepted: 0, rejected: 0, holds } satisfies FileResult
          }
        }
      })

    /** Each foreign guest's part of the report, for its verdict. */
    const parts = (reservationId: string, guests: ReadonlyArray<GuestRow>) =>
      Effect.map(records.entries(reservationId), (rows) =>
        rows.map((movement): GuestPart => {
          const guest = guests.find((candidate) => candidate.id === movement.guest_id)
          return {
            guest: guest === undefined ? movement.guest_id : guestLabel(guest),
            state: movement.state === "accepted" ? "accepted" : movement.state === "rejected" ? "rejected" : "pending",
            code: null,
            reason: movement.last_error
          }
        }))

    /**
     * How a reservation's SIRE report settles after this run's files, or None while its movements wait in a kept
     * (manual) file for `cli sire confirm`: no failure, no retry, no give-up then.
     */
    const settlement = (reservationId: string, hold: Hold, checkIn: string, guests: ReadonlyArray<GuestRow>) =>
      Effect.gen(function*() {
        const verdict = verdictOf(yield* parts(reservationId, guests), hold, null)
        if (verdict.status === "pending" && hold._tag === "None" && (yield* records.keptInFile(reservationId)) > 0) {
          return Option.none()
        }
        const final = Settlement.giveUpIfLate(verdict, checkIn, yield* nowDate, hold._tag === "Transient" ? hold.reason : "")
        return Option.some({ id: reservationId, plan: Settlement.settle("sire", final) })
      })

    return { lines, send, parts, settlement } as const
  })
}) {}
