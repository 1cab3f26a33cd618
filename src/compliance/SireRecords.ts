import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { SireFiles } from "../reservations/Ports.ts"

/**
 * The SIRE tables (design §6.8, §6.13): `sire_movements`, an entry (E) and, once the entry went out, an exit
 * (S) movement per foreign guest, `in_file` once it is in a generated (manual) or sending/posted (gateway) file —
 * from then on it counts as sent and a cancellation cannot take it back —; and `sire_files`, the files of a
 * run, per property. A gateway file is `sending` while its upload is in flight; one whose sender stopped before
 * recording the answer becomes `unknown` and its movements are sent again as possible duplicates (design §7).
 */

export const Movement = Schema.Literal("E", "S")
export type Movement = typeof Movement.Type

export const MovementState = Schema.Literal("pending", "in_file", "accepted", "rejected")

export const MovementRow = Schema.Struct({
  id: Schema.String,
  guest_id: Schema.String,
  movement: Movement,
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

/** The statement of `ensurePending`: the movements it adds, then the reservation's pending ones of this kind. */
const addedAndPending = (
  sql: SqlClient.SqlClient,
  pending: {
    readonly reservationId: string
    readonly movement: Movement
    readonly guestIds: ReadonlyArray<string>
    readonly date: string
    readonly at: Date
  }
) =>
  sql`
    WITH added AS (
      INSERT INTO sire_movements ${
    sql.insert(pending.guestIds.map((guestId) => ({
      reservation_id: pending.reservationId,
      guest_id: guestId,
      movement: pending.movement,
      movement_date: pending.date,
      state: "pending",
      updated_at: pending.at
    })))
  }
      ON CONFLICT (reservation_id, guest_id, movement) DO NOTHING
      RETURNING id, guest_id, movement, state, possible_duplicate, last_error)
    SELECT * FROM added
    UNION ALL
    SELECT id, guest_id, movement, state, possible_duplicate, last_error FROM sire_movements
    WHERE reservation_id = ${pending.reservationId} AND movement = ${pending.movement} AND state = 'pending'`

/** The lines of a new file, placed by one statement (`createFile`). */
const placeLines = (
  sql: SqlClient.SqlClient,
  file: NewFile,
  placed: ReadonlyArray<{ readonly movementId: string; readonly line: number }>
) =>
  sql`
    UPDATE sire_movements m SET state = 'in_file', file_id = ${file.id}, line = v.line,
      attempts = m.attempts + 1, updated_at = ${file.at}
    FROM jsonb_to_recordset(${JSON.stringify(placed.map(({ movementId, line }) => ({ id: movementId, line })))}::jsonb)
      AS v(id uuid, line int)
    WHERE m.id = v.id`

export class SireRecords extends Effect.Service<SireRecords>()("compliance/SireRecords", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const movements = SqlSchema.findAll({
      Request: Schema.Struct({ reservationId: Schema.String, movement: Movement, pendingOnly: Schema.Boolean }),
      Result: MovementRow,
      execute: ({ reservationId, movement, pendingOnly }) =>
        sql`
          SELECT id, guest_id, movement, state, possible_duplicate, last_error FROM sire_movements
          WHERE reservation_id = ${reservationId} AND movement = ${movement}
            ${pendingOnly ? sql`AND state = 'pending'` : sql``}`
    })

    const movementsOf = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ ...MovementRow.fields, reservation_id: Schema.String }),
      execute: (reservationIds) =>
        sql`
          SELECT id, reservation_id, guest_id, movement, state, possible_duplicate, last_error FROM sire_movements
          WHERE reservation_id IN ${sql.in(reservationIds)}`
    })

    const decodeMovements = Schema.decodeUnknown(Schema.Array(MovementRow))

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
      /**
       * The movements of these guests, created if missing — one of each kind per guest (design §6.8) —, and the
       * reservation's movements of this kind still pending, in one statement (the statement's snapshot does not see
       * its own inserts: the two sets never overlap).
       */
      ensurePending: (reservationId: string, movement: Movement, guestIds: ReadonlyArray<string>, date: string, at: Date) =>
        guestIds.length === 0 ? movements({ reservationId, movement, pendingOnly: true }).pipe(Effect.orDie) : Effect.flatMap(
          addedAndPending(sql, { reservationId, movement, guestIds, date, at }),
          decodeMovements
        ).pipe(Effect.orDie),
      all: (reservationId: string, movement: Movement) =>
        movements({ reservationId, movement, pendingOnly: false }).pipe(Effect.orDie),
      /** Every movement of these reservations, by reservation (one statement per thousand reservations). */
      allOf: (reservationIds: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const byReservation = new Map<string, Array<MovementRow & { readonly reservation_id: string }>>()
          for (let start = 0; start < reservationIds.length; start += 1000) {
            const rows = yield* movementsOf(reservationIds.slice(start, start + 1000))
            for (const row of rows) {
              const list = byReservation.get(row.reservation_id) ?? []
              list.push(row)
              byReservation.set(row.reservation_id, list)
            }
          }
          const recorded: ReadonlyMap<string, ReadonlyArray<MovementRow>> = byReservation
          return recorded
        }).pipe(Effect.orDie),
      /**
       * A pending exit follows its date (design §6.8: moved by shortening, extending or cancelling) until it is
       * in a file.
       */
      moveExits: (reservationId: string, date: string, at: Date) =>
        sql`
          UPDATE sire_movements SET movement_date = ${date}, updated_at = ${at}
          WHERE reservation_id = ${reservationId} AND movement = 'S' AND state = 'pending' AND movement_date <> ${date}`
          .pipe(Effect.asVoid, Effect.orDie),
      /**
       * The retention job (design §3): the content of every SIRE file whose stays all checked out before `cutoff`
       * goes (its name, line count, state and the authority's answer stay). A sweep of the files not yet emptied
       * rather than of the marked stays: a file written after its stays were marked (an exit retried for weeks) goes
       * too. Answers the files emptied.
       */
      redactFiles: (cutoff: string, at: Date) =>
        sql<{ id: string }>`
          UPDATE sire_files f SET content = '', redacted_at = ${at}
          WHERE f.redacted_at IS NULL
            AND EXISTS (SELECT 1 FROM sire_movements m WHERE m.file_id = f.id)
            AND NOT EXISTS (
              SELECT 1 FROM sire_movements m JOIN reservations r ON r.id = m.reservation_id
              WHERE m.file_id = f.id AND r.check_out >= ${cutoff})
          RETURNING f.id`.pipe(Effect.orDie),
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
            VALUES (${file.id}, ${file.propertyId}, ${file.mode}, ${file.mode === "manual" ? "generated" : "sending"},
              ${file.name}, ${file.content}, ${file.lines}, ${file.at})`
          yield* placeLines(sql, file, placed)
        }).pipe(Effect.orDie),
      /**
       * Outcomes of movements. Back to `pending` with `possibleDuplicate` when the file may have reached
       * Migración (an unknown outcome: design §7, retried and marked), without it when it cannot have (refused
       * credentials).
       */
      settleMovements: (
        movementIds: ReadonlyArray<string>,
        state: "accepted" | "rejected" | "pending",
        error: string | null,
        at: Date,
        possibleDuplicate = false
      ) =>
        movementIds.length === 0 ? Effect.void : sql`
          UPDATE sire_movements SET state = ${state}, last_error = ${error}, updated_at = ${at},
            possible_duplicate = possible_duplicate OR ${possibleDuplicate}
          WHERE id IN ${sql.in(movementIds)}`.pipe(Effect.asVoid, Effect.orDie),
      /**
       * `cli reports retry` (design §9): the rejected movements of one kind are pending again, for the next run's
       * file; accepted ones stay accepted. Answers how many.
       */
      requeue: (reservationId: string, movement: Movement, at: Date) =>
        Effect.map(
          sql<{ id: string }>`
            UPDATE sire_movements SET state = 'pending', last_error = NULL, updated_at = ${at}
            WHERE reservation_id = ${reservationId} AND movement = ${movement} AND state = 'rejected'
            RETURNING id`,
          (rows) => rows.length
        ).pipe(Effect.orDie),
      fileAnswered: (fileId: string, answer: unknown) =>
        sql`UPDATE sire_files SET state = 'posted', answer = ${JSON.stringify(answer)}::jsonb WHERE id = ${fileId}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      /**
       * Gateway files whose sender stopped while the upload was in flight: still `sending`, and no reservation of
       * theirs is leased any more (a live run renews its leases until it has recorded the answer; a crashed one
       * loses them within one lease, design §7). The outcome is unknown, so the file is `unknown` and its
       * movements are pending again, as possible duplicates. Answers the reservations to report again.
       */
      recoverLostFiles: (at: Date) =>
        Effect.gen(function*() {
          const lost = yield* sql<{ id: string }>`
            UPDATE sire_files f SET state = 'unknown'
            WHERE f.state = 'sending' AND NOT EXISTS (
              SELECT 1 FROM sire_movements m JOIN reservations r ON r.id = m.reservation_id
              WHERE m.file_id = f.id AND r.report_lease_until > ${at})
            RETURNING id`
          if (lost.length === 0) return []
          const moved = yield* sql<{ reservation_id: string }>`
            UPDATE sire_movements SET state = 'pending', possible_duplicate = true, updated_at = ${at},
              last_error = 'the upload of its file stopped before the answer was recorded; sent again'
            WHERE file_id IN ${sql.in(lost.map((file) => file.id))} AND state = 'in_file'
            RETURNING reservation_id`
          return [...new Set(moved.map((row) => row.reservation_id))]
        }).pipe(Effect.orDie),
      fileFailed: (fileId: string) =>
        sql`UPDATE sire_files SET state = 'failed' WHERE id = ${fileId}`.pipe(Effect.asVoid, Effect.orDie),
      manualFiles: (propertyId: string | undefined) => manualFiles(propertyId ?? null).pipe(Effect.orDie),
      /**
       * `cli sire confirm`: the operator uploaded the file; its movements are accepted (design §6.8). Answers the
       * reservations and kinds of movement that changed, or None for an unknown (or non-manual) file.
       */
      confirmFile: (fileId: string, at: Date) =>
        Effect.gen(function*() {
          const [file] = yield* sql<{ id: string }>`
            UPDATE sire_files SET state = 'confirmed', confirmed_at = ${at}
            WHERE id = ${fileId} AND mode = 'manual' AND state IN ('generated', 'confirmed')
            RETURNING id`
          if (file === undefined) return Option.none()
          const affected = yield* sql<{ reservation_id: string; movement: Movement }>`
            UPDATE sire_movements SET state = 'accepted', updated_at = ${at}
            WHERE file_id = ${fileId} AND state = 'in_file'
            RETURNING reservation_id, movement`
          const unique = new Map(affected.map((row) => [`${row.reservation_id}:${row.movement}`, row]))
          return Option.some([...unique.values()].map((row) => ({ reservationId: row.reservation_id, movement: row.movement })))
        }).pipe(Effect.orDie)
    } as const
  })
}) {}

/** The reservations' port for what the SIRE files hold of them (`reservations/Ports.ts`). */
export const sireFiles = Layer.effect(
  SireFiles,
  Effect.map(SireRecords, (records) => ({
    fileNames: records.fileNames,
    exitInFile: (reservationId: string) =>
      Effect.map(records.all(reservationId, "S"), (exits) => exits.some((movement) => movement.state !== "pending"))
  }))
).pipe(Layer.provide(SireRecords.Default))
