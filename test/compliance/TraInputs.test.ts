import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import type { DueReservation, ReportingProfile } from "../../src/compliance/DueReports.ts"
import { makeSync } from "../../src/compliance/ReferenceData.ts"
import { defaultTipoAcomodacion, traInputs, Warnings } from "../../src/compliance/TraInputs.ts"
import { dueRow, guestRow } from "../support/rows.ts"

/**
 * The values design §6.10 takes from the public integrations, as the TRA stage computes them: tipo_acomodacion,
 * numero_habitacion (room_number → the property's default room → blank with a warning) and an extension's costo.
 */

const reference = makeSync()

const property: ReportingProfile = {
  tra_token: null,
  name: "Hotel Candelaria",
  establishment_name: null,
  rnt_id: "12345",
  tipo_acomodacion: null,
  default_room: null,
  sire_hotel_code: null,
  sire_city_code: null
}

const ana = guestRow()
const luis = guestRow({ id: "00000000-0000-4000-8000-0000000000c2", position: 1, is_primary: false, nombre: "Luis" })

const due = (
  row: Partial<DueReservation["row"]> = {},
  profile: Partial<ReportingProfile> = {},
  guests: DueReservation["guests"] = [ana, luis]
): DueReservation => ({
  row: dueRow({ motivo: "Vacaciones, recreo y ocio", ...row }),
  guests,
  property: { ...property, ...profile }
})

const inputs = (reservation: DueReservation, period = { from: reservation.row.check_in, to: reservation.row.check_out }) =>
  Either.getOrThrow(traInputs(reference, reservation, period))

describe("tipo_acomodacion (design §6.10)", () => {
  test("Sencilla for one guest, Doble otherwise (C3's rule)", () => {
    expect(defaultTipoAcomodacion(1)).toBe("Sencilla")
    expect(defaultTipoAcomodacion(2)).toBe("Doble")
    expect(defaultTipoAcomodacion(7)).toBe("Doble")
    expect(inputs(due({}, {}, [ana])).stay.tipo_acomodacion).toBe("Sencilla")
    expect(inputs(due()).stay.tipo_acomodacion).toBe("Doble")
  })

  test("the property's setting overrides the default, and endpoint 7's value overrides both", () => {
    expect(inputs(due({}, { tipo_acomodacion: "Suite" })).stay.tipo_acomodacion).toBe("Suite")
    expect(inputs(due({ tipo_acomodacion: "Múltiple" }, { tipo_acomodacion: "Suite" })).stay.tipo_acomodacion)
      .toBe("Múltiple")
  })
})

describe("numero_habitacion (design §6.10)", () => {
  test("the reservation's room_number first, with nothing to say", () => {
    const built = inputs(due({ room_number: "304" }, { default_room: "101" }))
    expect(built.stay.numero_habitacion).toBe("304")
    expect(built.notice).toBeNull()
  })

  test("else the property's default room", () => {
    const built = inputs(due({ room_number: null }, { default_room: "Cabaña 2" }))
    expect(built.stay.numero_habitacion).toBe("Cabaña 2")
    expect(built.notice).toBeNull()
  })

  test("a blank room_number counts as none", () => {
    expect(inputs(due({ room_number: "  " }, { default_room: "101" })).stay.numero_habitacion).toBe("101")
  })

  test("else blank, and the report says so (it still goes out)", () => {
    const built = inputs(due({ room_number: null }, { default_room: null }))
    expect(built.stay.numero_habitacion).toBe("")
    expect(built.notice).toBe(Warnings.roomMissing)
  })
})

describe("costo", () => {
  test("the stay's /one/ declares the stored COP amount", () => {
    expect(inputs(due({ total_amount_cop: "900000.00" })).stay.costo).toBe("900000")
  })

  test("an extension's /one/ declares the added nights' share of it, rounded half-up", () => {
    // 2026-12-10 → 2026-12-13 extended to 2026-12-16: 3 added nights of 6.
    const extended = due({ check_out: "2026-12-16", total_amount_cop: "900001.00" })
    const built = inputs(extended, { from: "2026-12-13", to: "2026-12-16" })
    expect(built.stay.costo).toBe("450001") // 450 000,50 → up
    expect(built.stay.check_in).toBe("2026-12-13")
    expect(built.stay.check_out).toBe("2026-12-16")
  })

  test("no amount: 0 for the stay and for an extension", () => {
    expect(inputs(due({ total_amount_cop: null })).stay.costo).toBe("0")
    expect(inputs(due({ check_out: "2026-12-14", total_amount_cop: null }), { from: "2026-12-13", to: "2026-12-14" })
      .stay.costo).toBe("0")
  })
})
