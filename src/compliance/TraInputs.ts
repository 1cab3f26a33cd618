import { Array as Arr, Either } from "effect"
import type { GuestRow, ReservationRow } from "../reservations/ReservationRow.ts"
import type { ReferenceData } from "./ReferenceData.ts"
import {
  companionFields,
  costoFromCop,
  costoShare,
  mainBody,
  nightsBetween,
  type TraCompanionFields,
  type TraGuest,
  type TraMainBody,
  type TraStay
} from "./Tra.ts"

/**
 * What a TRA report is built from (design §6.10): the reservation, its registered guests and its property's
 * settings mapped through the reference tables to the TRA's wording — or the configuration warning that holds
 * the report. Pure: a live run (`TraReporting`) and the simulated TRA of test keys (`Simulated.ts`, design §6.12)
 * ask the same questions and get the same warnings.
 */

/** The reservation as the TRA bodies need it. */
export interface TraSource {
  readonly row: Pick<
    ReservationRow,
    "motivo" | "room_number" | "check_in" | "check_out" | "tipo_acomodacion" | "total_amount_cop"
  >
  /** Registered guests in registration order; the first is the main guest. */
  readonly guests: ReadonlyArray<
    Pick<
      GuestRow,
      "id" | "position" | "tipo_documento" | "numero_documento" | "nombre" | "apellido" | "ciudad_residencia" | "ciudad_procedencia"
    >
  >
  readonly property: {
    readonly name: string
    readonly establishment_name: string | null
    readonly rnt_id: string | null
    readonly tipo_acomodacion: string | null
    readonly default_room: string | null
  }
}

/** Configuration warnings of the TRA beyond those set when reports become due (`Reports.Warnings` of the reservation machine). */
export const Warnings = {
  rntMissing: "the property has no RNT number; configure it so the TRA can be sent",
  /** Design §6.10: late is worse than incomplete, so the TRA goes out with the room blank and says so. */
  roomMissing: "numero_habitacion was sent blank: the reservation has no room_number and the property no default " +
    "room (cli properties update --default-room, or the panel's settings)"
} as const

/**
 * `tipo_acomodacion` when neither the registration (endpoint 7) nor the property names one (design §6.10): the
 * room type of the TRA web form for the party's size, `Sencilla` for one guest and `Doble` otherwise — what C3
 * (steadydee/owagents tools/hotel_pms/server.py, `tra_payload_accommodation`) sends to both the API and the form;
 * both words are options of the form's list as C5 copied it (franbz1/hotel-san-miguel
 * src/common/enums/tipoHabitacion.enum.ts). Establishment types (`Hotel`, C2 and C4) answer another question.
 */
export const defaultTipoAcomodacion = (guests: number): string => guests <= 1 ? "Sencilla" : "Doble"

/** What the bodies are built from, and what the report should say about them even when it is accepted. */
export interface TraInputs {
  readonly stay: TraStay
  readonly guests: ReadonlyMap<string, TraGuest>
  /** A value sent blank or guessed, for `tra.warning` (design §6.10); null when there is nothing to say. */
  readonly notice: string | null
}

/**
 * Why a TRA body cannot be built, or what holds it: the guest it concerns (its registration position; null for the
 * stay or the property), the field, and the warning a report run gives.
 */
export interface TraProblem {
  readonly guest_index: number | null
  readonly field: string
  readonly message: string
}

/**
 * The bodies' inputs from the reference data, or every value the tables do not map — the first is the
 * configuration warning that holds the report (design §6.9). `period` is the stay (`check_in` → `check_out`) or
 * an extension's added nights (old → new `check_out`), whose `costo` is their share of the stored amount
 * (`costoShare`).
 */
export const traInputs = (
  reference: ReferenceData,
  due: TraSource,
  period: { readonly from: string; readonly to: string }
): Either.Either<TraInputs, Arr.NonEmptyReadonlyArray<TraProblem>> => {
  const { row, property } = due
  const problems: Array<TraProblem> = []
  const motivo = row.motivo === null ? undefined : reference.traMotivo(row.motivo)
  if (motivo === undefined) {
    problems.push({
      guest_index: null,
      field: "motivo",
      message: `the TRA needs a wording for motivo (${JSON.stringify(row.motivo)}); add it to the reference data`
    })
  }
  const guests = new Map<string, TraGuest>()
  for (const guest of due.guests) {
    const label = reference.traDocument(guest.tipo_documento)
    if (label === undefined) {
      problems.push({
        guest_index: guest.position,
        field: "tipo_documento",
        message: `the TRA needs a label for guests[${guest.position}].tipo_documento (${guest.tipo_documento}); ` +
          "add it to the reference data"
      })
      continue
    }
    guests.set(guest.id, {
      tipo_identificacion: label,
      numero_identificacion: guest.numero_documento,
      nombres: guest.nombre,
      apellidos: guest.apellido,
      cuidad_residencia: guest.ciudad_residencia ?? "",
      cuidad_procedencia: guest.ciudad_procedencia ?? ""
    })
  }
  if (Arr.isNonEmptyReadonlyArray(problems)) return Either.left(problems)
  const room = [row.room_number, property.default_room].find((value) => value !== null && value.trim() !== "")
  const extension = period.from !== row.check_in
  return Either.right({
    stay: {
      check_in: period.from,
      check_out: period.to,
      numero_habitacion: room?.trim() ?? "",
      motivo: motivo ?? "",
      tipo_acomodacion: row.tipo_acomodacion ?? property.tipo_acomodacion ?? defaultTipoAcomodacion(due.guests.length),
      costo: extension
        ? costoShare(
          row.total_amount_cop,
          nightsBetween(period.from, period.to),
          nightsBetween(row.check_in, row.check_out)
        )
        : costoFromCop(row.total_amount_cop),
      nombre_establecimiento: property.establishment_name ?? property.name,
      rnt_establecimiento: property.rnt_id ?? ""
    },
    guests,
    notice: room === undefined ? Warnings.roomMissing : null
  })
}

/** One guest's part of what the TRA is sent: the main guest's `/one/` body, a companion's `/two/` but its `padre`. */
export type TraGuestBody =
  | { readonly role: "main"; readonly guestId: string; readonly position: number; readonly body: TraMainBody }
  | { readonly role: "companion"; readonly guestId: string; readonly position: number; readonly body: TraCompanionFields }

/** What a round sends, guest by guest in registration order, and the notice its report carries. */
export interface TraBodies {
  readonly guests: ReadonlyArray<TraGuestBody>
  readonly notice: string | null
}

/**
 * The one builder of what the TRA is sent (issue 25): a live run posts these bodies, the simulated TRA of test
 * keys and the validate endpoint build them and answer what they found. The first guest is the main guest
 * (`/one/`), the others its companions (`/two/`, `padre` added once the main guest has its code: `withPadre`).
 */
export const traBodies = (
  reference: ReferenceData,
  due: TraSource,
  period: { readonly from: string; readonly to: string }
): Either.Either<TraBodies, Arr.NonEmptyReadonlyArray<TraProblem>> =>
  Either.map(traInputs(reference, due, period), ({ stay, guests, notice }) => ({
    notice,
    guests: due.guests.flatMap((guest, index): Array<TraGuestBody> => {
      const input = guests.get(guest.id)
      if (input === undefined) return []
      const { id: guestId, position } = guest
      return [
        index === 0
          ? { role: "main", guestId, position, body: mainBody(stay, input, due.guests.length - 1) }
          : { role: "companion", guestId, position, body: companionFields(stay, input) }
      ]
    })
  }))
