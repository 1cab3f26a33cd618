import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, Schema } from "effect"
import { query } from "../db/Database.ts"
import type { Lease } from "../jobs/JobQueue.ts"
import type { Environment } from "../shared/Environment.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { GuestRow, type NewGuest, ReservationRow } from "./ReservationRow.ts"
import type { State } from "./machine/State.ts"

/**
 * The only module that reads and writes the `reservations` and `guests` tables. Every row it hands out is
 * decoded with the table's schema (`ReservationRow`, `GuestRow`); a row that does not decode is a defect, like
 * any other infrastructure failure. Writes are called by `Reservations` (the one transition path) and by the
 * report runs' job bookkeeping (leases); nothing else writes these tables.
 */

/** The three values that name a reservation from the partner's side (design §6.1). */
/** A reservation a report run claimed, with the trace of the request that made it (design §9). */
export interface DueReport {
  readonly id: string
  readonly trace_parent: string | null
}

export interface ExternalRef {
  readonly accountId: string
  readonly environment: Environment
  readonly externalId: string
}

/**
 * Decodes a statement's rows with a table's schema (synchronously: this runs on every partner read). A row that
 * does not decode is a defect, like any other infrastructure failure.
 */
const decodedWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>> => {
    const decoded: Array<A> = []
    for (const row of rows) {
      const result = decode(row)
      if (Either.isLeft(result)) return Effect.die(result.left)
      decoded.push(result.right)
    }
    return Effect.succeed(decoded)
  }
}

const withoutNulls = (columns: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(columns).filter(([, value]) => value !== null))

/** JSON-valued columns go to the driver as text; PostgreSQL casts them to the column's json/jsonb type. */
const encodeColumns = (row: Partial<State>): Record<string, unknown> => {
  const encoded: Record<string, unknown> = { ...row }
  for (const column of ["metadata", "tra", "sire"] as const) {
    if (row[column] !== undefined) encoded[column] = JSON.stringify(row[column])
  }
  return encoded
}

/** Where a page of `reportsPage` ends: the last report's due date (or 9999-12-31), reservation and report. */
export interface ReportCursor {
  readonly sends_on: string
  readonly id: string
  readonly ordinal: number
}

export class ReservationRepo extends Effect.Service<ReservationRepo>()("reservations/ReservationRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const reservations = decodedWith(ReservationRow)
    const guestRows = decodedWith(GuestRow)
    const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])
    const one = <A>(rows: ReadonlyArray<A>) =>
      rows[0] === undefined ? Effect.dieMessage("the statement returned no row") : Effect.succeed(rows[0])

    /**
     * The reservation by external_id, locked or not. Run with `query` (docs/performance.md): on the pool outside
     * a transaction, on the transaction's connection inside one; bench/run.sh's same-SQL check covers the text.
     */
    const byExternalId = (ref: ExternalRef, lock: boolean) =>
      query(sql`
        SELECT * FROM reservations
        WHERE account_id = ${ref.accountId} AND environment = ${ref.environment} AND external_id = ${ref.externalId}
        ${lock ? sql`FOR UPDATE` : sql``}`).pipe(Effect.orDie, Effect.flatMap(reservations), Effect.map(first))

    return {
      /** Outside any transaction: the pre-check of a creation and the read of endpoints 6 and 8 (a hot read). */
      findCommitted: (ref: ExternalRef) => byExternalId(ref, false),
      findByExternalId: (ref: ExternalRef, options: { readonly lock: boolean }) => byExternalId(ref, options.lock),
      /** The reservation, locked until the end of the caller's transaction. */
      lock: (id: string) =>
        query(sql`SELECT * FROM reservations WHERE id = ${id} FOR UPDATE`).pipe(
          Effect.orDie,
          Effect.flatMap(reservations),
          Effect.map(first)
        ),
      findById: (id: string) =>
        sql`SELECT * FROM reservations WHERE id = ${id}`.pipe(Effect.orDie, Effect.flatMap(reservations), Effect.map(first)),
      findByToken: (token: string) =>
        sql`SELECT * FROM reservations WHERE checkin_token = ${token}`.pipe(
          Effect.orDie,
          Effect.flatMap(reservations),
          Effect.map(first)
        ),
      /** Every guest of a reservation, in registration order (the primary first). */
      guests: (reservationId: string) =>
        query(sql`SELECT * FROM guests WHERE reservation_id = ${reservationId} ORDER BY position`).pipe(
          Effect.orDie,
          Effect.flatMap(guestRows)
        ),
      /**
       * A new reservation; columns left null are not sent (they have no default but NULL). It keeps the
       * `traceparent` of the request that made it: its report runs continue that trace (design §9).
       */
      insert: (draft: State) =>
        Effect.flatMap(TraceContext.current, (traceParent) => {
          const row = { ...withoutNulls(encodeColumns(draft)), ...TraceContext.column(traceParent) }
          return query(sql`INSERT INTO reservations ${sql.insert(row)} RETURNING *`)
        }).pipe(
          Effect.orDie,
          Effect.flatMap(reservations),
          Effect.flatMap(one)
        ),
      /** Writes the given columns; fails (a defect) if the reservation is gone. */
      update: (id: string, columns: Partial<State>) =>
        query(sql`UPDATE reservations SET ${sql.update(encodeColumns(columns))} WHERE id = ${id} RETURNING *`).pipe(
          Effect.orDie,
          Effect.flatMap(reservations),
          Effect.flatMap(one)
        ),
      /**
       * Several reservations, locked in id order until the end of the caller's transaction. Every statement locking
       * several takes this one order (the report leases too, `ReportQueue.ts`), so two never deadlock in a circle.
       */
      lockAll: (ids: ReadonlyArray<string>) =>
        ids.length === 0 ? Effect.succeed<ReadonlyArray<ReservationRow>>([]) : query(sql`
          SELECT * FROM reservations WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`).pipe(
          Effect.orDie,
          Effect.flatMap(reservations)
        ),
      /** Writes each reservation's columns; reservations given the same values are written by one statement. */
      updateAll: (changes: ReadonlyArray<{ readonly id: string; readonly columns: Partial<State> }>) =>
        Effect.gen(function*() {
          const groups = new Map<string, { readonly columns: Record<string, unknown>; readonly ids: Array<string> }>()
          for (const { id, columns } of changes) {
            const encoded = encodeColumns(columns)
            const key = JSON.stringify(Object.entries(encoded))
            const group = groups.get(key) ?? { columns: encoded, ids: [] }
            group.ids.push(id)
            groups.set(key, group)
          }
          const written: Array<ReservationRow> = []
          for (const { columns, ids } of groups.values()) {
            const rows = yield* query(
              sql`UPDATE reservations SET ${sql.update(columns)} WHERE id IN ${sql.in(ids)} RETURNING *`
            ).pipe(Effect.orDie, Effect.flatMap(reservations))
            written.push(...rows)
          }
          return written
        }),
      /** Unique violations (a repeated document number) stay in the error channel for the caller to name. */
      addGuests: (reservationId: string, guests: ReadonlyArray<NewGuest>) =>
        guests.length === 0
          ? Effect.succeed<ReadonlyArray<GuestRow>>([])
          : query(sql`INSERT INTO guests ${sql.insert(guests.map((guest) => ({ ...guest, reservation_id: reservationId })))}
              RETURNING *`).pipe(Effect.flatMap(guestRows)),
      updateGuest: (id: string, columns: { readonly registered_at?: Date; readonly document_uploaded?: boolean }) =>
        query(sql`UPDATE guests SET ${sql.update(columns)} WHERE id = ${id}`).pipe(Effect.asVoid, Effect.orDie),
      /**
       * A page of an account's reservations, most recently changed first (the panel, design §8); `after` is the
       * last row of the previous page. Answers up to `limit + 1` rows: the extra one says there is a next page.
       */
      page: (filter: {
        readonly accountId: string
        readonly environment: Environment
        readonly status?: ReservationRow["status"] | undefined
        readonly from?: string | undefined
        readonly to?: string | undefined
        readonly externalIdContains?: string | undefined
        readonly after?: { readonly updatedAt: Date; readonly id: string } | undefined
        readonly limit: number
      }) => {
        const like = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
        const conditions = [
          sql`account_id = ${filter.accountId}`,
          sql`environment = ${filter.environment}`,
          ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
          ...(filter.from === undefined ? [] : [sql`check_in >= ${filter.from}`]),
          ...(filter.to === undefined ? [] : [sql`check_in <= ${filter.to}`]),
          ...(filter.externalIdContains === undefined ? [] : [sql`external_id ILIKE ${like(filter.externalIdContains)}`]),
          ...(filter.after === undefined
            ? []
            : [sql`(updated_at, id) < (${filter.after.updatedAt}, ${filter.after.id})`])
        ]
        return sql`
          SELECT * FROM reservations WHERE ${sql.and(conditions)}
          ORDER BY updated_at DESC, id DESC LIMIT ${filter.limit + 1}`.pipe(Effect.orDie, Effect.flatMap(reservations))
      },
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
       * Reservations whose stay ended before `checkOutBefore` and whose guests' personal data is still in event
       * bodies or SIRE files (the retention job, design §3).
       */
      holdingPersonalDataCheckedOutBefore: (checkOutBefore: string, limit: number) =>
        Effect.map(
          sql<{ id: string }>`
            SELECT id FROM reservations
            WHERE personal_data_removed_at IS NULL AND check_out < ${checkOutBefore}
            ORDER BY check_out, id LIMIT ${limit}`,
          (rows) => rows.map((row) => row.id)
        ).pipe(Effect.orDie),
      /**
       * A page of live reports — TRA (1), SIRE entry (2) or SIRE exit (3) — in one of `statuses`, optionally of
       * one property, only overdue ones (due before `today` and not `success`), by due date, reservation and
       * report (`cli reports list`, design §9). `after` is the last report of the previous page; answers up to
       * `limit + 1` reports: the extra one says there is a next page.
       */
      reportsPage: (filter: {
        readonly statuses: ReadonlyArray<"pending" | "error">
        readonly propertyId?: string | undefined
        readonly overdueBefore?: string | undefined
        readonly after?: ReportCursor | undefined
        readonly limit: number
      }) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ report_ordinal: number; report_sends_on: string } & Record<string, unknown>>`
            SELECT r.*, rep.ordinal AS report_ordinal, rep.sends_on AS report_sends_on
            FROM reservations r CROSS JOIN LATERAL (VALUES
              (1, r.tra->>'status', COALESCE(r.tra->>'sends_on', '9999-12-31')),
              (2, r.sire->>'status', r.check_in::text),
              (3, r.sire->'exit'->>'status', COALESCE(r.sire->'exit'->>'sends_on', '9999-12-31'))
            ) AS rep(ordinal, status, sends_on)
            WHERE r.environment = 'live' AND rep.status IN ${sql.in(filter.statuses)}
              ${filter.propertyId === undefined ? sql`` : sql`AND r.property_id = ${filter.propertyId}`}
              ${filter.overdueBefore === undefined ? sql`` : sql`AND rep.sends_on < ${filter.overdueBefore}`}
              ${
            filter.after === undefined
              ? sql``
              : sql`AND (rep.sends_on, r.id, rep.ordinal) > (${filter.after.sends_on}, ${filter.after.id}::uuid, ${filter.after.ordinal})`
          }
            ORDER BY rep.sends_on, r.id, rep.ordinal
            LIMIT ${filter.limit + 1}`.pipe(Effect.orDie)
          const decoded = yield* reservations(rows)
          return decoded.map((row, index) => ({ row, ordinal: rows[index]!.report_ordinal, sends_on: rows[index]!.report_sends_on }))
        })
    } as const
  })
}) {}

/**
 * The claim of a report run (design §7; the queue is `ReportQueue.ts`): takes up to `limit` live reservations with a
 * report due on or before `today` whose lease is free at `lease.at` (and whose backoff wait is over, unless
 * `force`), leasing them until `lease.until`. `FOR UPDATE SKIP LOCKED`: several instances share a run and none
 * takes a reservation twice.
 */
export const claimDueReports = (
  lease: Lease,
  options: { readonly today: string; readonly force: boolean; readonly limit: number }
): Effect.Effect<ReadonlyArray<DueReport>, never, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<DueReport>`
      UPDATE reservations SET report_lease_until = ${lease.until}
      WHERE id IN (
        SELECT id FROM reservations
        WHERE environment = 'live'
          AND (report_lease_until IS NULL OR report_lease_until <= ${lease.at})
          AND (
            -- A cancelled reservation's report still pending was in flight at the cancellation: it is settled at
            -- the next run, whatever its backoff (design §6.8, "Nothing stays pending for ever").
            (reservation_status = 'cancelled' AND ((tra->>'status') = 'pending' OR (sire->>'status') = 'pending'))
            OR ((
              (reservation_status <> 'cancelled'
                AND ((tra->>'status') = 'pending' OR (sire->>'status') = 'pending' OR tra_extension_from IS NOT NULL)
                AND check_in <= ${options.today})
              -- Exits go out on their own day, also after a cancellation (design §6.8).
              OR ((sire->'exit'->>'status') = 'pending' AND (sire->'exit'->>'sends_on') <= ${options.today}))
              AND (${options.force} OR report_retry_at IS NULL OR report_retry_at <= ${lease.at})))
        ORDER BY check_in, id
        LIMIT ${options.limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING id, trace_parent`.pipe(Effect.orDie))
