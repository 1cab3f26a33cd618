import type { Either } from "effect"
import type { GuestRow, NewGuest, ReservationRow } from "../ReservationRow.ts"
import type { State } from "./State.ts"

/**
 * What the machine answers to a command: the columns to set, the guests to write, and what the caller answers.
 * `Reservations.apply` commits it with what follows from it (`Machine.follow`) under the reservation's row lock.
 */

/** What `follow` derives; a decision never sets it. */
type Derived = "status" | "completed_at" | "updated_at"
/** What identifies a reservation or records its creation; never changed. */
type Fixed = "account_id" | "environment" | "property_id" | "external_id" | "flow" | "fingerprint" | "created_at"

/** The columns a decision may set. */
export type Change = Partial<Omit<State, Derived | Fixed>>

export type GuestWrite =
  | { readonly _tag: "AddGuest"; readonly guest: NewGuest }
  | {
    readonly _tag: "UpdateGuest"
    readonly id: string
    readonly registered_at?: Date
    readonly document_uploaded?: boolean
  }

export interface Decision<A> {
  readonly set: Change
  readonly guests: ReadonlyArray<GuestWrite>
  /** What the caller answers; computed with the decision, from the same locked state. */
  readonly result: A
}

/** The reservation as the machine sees it: locked, with its guests (in registration order) when a command reads them. */
export interface Current {
  readonly row: ReservationRow
  readonly guests: ReadonlyArray<GuestRow>
}

export type Decided<A, E> = Either.Either<Decision<A>, E>

export const decision = <A>(set: Change, result: A, guests: ReadonlyArray<GuestWrite> = []): Decision<A> => ({
  set,
  guests,
  result
})

export const unchanged = <A>(result: A): Decision<A> => ({ set: {}, guests: [], result })
