import { SqlClient } from "@effect/sql"
import { randomUUID } from "node:crypto"
import { DateTime, Duration, Effect, Either, Layer, Option, Redacted, Schedule } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import * as Lifecycle from "../reservations/Lifecycle.ts"
import type { ReservationRow } from "../reservations/ReservationRow.ts"
import { snapshotOf } from "../reservations/ReservationRow.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { todayInBogota } from "../trm/Trm.ts"
import { Outbox } from "../webhooks/Outbox.ts"
import { type GuestPart, type Hold, pastGiveUp, retryAfter, verdictOf } from "./Outcomes.ts"
import { Reference, type ReferenceData } from "./Reference.ts"
import { type SireGuest, sireFile, sireLine } from "./Sire.ts"
import { SireGateway } from "./SireGateway.ts"
import { companionBody, costoFromCop, mainBody, type TraGuest, type TraStay } from "./Tra.ts"
import { TraClient, type TraOutcome } from "./TraClient.ts"

/** A claim outlives a whole run of a batch (TRA answers within 30 s each; a batch runs in parallel). */
export const REPORT_LEASE = Duration.minutes(15)
/** Reservations claimed at a time. */
export const CLAIM_BATCH = 100

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

/** The reservation and property columns a run reads. */
interface DueRow {
  readonly id: string
  readonly property_id: string
  readonly check_in: string
  readonly check_out: string
  readonly room_number: string | null
  readonly motivo: string | null
  readonly tipo_acomodacion: string | null
  readonly total_amount_cop: string | null
  readonly tra: { readonly status: string }
  readonly sire: { readonly status: string }
  readonly report_failures: number
  readonly tra_extension_from: string | null
  readonly tra_token: string | null
  readonly property_name: string
  readonly establishment_name: string | null
  readonly rnt_id: string | null
  readonly property_tipo_acomodacion: string | null
  readonly sire_hotel_code: string | null
  readonly sire_city_code: string | null
}

interface GuestRow {
  readonly id: string
  readonly position: number
  readonly tipo_documento: string
  readonly numero_documento: string
  readonly nombre: string
  readonly apellido: string
  readonly nacionalidad: string | null
  readonly fecha_nacimiento: string | null
  readonly pais_procedencia: string | null
  readonly ciudad_procedencia: string | null
  readonly ciudad_residencia: string | null
}

interface SubmissionRow {
  readonly id: string
  readonly guest_id: string
  readonly role: "main" | "companion"
  readonly state: "pending" | "accepted" | "rejected"
  readonly code: string | null
  readonly possible_duplicate: boolean
  readonly last_error: string | null
}

interface MovementRow {
  readonly id: string
  readonly guest_id: string
  readonly state: "pending" | "in_file" | "accepted" | "rejected"
  readonly possible_duplicate: boolean
  readonly last_error: string | null
}

/** One line waiting for its property's file in this run. */
interface PendingLine {
  readonly reservationId: string
  readonly movementId: string
  readonly line: string
}

/** What the TRA part of one reservation came to in this run. */
interface TraResult {
  readonly hold: Hold
  readonly sent: number
  readonly accepted: number
  readonly rejected: number
}

const configuration = (warning: string): Hold => ({ _tag: "Configuration", warning })

/** Configuration warnings of a run, beyond those set when reports become due (Lifecycle.Warnings). */
export const Warnings = {
  rntMissing: "the property has no RNT number; configure it so the TRA can be sent",
  sireCityCodeMissing: "the property has no SIRE city code; configure it so the SIRE report can be sent"
} as const

const guestLabel = (guest: GuestRow) => `guests[${guest.position}] (${guest.nombre} ${guest.apellido})`

const DEFAULT_TIPO_ACOMODACION = "Habitación"

/**
 * The compliance engine's run (design §6.8–§6.13, §7): claims the live reservations whose reports are due
 * (`FOR UPDATE SKIP LOCKED` under a lease, so several instances share a run and none sends twice), posts the
 * TRA (main guest, then each companion linked to its code), bundles each property's SIRE entry movements into
 * one file (kept for an operator, or posted to the gateway), and records every outcome — per guest in
 * `tra_submissions`/`sire_movements`, per reservation in its `tra`/`sire` report with the events of each
 * change, in the same transaction. Authority calls happen outside any transaction.
 */
export class ReportRuns extends Effect.Service<ReportRuns>()("compliance/ReportRuns", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tra = yield* TraClient
    const gateway = yield* SireGateway
    const reference = yield* Reference
    const outbox = yield* Outbox
    const reservations = yield* Reservations
    const config = yield* AppConfig

    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)

    // -------------------------------------------------------------------------------------------- claiming

    const claim = (today: string, force: boolean) =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        const at = DateTime.toDateUtc(now)
        const leaseUntil = DateTime.toDateUtc(DateTime.addDuration(now, REPORT_LEASE))
        return yield* sql<{ id: string }>`
          UPDATE reservations SET report_lease_until = ${leaseUntil}
          WHERE id IN (
            SELECT id FROM reservations
            WHERE environment = 'live' AND reservation_status <> 'cancelled'
              AND ((tra->>'status') = 'pending' OR (sire->>'status') = 'pending' OR tra_extension_from IS NOT NULL)
              AND check_in <= ${today}
              AND (report_lease_until IS NULL OR report_lease_until <= ${at})
              AND (${force} OR report_retry_at IS NULL OR report_retry_at <= ${at})
            ORDER BY check_in, id
            LIMIT ${CLAIM_BATCH}
            FOR UPDATE SKIP LOCKED)
          RETURNING id`
      })

    const load = (id: string) =>
      Effect.gen(function*() {
        const [row] = yield* sql<DueRow>`
          SELECT r.id, r.property_id, r.check_in, r.check_out, r.room_number, r.motivo, r.tipo_acomodacion,
            r.total_amount_cop::text AS total_amount_cop, r.tra, r.sire, r.report_failures,
            r.tra_extension_from::text AS tra_extension_from,
            p.tra_token, p.name AS property_name, p.establishment_name, p.rnt_id,
            p.tipo_acomodacion AS property_tipo_acomodacion, p.sire_hotel_code, p.sire_city_code
          FROM reservations r JOIN properties p ON p.id = r.property_id
          WHERE r.id = ${id}`
        const guests = yield* sql<GuestRow>`
          SELECT id, position, tipo_documento, numero_documento, nombre, apellido, nacionalidad,
            fecha_nacimiento::text AS fecha_nacimiento, pais_procedencia, ciudad_procedencia, ciudad_residencia
          FROM guests WHERE reservation_id = ${id} AND registered_at IS NOT NULL
          ORDER BY position`
        return { row: row!, guests }
      })

    // ------------------------------------------------------------------------------------------------- TRA

    /** Reference-data mapping of the TRA bodies; the first unmapped value holds the report (design §6.9). */
    const traInputs = (ref: ReferenceData, row: DueRow, guests: ReadonlyArray<GuestRow>) => {
      const motivo = row.motivo === null ? undefined : ref.traMotivo(row.motivo)
      if (motivo === undefined) {
        return Either.left(`the TRA needs a wording for motivo (${JSON.stringify(row.motivo)}); add it to the reference data`)
      }
      const labels: Array<TraGuest> = []
      for (const guest of guests) {
        const label = ref.traDocument(guest.tipo_documento)
        if (label === undefined) {
          return Either.left(
            `the TRA needs a label for guests[${guest.position}].tipo_documento (${guest.tipo_documento}); add it to the reference data`
          )
        }
        labels.push({
          tipo_identificacion: label,
          numero_identificacion: guest.numero_documento,
          nombres: guest.nombre,
          apellidos: guest.apellido,
          cuidad_residencia: guest.ciudad_residencia ?? "",
          cuidad_procedencia: guest.ciudad_procedencia ?? ""
        })
      }
      const stay: TraStay = {
        check_in: row.check_in,
        check_out: row.check_out,
        numero_habitacion: row.room_number ?? "",
        motivo,
        tipo_acomodacion: row.tipo_acomodacion ?? row.property_tipo_acomodacion ?? DEFAULT_TIPO_ACOMODACION,
        costo: costoFromCop(row.total_amount_cop),
        nombre_establecimiento: row.establishment_name ?? row.property_name,
        rnt_establecimiento: row.rnt_id ?? ""
      }
      return Either.right({ stay, guests: labels })
    }

    const recordSubmission = (submission: SubmissionRow, outcome: TraOutcome) =>
      Effect.gen(function*() {
        const at = yield* nowDate
        const state: SubmissionRow["state"] = outcome._tag === "Accepted"
          ? "accepted"
          : outcome._tag === "Rejected"
          ? "rejected"
          : "pending"
        const code = outcome._tag === "Accepted" ? outcome.code : null
        const reason = outcome._tag === "Accepted" ? null : outcome.reason
        const entry = {
          at: at.toISOString(),
          outcome: outcome._tag,
          ...(outcome._tag === "Rejected" || outcome._tag === "Misconfigured" ? { status: outcome.status } : {}),
          ...(code === null ? {} : { code }),
          ...(reason === null ? {} : { reason }),
          // design §7: a retry after an unknown outcome may register the guest twice; say so.
          ...(submission.possible_duplicate ? { possible_duplicate: true } : {})
        }
        yield* sql`
          UPDATE tra_submissions SET
            state = ${state},
            code = COALESCE(${code}::bigint, code),
            attempts = attempts + 1,
            possible_duplicate = possible_duplicate OR ${outcome._tag === "Unknown"},
            last_error = ${reason},
            history = history || ${JSON.stringify([entry])}::jsonb,
            updated_at = ${at}
          WHERE id = ${submission.id}`
        return { ...submission, state, code: code === null ? submission.code : String(code), last_error: reason }
      })

    /**
     * Posts what is still missing of one round of the reservation's TRA — round 0 is the stay, round n the n-th
     * extension (the added nights, design §6.8) — the main guest, then its companions.
     */
    const runTra = (
      row: DueRow,
      guests: ReadonlyArray<GuestRow>,
      round = 0,
      period: { readonly from: string; readonly to: string } = { from: row.check_in, to: row.check_out }
    ): Effect.Effect<TraResult> =>
      Effect.gen(function*() {
        if (row.tra_token === null) {
          return { hold: configuration(Lifecycle.Warnings.traTokenMissing), sent: 0, accepted: 0, rejected: 0 }
        }
        if (row.rnt_id === null || row.rnt_id.trim() === "") {
          // The TRA identifies the establishment by its RNT (domain notes §1.3); without it every post is refused.
          return { hold: configuration(Warnings.rntMissing), sent: 0, accepted: 0, rejected: 0 }
        }
        const inputs = traInputs(reference, row, guests)
        if (Either.isLeft(inputs)) {
          return { hold: configuration(inputs.left), sent: 0, accepted: 0, rejected: 0 }
        }
        const at = yield* nowDate
        yield* sql`
          INSERT INTO tra_submissions (reservation_id, guest_id, round, role, period_from, period_to, state, updated_at)
          SELECT ${row.id}, g.id, ${round}, CASE WHEN g.position = ${guests[0]!.position} THEN 'main' ELSE 'companion' END,
            ${period.from}, ${period.to}, 'pending', ${at}
          FROM guests g WHERE g.reservation_id = ${row.id} AND g.registered_at IS NOT NULL
          ON CONFLICT (reservation_id, round, guest_id) DO NOTHING`
        // In flight from here: a cancellation now answers already_reported.tra (design §6.9).
        yield* sql`UPDATE reservations SET tra_reported = true WHERE id = ${row.id}`
        const submissions = yield* sql<SubmissionRow>`
          SELECT id, guest_id, role, state, code::text AS code, possible_duplicate, last_error
          FROM tra_submissions WHERE reservation_id = ${row.id} AND round = ${round}`
        const token = Redacted.make(row.tra_token)
        const guestOf = (submission: SubmissionRow) => guests.findIndex((guest) => guest.id === submission.guest_id)
        const stay: TraStay = { ...inputs.right.stay, check_in: period.from, check_out: period.to }
        let sent = 0
        let misconfigured: string | null = null

        let main = submissions.find((submission) => submission.role === "main")!
        if (main.state === "pending") {
          const outcome = yield* tra.submitMain(token, mainBody(stay, inputs.right.guests[guestOf(main)]!, guests.length - 1))
          sent++
          if (outcome._tag === "Misconfigured") misconfigured = `the TRA refused the property's token (HTTP ${outcome.status}); check the TRA token`
          main = yield* recordSubmission(main, outcome)
        }
        let companions = submissions.filter((submission) => submission.role === "companion")
        if (main.state === "accepted" && main.code !== null) {
          const padre = Number(main.code)
          companions = yield* Effect.forEach(companions, (companion) =>
            companion.state !== "pending"
              ? Effect.succeed(companion)
              : Effect.gen(function*() {
                const outcome = yield* tra.submitCompanion(token, companionBody(stay, inputs.right.guests[guestOf(companion)]!, padre))
                sent++
                if (outcome._tag === "Misconfigured") {
                  misconfigured = `the TRA refused the property's token (HTTP ${outcome.status}); check the TRA token`
                }
                return yield* recordSubmission(companion, outcome)
              }), { concurrency: "unbounded" })
        }
        const all = [main, ...companions]
        const before = new Map(submissions.map((submission) => [submission.id, submission.state]))
        const changed = (state: SubmissionRow["state"]) =>
          all.filter((submission) => submission.state === state && before.get(submission.id) !== state).length
        const hold: Hold = misconfigured !== null
          ? { _tag: "Configuration", warning: misconfigured }
          : all.every((submission) => submission.state !== "pending")
          ? { _tag: "None" }
          : { _tag: "Transient", reason: all.find((submission) => submission.last_error !== null)?.last_error ?? "no answer" }
        return {
          hold,
          sent,
          accepted: changed("accepted"),
          rejected: changed("rejected")
        }
      }).pipe(Effect.orDie)

    const traParts = (reservationId: string, guests: ReadonlyArray<GuestRow>, round = 0) =>
      Effect.map(
        sql<SubmissionRow>`
          SELECT id, guest_id, role, state, code::text AS code, possible_duplicate, last_error
          FROM tra_submissions WHERE reservation_id = ${reservationId} AND round = ${round}`,
        (rows) => {
          const parts = rows.map((submission): GuestPart & { role: string } => {
            const guest = guests.find((g) => g.id === submission.guest_id)
            return {
              guest: guest === undefined ? submission.guest_id : guestLabel(guest),
              state: submission.state,
              code: submission.code === null ? null : Number(submission.code),
              reason: submission.last_error,
              role: submission.role
            }
          })
          return { parts, main: parts.find((part) => part.role === "main")?.guest ?? null }
        }
      )

    // ------------------------------------------------------------------------------------------------ SIRE

    /** The reservation's SIRE lines for this run (pending entry movements of foreign guests), or what holds them. */
    const sireLines = (row: DueRow, guests: ReadonlyArray<GuestRow>) =>
      Effect.gen(function*() {
        if (row.sire_hotel_code === null) {
          return { hold: { _tag: "Configuration", warning: Lifecycle.Warnings.sireHotelCodeMissing } as Hold, lines: [] }
        }
        if (row.sire_city_code === null) {
          return { hold: configuration(Warnings.sireCityCodeMissing), lines: [] }
        }
        const foreign = guests.filter((guest) => guest.nacionalidad !== null && Lifecycle.isForeign(guest.nacionalidad))
        const at = yield* nowDate
        for (const guest of foreign) {
          yield* sql`
            INSERT INTO sire_movements (reservation_id, guest_id, movement, movement_date, state, updated_at)
            VALUES (${row.id}, ${guest.id}, 'E', ${row.check_in}, 'pending', ${at})
            ON CONFLICT (reservation_id, guest_id, movement) DO NOTHING`
        }
        const movements = yield* sql<MovementRow>`
          SELECT m.id, m.guest_id, m.state, m.possible_duplicate, m.last_error
          FROM sire_movements m JOIN guests g ON g.id = m.guest_id
          WHERE m.reservation_id = ${row.id} AND m.movement = 'E' AND m.state = 'pending'
          ORDER BY g.position`
        const lines: Array<PendingLine> = []
        const problems: Array<string> = []
        for (const movement of movements) {
          const guest = guests.find((g) => g.id === movement.guest_id)!
          const sireGuest: SireGuest = {
            tipo_documento: guest.tipo_documento,
            numero_documento: guest.numero_documento,
            nacionalidad: guest.nacionalidad ?? "",
            apellido: guest.apellido,
            nombre: guest.nombre,
            fecha_nacimiento: guest.fecha_nacimiento,
            pais_procedencia: guest.pais_procedencia
          }
          const line = sireLine(reference, {
            hotelCode: row.sire_hotel_code,
            cityCode: row.sire_city_code,
            guest: sireGuest,
            movement: "E",
            date: row.check_in
          })
          if (Either.isLeft(line)) {
            problems.push(`SIRE cannot map guests[${guest.position}].${line.left.field.replace(/^.*\./, "")}: ${line.left.message}`)
          } else {
            lines.push({ reservationId: row.id, movementId: movement.id, line: line.right })
          }
        }
        const hold: Hold = problems.length > 0 ? { _tag: "Configuration", warning: problems.join("; ") } : { _tag: "None" }
        return { hold, lines }
      }).pipe(Effect.orDie)

    const sireParts = (reservationId: string, guests: ReadonlyArray<GuestRow>) =>
      Effect.map(
        sql<MovementRow>`
          SELECT id, guest_id, state, possible_duplicate, last_error FROM sire_movements
          WHERE reservation_id = ${reservationId} AND movement = 'E'`,
        (rows) =>
          rows.map((movement): GuestPart => {
            const guest = guests.find((g) => g.id === movement.guest_id)
            return {
              guest: guest === undefined ? movement.guest_id : guestLabel(guest),
              state: movement.state === "accepted" ? "accepted" : movement.state === "rejected" ? "rejected" : "pending",
              code: null,
              reason: movement.last_error
            }
          })
      )

    /** One file per property for this run's lines: kept (manual) or posted (gateway). */
    const sendFile = (propertyId: string, hotelCode: string, cityCode: string, lines: ReadonlyArray<PendingLine>) =>
      Effect.gen(function*() {
        const at = yield* nowDate
        const content = sireFile(lines.map((line) => line.line))
        const id = randomUUID()
        const stamp = at.toISOString().replace(/[-:]/g, "").slice(0, 15) // yyyymmddThhmmss
        const name = `SIRE-${hotelCode}-${stamp.replace("T", "-")}-${id.slice(0, 8)}.txt`
        const [file] = yield* sql<{ id: string }>`
          INSERT INTO sire_files (id, property_id, mode, state, name, content, lines, created_at)
          VALUES (${id}, ${propertyId}, ${config.sireMode}, ${config.sireMode === "manual" ? "generated" : "posted"}, ${name},
            ${content}, ${lines.length}, ${at})
          RETURNING id`
        // Once in a generated or posted file a movement counts as sent (design §6.8): a cancellation cannot take
        // it back, and `already_reported.sire` says so.
        // One statement for the whole file (a statement per line cost seconds on large runs; docs/performance.md).
        const placed = JSON.stringify(lines.map((line, index) => ({ id: line.movementId, line: index + 1 })))
        yield* sql`
          UPDATE sire_movements m SET state = 'in_file', file_id = ${file!.id}, line = v.line,
            attempts = m.attempts + 1, updated_at = ${at}
          FROM jsonb_to_recordset(${placed}::jsonb) AS v(id uuid, line int)
          WHERE m.id = v.id`
        const reservationIds = [...new Set(lines.map((line) => line.reservationId))]
        yield* sql`UPDATE reservations SET sire_reported = true WHERE id IN ${sql.in(reservationIds)}`
        if (config.sireMode === "manual") return { accepted: 0, rejected: 0, hold: new Map<string, Hold>() }

        const outcome = yield* gateway.submit({ hotelCode, cityCode, content })
        const holds = new Map<string, Hold>()
        const settle = (movementIds: ReadonlyArray<string>, state: "accepted" | "rejected" | "pending", error: string | null) =>
          movementIds.length === 0 ? Effect.void : sql`
            UPDATE sire_movements SET state = ${state}, last_error = ${error}, updated_at = ${at},
              possible_duplicate = possible_duplicate OR ${state === "pending"}
            WHERE id IN ${sql.in(movementIds)}`
        const all = lines.map((line) => line.movementId)
        switch (outcome._tag) {
          case "Answered": {
            yield* sql`UPDATE sire_files SET answer = ${JSON.stringify(outcome)}::jsonb WHERE id = ${file!.id}`
            const failed = new Map(outcome.errors.map((error) => [error.line, error.message]))
            yield* Effect.forEach(lines, (line, index) => {
              const message = failed.get(index + 1)
              return settle([line.movementId], message === undefined ? "accepted" : "rejected", message ?? null)
            }, { discard: true })
            return { accepted: lines.length - failed.size, rejected: failed.size, hold: holds }
          }
          case "Rejected":
            yield* settle(all, "rejected", `the SIRE gateway refused the file (HTTP ${outcome.status}): ${outcome.reason}`)
            return { accepted: 0, rejected: lines.length, hold: holds }
          case "Misconfigured":
          case "Unknown": {
            yield* sql`UPDATE sire_files SET state = 'failed' WHERE id = ${file!.id}`
            const error = outcome._tag === "Misconfigured"
              ? `the SIRE gateway refused the credentials (HTTP ${outcome.status}); check SIRE_GATEWAY_TOKEN`
              : outcome.reason
            yield* settle(all, "pending", error)
            for (const id of reservationIds) {
              holds.set(id, outcome._tag === "Misconfigured" ? { _tag: "Configuration", warning: error } : { _tag: "Transient", reason: error })
            }
            return { accepted: 0, rejected: 0, hold: holds }
          }
        }
      }).pipe(Effect.orDie)

    // ------------------------------------------------------------------------------------------- recording

    /**
     * Writes a report's new state and its event (one per change) in one transaction, re-reading the
     * reservation under lock; a cancelled reservation keeps the outcome but emits nothing (design §6.9).
     */
    const settleReport = (
      reservationId: string,
      which: "tra" | "sire",
      verdict: ReturnType<typeof verdictOf>,
      transientFailure: boolean
    ) =>
      Effect.gen(function*() {
        const now = yield* nowDate
        const [row] = yield* sql<ReservationRow & { report_failures: number }>`
          SELECT * FROM reservations WHERE id = ${reservationId} FOR UPDATE`
        if (row === undefined) return
        const current = row[which] as Record<string, unknown> & { status: string }
        if (current.status !== "pending") return
        const base: Record<string, unknown> = { ...current }
        delete base.warning
        const next: Record<string, unknown> = verdict.status === "success"
          ? {
            ...base,
            status: "success",
            reported_at: now.toISOString(),
            ...(which === "tra" ? { mincit_code: verdict.code } : {})
          }
          : verdict.status === "error"
          ? { ...base, status: "error", warning: verdict.warning, reported_at: now.toISOString() }
          : { ...base, status: "pending", ...(verdict.warning === null ? {} : { warning: verdict.warning }) }
        const reported = verdict.status === "success" || (verdict.status === "pending" && row[`${which}_reported`])
        const snapshot = snapshotOf(row)
        const nextSnapshot: Lifecycle.LifecycleSnapshot = {
          ...snapshot,
          [which]: { status: next.status as Lifecycle.ReportState["status"], reported }
        }
        const status = Lifecycle.deriveStatus(nextSnapshot)
        const failures = transientFailure ? row.report_failures + 1 : 0
        const retry = transientFailure ? retryAfter(failures) : Option.none()
        const retryAt = Option.match(retry, { onNone: () => null, onSome: (gap) => new Date(now.getTime() + Duration.toMillis(gap)) })
        const [updated] = yield* sql<ReservationRow>`
          UPDATE reservations SET
            ${sql(which)} = ${JSON.stringify(next)}::jsonb,
            ${sql(`${which}_reported`)} = ${reported},
            status = ${status},
            report_failures = ${failures},
            report_retry_at = ${retryAt},
            updated_at = ${now}
          WHERE id = ${reservationId}
          RETURNING *`
        const event = verdict.status === "success" ? `${which}.reported` : verdict.status === "error" ? `${which}.failed` : null
        if (event !== null && row.reservation_status !== "cancelled") {
          yield* outbox.enqueue({
            accountId: updated!.account_id,
            environment: updated!.environment,
            reservationId,
            types: [event as Lifecycle.LifecycleEvent],
            data: reservations.views.eventData(updated!),
            guests: []
          })
        }
      }).pipe(sql.withTransaction, Effect.orDie)

    /** A report still failing transiently 72 h past due ends in `error` (design §6.9). */
    const giveUpIfLate = (verdict: ReturnType<typeof verdictOf>, checkIn: string, now: Date, reason: string) =>
      verdict.status === "pending" && verdict.transient && pastGiveUp(checkIn, now)
        ? { status: "error" as const, warning: `no answer for 72 hours past the due date (${reason})` }
        : verdict

    const release = (ids: ReadonlyArray<string>) =>
      ids.length === 0 ? Effect.void : sql`UPDATE reservations SET report_lease_until = NULL WHERE id IN ${sql.in(ids)}`.pipe(Effect.orDie)

    /**
     * An extension after the TRA was reported (design §6.8): a new `/one/` for the added nights (old → new
     * `check_out`) and a `/two/` per companion linked to the new code. When every guest is accepted,
     * `tra.mincit_code` becomes the new code and `tra.reported` is emitted again; a rejection ends the TRA in
     * `error` (`tra.failed`); anything else waits for the next run, the TRA staying `success` meanwhile.
     */
    const runExtension = (row: DueRow, guests: ReadonlyArray<GuestRow>) =>
      Effect.gen(function*() {
        const from = row.tra_extension_from!
        const [existing] = yield* sql<{ round: number }>`
          SELECT round FROM tra_submissions WHERE reservation_id = ${row.id} AND round > 0 AND period_from = ${from}
          ORDER BY round DESC LIMIT 1`
        const [last] = yield* sql<{ round: number }>`
          SELECT COALESCE(max(round), 0) AS round FROM tra_submissions WHERE reservation_id = ${row.id}`
        const round = existing?.round ?? last!.round + 1
        const result = yield* runTra(row, guests, round, { from, to: row.check_out })
        const { parts, main } = yield* traParts(row.id, guests, round)
        const verdict = verdictOf(parts, result.hold, main)
        if (verdict.status === "pending") {
          if (verdict.warning !== null) yield* sql`UPDATE reservations SET tra = tra || ${JSON.stringify({ warning: verdict.warning })}::jsonb WHERE id = ${row.id}`
          return result
        }
        yield* Effect.gen(function*() {
          const now = yield* nowDate
          const [current] = yield* sql<ReservationRow & { tra_extension_from: string | null }>`
            SELECT * FROM reservations WHERE id = ${row.id} FOR UPDATE`
          const tra = { ...(current!.tra as Record<string, unknown>) }
          delete tra.warning
          const next = verdict.status === "success"
            ? { ...tra, status: "success", mincit_code: verdict.code, reported_at: now.toISOString() }
            : { ...tra, status: "error", warning: verdict.warning, reported_at: now.toISOString() }
          const snapshot = snapshotOf(current!)
          const status = Lifecycle.deriveStatus({
            ...snapshot,
            tra: { status: next.status as Lifecycle.ReportState["status"], reported: true }
          })
          // A later extension may have moved check_out again meanwhile: keep asking for the nights after this round.
          const stillExtended = current!.check_out > row.check_out
          const [updated] = yield* sql<ReservationRow>`
            UPDATE reservations SET tra = ${JSON.stringify(next)}::jsonb, status = ${status}, updated_at = ${now},
              tra_extension_from = ${stillExtended ? row.check_out : null}
            WHERE id = ${row.id}
            RETURNING *`
          if (current!.reservation_status !== "cancelled") {
            yield* outbox.enqueue({
              accountId: updated!.account_id,
              environment: updated!.environment,
              reservationId: row.id,
              types: [verdict.status === "success" ? "tra.reported" : "tra.failed"],
              data: reservations.views.eventData(updated!),
              guests: []
            })
          }
        }).pipe(sql.withTransaction)
        return result
      }).pipe(Effect.orDie)

    // ------------------------------------------------------------------------------------------------- run

    const run = (options: RunOptions = {}) =>
      Effect.gen(function*() {
        const date = options.date ?? (yield* todayInBogota)
        const summary = {
          date,
          reservations: 0,
          tra: { sent: 0, accepted: 0, rejected: 0 },
          sire: { sent: 0, accepted: 0, rejected: 0, files: 0 }
        }
        const claimed: Array<string> = []
        const sireBatch = new Map<string, { hotelCode: string; cityCode: string; lines: Array<PendingLine> }>()
        const sireHolds = new Map<string, { hold: Hold; checkIn: string; guests: ReadonlyArray<GuestRow> }>()

        for (;;) {
          const batch = yield* claim(date, options.force ?? false).pipe(Effect.orDie)
          if (batch.length === 0) break
          claimed.push(...batch.map((b) => b.id))
          summary.reservations += batch.length
          yield* Effect.forEach(batch, ({ id }) =>
            Effect.gen(function*() {
              const { row, guests } = yield* load(id).pipe(Effect.orDie)
              if (row.tra.status === "pending") {
                const result = yield* runTra(row, guests)
                summary.tra.sent += result.sent
                summary.tra.accepted += result.accepted
                summary.tra.rejected += result.rejected
                const { parts, main } = yield* traParts(id, guests).pipe(Effect.orDie)
                const now = yield* nowDate
                const verdict = giveUpIfLate(
                  verdictOf(parts, result.hold, main),
                  row.check_in,
                  now,
                  result.hold._tag === "Transient" ? result.hold.reason : ""
                )
                yield* settleReport(id, "tra", verdict, verdict.status === "pending" && verdict.transient)
              }
              if (row.tra.status === "success" && row.tra_extension_from !== null) {
                const result = yield* runExtension(row, guests)
                summary.tra.sent += result.sent
                summary.tra.accepted += result.accepted
                summary.tra.rejected += result.rejected
              }
              if (row.sire.status === "pending") {
                const { hold, lines } = yield* sireLines(row, guests)
                sireHolds.set(id, { hold, checkIn: row.check_in, guests })
                if (lines.length > 0) {
                  const entry = sireBatch.get(row.property_id) ??
                    { hotelCode: row.sire_hotel_code!, cityCode: row.sire_city_code!, lines: [] }
                  entry.lines.push(...lines)
                  sireBatch.set(row.property_id, entry)
                }
              }
            }), { concurrency: Math.max(config.traConcurrency * 2, 4), discard: true })
        }

        for (const [propertyId, batch] of sireBatch) {
          const result = yield* sendFile(propertyId, batch.hotelCode, batch.cityCode, batch.lines)
          summary.sire.files++
          summary.sire.sent += batch.lines.length
          summary.sire.accepted += result.accepted
          summary.sire.rejected += result.rejected
          for (const [id, hold] of result.hold) {
            const entry = sireHolds.get(id)
            if (entry !== undefined && entry.hold._tag === "None") sireHolds.set(id, { ...entry, hold })
          }
        }
        for (const [id, { hold, checkIn, guests }] of sireHolds) {
          const parts = yield* sireParts(id, guests).pipe(Effect.orDie)
          const [kept] = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM sire_movements WHERE reservation_id = ${id} AND state = 'in_file'`.pipe(Effect.orDie)
          const verdict = verdictOf(parts, hold, null)
          // Movements in a kept (manual) file wait for `cli sire confirm`: no failure, no retry, no give-up.
          if (verdict.status === "pending" && hold._tag === "None" && kept!.n > 0) continue
          const now = yield* nowDate
          const final = giveUpIfLate(verdict, checkIn, now, hold._tag === "Transient" ? hold.reason : "")
          yield* settleReport(id, "sire", final, final.status === "pending" && final.transient)
        }
        yield* release(claimed)
        return summary as RunSummary
      }).pipe(Effect.withSpan("ReportRuns.run"))

    // ---------------------------------------------------------------------------------------- manual SIRE

    const files = (propertyId?: string) =>
      sql<{ file_id: string; property_id: string; created_at: Date; lines: number; status: string; content: string; name: string }>`
        SELECT id AS file_id, property_id, created_at, lines, state AS status, content, name FROM sire_files
        WHERE mode = 'manual' ${propertyId === undefined ? sql`` : sql`AND property_id = ${propertyId}`}
        ORDER BY created_at DESC, id`.pipe(
        Effect.map((rows) => ({ files: rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() })) })),
        Effect.orDie
      )

    /** `cli sire confirm`: the operator uploaded the file; its movements are accepted (design §6.8). */
    const confirm = (fileId: string) =>
      Effect.gen(function*() {
        const at = yield* nowDate
        const [file] = yield* sql<{ id: string; state: string }>`
          UPDATE sire_files SET state = 'confirmed', confirmed_at = ${at}
          WHERE id = ${fileId} AND mode = 'manual' AND state IN ('generated', 'confirmed')
          RETURNING id, state`
        if (file === undefined) return Option.none()
        const affected = yield* sql<{ reservation_id: string }>`
          UPDATE sire_movements SET state = 'accepted', updated_at = ${at}
          WHERE file_id = ${fileId} AND state = 'in_file'
          RETURNING reservation_id`
        for (const id of new Set(affected.map((row) => row.reservation_id))) {
          const { guests } = yield* load(id)
          const parts = yield* sireParts(id, guests)
          const verdict = verdictOf(parts, { _tag: "None" }, null)
          if (verdict.status !== "pending") yield* settleReport(id, "sire", verdict, false)
        }
        return Option.some({ file_id: file.id, status: "confirmed" })
      }).pipe(Effect.orDie)

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
