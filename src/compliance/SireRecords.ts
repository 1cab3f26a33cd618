import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"

/**
 * The SIRE tables (design §6.8, §6.13): `sire_movements`, one entry movement per foreign guest, `in_file` once
 * it is in a generated (manual) or posted (gateway) file — from then on it counts as sent and a cancellation
 * cannot take it back —; and `sire_files`, the files of a run, per property.
 */

export const MovementState = Schema.Literal("pending", "in_file", "accepted", "rejected")

export const MovementRow = Schema.Struct({
  id: Schema.String,
  guest_id: Schema.String,
  state: MovementState,
  possible_duplicate: Schema.Boolean,
  last_error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "SireMovementRow" })
export type MovementRow = typeof MovementRow.Type

export const FileMode = Schema.Literal("manual", "gateway")
export type FileMode = typeof FileMode.Type

export const ManualFile = Schema.Struct({
  file_id: Schema.String,
  property_id: Schema.String,
  name: Schema.String,
  created_at: Schema.DateFromSelf,
  lines: Schema.Number,
  status: Schema.String,
  content: Schema.String
}).annotations({ identifier: "SireFileRow" })
export type ManualFile = typeof ManualFile.Type

export interface NewFile {
  readonly id: string
  readonly propertyId: string
  readonly mode: FileMode
  readonly name: string
  readonly content: string
  readonly lines: number
  readonly at: Date
}

export class SireRecords extends Effect.Service<SireRecords>()("compliance/SireRecords", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const movements = SqlSchema.findAll({
      Request: Schema.Struct({ reservationId: Schema.String, pendingOnly: Schema.Boolean }),
      Result: MovementRow,
      execute: ({ reservationId, pendingOnly }) =>
        sql`
          SELECT id, guest_id, state, possible_duplicate, last_error FROM sire_movements
          WHERE reservation_id = ${reservationId} AND movement = 'E' ${pendingOnly ? sql`AND state = 'pending'` : sql``}`
    })

    const manualFiles = SqlSchema.findAll({
      Request: Schema.NullOr(Schema.String),
      Result: ManualFile,
      execute: (propertyId) =>
        sql`
          SELECT id AS file_id, property_id, name, created_at, lines, state AS status, content FROM sire_files
          WHERE mode = 'manual' ${propertyId === null ? sql`` : sql`AND property_id = ${propertyId}`}
          ORDER BY created_at DESC, id`
    })

    return {
      /** The entry movements of these guests, created if missing (one per guest, design §6.8). */
      ensureEntries: (reservationId: string, guestIds: ReadonlyArray<string>, date: string, at: Date) =>
        guestIds.length === 0 ? Effect.void : sql`
          INSERT INTO sire_movements ${
          sql.insert(guestIds.map((guestId) => ({
            reservation_id: reservationId,
            guest_id: guestId,
            movement: "E",
            movement_date: date,
            state: "pending",
            updated_at: at
          })))
        }
          ON CONFLICT (reservation_id, guest_id, movement) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie),
      pendingEntries: (reservationId: string) => movements({ reservationId, pendingOnly: true }).pipe(Effect.orDie),
      entries: (reservationId: string) => movements({ reservationId, pendingOnly: false }).pipe(Effect.orDie),
      /** Movements waiting in a kept (manual) file for `cli sire confirm`. */
      keptInFile: (reservationId: string) =>
        Effect.map(
          sql<{ n: number }>`
            SELECT count(*)::int AS n FROM sire_movements WHERE reservation_id = ${reservationId} AND state = 'in_file'`,
          (rows) => rows[0]?.n ?? 0
        ).pipe(Effect.orDie),
      /** The names of the files a reservation's movements went out in (a cancellation's warning, design §6.8). */
      fileNames: (reservationId: string) =>
        Effect.map(
          sql<{ name: string }>`
            SELECT DISTINCT f.name FROM sire_movements m JOIN sire_files f ON f.id = m.file_id
            WHERE m.reservation_id = ${reservationId} ORDER BY f.name`,
          (rows) => rows.map((file) => file.name)
        ).pipe(Effect.orDie),
      /**
       * A new file and its lines, in one step: once in a generated or posted file a movement counts as sent
       * (design §6.8). One statement places every line (a statement per line cost seconds on large runs).
       */
      createFile: (file: NewFile, placed: ReadonlyArray<{ readonly movementId: string; readonly line: number }>) =>
        Effect.gen(function*() {
          yield* sql`
            INSERT INTO sire_files (id, property_id, mode, state, name, content, lines, created_at)
            VALUES (${file.id}, ${file.propertyId}, ${file.mode}, ${file.mode === "manual" ? "generated" : "posted"},
              ${file.name}, ${file.content}, ${file.lines}, ${file.at})`
          yield* sql`
            UPDATE sire_movements m SET state = 'in_file', file_id = ${file.id}, line = v.line,
              attempts = m.attempts + 1, updated_at = ${file.at}
            FROM jsonb_to_recordset(${JSON.stringify(placed.map(({ movementId, line }) => ({ id: movementId, line })))}::jsonb)
              AS v(id uuid, line int)
            WHERE m.id = v.id`
        }).pipe(Effect.orDie),
      /** Outcomes of movements; a movement sent again after an unknown outcome is a possible duplicate (design §7). */
      settleMovements: (
        movementIds: ReadonlyArray<string>,
        state: "accepted" | "rejected" | "pending",
        error: string | null,
        at: Date
      ) =>
        movementIds.length === 0 ? Effect.void : sql`
          UPDATE sire_movements SET state = ${state}, last_error = ${error}, updated_at = ${at},
            possible_duplicate = possible_duplicate OR ${state === "pending"}
          WHERE id IN ${sql.in(movementIds)}`.pipe(Effect.asVoid, Effect.orDie),
      fileAnswered: (fileId: string, answer: unknown) =>
        sql`UPDATE sire_files SET answer = ${JSON.stringify(answer)}::jsonb WHERE id = ${fileId}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      fileFailed: (fileId: string) =>
        sql`UPDATE sire_files SET state = 'failed' WHERE id = ${fileId}`.pipe(Effect.asVoid, Effect.orDie),
      manualFiles: (propertyId: string | undefined) => manualFiles(propertyId ?? null).pipe(Effect.orDie),
      /**
       * `cli sire confirm`: the operator uploaded the file; its movements are accepted (design §6.8). Answers the
       * reservations whose movements changed, or None for an unknown (or non-manual) file.
       */
      confirmFile: (fileId: string, at: Date) =>
        Effect.gen(function*() {
          const [file] = yield* sql<{ id: string }>`
            UPDATE sire_files SET state = 'confirmed', confirmed_at = ${at}
            WHERE id = ${fileId} AND mode = 'manual' AND state IN ('generated', 'confirmed')
            RETURNING id`
          if (file === undefined) return Option.none()
          const affected = yield* sql<{ reservation_id: string }>`
            UPDATE sire_movements SET state = 'accepted', updated_at = ${at}
            WHERE file_id = ${fileId} AND state = 'in_file'
            RETURNING reservation_id`
          return Option.some([...new Set(affected.map((row) => row.reservation_id))])
        }).pipe(Effect.orDie)
    } as const
  })
}) {}
