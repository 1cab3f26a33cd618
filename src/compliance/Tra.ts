import { Struct } from "effect"

/**
 * Bodies of MinCIT's TRA web service for PMS providers (domain notes §1.3, §1.4, §6.2). Pure: no I/O, no clock,
 * no configuration. Values arrive already mapped to the TRA wording (document labels, motivo) by the caller;
 * these builders only fix the wire shape: the exact field names — `cuidad_` misspelled on purpose, as the
 * service expects — and every value a string.
 */

/**
 * The 7 fields both bodies open with, in the notes' order: the guest's identity, where they live and come from,
 * and the room.
 */
const GUEST_FIELDS = [
  "tipo_identificacion",
  "numero_identificacion",
  "nombres",
  "apellidos",
  // "cuidad", not "ciudad": every integration that reached the live service spells it so (C1–C5, C7–C9); only
  // the human web form says "ciudad". A correctly spelled name would be a missing field to the service.
  "cuidad_residencia",
  "cuidad_procedencia",
  "numero_habitacion"
] as const

/** The 15 fields of `/one/` (domain §1.3), in the notes' order. The fake TRA validates against this same list. */
export const MAIN_FIELDS = [
  ...GUEST_FIELDS,
  "motivo",
  "numero_acompanantes",
  "check_in",
  "check_out",
  "tipo_acomodacion",
  "costo",
  "nombre_establecimiento",
  "rnt_establecimiento"
] as const

/** The 10 fields of `/two/` (domain §1.4): no motivo, cost, RNT or establishment name; `padre` links the main guest. */
export const COMPANION_FIELDS = [...GUEST_FIELDS, "check_in", "check_out", "padre"] as const

export type MainField = (typeof MAIN_FIELDS)[number]
export type CompanionField = (typeof COMPANION_FIELDS)[number]

/** The JSON body of `POST /one/`: exactly the 15 fields, every value a string. */
export type TraMainBody = { readonly [K in MainField]: string }

/** The JSON body of `POST /two/`: exactly the 10 fields, every value a string. */
export type TraCompanionBody = { readonly [K in CompanionField]: string }

/** What a stay contributes to the bodies. */
export interface TraStay {
  /** `YYYY-MM-DD`. */
  readonly check_in: string
  /** `YYYY-MM-DD`. */
  readonly check_out: string
  /** The reservation's `room_number`, else the property's default room; "" when both are absent (design §6.10). */
  readonly numero_habitacion: string
  /** Already the TRA wording (domain §1.6). */
  readonly motivo: string
  readonly tipo_acomodacion: string
  /** Whole COP pesos as digits ("0" when absent); see `costoFromCop`. */
  readonly costo: string
  readonly nombre_establecimiento: string
  readonly rnt_establecimiento: string
}

/** What one guest contributes to the bodies. */
export interface TraGuest {
  /** Already the TRA label, e.g. "C.C", "Pasaporte" (domain §1.6, §4.1). */
  readonly tipo_identificacion: string
  readonly numero_identificacion: string
  readonly nombres: string
  readonly apellidos: string
  readonly cuidad_residencia: string
  readonly cuidad_procedencia: string
}

/** A count or code as a string of digits; anything else is a programming error, not data to send. */
const digits = (value: number, what: string): string => {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${what} must be a non-negative integer, got ${String(value)}`)
  }
  return String(value)
}

/** The `GUEST_FIELDS` both bodies open with. */
const guestFields = (stay: TraStay, guest: TraGuest): { readonly [K in (typeof GUEST_FIELDS)[number]]: string } => ({
  // Picked by name, never spread: an extra property on the inputs must not reach the wire.
  ...Struct.pick(
    guest,
    "tipo_identificacion",
    "numero_identificacion",
    "nombres",
    "apellidos",
    "cuidad_residencia",
    "cuidad_procedencia"
  ),
  numero_habitacion: stay.numero_habitacion
})

/**
 * The `/one/` body of the main guest. `companions` is the number of the stay's other guests (guests − 1).
 * `numero_acompanantes` is sent as a string of digits: the sources conflict (C4 sends an int, C9 a number), but
 * C2 ("String según API"), C3, C5 and C8 send a string, and every other value of the body is a string.
 * Throws a `RangeError` when `companions` is not a non-negative integer.
 */
export const mainBody = (stay: TraStay, guest: TraGuest, companions: number): TraMainBody => ({
  ...guestFields(stay, guest),
  motivo: stay.motivo,
  numero_acompanantes: digits(companions, "numero_acompanantes"),
  ...Struct.pick(stay, "check_in", "check_out", "tipo_acomodacion", "costo", "nombre_establecimiento", "rnt_establecimiento")
})

/**
 * The `/two/` body of one companion, linked to the main guest's accepted `/one/` code by `padre`.
 *
 * `padre` goes as a **string** of digits. Sources conflict (domain §1.4): C1, C3, C4 and C5 send a string, C2
 * and C8 a number. We follow the majority and keep the body all-string like `/one/`; should the service be the
 * Django REST Framework app it looks like (§1.2 inference), an integer or relation field accepts "123" as well.
 * Throws a `RangeError` when `padre` is not a non-negative integer.
 */
export const companionBody = (stay: TraStay, guest: TraGuest, padre: number): TraCompanionBody =>
  withPadre(companionFields(stay, guest), padre)

/** A companion's `/two/` body but `padre`, which is known only once the TRA accepted the main guest. */
export type TraCompanionFields = Omit<TraCompanionBody, "padre">

export const companionFields = (stay: TraStay, guest: TraGuest): TraCompanionFields => ({
  ...guestFields(stay, guest),
  ...Struct.pick(stay, "check_in", "check_out")
})

/** The `/two/` body of `fields` linked to the main guest's code. Throws a `RangeError` as `companionBody`. */
export const withPadre = (fields: TraCompanionFields, padre: number): TraCompanionBody => ({
  ...fields,
  padre: digits(padre, "padre")
})

const COP = /^(\d+)(?:\.(\d*))?$/

/**
 * `costo` from the stored COP amount (PostgreSQL numeric text such as "1250000.00" or "1250000"): whole pesos as
 * digits, rounded half-up (…,50 goes up), no leading zeros; null (no amount) → "0" (design §6.10). Exact: the
 * text is split, never parsed as a float. Domain §1.3: C2, C8 and C9 send whole pesos as text. Throws a
 * `RangeError` for a negative or malformed amount (the stored column never holds one).
 */
export const costoFromCop = (amount: string | null): string => {
  if (amount === null) return "0"
  const match = COP.exec(amount.trim())
  if (match === null) throw new RangeError(`COP amount must be a non-negative decimal, got ${JSON.stringify(amount)}`)
  const whole = BigInt(match[1]!)
  // The fraction is at least one half exactly when its first digit is 5 or more.
  const firstDecimal = match[2]?.[0] ?? "0"
  return (firstDecimal >= "5" ? whole + 1n : whole).toString()
}

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/

/** Days since 1970-01-01 of a `YYYY-MM-DD` calendar date (no clock, no time zone: a date is a date). */
const dayNumber = (date: string): number => {
  const match = ISO_DAY.exec(date)
  if (match === null) throw new RangeError(`expected a YYYY-MM-DD date, got ${JSON.stringify(date)}`)
  return Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / 86_400_000
}

/** Nights from `from` to `to` (`YYYY-MM-DD`): 2026-11-21 → 2026-11-24 is 3. */
export const nightsBetween = (from: string, to: string): number => dayNumber(to) - dayNumber(from)

/**
 * `costo` of an extension's `/one/` (design §6.8, §6.10): the added nights' share of the stored COP amount —
 * `amount × nights / ofNights`, `ofNights` being the nights of the whole stay as it now stands — in whole pesos,
 * rounded half-up, exactly (decimal text and BigInt, never a float). The partner API has no way to send a new
 * amount with an extension (endpoint 4 takes dates, not amounts), so the stored amount is the value of the stay
 * and each night carries an equal part of it; the stay's own `/one/` already declared it whole, and repeating it
 * for the added nights would declare the stay twice. null (no amount) → "0". Throws a `RangeError` for a
 * malformed amount or when `nights` is not within 1..`ofNights`.
 */
export const costoShare = (amount: string | null, nights: number, ofNights: number): string => {
  if (!Number.isSafeInteger(nights) || !Number.isSafeInteger(ofNights) || nights < 1 || nights > ofNights) {
    throw new RangeError(`costoShare: ${String(nights)} added nights of ${String(ofNights)} is not a share`)
  }
  if (amount === null) return "0"
  const match = COP.exec(amount.trim())
  if (match === null) throw new RangeError(`COP amount must be a non-negative decimal, got ${JSON.stringify(amount)}`)
  const fraction = match[2] ?? ""
  const scale = 10n ** BigInt(fraction.length)
  const scaled = BigInt(match[1]!) * scale + (fraction === "" ? 0n : BigInt(fraction))
  // floor(x + 1/2) with x = scaled × nights / (ofNights × scale): half-up on an exact rational.
  const denominator = BigInt(ofNights) * scale
  return ((2n * scaled * BigInt(nights) + denominator) / (2n * denominator)).toString()
}
