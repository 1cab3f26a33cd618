import { Either, Struct } from "effect"
import {
  AlreadyReported,
  GuestsAlreadyRegistered,
  InvalidRequest,
  RegistrationNotFound,
  RegistrationOpen,
  RegistrationRejected,
  ReservationCancelled
} from "../../shared/errors.ts"
import type { Environment } from "../../shared/Environment.ts"
import type {
  CheckinGuestInput,
  CreateReservation,
  GuestInput,
  SubmitRegistration,
  UpdateReservation
} from "../Reservation.ts"
import type { NewGuest, ReservationRow } from "../ReservationRow.ts"
import { type Current, type Decided, decision, unchanged } from "./Decision.ts"
import { Warnings } from "./Reports.ts"
import { initialReports, mayBeHeld, type State } from "./State.ts"

/**
 * The stay half of the reservation machine: creation (endpoints 3 and 7), the check-in page's guests and contract
 * (design §5), modification (spec rule 6, design §6.6), departure (design §6.8) and cancellation (endpoint 5).
 * `Machine.decide` is the entry point; what follows from each change (status, reports due, exits, events) is
 * `Machine.follow`.
 */

export const cancelledError = () => new ReservationCancelled({ message: "the reservation is cancelled", details: {} })

/**
 * One more guest registered: refused on a cancelled reservation (409 reservation_cancelled) and when every guest
 * is already registered (400 registration_rejected). Registration closes with the last guest.
 */
const registerOneMore = (
  row: ReservationRow
): Either.Either<Pick<State, "guests_registered" | "registration_complete">, ReservationCancelled | RegistrationRejected> => {
  if (row.reservation_status === "cancelled") return Either.left(cancelledError())
  if (row.registration_complete) {
    return Either.left(
      new RegistrationRejected({
        message: `all ${row.guests_count} guests are already registered`,
        details: { guests_count: row.guests_count, guests_registered: row.guests_registered }
      })
    )
  }
  const guests_registered = row.guests_registered + 1
  return Either.right({ guests_registered, registration_complete: guests_registered >= row.guests_count })
}

// ---------------------------------------------------------------------------------------------------------------
// Modification (spec rule 6, design §6.6)

/** A date change, as the rows of design §6.6's table. */
export type DateChange = "extend_check_out" | "shorten_check_out" | "move_check_in"

/** A cell of design §6.6's table. */
export type DateVerdict = "ok" | "ok_register_extension" | "already_reported"

export interface DateRule {
  readonly change: DateChange
  readonly before_any_report: DateVerdict
  readonly after_tra_reported: DateVerdict
  readonly after_sire_reported: DateVerdict
}

/** Design §6.6's date table, verbatim. */
export const dateRules: ReadonlyArray<DateRule> = [
  {
    change: "extend_check_out",
    before_any_report: "ok",
    after_tra_reported: "ok_register_extension",
    after_sire_reported: "ok"
  },
  {
    change: "shorten_check_out",
    before_any_report: "ok",
    after_tra_reported: "already_reported",
    after_sire_reported: "ok"
  },
  {
    change: "move_check_in",
    before_any_report: "ok",
    after_tra_reported: "already_reported",
    after_sire_reported: "already_reported"
  }
]

/**
 * The verdict for one date change given which reports the authorities hold or may hold. With both, every
 * applicable column must allow it (the strictest cell wins; a TRA extension is still registered).
 */
export const dateVerdict = (
  change: DateChange,
  reported: { readonly tra: boolean; readonly sire: boolean }
): DateVerdict => {
  const rule = dateRules.find((row) => row.change === change)!
  const cells: Array<DateVerdict> = !reported.tra && !reported.sire
    ? [rule.before_any_report]
    : [
      ...(reported.tra ? [rule.after_tra_reported] : []),
      ...(reported.sire ? [rule.after_sire_reported] : [])
    ]
  if (cells.includes("already_reported")) return "already_reported"
  if (cells.includes("ok_register_extension")) return "ok_register_extension"
  return "ok"
}

/** The fields of UpdateReservation that are not judged by the stay's rules, in the spec's order. */
const PLAIN_FIELDS = ["guest_name", "guest_email", "guest_phone", "notes", "metadata"] as const

export type ModifiableField = "check_in" | "check_out" | "guests_count"

export type ModificationError = ReservationCancelled | InvalidRequest | GuestsAlreadyRegistered | AlreadyReported

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

const reportedNames = (reported: { readonly tra: boolean; readonly sire: boolean }) =>
  [...(reported.tra ? ["TRA"] : []), ...(reported.sire ? ["SIRE"] : [])].join(" and ")

const invalid = (field: string, message: string, detail: string = message) =>
  new InvalidRequest({ message, details: { fields: [{ field, message: detail }] } })

/**
 * Modify (endpoint 4), in this order: cancelled → 409 reservation_cancelled; resulting check_out not after check_in
 * → 400 invalid_request; guests_count below guests_registered → 409 guests_already_registered; the date table (409
 * already_reported); guests_count raised after completion once a report may be held → 409 already_reported; a
 * recorded departure left outside the stay → 400 (design §6.8). Raising guests_count after completion (nothing
 * reported) reopens registration: the reports go back to `not_applicable`, the signature is kept. Lowering it to
 * the registered guests completes registration. An extension after the TRA was accepted registers the added
 * nights from the first night not yet registered (design §6.8). Answers the fields changed, in the spec's order.
 */
export const modify = (
  row: ReservationRow,
  body: UpdateReservation
): Decided<{ readonly changed: ReadonlyArray<string> }, ModificationError> => {
  if (row.reservation_status === "cancelled") return Either.left(cancelledError())
  const check_in = body.check_in ?? row.check_in
  const check_out = body.check_out ?? row.check_out
  const guests_count = body.guests_count ?? row.guests_count

  if (check_out <= check_in) {
    return Either.left(invalid(
      body.check_out !== undefined ? "check_out" : "check_in",
      `check_out (${check_out}) must be later than check_in (${check_in})`,
      "check_out must be later than check_in"
    ))
  }
  if (guests_count < row.guests_registered) {
    return Either.left(
      new GuestsAlreadyRegistered({
        message: `guests_count ${guests_count} is lower than the ${row.guests_registered} guests already registered`,
        details: { guests_count, guests_registered: row.guests_registered }
      })
    )
  }

  const reported = mayBeHeld(row)
  const dateChanges: ReadonlyArray<DateChange> = [
    ...(check_in !== row.check_in ? ["move_check_in" as const] : []),
    ...(check_out > row.check_out ? ["extend_check_out" as const] : []),
    ...(check_out < row.check_out ? ["shorten_check_out" as const] : [])
  ]
  const verdicts = dateChanges.map((change) => [change, dateVerdict(change, reported)] as const)
  const refused = verdicts.find(([, verdict]) => verdict === "already_reported")
  if (refused !== undefined) {
    const field = refused[0] === "move_check_in" ? "check_in" : "check_out"
    return Either.left(
      new AlreadyReported({
        message: `${field} cannot change: the stay was already reported to ${reportedNames(reported)}`,
        details: { field, change: refused[0], already_reported: reported }
      })
    )
  }

  const reopens = guests_count > row.guests_count && row.registration_complete
  if (reopens && (reported.tra || reported.sire)) {
    return Either.left(
      new AlreadyReported({
        message: `guests_count cannot rise: the registration was already reported to ${reportedNames(reported)}`,
        details: { field: "guests_count", already_reported: reported }
      })
    )
  }

  // A recorded departure stays within the stay (design §6.8).
  const departed = row.departed_on
  const outside = departed === null ? null : check_in > departed ? "check_in" : check_out < departed ? "check_out" : null
  if (outside !== null) {
    const message = `must keep the recorded departed_on (${departed}) within the stay`
    return Either.left(invalid(outside, `${outside} ${message}`, message))
  }

  const changed: ReadonlyArray<string> = [
    ...(check_in !== row.check_in ? ["check_in" as const] : []),
    ...(check_out !== row.check_out ? ["check_out" as const] : []),
    ...(guests_count !== row.guests_count ? ["guests_count" as const] : []),
    ...PLAIN_FIELDS.filter((field) => body[field] !== undefined && !sameValue(body[field], row[field]))
  ]
  if (changed.length === 0) return Either.right(unchanged({ changed }))

  const completes = !row.registration_complete && guests_count === row.guests_registered
  const reports = reopens ? initialReports(row.environment) : { tra: row.tra, sire: row.sire }
  const extension = verdicts.some(([, verdict]) => verdict === "ok_register_extension")
  return Either.right(decision({
    check_in,
    check_out,
    guests_count,
    registration_complete: reopens ? false : completes || row.registration_complete,
    // A pending TRA goes out on the (possibly moved) arrival date.
    tra: reports.tra.sends_on === null ? reports.tra : { ...reports.tra, sends_on: check_in },
    tra_reported: reopens ? false : row.tra_reported,
    sire: reports.sire,
    sire_reported: reopens ? false : row.sire_reported,
    guest_name: body.guest_name ?? row.guest_name,
    guest_email: body.guest_email === undefined ? row.guest_email : body.guest_email,
    guest_phone: body.guest_phone === undefined ? row.guest_phone : body.guest_phone,
    notes: body.notes === undefined ? row.notes : body.notes,
    metadata: body.metadata ?? row.metadata,
    // design §6.8: an extension after the TRA was accepted registers the added nights, from the first night not
    // yet registered (a live report run posts them; a test key's simulated TRA accepts them at once).
    tra_extension_from: extension && row.tra.status === "success"
      ? row.tra_extension_from ?? row.check_out
      : row.tra_extension_from
  }, { changed }))
}

// ---------------------------------------------------------------------------------------------------------------
// Cancellation (endpoint 5)

export interface Cancellation {
  readonly already_cancelled: boolean
  /** Spec rule 7: which reports the authorities hold or may hold (in flight); they are not undone. */
  readonly already_reported: { readonly tra: boolean; readonly sire: boolean }
  /** Reports that were waiting and will now never go out (SIRE: they leave the batches not yet generated). */
  readonly withdrawn: { readonly tra: boolean; readonly sire: boolean }
}

/**
 * Cancel: idempotent. A report still waiting (pending, not marked sent) is withdrawn and becomes
 * `not_applicable` with `Warnings.cancelledBeforeSending`; a report the authority may hold, or one accepted or
 * rejected, keeps its state (a pending one in flight is settled by the next run: `Reports.settleCancelled`).
 */
export const cancel = (row: ReservationRow, reason: string | undefined, at: Date): Decided<Cancellation, never> => {
  const already_reported = mayBeHeld(row)
  if (row.reservation_status === "cancelled") {
    return Either.right(unchanged({ already_cancelled: true, already_reported, withdrawn: { tra: false, sire: false } }))
  }
  const withdrawn = {
    tra: row.tra.status === "pending" && !row.tra_reported,
    sire: row.sire.status === "pending" && !row.sire_reported
  }
  const notSent = { status: "not_applicable", warning: Warnings.cancelledBeforeSending } as const
  return Either.right(decision({
    reservation_status: "cancelled",
    tra: withdrawn.tra ? { ...row.tra, ...notSent } : row.tra,
    sire: withdrawn.sire ? { ...row.sire, ...notSent } : row.sire,
    cancelled_at: at,
    cancel_reason: reason ?? null
  }, { already_cancelled: false, already_reported, withdrawn }))
}

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
export const exitSent = (row: Pick<State, "sire">, exitInFile: boolean): boolean =>
  row.sire.exit.status === "success" || row.sire.exit.status === "error" || exitInFile

/**
 * Depart: records the day the guests actually left, in this order: cancelled → 409 `reservation_cancelled`; not
 * within `check_in`…`check_out` or after today in Bogotá → 400 `invalid_request` naming `departed_on`; the date
 * already recorded → nothing changes (no event); once the exit went out, only the date it carries (the recorded
 * one, or its `sends_on` when none was recorded) → else 409 `already_reported`. It never touches `check_out` or the
 * TRA; a pending exit follows the new date (`Reports.withExit`) and `reservation.updated` names `departed_on`.
 * Answers whether something changed.
 */
export const depart = (
  row: ReservationRow,
  input: DepartureInput
): Decided<{ readonly changed: boolean }, ReservationCancelled | InvalidRequest | AlreadyReported> => {
  const { departedOn, today } = input
  const refused = (message: string) => Either.left(invalid("departed_on", `departed_on ${message}`, message))
  if (row.reservation_status === "cancelled") return Either.left(cancelledError())
  if (departedOn < row.check_in) return refused(`must be on or after check_in (${row.check_in})`)
  if (departedOn > row.check_out) return refused(`must be on or before check_out (${row.check_out})`)
  if (departedOn > today) return refused(`must not be after today in Bogotá (${today})`)
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
}

// ---------------------------------------------------------------------------------------------------------------
// Guests and the contract (the check-in page, design §5)

/**
 * A guest as stored from the spec's GuestInput (endpoint 7) or the check-in page's: `position` is the order of
 * registration, the first (0) is the primary; `registered_at` null while it waits for its document photo.
 */
export const newGuest = (input: GuestInput | CheckinGuestInput, position: number, registeredAt: Date | null): NewGuest => ({
  position,
  is_primary: position === 0,
  ...Struct.pick(input, "tipo_documento", "numero_documento", "nombre", "apellido", "nacionalidad"),
  fecha_nacimiento: input.fecha_nacimiento ?? null,
  ...Struct.pick(input, "pais_procedencia", "ciudad_procedencia", "pais_residencia", "ciudad_residencia"),
  email: input.email ?? null,
  phone: input.phone ?? null,
  address: input.address ?? null,
  // Kept as sent; the photos themselves are fetched in the background (design §6.5).
  doc_photo_front_url: input.doc_photo_front_url ?? null,
  doc_photo_back_url: input.doc_photo_back_url ?? null,
  document_uploaded: false,
  registered_at: registeredAt
})

export interface GuestEntered {
  /** Registered now, or waiting for its document photo where the property requires one. */
  readonly registered: boolean
}

/**
 * EnterGuest: one guest entered on the check-in page. The first is the primary and gives the trip's `motivo`;
 * never more guests than the stay has; where photos are required the guest counts as registered once its front
 * photo is stored (`attachDocument`).
 */
export const enterGuest = (
  { row, guests }: Current,
  input: CheckinGuestInput,
  requiresDocumentPhotos: boolean,
  at: Date
): Decided<GuestEntered, ReservationCancelled | RegistrationRejected | InvalidRequest> =>
  Either.flatMap(registerOneMore(row), (next): Decided<GuestEntered, RegistrationRejected | InvalidRequest> => {
    if (guests.length >= row.guests_count) {
      return Either.left(
        new RegistrationRejected({
          message: `all ${row.guests_count} guests of this stay have been entered`,
          details: { guests_count: row.guests_count }
        })
      )
    }
    if (guests.length === 0 && row.motivo === null && input.motivo === undefined) {
      return Either.left(invalid("motivo", "motivo is required from the first guest", "is required for the first guest (the trip's reason)"))
    }
    const registered = !requiresDocumentPhotos
    // Photos come as uploads on the check-in page, never as URLs to fetch.
    const guest = { ...newGuest(input, guests.length, registered ? at : null), doc_photo_front_url: null, doc_photo_back_url: null }
    // The trip's motivo is kept at once, even while the first guest waits for its photo.
    const motivo = row.motivo ?? input.motivo ?? null
    return Either.right(decision(registered ? { motivo, ...next } : { motivo }, { registered }, [{ _tag: "AddGuest", guest }]))
  })

/**
 * AttachDocument: a guest's document photo was stored — `document_uploaded`, and where the property requires
 * photos the guest's registration completes with it (design §5).
 */
export const attachDocument = (
  { row, guests }: Current,
  guestId: string,
  requiresDocumentPhotos: boolean,
  at: Date
): Decided<void, ReservationCancelled | RegistrationRejected | RegistrationNotFound> => {
  const guest = guests.find((candidate) => candidate.id === guestId)
  if (guest === undefined) {
    return Either.left(new RegistrationNotFound({ message: "No such guest in this stay.", details: { guest_id: guestId } }))
  }
  if (!requiresDocumentPhotos || guest.registered_at !== null) {
    return Either.right(decision({}, undefined, [{ _tag: "UpdateGuest", id: guest.id, document_uploaded: true }]))
  }
  return Either.map(registerOneMore(row), (next) =>
    decision(next, undefined, [{ _tag: "UpdateGuest", id: guest.id, document_uploaded: true, registered_at: at }]))
}

/**
 * DocumentFetched: a document photo of endpoint 7 fetched in the background was stored (design §6.5): the guest's
 * `document_uploaded`; its registration does not change (it was registered with the request).
 */
export const documentFetched = ({ guests }: Current, guestId: string): Decided<void, RegistrationNotFound> =>
  guests.some((guest) => guest.id === guestId)
    ? Either.right(decision({}, undefined, [{ _tag: "UpdateGuest", id: guestId, document_uploaded: true }]))
    : Either.left(new RegistrationNotFound({ message: "No such guest in this stay.", details: { guest_id: guestId } }))

/**
 * PersonalDataRemoved: the retention job removed the guests' personal data from the stay's event bodies and SIRE
 * files (design §3); marked once.
 */
export const personalDataRemoved = (row: ReservationRow, at: Date): Decided<void, never> =>
  Either.right(row.personal_data_removed_at === null ? decision({ personal_data_removed_at: at }, undefined) : unchanged(undefined))

/**
 * SignContract: the guest signs once every guest is registered (409 registration_open before; 409
 * reservation_cancelled on a cancelled stay); signing again answers the first signature and changes nothing.
 */
export const signContract = (
  row: ReservationRow,
  signer: string,
  at: Date
): Decided<{ readonly signed_at: Date }, ReservationCancelled | RegistrationOpen> => {
  if (row.contract_signed_at !== null) return Either.right(unchanged({ signed_at: row.contract_signed_at }))
  if (row.reservation_status === "cancelled") return Either.left(cancelledError())
  if (!row.registration_complete) {
    return Either.left(
      new RegistrationOpen({
        message: "the contract can be signed only once every guest is registered",
        details: { guests_count: row.guests_count, guests_registered: row.guests_registered }
      })
    )
  }
  return Either.right(decision({ contract_signed_at: at, contract_signer: row.contract_signer ?? signer }, { signed_at: at }))
}

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
const stayDraft = (input: CreationInput<CreateReservation | SubmitRegistration>, flow: State["flow"]): State => {
  const { body, at } = input
  return {
    account_id: input.key.accountId,
    environment: input.key.environment,
    property_id: input.propertyId,
    external_id: body.external_id,
    flow,
    source: body.source ?? null,
    room_number: body.room_number ?? null,
    ...Struct.pick(body, "check_in", "check_out", "guest_name", "guests_count"),
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
    ...initialReports(input.key.environment),
    tra_reported: false,
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
    departed_on: null,
    personal_data_removed_at: null
  }
}

/** Endpoint 3: guests register through the check-in link; the property decides whether a contract is signed. */
export const linkDraft = (input: CreationInput<CreateReservation> & { readonly contractRequired: boolean }): State => ({
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
): { readonly draft: State; readonly guests: ReadonlyArray<NewGuest> } => ({
  draft: {
    ...stayDraft(input, "registration"),
    motivo: input.body.motivo,
    tipo_acomodacion: input.body.tipo_acomodacion,
    guests_registered: input.body.guests.length,
    registration_complete: true
  },
  guests: input.body.guests.map((guest, position) => newGuest(guest, position, input.at))
})

