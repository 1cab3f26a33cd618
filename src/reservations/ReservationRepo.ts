import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { PgPool, rawQuery } from "../db/Database.ts"
import type { Environment } from "../shared/Environment.ts"
import { GuestRow, type NewGuest, ReservationRow } from "./ReservationRow.ts"
import type { ReservationDraft } from "./Transitions.ts"

/**
 * The only module that reads and writes the `reservations` and `guests` tables. Every row it hands out is
 * decoded with the table's schema (`ReservationRow`, `GuestRow`); a row that does not decode is a defect, like
 * any other infrastructure failure. Writes are called by `Reservations` (the one transition path) and by the
 * report runs' job bookkeeping (leases); nothing else writes these tables.
 */

// The reservation by external_id on the raw pool (`rawQuery`, docs/performance.md): the pre-check of a creation
// and the read of endpoints 6 and 8, never inside a transaction. Its text is the one `findByExternalId` sends
// (whitespace included, with the empty FOR UPDATE fragment), so bench/run.sh's same-SQL check covers both.
const FIND_SQL = `
        SELECT * FROM reservations
        WHERE account_id = $1 AND environment = $2 AND external_id = $3
        `

/** The three values that name a reservation from the partner's side (design §6.1). */
export interface ExternalRef {
  readonly accountId: string
  readonly environment: Environment
  readonly externalId: string
}

/** Column values as the driver takes them. */
const Columns = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** JSON-valued columns go to the driver as text; PostgreSQL casts them to the column's json/jsonb type. */
const encodeColumns = (row: Partial<ReservationDraft>): Record<string, unknown> => {
  const encoded: Record<string, unknown> = { ...row }
  for (const column of ["metadata", "tra", "sire"] as const) {
    if (row[column] !== undefined) encoded[column] = JSON.stringify(row[column])
  }
  return encoded
}

export class ReservationRepo extends Effect.Service<ReservationRepo>()("reservations/ReservationRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool

    const decodeRows = Schema.decodeUnknown(Schema.Array(ReservationRow))
    const first = (rows: ReadonlyArray<ReservationRow>) => Option.fromNullable(rows[0])

    const byExternalId = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, environment: Schema.String, externalId: Schema.String, lock: Schema.Boolean }),
      Result: ReservationRow,
      execute: ({ accountId, environment, externalId, lock }) =>
        sql`
        SELECT * FROM reservations
        WHERE account_id = ${accountId} AND environment = ${environment} AND external_id = ${externalId}
        ${lock ? sql`FOR UPDATE` : sql``}`
    })

    const byId = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, lock: Schema.Boolean }),
      Result: ReservationRow,
      execute: ({ id, lock }) => sql`SELECT * FROM reservations WHERE id = ${id} ${lock ? sql`FOR UPDATE` : sql``}`
    })

    const byToken = SqlSchema.findOne({
      Request: Schema.String,
      Result: ReservationRow,
      execute: (token) => sql`SELECT * FROM reservations WHERE checkin_token = ${token}`
    })

    const guestsOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: GuestRow,
      execute: (reservationId) => sql`SELECT * FROM guests WHERE reservation_id = ${reservationId} ORDER BY position`
    })

    const insertRow = SqlSchema.single({
      Request: Columns,
      Result: ReservationRow,
      execute: (draft) => sql`INSERT INTO reservations ${sql.insert(draft)} RETURNING *`
    })

    const updateRow = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.String, columns: Columns }),
      Result: ReservationRow,
      execute: ({ id, columns }) => sql`UPDATE reservations SET ${sql.update(columns)} WHERE id = ${id} RETURNING *`
    })

    const insertGuests = SqlSchema.findAll({
      Request: Schema.Array(Columns),
      Result: GuestRow,
      execute: (rows) => sql`INSERT INTO guests ${sql.insert(rows)} RETURNING *`
    })

    return {
      /** Outside any transaction, on the raw pool (a hot read: endpoints 6 and 8, a creation's pre-check). */
      findCommitted: (ref: ExternalRef) =>
        rawQuery(pool, FIND_SQL, [ref.accountId, ref.environment, ref.externalId]).pipe(
          Effect.flatMap(decodeRows),
          Effect.map(first),
          Effect.orDie
        ),
      findByExternalId: (ref: ExternalRef, options: { readonly lock: boolean }) =>
        byExternalId({ ...ref, lock: options.lock }).pipe(Effect.orDie),
      /** The reservation, locked until the end of the caller's transaction. */
      lock: (id: string) => byId({ id, lock: true }).pipe(Effect.orDie),
      findById: (id: string) => byId({ id, lock: false }).pipe(Effect.orDie),
      findByToken: (token: string) => byToken(token).pipe(Effect.orDie),
      /** Every guest of a reservation, in registration order (the primary first). */
      guests: (reservationId: string) => guestsOf(reservationId).pipe(Effect.orDie),
      /** The `nacionalidad` of each registered guest, in order (who goes to SIRE, design §6.3). */
      registeredNationalities: (reservationId: string) =>
        Effect.map(
          sql<{ nacionalidad: string | null }>`
            SELECT nacionalidad FROM guests WHERE reservation_id = ${reservationId} AND registered_at IS NOT NULL
            ORDER BY position`,
          (rows) => rows.map((row) => row.nacionalidad ?? "CO")
        ).pipe(Effect.orDie),
      insert: (draft: ReservationDraft) => insertRow(encodeColumns(draft)).pipe(Effect.orDie),
      /** Writes the given columns; fails (a defect) if the reservation is gone. */
      update: (id: string, columns: Partial<ReservationDraft>) =>
        updateRow({ id, columns: encodeColumns(columns) }).pipe(Effect.orDie),
      /** Unique violations (a repeated document number) stay in the error channel for the caller to name. */
      addGuests: (reservationId: string, guests: ReadonlyArray<NewGuest>) =>
        guests.length === 0
          ? Effect.succeed<ReadonlyArray<GuestRow>>([])
          : insertGuests(guests.map((guest) => ({ ...guest, reservation_id: reservationId }))).pipe(
            Effect.catchTag("ParseError", Effect.die)
          ),
      updateGuest: (id: string, columns: { readonly registered_at?: Date; readonly document_uploaded?: boolean }) =>
        sql`UPDATE guests SET ${sql.update(columns)} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      /** A document photo fetched in the background was stored (design §6.5); registration does not change. */
      markDocumentUploaded: (guestId: string) =>
        sql`UPDATE guests SET document_uploaded = true WHERE id = ${guestId}`.pipe(Effect.asVoid, Effect.orDie),
      /** Endpoint 15's `external_id` filter. */
      idByExternalId: (ref: ExternalRef) =>
        Effect.map(
          sql<{ id: string }>`
            SELECT id FROM reservations
            WHERE account_id = ${ref.accountId} AND environment = ${ref.environment} AND external_id = ${ref.externalId}`,
          (rows) => Option.fromNullable(rows[0]?.id)
        ).pipe(Effect.orDie),
      /** Guests with stored document photos whose stay ended before `checkOutBefore` (the retention job). */
      guestsWithDocumentsCheckedOutBefore: (checkOutBefore: string, limit: number) =>
        Effect.map(
          sql<{ guest_id: string }>`
            SELECT DISTINCT d.guest_id FROM guest_documents d
            JOIN guests g ON g.id = d.guest_id JOIN reservations r ON r.id = g.reservation_id
            WHERE r.check_out < ${checkOutBefore}
            LIMIT ${limit}`,
          (rows) => rows.map((row) => row.guest_id)
        ).pipe(Effect.orDie),
      /**
       * Report runs (design §7): takes up to `limit` live reservations with a report due on or before `today`
       * whose lease is free (and whose backoff wait is over, unless `force`), leasing them until `leaseUntil`.
       * `FOR UPDATE SKIP LOCKED`: several instances share a run and none takes a reservation twice.
       */
      claimDueReports: (
        options: {
          readonly today: string
          readonly force: boolean
          readonly at: Date
          readonly leaseUntil: Date
          readonly limit: number
        }
      ) =>
        Effect.map(
          sql<{ id: string }>`
          UPDATE reservations SET report_lease_until = ${options.leaseUntil}
          WHERE id IN (
            SELECT id FROM reservations
            WHERE environment = 'live' AND reservation_status <> 'cancelled'
              AND ((tra->>'status') = 'pending' OR (sire->>'status') = 'pending' OR tra_extension_from IS NOT NULL)
              AND check_in <= ${options.today}
              AND (report_lease_until IS NULL OR report_lease_until <= ${options.at})
              AND (${options.force} OR report_retry_at IS NULL OR report_retry_at <= ${options.at})
            ORDER BY check_in, id
            LIMIT ${options.limit}
            FOR UPDATE SKIP LOCKED)
          RETURNING id`,
          (rows) => rows.map((row) => row.id)
        ).pipe(Effect.orDie),
      releaseReportLeases: (ids: ReadonlyArray<string>) =>
        ids.length === 0
          ? Effect.void
          : sql`UPDATE reservations SET report_lease_until = NULL WHERE id IN ${sql.in(ids)}`.pipe(
            Effect.asVoid,
            Effect.orDie
          )
    } as const
  })
}) {}
