import { expect, test } from "bun:test"
import { fieldPath } from "../../src/http/ErrorMiddleware.ts"

test("fieldPath names nested fields the way partners read them", () => {
  expect(fieldPath(["guests", 1, "nacionalidad"])).toBe("guests[1].nacionalidad")
  expect(fieldPath(["mappings", 0, "property_id"])).toBe("mappings[0].property_id")
  expect(fieldPath(["external_id"])).toBe("external_id")
  expect(fieldPath([])).toBe("")
})
