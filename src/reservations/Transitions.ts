import { Either } from "effect"
import {
  AlreadyReported,
  InvalidRequest,
  RegistrationNotFound,
  RegistrationRejected,
  type ReservationCancelled
} from "../shared/errors.ts"
import * as Lifecycle from "./Lifecycle.ts"
import type { Environment } from "../shared/Environment.ts"
import { lateWarning } from "../compliance/Outcomes.ts"
import { dateInBogota } from "../shared/Calendar.ts"
import type {
  CheckinGuestInput,
  CreateReservation,
  GuestInput,
  SireExitReport,
  SubmitRegistration,
  UpdateReservation
} from "./Reservation.ts"
import { type GuestRow, type NewGuest, type ReservationRow, snapshotOf } from "./ReservationRow.ts"

/**
 * How a reservation changes, as data. Every change of a stored reservation — creation, check-in, modification,
 * cancellation, report outcomes, the simulated authorities of test keys — is a `Plan`: a pure function from the
 * reservation as it is (locked) to a `Decision` (the columns to set, the guests to write, and what to answer).
 * `Reservations.apply` runs it; `Reservations` alone writes. What follows from any change is derived here, once,
 * for all of them (`finalize`): the `status`, `completed_at`, a check-in link for an open registration, the
 * reports when they become due (design §6.4, §6.9, §6.12), and the events, one per change (spec "Events").
 */

/** What `finalize` derives; a decision never sets it. */
type Derived = "status" | "completed_at" | "updated_at"
/** What identifies a reservation or records its creation; never changed. */
type Fixed = "id" | "account_id" | "environment" | "property_id" | "external_id" | "flow" | "fingerprint" | "created_at"

/** The columns a decision may set. */
export type ReservationChange = Partial<Omit<ReservationRow, Derived | Fixed>>

/** A reservation before it is stored: every column but the id the database assigns. */
export type ReservationDraft = Omit<ReservationRow, "id">

export type GuestWrite =
  | { readonly _tag: "AddGuest"; readonly guest: NewGuest }
  | {
    readonly _tag: "UpdateGuest"
    readonly id: string
    readonly registered_at?: Date
    readonly document_uploaded?: boolean
  }

export interface Decision<A> {
  readonly set: ReservationChange
  readonly guests: ReadonlyArray<GuestWrite>
  /** What the caller answers; computed with the decision, from the same locked state. */
  readonly result: A
}

/** The reservation as a plan sees it: locked, with its guests when the plan asks for them. */
export interface Current {
  readonly row: ReservationRow
  readonly guests: ReadonlyArray<GuestRow>
}

export interface Plan<A, E> {
  /** For traces and logs. */
  readonly name: string
  /** Load the reservation's guests (in registration order) for `decide`. */
  readonly needsGuests: boolean
  readonly decide: (current: Current, at: Date) => Either.Either<Decision<A>, E>
}

export const plan = <A, E>(
  name: string,
  decide: (current: Current, at: Date) => Either.Either<Decision<A>, E>,
  options: { readonly needsGuests?: boolean } = {}
): Plan<A, E> => ({ name, needsGuests: options.needsGuests ?? false, decide })

export const decision = <A>(
  set: ReservationChange,
  result: A,
  guests: ReadonlyArray<GuestWrite> = []
): Decision<A> => ({ set, guests, result })

export const unchanged = <A>(result: A): Decision<A> => ({ set: {}, guests: [], result })

// ---------------------------------------------------------------------------------------------------------------
// What every change implies (the one place these rules are applied)

/** An open registration needs a check-in link (endpoint 3 at creation; endpoint 7's after reopening). */
export const needsCheckinToken = (row: ReservationDraft): boolean =>
  row.reservation_status === "confirmed" && !row.registration_complete && row.checkin_token === null

/** The reports become due with this change (design §6.4): registration complete and signed where required. */
export const reportsBecomeDue = (before: ReservationRow | null, next: ReservationDraft): boolean =>
  !(before !== null && Lifecycle.reportsDue(snapshotOf(before))) && Lifecycle.reportsDue(snapshotOf(next))

export interface DueInput {
  readonly settings: Lifecycle.ReportingSettings
  /** `nacionalidad` of each registered guest. */
  readonly nationalities: ReadonlyArray<string>
  /** The code a simulated TRA acceptance carries (test keys, design §6.12). */
  readonly simulatedCode: number
  /** What a live run would say about each report (test keys, design §6.12): carried by the simulated answer. */
  readonly simulatedWarnings?: { readonly tra: string | null; readonly sire: string | null } | undefined
}

/** A simulated report with the warning a live run would give beside its own (design §6.12). */
const withLiveWarning = <R extends { readonly status: string; readonly warning?: string }>(report: R, warning: string | null | undefined): R =>
  warning === null || warning === undefined || report.status === "not_applicable"
    ? report
    : { ...report, warning: report.warning === undefined ? warning : `${report.warning}; ${warning}` }

/**
 * The reports at the moment they become due (design §6.9): live ones wait for the report runs (`pending`), a
 * test key's are answered at once by the simulated authorities (design §6.12).
 */
export const withDueReports = <R extends ReservationDraft>(row: R, input: DueInput, at: Date): R => {
  const due = Lifecycle.reportsWhenDue({
    environment: row.environment,
    property: input.settings,
    nationalities: input.nationalities,
    check_in: row.check_in,
    sandbox_simulate: row.sandbox_simulate
  })
  const decided = (status: Lifecycle.TraReport["status"]) => status === "success" || status === "error"
  // design §6.8: a report pending past its due date says why — here, that it became due late (registered after
  // check_in); the next run sends it.
  const late = row.check_in < dateInBogota(at) ? lateWarning(row.check_in) : null
  const saysWhy = <T extends { readonly status: string; readonly warning?: string }>(report: T): T =>
    report.status === "pending" && report.warning === undefined && late !== null ? { ...report, warning: late } : report
  return {
    ...row,
    tra: {
      ...saysWhy(withLiveWarning(due.tra, input.simulatedWarnings?.tra)),
      reported_at: decided(due.tra.status) ? at.toISOString() : null,
      mincit_code: due.tra.status === "success" ? input.simulatedCode : null
    },
    sire: {
      ...saysWhy(withLiveWarning(due.sire, input.simulatedWarnings?.sire)),
      reported_at: decided(due.sire.status) ? at.toISOString() : null,
      exit: row.sire.exit
    },
    // design §6.12: a (simulated) success counts as reported.
    tra_reported: due.tra.status === "success",
    sire_reported: due.sire.status === "success"
  }
}

/** No exit movement: the entry has not gone out (design §6.8). */
export const NO_EXIT: SireExitReport = { status: "not_applicable", sends_on: null, reported_at: null }

/**
 * The day the exit movements are due (design §6.8): the recorded departure; else `check_out`, or the
 * cancellation's Bogotá date when earlier.
 */
export const exitDate = (row: Pick<ReservationDraft, "check_out" | "cancelled_at" | "departed_on">): string => {
  if (row.departed_on !== null) return row.departed_on
  if (row.cancelled_at === null) return row.check_out
  const cancelled = dateInBogota(row.cancelled_at)
  return cancelled < row.check_out ? cancelled : row.check_out
}

/**
 * Design §6.8, exit movements: once the entry went out (`sire_reported`), the foreign guests' exit is due on
 * its date — a live one waits for the report run of that day, a test key's is answered at once by the simulated
 * authority — and while it waits it follows `check_out`, a cancellation and a recorded departure. An entry never
 * sent has no exit.
 */
export const withExit = <R extends ReservationDraft>(row: R, at: Date): R => {
  const exit = row.sire.exit
  if (exit.status === "pending") {
    const sends_on = exitDate(row)
    return sends_on === exit.sends_on ? row : { ...row, sire: { ...row.sire, exit: { ...exit, sends_on } } }
  }
  if (exit.status !== "not_applicable" || exit.sends_on !== null || !row.sire_reported || row.sire.foreign_guests === 0) {
    return row
  }
  const next: SireExitReport = row.environment === "test"
    ? { status: "success", sends_on: exitDate(row), reported_at: at.toISOString(), simulated: true }
    : { status: "pending", sends_on: exitDate(row), reported_at: null }
  return { ...row, sire: { ...row.sire, exit: next } }
}

/** A test key's extension after its TRA was accepted is accepted again at once, with a new code (design §6.12). */
export const extensionToSimulate = (row: ReservationDraft): boolean =>
  row.environment === "test" && row.tra_extension_from !== null && row.tra.status === "success"

export const simulateExtension = <R extends ReservationDraft>(row: R, code: number, at: Date): R => ({
  ...row,
  tra: { ...row.tra, mincit_code: code, reported_at: at.toISOString() },
  tra_extension_from: null
})

/**
 * The stored reservation after a change, and the events it emits in order: `status` derived from the rest,
 * `completed_at` set when registration closes and cleared when it reopens; a cancelled reservation emits
 * nothing more (spec: no event follows `reservation.cancelled`).
 */
export const finalize = <R extends ReservationDraft>(
  before: ReservationRow | null,
  next: R,
  at: Date
): {
  readonly after: R
  readonly events: ReadonlyArray<Lifecycle.LifecycleEvent>
  /** What a `reservation.updated` among `events` names as changed. */
  readonly changed: ReadonlyArray<Lifecycle.UpdatedField>
} => {
  const wasComplete = before !== null && before.registration_complete
  const completed_at = next.registration_complete ? (wasComplete ? next.completed_at : at) : null
  const after: R = { ...next, completed_at, status: Lifecycle.deriveStatus(snapshotOf(next)), updated_at: at }
  const previous = before === null ? null : snapshotOf(before)
  return {
    after,
    events: Lifecycle.eventsBetween(previous, snapshotOf(after)),
    changed: previous === null ? [] : Lifecycle.updatedFields(previous, snapshotOf(after))
  }
}

/** The columns whose value differs, for an `UPDATE` that writes only what changed. */
export const changedColumns = (before: ReservationRow, after: ReservationDraft): Partial<ReservationDraft> => {
  const same = (a: unknown, b: unknown) =>
    a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : JSON.stringify(a) === JSON.stringify(b)
  const changed: Record<string, unknown> = {}
  for (const key of Object.keys(after) as Array<keyof ReservationDraft>) {
    if (!same(before[key], after[key])) changed[key] = after[key]
  }
  return changed as Partial<ReservationDraft>
}

// ---------------------------------------------------------------------------------------------------------------
// Endpoint 4: modification (spec rule 6, design §6.6–6.7)

/** The fields of UpdateReservation that are not judged by the lifecycle rules, in the spec's order. */
const PLAIN_FIELDS = ["guest_name", "guest_email", "guest_phone", "notes", "metadata"] as const

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * A recorded departure stays within the stay (design §6.8): new dates that would leave it outside are 400
 * `invalid_request` naming the date sent.
 */
const keepsDeparture = (
  row: ReservationRow,
  rules: Lifecycle.ModificationPlan
): Either.Either<Lifecycle.ModificationPlan, InvalidRequest> => {
  const departed = row.departed_on
  if (departed === null) return Either.right(rules)
  const field = rules.next.check_in > departed ? "check_in" : rules.next.check_out < departed ? "check_out" : null
  if (field === null) return Either.right(rules)
  const message = `must keep the recorded departed_on (${departed}) within the stay`
  return Either.left(new InvalidRequest({ message: `${field} ${message}`, details: { fields: [{ field, message }] } }))
}

export const modify = (body: UpdateReservation) =>
  plan("modify", ({ row }) =>
    Either.map(
      Either.flatMap(
        Lifecycle.checkModification(snapshotOf(row), {
          check_in: body.check_in,
          check_out: body.check_out,
          guests_count: body.guests_count
        }),
        (rules) => keepsDeparture(row, rules)
      ),
      (rules) => {
        const plainChanged = PLAIN_FIELDS.filter((field) => body[field] !== undefined && !sameValue(body[field], row[field]))
        const changed: ReadonlyArray<string> = [...rules.changed, ...plainChanged]
        if (changed.length === 0) return unchanged({ changed })
        const next = rules.next
        const initial = rules.reopens_registration ? Lifecycle.initialReports(row.environment) : undefined
        const tra = initial === undefined ? row.tra : { ...initial.tra, reported_at: null, mincit_code: null }
        const sire = initial === undefined ? row.sire : { ...initial.sire, reported_at: null, exit: NO_EXIT }
        return decision({
          check_in: next.check_in,
          check_out: next.check_out,
          guests_count: next.guests_count,
          registration_complete: next.registration_complete,
          // A pending TRA goes out on the (possibly moved) arrival date.
          tra: tra.sends_on === null ? tra : { ...tra, sends_on: next.check_in },
          tra_reported: next.tra.reported,
          sire,
          sire_reported: next.sire.reported,
          guest_name: body.guest_name ?? row.guest_name,
          guest_email: body.guest_email === undefined ? row.guest_email : body.guest_email,
          guest_phone: body.guest_phone === undefined ? row.guest_phone : body.guest_phone,
          notes: body.notes === undefined ? row.notes : body.notes,
          metadata: body.metadata ?? row.metadata,
          // design §6.8: an extension after the TRA was accepted registers the added nights, from the first night
          // not yet registered (a live report run posts them; a test key's simulated TRA accepts them at once).
          tra_extension_from: rules.tra_extension !== null && row.tra.status === "success"
            ? row.tra_extension_from ?? rules.tra_extension.from
            : row.tra_extension_from
        }, { changed })
      }
    ))

// ---------------------------------------------------------------------------------------------------------------
// Endpoint 5: cancellation

export const cancel = (reason: string | undefined) =>
  plan("cancel", ({ row }, at) => {
    const rules = Lifecycle.cancel(snapshotOf(row))
    if (rules.already_cancelled) return Either.right(unchanged(rules))
    // A report still waiting will never go out (SIRE: it leaves the batches not yet generated).
    const withdrawn = { status: "not_applicable", warning: Lifecycle.Warnings.cancelledBeforeSending } as const
    return Either.right(decision({
      reservation_status: "cancelled",
      tra: rules.withdrawn.tra ? { ...row.tra, ...withdrawn } : row.tra,
      sire: rules.withdrawn.sire ? { ...row.sire, ...withdrawn } : row.sire,
      cancelled_at: at,
      cancel_reason: reason ?? null
    }, rules))
  })

// ---------------------------------------------------------------------------------------------------------------
// Departure (design §6.8)

export interface DepartureInput {
  /** The day the guests left, as sent. */
  readonly departedOn: string
  /** Today's Bogotá date. */
  readonly today: string
  /**
   * Some exit movement (S) of the reservation is in a generated or posted SIRE file: it counts as sent even
   * while `sire.exit` still reads `pending` (a manual file waiting for confirmation, an upload in flight).
   */
  readonly exitInFile: boolean
}

/** The exit went out: answered (`success`/`error`), or its movements are in a file. */
export const exitSent = (row: Pick<ReservationRow, "sire">, exitInFile: boolean): boolean =>
  row.sire.exit.status === "success" || row.sire.exit.status === "error" || exitInFile

const departureRefused = (field: string, message: string) =>
  new InvalidRequest({ message: `departed_on ${message}`, details: { fields: [{ field, message }] } })

/**
 * Records the day the guests actually left, in this order: cancelled → 409 `reservation_cancelled`; not within
 * `check_in`…`check_out` or after today in Bogotá → 400 `invalid_request` naming `departed_on`; the date already
 * recorded → nothing changes (no event); once the exit went out, only the date it carries (the recorded one, or
 * its `sends_on` when none was recorded) → else 409 `already_reported`. It never touches `check_out` or the TRA;
 * a pending exit follows the new date (`withExit` through `exitDate`) and `reservation.updated` names
 * `departed_on` in `changed`. Answers whether something changed.
 */
export const depart = (input: DepartureInput) =>
  plan<{ readonly changed: boolean }, ReservationCancelled | InvalidRequest | AlreadyReported>("depart", ({ row }) => {
    const { departedOn, today } = input
    if (row.reservation_status === "cancelled") return Either.left(Lifecycle.cancelledError())
    if (departedOn < row.check_in) {
      return Either.left(departureRefused("departed_on", `must be on or after check_in (${row.check_in})`))
    }
    if (departedOn > row.check_out) {
      return Either.left(departureRefused("departed_on", `must be on or before check_out (${row.check_out})`))
    }
    if (departedOn > today) {
      return Either.left(departureRefused("departed_on", `must not be after today in Bogotá (${today})`))
    }
    if (departedOn === row.departed_on) return Either.right(unchanged({ changed: false }))
    if (exitSent(row, input.exitInFile)) {
      const reported = row.departed_on ?? row.sire.exit.sends_on
      if (departedOn !== reported) {
        return Either.left(
          new AlreadyReported({
            message: `departed_on cannot change: the guests' exit was already reported to SIRE dated ${reported}`,
            details: { field: "departed_on", departed_on: reported, already_reported: { sire_exit: true } }
          })
        )
      }
    }
    return Either.right(decision({ departed_on: departedOn }, { changed: true }))
  })

// ---------------------------------------------------------------------------------------------------------------
// Guests

/**
 * A guest as stored from the spec's GuestInput (endpoint 7) or the check-in page's: `position` is the order of
 * registration, the first (0) is the primary; `registered_at` null while it waits for its document photo.
 */
export const newGuest = (input: GuestInput | CheckinGuestInput, position: number, registeredAt: Date | null): NewGuest => ({
  position,
  is_primary: position === 0,
  tipo_documento: input.tipo_documento,
  numero_documento: input.numero_documento,
  nombre: input.nombre,
  apellido: input.apellido,
  nacionalidad: input.nacionalidad,
  fecha_nacimiento: input.fecha_nacimiento ?? null,
  pais_procedencia: input.pais_procedencia,
  ciudad_procedencia: input.ciudad_procedencia,
  pais_residencia: input.pais_residencia,
  ciudad_residencia: input.ciudad_residencia,
  email: input.email ?? null,
  phone: input.phone ?? null,
  address: input.address ?? null,
  // Kept as sent; the photos themselves are fetched in the background (design §6.5).
  doc_photo_front_url: input.doc_photo_front_url ?? null,
  doc_photo_back_url: input.doc_photo_back_url ?? null,
  document_uploaded: false,
  registered_at: registeredAt
})

// ---------------------------------------------------------------------------------------------------------------
// The check-in page (design §5)

export interface GuestEntered {
  /** Registered now, or waiting for its document photo where the property requires one. */
  readonly registered: boolean
}

/**
 * One guest entered on the check-in page: the first is the primary and gives the trip's `motivo`; never more
 * guests than the stay has; where photos are required the guest counts as registered once its front photo is
 * stored (`attachDocument`).
 */
export const enterGuest = (input: CheckinGuestInput, requiresDocumentPhotos: boolean) =>
  plan<GuestEntered, ReservationCancelled | RegistrationRejected | InvalidRequest>(
    "enterGuest",
    ({ row, guests }, at) =>
      Either.flatMap(Lifecycle.registerGuest(snapshotOf(row)), (next): Either.Either<
        Decision<GuestEntered>,
        RegistrationRejected | InvalidRequest
      > => {
        if (guests.length >= row.guests_count) {
          return Either.left(
            new RegistrationRejected({
              message: `all ${row.guests_count} guests of this stay have been entered`,
              details: { guests_count: row.guests_count }
            })
          )
        }
        if (guests.length === 0 && row.motivo === null && input.motivo === undefined) {
          return Either.left(
            new InvalidRequest({
              message: "motivo is required from the first guest",
              details: { fields: [{ field: "motivo", message: "is required for the first guest (the trip's reason)" }] }
            })
          )
        }
        const registered = !requiresDocumentPhotos
        // Photos come as uploads on the check-in page, never as URLs to fetch.
        const guest = { ...newGuest(input, guests.length, registered ? at : null), doc_photo_front_url: null, doc_photo_back_url: null }
        // The trip's motivo is kept at once, even while the first guest waits for its photo.
        const motivo = row.motivo ?? input.motivo ?? null
        return Either.right(decision(
          registered
            ? { motivo, guests_registered: next.guests_registered, registration_complete: next.registration_complete }
            : { motivo },
          { registered },
          [{ _tag: "AddGuest", guest }]
        ))
      }),
    { needsGuests: true }
  )

/**
 * A guest's document photo was stored: `document_uploaded`, and where the property requires photos the
 * guest's registration completes with it (design §5).
 */
export const attachDocument = (guestId: string, requiresDocumentPhotos: boolean) =>
  plan<void, ReservationCancelled | RegistrationRejected | RegistrationNotFound>(
    "attachDocument",
    ({ row, guests }, at) => {
      const guest = guests.find((candidate) => candidate.id === guestId)
      if (guest === undefined) {
        return Either.left(
          new RegistrationNotFound({ message: "No such guest in this stay.", details: { guest_id: guestId } })
        )
      }
      if (!requiresDocumentPhotos || guest.registered_at !== null) {
        return Either.right(decision({}, undefined, [{ _tag: "UpdateGuest", id: guest.id, document_uploaded: true }]))
      }
      return Either.map(Lifecycle.registerGuest(snapshotOf(row)), (next) =>
        decision(
          { guests_registered: next.guests_registered, registration_complete: next.registration_complete },
          undefined,
          [{ _tag: "UpdateGuest", id: guest.id, document_uploaded: true, registered_at: at }]
        ))
    },
    { needsGuests: true }
  )

/** The guest signs the contract once every guest is registered; signing again changes nothing (design §5). */
export const signContract = (signer: string) =>
  plan("signContract", ({ row }, at) => {
    if (row.contract_signed_at !== null) return Either.right(unchanged({ signed_at: row.contract_signed_at }))
    return Either.map(
      Lifecycle.signContract(snapshotOf(row)),
      () => decision({ contract_signed_at: at, contract_signer: row.contract_signer ?? signer }, { signed_at: at })
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// Creation (endpoints 3 and 7)

export interface CreationInput<Body> {
  readonly key: { readonly accountId: string; readonly environment: Environment }
  readonly body: Body
  readonly propertyId: string
  /** As sent, and in COP with the rate used (design §6.11). */
  readonly money: { readonly cop: string | null; readonly rate: string | null; readonly date: string | null }
  readonly fingerprint: string
  readonly at: Date
}

/** What endpoints 3 and 7 store alike: the stay, its holder, its property and its amount; nothing reported yet. */
const stayDraft = (
  input: CreationInput<CreateReservation | SubmitRegistration>,
  flow: ReservationRow["flow"]
): ReservationDraft => {
  const { body, at } = input
  const reports = Lifecycle.initialReports(input.key.environment)
  return {
    account_id: input.key.accountId,
    environment: input.key.environment,
    property_id: input.propertyId,
    external_id: body.external_id,
    flow,
    source: body.source ?? null,
    room_number: body.room_number ?? null,
    check_in: body.check_in,
    check_out: body.check_out,
    guest_name: body.guest_name,
    guests_count: body.guests_count,
    expected_guests: body.expected_guests ?? null,
    total_amount: body.total_amount === undefined ? null : String(body.total_amount),
    currency: body.currency ?? null,
    total_amount_cop: input.money.cop,
    trm_rate: input.money.rate,
    trm_date: input.money.date,
    guest_email: null,
    guest_phone: null,
    notes: null,
    metadata: body.metadata ?? {},
    sandbox_simulate: body.sandbox_simulate ?? null,
    motivo: null,
    tipo_acomodacion: null,
    reservation_status: "confirmed",
    status: "pending_checkin",
    checkin_token: null,
    guests_registered: 0,
    registration_complete: false,
    completed_at: null,
    contract_required: false,
    contract_signed_at: null,
    contract_signer: null,
    tra: { ...reports.tra, reported_at: null, mincit_code: null },
    tra_reported: false,
    sire: { ...reports.sire, reported_at: null, exit: NO_EXIT },
    sire_reported: false,
    fingerprint: input.fingerprint,
    cancelled_at: null,
    cancel_reason: null,
    created_at: at,
    updated_at: at,
    report_lease_until: null,
    report_retry_at: null,
    report_failures: 0,
    tra_extension_from: null,
    departed_on: null
  }
}

/** Endpoint 3: guests register through the check-in link; the property decides whether a contract is signed. */
export const linkDraft = (
  input: CreationInput<CreateReservation> & { readonly contractRequired: boolean }
): ReservationDraft => ({
  ...stayDraft(input, "link"),
  guest_email: input.body.guest_email ?? null,
  guest_phone: input.body.guest_phone ?? null,
  notes: input.body.notes ?? null,
  contract_required: input.contractRequired
})

/**
 * Endpoint 7 (design §6.5): the partner's own form captured everything, so registration closes at once
 * whatever the property requires (no contract step); the first guest is the primary.
 */
export const registrationDraft = (
  input: CreationInput<SubmitRegistration>
): { readonly draft: ReservationDraft; readonly guests: ReadonlyArray<NewGuest> } => ({
  draft: {
    ...stayDraft(input, "registration"),
    motivo: input.body.motivo,
    tipo_acomodacion: input.body.tipo_acomodacion,
    guests_registered: input.body.guests.length,
    registration_complete: true
  },
  guests: input.body.guests.map((guest, position) => newGuest(guest, position, input.at))
})
