import { Data, Struct } from "effect"
import type {
  AlreadyReported,
  InvalidRequest,
  NothingToRetry,
  RegistrationNotFound,
  RegistrationOpen,
  RegistrationRejected,
  ReservationCancelled
} from "../../shared/errors.ts"
import type { CheckinGuestInput, UpdateReservation } from "../Reservation.ts"
import type { ReservationRow } from "../ReservationRow.ts"
import type { Current, Decided } from "./Decision.ts"
import type { MovementFacts, Verdict } from "./Outcomes.ts"
import * as Reports from "./Reports.ts"
import {
  deriveStatus,
  eventsBetween,
  type ReservationEvent,
  reportsDue,
  type State,
  type UpdatedField,
  updatedFields
} from "./State.ts"
import * as Stay from "./Stay.ts"

/**
 * The reservation machine: one state (`State.ts`, the reservation as stored), one set of commands, one pure
 * transition function. `decide(current, command, at)` answers what a command does to a locked reservation — the
 * columns to set, the guests to write, the caller's answer — or the spec's refusal; `follow` derives what every
 * change implies, once, for all of them: a check-in link for an open registration, the reports when they become
 * due, the exit when an entry went out, a test key's simulated answers, the `status`, `completed_at` and the
 * events. `Reservations.apply` runs both in one transaction and is the only writer (with `ReservationRepo`).
 * The state table of the reports is in docs/compliance.md ("A reservation's reports: states and transitions").
 */

/** Everything that changes a stored reservation. */
export type Command = Data.TaggedEnum<{
  /** Endpoint 4: dates, guest count and plain fields (spec rule 6, design §6.6). */
  Modify: { readonly body: UpdateReservation }
  /** Endpoint 5. */
  Cancel: { readonly reason: string | undefined }
  /** The guests left on `departedOn` (design §6.8). */
  Depart: Stay.DepartureInput
  /** The check-in page: one guest entered (design §5). */
  EnterGuest: { readonly input: CheckinGuestInput; readonly requiresDocumentPhotos: boolean }
  /** The check-in page: a guest's document photo stored. */
  AttachDocument: { readonly guestId: string; readonly requiresDocumentPhotos: boolean }
  /** A photo of endpoint 7 fetched in the background was stored (design §6.5). */
  DocumentFetched: { readonly guestId: string }
  /** The retention job is done with the stay's personal data (design §3). */
  PersonalDataRemoved: {}
  /** The check-in page: the contract signed. */
  SignContract: { readonly signer: string }
  /** A report run is about to send the TRA or the SIRE entry: the authority may hold it from now on. */
  MarkSent: { readonly authority: Reports.Authority }
  /** A run's verdict on the TRA report or an extension's added nights. */
  SettleTra: {
    readonly verdict: Verdict
    readonly mayHold?: boolean | undefined
    readonly notice?: string | null | undefined
    readonly extensionUpTo?: string | undefined
  }
  /** A run's verdict on the SIRE entry, with the reservation's movements as recorded after the run. */
  SettleSireEntry: {
    readonly verdict: Verdict
    readonly mayHold?: boolean | undefined
    readonly movements: ReadonlyArray<MovementFacts>
  }
  /** A run's verdict on the SIRE exit. */
  SettleSireExit: { readonly verdict: Verdict }
  /** A run built no exit line for a reservation whose exit is due. */
  SireExitUnbuilt: { readonly movements: ReadonlyArray<MovementFacts> }
  /** A cancelled reservation's reports still in flight end (design §6.8, "Nothing stays pending for ever"). */
  SettleCancelled: { readonly movements: ReadonlyArray<MovementFacts> }
  /** `cli reports retry` (design §9). */
  Requeue: { readonly traExtensionFrom: string | null }
}>

export const Command = Data.taggedEnum<Command>()

/** What each command answers, and how it may be refused. */
interface Outcomes {
  readonly Modify: readonly [{ readonly changed: ReadonlyArray<string> }, Stay.ModificationError]
  readonly Cancel: readonly [Stay.Cancellation, never]
  readonly Depart: readonly [{ readonly changed: boolean }, ReservationCancelled | InvalidRequest | AlreadyReported]
  readonly EnterGuest: readonly [Stay.GuestEntered, ReservationCancelled | RegistrationRejected | InvalidRequest]
  readonly AttachDocument: readonly [void, ReservationCancelled | RegistrationRejected | RegistrationNotFound]
  readonly DocumentFetched: readonly [void, RegistrationNotFound]
  readonly PersonalDataRemoved: readonly [void, never]
  readonly SignContract: readonly [{ readonly signed_at: Date }, ReservationCancelled | RegistrationOpen]
  readonly MarkSent: readonly [void, never]
  readonly SettleTra: readonly [void, never]
  readonly SettleSireEntry: readonly [void, never]
  readonly SettleSireExit: readonly [void, never]
  readonly SireExitUnbuilt: readonly [void, never]
  readonly SettleCancelled: readonly [void, never]
  readonly Requeue: readonly [Reports.Requeued, NothingToRetry]
}

export type ResultOf<C extends Command> = Outcomes[C["_tag"]][0]
export type ErrorOf<C extends Command> = Outcomes[C["_tag"]][1]

/** Each command by its tag. */
type CommandOf = { readonly [K in Command["_tag"]]: Extract<Command, { readonly _tag: K }> }

type Handler<K extends Command["_tag"]> = (
  current: Current,
  command: CommandOf[K],
  at: Date
) => Decided<Outcomes[K][0], Outcomes[K][1]>

/** The transition table: one row per command. */
const transitions: { readonly [K in Command["_tag"]]: Handler<K> } = {
  Modify: ({ row }, { body }) => Stay.modify(row, body),
  Cancel: ({ row }, { reason }, at) => Stay.cancel(row, reason, at),
  Depart: ({ row }, input) => Stay.depart(row, input),
  EnterGuest: (current, { input, requiresDocumentPhotos }, at) =>
    Stay.enterGuest(current, input, requiresDocumentPhotos, at),
  AttachDocument: (current, { guestId, requiresDocumentPhotos }, at) =>
    Stay.attachDocument(current, guestId, requiresDocumentPhotos, at),
  DocumentFetched: (current, { guestId }) => Stay.documentFetched(current, guestId),
  PersonalDataRemoved: ({ row }, _, at) => Stay.personalDataRemoved(row, at),
  SignContract: ({ row }, { signer }, at) => Stay.signContract(row, signer, at),
  MarkSent: ({ row }, { authority }) => Reports.markSent(row, authority),
  SettleTra: ({ row }, { verdict, ...options }, at) => Reports.settle(row, "tra", verdict, options, at),
  SettleSireEntry: ({ row }, { verdict, ...options }, at) => Reports.settle(row, "sire", verdict, options, at),
  SettleSireExit: ({ row }, { verdict }, at) => Reports.settleExit(row, verdict, at),
  SireExitUnbuilt: ({ row }, { movements }, at) => Reports.exitUnbuilt(row, movements, at),
  SettleCancelled: ({ row }, { movements }, at) => Reports.settleCancelled(row, movements, at),
  Requeue: ({ row }, { traExtensionFrom }) => Reports.requeue(row, traExtensionFrom)
}

/** The table's row for the command's own tag: indexed through `CommandOf`, TypeScript pairs row and command. */
const decideByTag = <K extends Command["_tag"]>(
  current: Current,
  command: CommandOf[K],
  at: Date
): Decided<Outcomes[K][0], Outcomes[K][1]> => {
  const transition: Handler<K> = transitions[command._tag]
  return transition(current, command, at)
}

/** What `command` does to the locked reservation `current` at `at`: a decision, or the spec's refusal. */
export const decide = <C extends Command>(current: Current, command: C, at: Date): Decided<ResultOf<C>, ErrorOf<C>> =>
  // A command is the command of its own tag; TypeScript cannot see that of a type parameter `C` (it can of a
  // tag `K`, in `decideByTag`), hence the one cast.
  decideByTag<C["_tag"]>(current, command as CommandOf[C["_tag"]], at)

/** The commands that read the reservation's guests (loaded in registration order by `Reservations.apply`). */
export const readsGuests = (command: Command): boolean =>
  command._tag === "EnterGuest" || command._tag === "AttachDocument" || command._tag === "DocumentFetched"

// ---------------------------------------------------------------------------------------------------------------
// What every change implies

/** An open registration needs a check-in link (endpoint 3 at creation; endpoint 7's after reopening). */
export const needsCheckinToken = (state: State): boolean =>
  state.reservation_status === "confirmed" && !state.registration_complete && state.checkin_token === null

/** The reports become due with this change (design §6.4): registration complete and signed where required. */
export const reportsBecomeDue = (before: State | null, next: State): boolean =>
  !(before !== null && reportsDue(before)) && reportsDue(next)

/**
 * The stored reservation after a change and the events it emits in order: the exit armed or moved
 * (`Reports.withExit`), `status` derived from the rest, `completed_at` set when registration closes and cleared
 * when it reopens; a cancelled reservation emits nothing more (spec: no event follows `reservation.cancelled`).
 * The steps that need I/O — a check-in token, the due reports' settings and guests, a simulated code — are
 * `Reservations`' (`needsCheckinToken`, `reportsBecomeDue` + `Reports.withDueReports`,
 * `Reports.extensionToSimulate`), run before this.
 */
export const follow = <S extends State>(
  before: State | null,
  next: S,
  at: Date
): {
  readonly after: S
  readonly events: ReadonlyArray<ReservationEvent>
  /** What a `reservation.updated` among `events` names as changed. */
  readonly changed: ReadonlyArray<UpdatedField>
} => {
  const exited = Reports.withExit(next, at)
  const wasComplete = before !== null && before.registration_complete
  const completed_at = exited.registration_complete ? (wasComplete ? exited.completed_at : at) : null
  const after: S = { ...exited, completed_at, status: deriveStatus(exited), updated_at: at }
  return {
    after,
    events: eventsBetween(before, after),
    changed: before === null ? [] : updatedFields(before, after)
  }
}

/** Columns that record work done on a reservation, not a change of it: writing only them keeps `updated_at`. */
const BOOKKEEPING: ReadonlySet<string> = new Set<keyof State>(["personal_data_removed_at"])

/** Whether a write of these columns changes the reservation (and so its `updated_at`). */
export const changesReservation = (columns: Partial<State>): boolean =>
  Object.keys(columns).some((column) => column !== "updated_at" && !BOOKKEEPING.has(column))

/** The columns whose value differs, for an `UPDATE` that writes only what changed. */
export const changedColumns = (before: ReservationRow, after: State): Partial<State> => {
  // Most columns are strings, numbers, booleans or null: compared as they are; only objects go through JSON.
  const same = (a: unknown, b: unknown) =>
    a === b ||
    (a instanceof Date && b instanceof Date
      ? a.getTime() === b.getTime()
      : typeof a === "object" && typeof b === "object" && JSON.stringify(a) === JSON.stringify(b))
  const changed: Partial<State> = {}
  const compare = <K extends keyof State>(key: K) => {
    if (!same(before[key], after[key])) changed[key] = after[key]
  }
  for (const key of Struct.keys(after)) compare(key)
  return changed
}
