import { describe, expect, test } from "bun:test"
import {
  COMPANION_FIELDS,
  companionBody,
  costoFromCop,
  costoShare,
  MAIN_FIELDS,
  mainBody,
  nightsBetween,
  type TraGuest,
  type TraStay
} from "../../src/compliance/Tra.ts"
import { ONE_FIELDS, TWO_FIELDS } from "../support/authority/tra-fields.ts"
import { traCompanion as companion, traHolder as guest, traStay as stay } from "../support/traStay.ts"

/** `body` has exactly `fields`, in their order, every value a string, and equals `expected`. */
const expectStringBody = (body: object, fields: ReadonlyArray<string>, expected: object) => {
  expect(Object.keys(body)).toEqual([...fields])
  for (const value of Object.values(body)) expect(typeof value).toBe("string")
  expect(body).toEqual(expected)
}

// The field lists are checked against the fake TRA's own table (`test/support/authority/tra-fields.ts`, written
// down from the public integrations), never against themselves: a field name both our list and our body builder
// got wrong must fail here.
describe("field lists", () => {
  test("the 15 /one/ fields and the 10 /two/ fields of the sources, in their order", () => {
    expect<ReadonlyArray<string>>(MAIN_FIELDS).toEqual(ONE_FIELDS)
    expect<ReadonlyArray<string>>(COMPANION_FIELDS).toEqual(TWO_FIELDS)
  })

  test("the deliberate cuidad_ spelling, never ciudad_", () => {
    for (const list of [MAIN_FIELDS, COMPANION_FIELDS] as ReadonlyArray<ReadonlyArray<string>>) {
      expect(list).toContain("cuidad_residencia")
      expect(list).toContain("cuidad_procedencia")
      expect(list.some((f) => f.startsWith("ciudad"))).toBe(false)
    }
  })
})

describe("mainBody", () => {
  test("exactly the 15 fields of domain §1.3, every value a string", () => {
    // The sources' names, in the notes' order; the guest's six fields as given.
    expectStringBody(mainBody(stay, guest, 2), ONE_FIELDS, {
      ...guest,
      numero_habitacion: "304",
      motivo: "Vacaciones, recreo y ocio",
      numero_acompanantes: "2",
      check_in: "2026-11-21",
      check_out: "2026-11-24",
      tipo_acomodacion: "Doble",
      costo: "1250000",
      nombre_establecimiento: "Hotel Casa Bahía",
      rnt_establecimiento: "123456"
    })
  })

  test("JSON on the wire has the misspelled names and string digits", () => {
    const wire = JSON.stringify(mainBody(stay, guest, 0))
    expect(wire).toContain(`"cuidad_residencia":"Medellín"`)
    expect(wire).toContain(`"numero_acompanantes":"0"`)
    expect(wire).not.toContain("ciudad")
  })

  test("numero_acompanantes is the companion count as digits", () => {
    expect(mainBody(stay, guest, 0).numero_acompanantes).toBe("0")
    expect(mainBody(stay, guest, 1).numero_acompanantes).toBe("1")
    expect(mainBody(stay, guest, 12).numero_acompanantes).toBe("12")
  })

  test("an absent room number stays an empty string", () => {
    expect(mainBody({ ...stay, numero_habitacion: "" }, guest, 0).numero_habitacion).toBe("")
  })

  test("extra properties on the inputs never reach the body", () => {
    const extra = { ...guest, ciudad_residencia: "typo", token: "secret" } as TraGuest
    const body = mainBody({ ...stay, sandbox: true } as TraStay, extra, 0)
    expect(Object.keys(body)).toEqual([...ONE_FIELDS])
  })

  test("a companion count that is not a non-negative integer is a programming error", () => {
    expect(() => mainBody(stay, guest, -1)).toThrow(RangeError)
    expect(() => mainBody(stay, guest, 1.5)).toThrow(RangeError)
    expect(() => mainBody(stay, guest, Number.NaN)).toThrow(RangeError)
  })
})

describe("companionBody", () => {
  test("exactly the 10 fields of domain §1.4, padre as a string of digits", () => {
    expectStringBody(companionBody(stay, companion, 991), TWO_FIELDS, {
      ...companion,
      numero_habitacion: "304",
      check_in: "2026-11-21",
      check_out: "2026-11-24",
      padre: "991"
    })
  })

  test("no motivo, cost, RNT or establishment on a companion", () => {
    const body = companionBody(stay, companion, 1) as Record<string, unknown>
    for (const name of ["motivo", "costo", "rnt_establecimiento", "nombre_establecimiento", "numero_acompanantes", "tipo_acomodacion"]) {
      expect(name in body).toBe(false)
    }
  })

  test("padre must be a non-negative integer", () => {
    expect(() => companionBody(stay, companion, -3)).toThrow(RangeError)
    expect(() => companionBody(stay, companion, 2.5)).toThrow(RangeError)
  })
})

describe("costoFromCop", () => {
  const table: ReadonlyArray<readonly [string | null, string]> = [
    [null, "0"],
    ["0", "0"],
    ["0.00", "0"],
    ["1250000", "1250000"],
    ["1250000.00", "1250000"],
    ["1250000.49", "1250000"],
    ["1250000.499999", "1250000"],
    ["1250000.50", "1250001"],
    ["1250000.5", "1250001"],
    ["1250000.51", "1250001"],
    ["1250000.99", "1250001"],
    ["0.5", "1"],
    ["0.49", "0"],
    ["999.5", "1000"],
    ["007", "7"],
    ["12.", "12"],
    [" 1500.00 ", "1500"],
    ["123456789012345678901.50", "123456789012345678902"] // beyond float precision: still exact
  ]
  for (const [amount, expected] of table) {
    test(`${JSON.stringify(amount)} → ${expected}`, () => {
      expect(costoFromCop(amount)).toBe(expected)
    })
  }

  test("malformed or negative amounts are refused", () => {
    for (const bad of ["", "-5.00", "1,250,000", "1e6", "abc", ".5"]) {
      expect(() => costoFromCop(bad)).toThrow(RangeError)
    }
  })
})

describe("nightsBetween", () => {
  test("calendar nights, across months, years and a leap day", () => {
    expect(nightsBetween("2026-11-21", "2026-11-24")).toBe(3)
    expect(nightsBetween("2026-12-30", "2027-01-02")).toBe(3)
    expect(nightsBetween("2028-02-28", "2028-03-01")).toBe(2)
    expect(nightsBetween("2026-11-21", "2026-11-21")).toBe(0)
  })
})

describe("costoShare (an extension's added nights, design §6.10)", () => {
  const table: ReadonlyArray<readonly [string | null, number, number, string]> = [
    [null, 1, 4, "0"],
    ["1200000", 1, 4, "300000"],
    ["1200000.00", 2, 5, "480000"],
    ["1000000", 1, 3, "333333"], // 333 333,33… → down
    ["2000000", 1, 3, "666667"], // 666 666,66… → up
    ["5", 1, 2, "3"], // exactly half → up
    ["3", 1, 2, "2"], // 1,5 → 2
    ["1.00", 1, 4, "0"], // 0,25 → 0
    ["0.50", 1, 1, "1"], // the whole of 0,50 → 1, as costoFromCop
    ["100000.50", 1, 1, "100001"],
    ["123456789012345678901", 1, 3, "41152263004115226300"] // 41152263004115226300,33…: exact beyond floats
  ]
  for (const [amount, nights, of, expected] of table) {
    test(`${JSON.stringify(amount)} × ${nights}/${of} → ${expected}`, () => {
      expect(costoShare(amount, nights, of)).toBe(expected)
    })
  }

  test("the share of every night of the stay is the whole amount", () => {
    expect(costoShare("1250000.50", 3, 3)).toBe(costoFromCop("1250000.50"))
  })

  test("no share outside 1..ofNights, and malformed amounts are refused", () => {
    expect(() => costoShare("100", 0, 3)).toThrow(RangeError)
    expect(() => costoShare("100", 4, 3)).toThrow(RangeError)
    expect(() => costoShare("100", 1.5, 3)).toThrow(RangeError)
    expect(() => costoShare("-100", 1, 3)).toThrow(RangeError)
    expect(() => costoShare("1e6", 1, 3)).toThrow(RangeError)
  })
})
