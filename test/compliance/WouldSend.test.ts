import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import { makeSync } from "../../src/compliance/ReferenceData.ts"
import { simulatedWarnings } from "../../src/compliance/Simulated.ts"
import { sireGuest, sireLine } from "../../src/compliance/Sire.ts"
import { companionBody, mainBody, withPadre } from "../../src/compliance/Tra.ts"
import { traBodies, traInputs } from "../../src/compliance/TraInputs.ts"
import { type Enrolment, type ReportSource, wouldSend } from "../../src/compliance/WouldSend.ts"
import { dueRow, guestRow } from "../support/rows.ts"

/**
 * One builder for live runs, the simulated authorities and the validate endpoint (issue 25 item 1): for the same
 * reservation, what a live run posts (`traBodies` + `withPadre`, `sireLine` on `sireGuest`), what validate answers
 * (`wouldSend`) and what the simulated authorities warn (`simulatedWarnings`) agree field for field. The HTTP side
 * (a body validated, then submitted and reported to the fakes) is validate-api.test.ts.
 */

const reference = makeSync()

const ana = guestRow()
const john = guestRow({
  id: "00000000-0000-4000-8000-0000000000c2",
  position: 1,
  is_primary: false,
  tipo_documento: "Pasaporte",
  numero_documento: "AB123456",
  nombre: "John",
  apellido: "Smith",
  nacionalidad: "US",
  fecha_nacimiento: "1985-04-12",
  pais_procedencia: "US",
  pais_residencia: "US"
})

const source = (overrides: Partial<ReportSource> = {}): ReportSource => ({
  row: dueRow({ motivo: "Vacaciones, recreo y ocio", room_number: "204", total_amount_cop: "480000.00" }),
  guests: [ana, john],
  property: { name: "Hotel Candelaria", establishment_name: null, rnt_id: "12345", tipo_acomodacion: null, default_room: null },
  ...overrides
})

const enrolled: Enrolment = {
  reports_tra: true,
  reports_sire: true,
  has_tra_token: true,
  sire_hotel_code: "2468",
  sire_city_code: "11001"
}

describe("one builder (issue 25 item 1)", () => {
  test("the TRA bodies: validate's fields are the live run's bodies, padre aside, and the builder of before", () => {
    const reservation = source()
    const period = { from: reservation.row.check_in, to: reservation.row.check_out }
    const live = Either.getOrThrow(traBodies(reference, reservation, period))
    const [main, companion] = live.guests
    if (main?.role !== "main" || companion?.role !== "companion") throw new Error("expected a main guest and a companion")
    const validated = wouldSend(reference, reservation, enrolled, "countries").tra.would_send
    expect(validated).toEqual([
      { guest_index: 0, fields: main.body },
      { guest_index: 1, fields: { ...companion.body, padre: null } }
    ])
    // The bodies the live run posted before the builder was shared, from the same inputs.
    const inputs = Either.getOrThrow(traInputs(reference, reservation, period))
    expect(main.body).toEqual(mainBody(inputs.stay, inputs.guests.get(ana.id)!, 1))
    expect(withPadre(companion.body, 991)).toEqual(companionBody(inputs.stay, inputs.guests.get(john.id)!, 991))
  })

  test("the SIRE line: validate's is the live run's, for the foreign guest only", () => {
    const reservation = source()
    const live = sireLine(reference, {
      hotelCode: "2468",
      cityCode: "11001",
      guest: sireGuest(john),
      movement: "E",
      date: reservation.row.check_in,
      places: "countries"
    })
    expect(wouldSend(reference, reservation, enrolled, "countries").sire.would_send).toEqual([
      { guest_index: 1, line: Either.getOrThrow(live) }
    ])
  })

  test("what holds a live run is validate's first problem and the simulated warning", () => {
    const reservation = source({
      row: dueRow({ motivo: null, room_number: "204" }),
      guests: [ana, { ...john, nacionalidad: "XX" }]
    })
    const period = { from: reservation.row.check_in, to: reservation.row.check_out }
    const held = traBodies(reference, reservation, period)
    if (Either.isRight(held)) throw new Error("expected the TRA to be held")
    const answer = wouldSend(reference, reservation, enrolled, "countries")
    expect(answer.tra.problems).toEqual(held.left)
    expect(answer.tra.problems[0]).toMatchObject({ guest_index: null, field: "motivo" })
    expect(answer.sire.problems[0]).toMatchObject({ guest_index: 1, field: "nacionalidad" })
    expect(simulatedWarnings(reference, reservation, "countries")).toEqual({
      tra: held.left[0].message,
      sire: `SIRE cannot map guests[1].nacionalidad: ${answer.sire.problems[0]!.message}`
    })
  })
})
