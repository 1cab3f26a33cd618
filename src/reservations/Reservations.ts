import { SqlClient, SqlError } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { joiningTransaction, query } from "../db/Database.ts"
import * as TraceContext from "../shared/TraceContext.ts"
import { CreationInProgress, InvalidRequest, ReservationConflict } from "../shared/errors.ts"
import type { Environment } from "../shared/Environment.ts"
import { todayInBogota } from "../shared/Calendar.ts"
import { newCheckinToken } from "./CheckinToken.ts"
import type { Guest } from "./Reservation.ts"
import { type ExternalRef, ReservationRepo } from "./ReservationRepo.ts"
import type { GuestWrite } from "./machine/Decision.ts"
import * as Machine from "./machine/Machine.ts"
import { extensionToSimulate, simulateExtension, withDueReports } from "./machine/Reports.ts"
import { carriesGuests, type ReservationEvent, type State, type UpdatedField, updatedFields } from "./machine/State.ts"
import { PhotoQueue, type ReportingProperty, ReservationEvents, SimulatedAuthorities } from "./Ports.ts"
import { type GuestRow, type NewGuest, photosRetained, type ReservationRow } from "./ReservationRow.ts"
import { makeViews } from "./Views.ts"

/**
 * design §6.7: the known fields as sent (unknown ones already dropped by the schema), keys sorted at every
 * depth, array order kept, no defaults filled in.
 */
export const fingerprint = (body: unknown): string => {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === "object"
      ? Object.fromEntries(
        Object.entries(value).sort(([a], [b]) => a < b ? -1 : 1).map(([key, item]) => [key, canonical(item)])
      )
      : value
  return createHash("sha256").update(JSON.stringify(canonical(body))).digest("hex")
}

/** Both halves of a 64-bit advisory-lock key for one (account, environment, external_id). */
export const lockKey = (accountId: string, environment: Environment, externalId: string) =>
  createHash("sha256").update(`${accountId}\u0000${environment}\u0000${externalId}`).digest().readBigInt64BE(0)
    .toString()

/** The stored amounts of a creation: as sent, and in COP with the rate used (design §6.11). */
export interface Amounts {
  readonly cop: string | null
  readonly rate: string | null
  readonly date: string | null
}

export const refOf = (key: AuthenticatedKey, externalId: string): ExternalRef => ({
  accountId: key.accountId,
  environment: key.environment,
  externalId
})

/** `sandbox_simulate` is for test keys only (design §6.12). */
export const testKeyOnly = (key: AuthenticatedKey, body: { readonly sandbox_simulate?: unknown }) =>
  key.environment === "live" && body.sandbox_simulate !== undefined
    ? Effect.fail(
      new InvalidRequest({
        message: "invalid request: sandbox_simulate",
        details: { fields: [{ field: "sandbox_simulate", message: "is only accepted with a test key" }] }
      })
    )
    : Effect.void

export const creationInProgress = (externalId: string) =>
  new CreationInProgress({
    message: `another creation of external_id ${JSON.stringify(externalId)} is running; retry`,
    details: { external_id: externalId }
  })

const reservationConflict = (row: Pick<ReservationRow, "id" | "external_id">) =>
  new ReservationConflict({
    message: `external_id ${JSON.stringify(row.external_id)} already exists with different data; use PATCH to change it`,
    details: { external_id: row.external_id, reservation_id: row.id }
  })

/** A repeat of a creation: the same request replays (design §6.7), a different one is a conflict (spec rule 5). */
export const replayOrConflict = <A>(row: ReservationRow, fp: string, replay: (row: ReservationRow) => A) =>
  row.fingerprint === fp ? Effect.succeed({ created: false, response: replay(row) }) : Effect.fail(reservationConflict(row))

/** A guest as the API shows it (spec "Guest"); `retained`: whether its photos are still kept (else null). */
const guestView = (guest: GuestRow, retained: boolean): Guest => ({
  is_primary: guest.is_primary,
  tipo_documento: guest.tipo_documento,
  numero_documento: guest.numero_documento,
  nombre: guest.nombre,
  apellido: guest.apellido,
  nacionalidad: guest.nacionalidad,
  fecha_nacimiento: guest.fecha_nacimiento,
  email: guest.email,
  phone: guest.phone,
  address: guest.address,
  ciudad_residencia: guest.ciudad_residencia,
  pais_residencia: guest.pais_residencia,
  registered_at: guest.registered_at?.toISOString() ?? null,
  document_uploaded: retained ? guest.document_uploaded : null
})

/** The statement reading a property's reporting settings (design §6.9). */
const reportingSettingsOf = (sql: SqlClient.SqlClient, propertyId: string) =>
  sql<ReportingProperty>`
    SELECT reports_tra, reports_sire, tra_token IS NOT NULL AS has_tra_token,
           sire_hotel_code IS NOT NULL AS has_sire_hotel_code,
           name, establishment_name, rnt_id, tipo_acomodacion, default_room
    FROM properties WHERE id = ${propertyId}`

/** The commands applied to many reservations at once (`applyAll`): they never refuse, and touch no guest. */
export type RunCommand = Extract<
  Machine.Command,
  { readonly _tag: "MarkSent" | "SettleSireEntry" | "SettleSireExit" | "SireExitUnbuilt" | "PersonalDataRemoved" }
>

/** What a committed transition answers: the reservation as stored, the command's result, the guests it added. */
export interface Applied<A> {
  readonly row: ReservationRow
  readonly result: A
  readonly added: ReadonlyArray<GuestRow>
}

/**
 * The owner of a reservation's state. `apply` is the one transition path: it locks the reservation, asks the
 * reservation machine what a command does (`Machine.decide`, pure), derives what follows (`Machine.follow`:
 * status, check-in link, reports when due, the simulated authorities of test keys, exits, events), writes the
 * row, its guests and its events in one transaction, and answers the new state. `insert` is its first step for a reservation
 * that does not exist yet (endpoints 3 and 7). The partner endpoints 3, 5, 6 and 8 are `PartnerReservations`'.
 */
export class Reservations extends Effect.Service<Reservations>()("reservations/Reservations", {
  dependencies: [ReservationRepo.Default],
  effect: Effect.gen(function*() {
    const { sql, repo, eventLog, photos, simulated } = yield* Effect.all({
      sql: SqlClient.SqlClient, repo: ReservationRepo, eventLog: ReservationEvents, photos: PhotoQueue,
      simulated: SimulatedAuthorities
    })
    const { publicBaseUrl } = yield* AppConfig

    const views = makeViews(publicBaseUrl)
    const nowDate = Effect.map(DateTime.now, DateTime.toDateUtc)

    /** The API's Guest objects of a reservation (spec "Guest"); photos read null past retention. */
    const guestsOf = (row: ReservationRow) =>
      Effect.gen(function*() {
        const guests = yield* repo.guests(row.id)
        const retained = photosRetained(row.check_out, yield* todayInBogota)
        return guests.map((guest) => guestView(guest, retained))
      })

    /** What a property's settings say about reporting (design §6.9). */
    const reportingSettings = (propertyId: string) =>
      Effect.map(query(reportingSettingsOf(sql, propertyId)), (rows) => rows[0]).pipe(
        Effect.orDie,
        Effect.flatMap((settings) =>
          settings === undefined ? Effect.dieMessage(`property ${propertyId} is gone`) : Effect.succeed(settings)
        )
      )

    /** The registered guests of a stored reservation, in registration order. */
    const registeredGuests = (id: string) =>
      Effect.map(repo.guests(id), (guests) => guests.filter((guest) => guest.registered_at !== null))

    // ---------------------------------------------------------------------------------- the transition path

    /** Everything a change implies, in the order the rules apply (`Machine.follow` and the steps it needs I/O for). */
    const settle = <R extends State>(
      before: ReservationRow | null,
      proposed: R,
      registeredGuests: Effect.Effect<ReadonlyArray<Omit<GuestRow, "reservation_id">>>,
      at: Date
    ) =>
      Effect.gen(function*() {
        let next = proposed
        if (Machine.needsCheckinToken(next)) next = { ...next, checkin_token: newCheckinToken() }
        if (Machine.reportsBecomeDue(before, next)) {
          const settings = yield* reportingSettings(next.property_id)
          const guests = yield* registeredGuests
          next = withDueReports(next, {
            settings,
            nationalities: guests.map((guest) => guest.nacionalidad ?? "CO"),
            simulatedCode: simulated.code(),
            // design §6.12: the simulated authorities answer with the warning a live run would give.
            simulatedWarnings: next.environment === "test"
              ? yield* simulated.warnings({ row: next, guests, property: settings })
              : undefined
          }, at)
        }
        if (extensionToSimulate(next)) next = simulateExtension(next, simulated.code(), at)
        return Machine.follow(before, next, at)
      })

    /** The events of a change, in its transaction; `registration.*` ones carry the guests (spec "Events"). */
    const publish = (
      row: ReservationRow,
      events: ReadonlyArray<ReservationEvent>,
      options: { readonly isNew?: boolean; readonly changed?: ReadonlyArray<UpdatedField> } = {}
    ) =>
      events.length === 0 ? Effect.void : Effect.gen(function*() {
        yield* eventLog.publish({
          isNew: options.isNew ?? false,
          accountId: row.account_id,
          environment: row.environment,
          reservationId: row.id,
          types: events,
          data: views.eventData(row),
          guests: events.some(carriesGuests) ? yield* guestsOf(row) : [],
          changed: options.changed ?? []
        })
      })

    /** Endpoint 7's photo URLs are fetched in the background (design §6.5): one job per URL, with the guest. */
    const photoJobs = (guests: ReadonlyArray<GuestRow>) =>
      photos.enqueue(guests.flatMap((guest) => [
        ...(guest.doc_photo_front_url === null ? [] : [{ guestId: guest.id, side: "front" as const, url: guest.doc_photo_front_url }]),
        ...(guest.doc_photo_back_url === null ? [] : [{ guestId: guest.id, side: "back" as const, url: guest.doc_photo_back_url }])
      ]))

    const writeGuests = (reservationId: string, writes: ReadonlyArray<GuestWrite>) =>
      writes.length === 0 ? Effect.succeed<ReadonlyArray<GuestRow>>([]) : Effect.gen(function*() {
        const added = yield* repo.addGuests(
          reservationId,
          writes.flatMap((write) => write._tag === "AddGuest" ? [write.guest] : [])
        )
        for (const write of writes) {
          if (write._tag === "UpdateGuest") {
            const { _tag, id, ...columns } = write
            yield* repo.updateGuest(id, columns)
          }
        }
        yield* photoJobs(added)
        return added
      })

    /** The columns to write: `updated_at` moves only when the reservation itself changed (not for bookkeeping). */
    const touched = (columns: Partial<State>, at: Date): Partial<State> =>
      Machine.changesReservation(columns) ? { ...columns, updated_at: at } : columns

    /**
     * Runs `command` on the reservation `id` under its row lock and commits what the machine decides with
     * everything that follows from it, in one transaction (the caller's when there is one: `joiningTransaction`).
     */
    const apply = <C extends Machine.Command>(
      id: string,
      command: C
    ): Effect.Effect<Applied<Machine.ResultOf<C>>, Machine.ErrorOf<C> | SqlError.SqlError> =>
      Effect.gen(function*() {
        const locked = yield* repo.lock(id)
        if (Option.isNone(locked)) return yield* Effect.dieMessage(`reservation ${id} is gone`)
        const before = locked.value
        const guests = Machine.readsGuests(command) ? yield* repo.guests(id) : []
        const at = yield* nowDate
        const decided = yield* Machine.decide({ row: before, guests }, command, at)
        const added = yield* writeGuests(id, decided.guests)
        if (Object.keys(decided.set).length === 0) return { row: before, result: decided.result, added }
        const { after, changed, events } = yield* settle(before, { ...before, ...decided.set }, registeredGuests(id), at)
        const { updated_at: _, ...columns } = Machine.changedColumns(before, after)
        const row = Object.keys(columns).length === 0 ? before : yield* repo.update(id, touched(columns, at))
        yield* publish(row, events, { changed })
        return { row, result: decided.result, added }
      }).pipe(joiningTransaction(sql), TraceContext.withSpan(`Reservations.apply.${command._tag}`))

    /**
     * `apply` over many reservations in one transaction — a report run settling a whole SIRE file, the
     * retention job marking a batch —, for commands that never refuse and neither read nor write guests. Rows
     * are locked in id order (two runs never deadlock) and reservations whose change is the same are written by
     * one statement. Answers the rows as stored, in the order given.
     */
    const applyAll = (targets: ReadonlyArray<{ readonly id: string; readonly command: RunCommand }>) =>
      Effect.gen(function*() {
        if (targets.length === 0) return []
        const locked = new Map((yield* repo.lockAll(targets.map((target) => target.id))).map((row) => [row.id, row]))
        const at = yield* nowDate
        // Several commands for one reservation (a run settles its SIRE entry and exit) apply in order, each on
        // the row the previous one left.
        const current = new Map(locked)
        const events = new Map<string, Array<ReservationEvent>>()
        for (const { id, command } of targets) {
          const before = current.get(id)
          if (before === undefined) return yield* Effect.dieMessage(`reservation ${id} is gone`)
          const decided = yield* Machine.decide({ row: before, guests: [] }, command, at)
          if (Object.keys(decided.set).length === 0) continue
          const settled = yield* settle(before, { ...before, ...decided.set }, registeredGuests(id), at)
          current.set(id, settled.after)
          events.set(id, [...(events.get(id) ?? []), ...settled.events])
        }
        const changes = [...locked.values()].flatMap((before) => {
          const { updated_at: _, ...columns } = Machine.changedColumns(before, current.get(before.id) ?? before)
          return Object.keys(columns).length > 0 ? [{ id: before.id, columns: touched(columns, at) }] : []
        })
        const updated = new Map((yield* repo.updateAll(changes)).map((row) => [row.id, row]))
        for (const { id } of changes) {
          const row = updated.get(id)
          const before = locked.get(id)
          if (row !== undefined && before !== undefined) {
            const changed = updatedFields(before, row)
            yield* publish(row, events.get(id) ?? [], { changed })
          }
        }
        return targets.map(({ id }) => updated.get(id) ?? locked.get(id) ?? null).filter((row) => row !== null)
      }).pipe(joiningTransaction(sql), TraceContext.withSpan("Reservations.applyAll"))

    /** A new reservation (endpoints 3 and 7), with its guests, inside the caller's transaction. */
    const insert = (draft: State, guests: ReadonlyArray<NewGuest>) =>
      Effect.gen(function*() {
        // Not stored yet: each guest stands for itself by its position until the database gives it an id.
        const registered = guests.flatMap((guest) => guest.registered_at === null ? [] : [{ ...guest, id: `new-${guest.position}` }])
        const { after, events } = yield* settle(null, draft, Effect.succeed(registered), draft.created_at)
        const row = yield* repo.insert(after)
        const added = yield* writeGuests(row.id, guests.map((guest) => ({ _tag: "AddGuest" as const, guest })))
        yield* publish(row, events, { isNew: true })
        return { row, added }
      }).pipe(TraceContext.withSpan("Reservations.insert"))

    return { apply, applyAll, insert, guestsOf, views } as const
  })
}) {}
