import { Context, type Effect } from "effect"
import type { Environment } from "../shared/Environment.ts"
import type { ReservationEvent, State } from "./machine/State.ts"
import type { GuestRow } from "./ReservationRow.ts"

/**
 * What the reservation core needs from the modules built on it, declared here as its own ports: `reservations`
 * imports none of those modules (issue 24, module order in `.dependency-cruiser.cjs`); each provides its port —
 * webhooks the events (`Outbox.reservationEvents`), documents the photo queue (`PhotoJobs.photoQueue`), compliance
 * the simulated authorities and the SIRE files (`SimulatedAuthorities.layer`, `SireRecords.sireFiles`) — and the
 * composition root (`App.ts`) wires them. Each runs inside the caller's transaction.
 */

/** The events of one change of a reservation, in order (spec "Events"). */
export interface PublishedEvents {
  readonly accountId: string
  readonly environment: Environment
  readonly reservationId: string
  readonly types: ReadonlyArray<ReservationEvent>
  /** The reservation as the webhook `data` shows it at this moment (without guests, `Views.eventData`). */
  readonly data: Readonly<Record<string, unknown>>
  /** The API's `Guest` objects, for the `registration.*` events that carry them (`State.carriesGuests`). */
  readonly guests: ReadonlyArray<unknown>
  /** `changed` of a `reservation.updated` event among `types` (`State.updatedFields`). */
  readonly changed?: ReadonlyArray<string>
  /** The reservation is created by this change: it has no earlier event to come after. */
  readonly isNew?: boolean
}

/** Writes a change's events (and their deliveries) in the change's transaction: both commit or neither. */
export class ReservationEvents extends Context.Tag("reservations/ReservationEvents")<ReservationEvents, {
  readonly publish: (events: PublishedEvents) => Effect.Effect<void>
}>() {}

/** A document photo of endpoint 7 to fetch in the background (design §6.5). */
export interface PhotoToFetch {
  readonly guestId: string
  readonly side: "front" | "back"
  readonly url: string
}

/** Queues photo fetches in the registration's transaction: a committed registration always has its jobs. */
export class PhotoQueue extends Context.Tag("reservations/PhotoQueue")<PhotoQueue, {
  readonly enqueue: (photos: ReadonlyArray<PhotoToFetch>) => Effect.Effect<void>
}>() {}

/** What a property says that the simulated authorities check (design §6.12), as `Reservations` reads it. */
export interface ReportingProperty {
  readonly reports_tra: boolean
  readonly reports_sire: boolean
  readonly has_tra_token: boolean
  readonly has_sire_hotel_code: boolean
  readonly name: string
  readonly establishment_name: string | null
  readonly rnt_id: string | null
  readonly tipo_acomodacion: string | null
  readonly default_room: string | null
}

/** The simulated authorities of test keys (design §6.12). */
export class SimulatedAuthorities extends Context.Tag("reservations/SimulatedAuthorities")<SimulatedAuthorities, {
  /** A simulated TRA acceptance code: a positive integer like the ministry's. */
  readonly code: () => number
  /** What a live run would say about each report, with the operators' reference overrides in effect. */
  readonly warnings: (source: {
    readonly row: State
    readonly guests: ReadonlyArray<Omit<GuestRow, "reservation_id">>
    readonly property: ReportingProperty
  }) => Effect.Effect<{ readonly tra: string | null; readonly sire: string | null }>
}>() {}

/** What the SIRE files say of a reservation's movements (design §6.8). */
export class SireFiles extends Context.Tag("reservations/SireFiles")<SireFiles, {
  /** The files holding the reservation's movements, for the cancel's warning. */
  readonly fileNames: (reservationId: string) => Effect.Effect<ReadonlyArray<string>>
  /** Some exit movement is in a generated or posted file: it counts as sent. */
  readonly exitInFile: (reservationId: string) => Effect.Effect<boolean>
}>() {}
