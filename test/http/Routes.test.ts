import { expect, test } from "bun:test"
import * as Routes from "../../src/http/Routes.ts"

/**
 * The routes as the error middleware and the body guard see them must match as the router does (find-my-way:
 * repeated slashes are one, a trailing slash is ignored, case-insensitive): otherwise a request the router sends
 * to a multipart route escaped the guard and reached the platform's own parser, whose limits were a 500 (fuzz
 * seed 287011171: a guest id ending in `/`).
 */
const routes = Routes.compile([
  { method: "PUT", path: "/api/checkin/:token/guests/:guest_id/document", body: "multipart" },
  { method: "POST", path: "/api/partners/reservations", body: "json" },
  { method: "GET", path: "/api/partners/properties" }
])

test("a repeated slash, a trailing slash and another case match the route the router picks", () => {
  for (const path of [
    "/api/checkin/tok/guests/g1/document",
    "/api/checkin/tok/guests/g1//document",
    "/api/checkin//tok/guests/g1/document/",
    "/API/Checkin/tok/guests/g1/DOCUMENT"
  ]) {
    expect({ path, body: routes.bodyOf("PUT", path), template: routes.templateOf("PUT", path) }).toEqual({
      path,
      body: "multipart",
      template: "/api/checkin/:token/guests/:guest_id/document"
    })
  }
  expect(routes.bodyOf("POST", "/api/partners//reservations")).toBe("json")
  expect(routes.allowed("//api/partners/properties/")).toEqual(["GET"])
})

test("a path of no route stays unknown", () => {
  expect(routes.templateOf("PUT", "/api/checkin/tok/guests/document")).toBe("(unknown route)")
  expect(routes.bodyOf("PUT", "/api/checkin/tok/guests/a/b/document")).toBeUndefined()
  expect(routes.allowed("/api/partners")).toEqual([])
})

test("a static path's template is the one the in-order scan finds, also when a parameterised route declared first matches it", () => {
  const overlapping = Routes.compile([
    { method: "GET", path: "/api/partners/registrations/:external_id" },
    { method: "GET", path: "/api/partners/registrations/validate" },
    { method: "POST", path: "/api/partners/registrations/validate", body: "json" },
    { method: "GET", path: "/api/partners/properties" }
  ])
  expect([
    overlapping.templateOf("GET", "/api/partners/registrations/validate"),
    overlapping.templateOf("POST", "/api/partners/registrations/validate"),
    overlapping.templateOf("GET", "/api/partners/properties"),
    overlapping.templateOf("GET", "/api/partners/registrations/R-1"),
    // Another method's route: the template of the path, whatever the method.
    overlapping.templateOf("DELETE", "/api/partners/properties"),
    overlapping.templateOf("GET", "/API/Partners/Properties/")
  ]).toEqual([
    "/api/partners/registrations/:external_id",
    "/api/partners/registrations/validate",
    "/api/partners/properties",
    "/api/partners/registrations/:external_id",
    "/api/partners/properties",
    "/api/partners/properties"
  ])
})
