import { describe, expect, test } from "bun:test"
import { admin, call, type HttpResult } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"
import { colombian, externalId, registrationBody, reservationBody } from "../support/guests.ts"
import { JPEG, PNG } from "../support/photos.ts"

/**
 * Input hygiene (issue 14, item 6; design §6.2): one guard for every entrance's body, and the values nobody
 * could mean. Each test here is a defect the issue lists; each failed before the fix.
 */
const f = appFixture()

const MB = 1024 * 1024
const JSON_TYPE = { "content-type": "application/json" }

/** The spec's Error shape, exactly. */
const expectErrorShape = (res: HttpResult, status: number, code: string) => {
  expect(res.status).toBe(status)
  expect(Object.keys(res.body ?? {}).sort()).toEqual(["code", "details", "error"])
  expect(typeof res.body.error).toBe("string")
  expect(res.body.code).toBe(code)
  expect(typeof res.body.details).toBe("object")
}

const fieldsOf = (res: HttpResult): Array<string> =>
  res.body.details.fields.map((entry: { field: string }) => entry.field)

const reservationCount = async () =>
  Number((await f.db.query<{ n: string }>("SELECT count(*) AS n FROM reservations"))[0]!.n)

const property = () => f.account.testProperties[0]!.property_id

/** POSTs raw bytes to endpoint 3 with the test key. */
const postRaw = async (body: Uint8Array<ArrayBuffer> | string, headers: Record<string, string> = JSON_TYPE) => {
  const response = await fetch(`${f.app.baseUrl}/api/partners/reservations`, {
    method: "POST",
    headers: { authorization: `Bearer ${f.account.testKey}`, ...headers },
    body
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text), text }
}

/**
 * Sends `total` bytes of spaces chunked (no Content-Length) and counts how many the server pulled: a server
 * that stops reading at the limit stops pulling (backpressure), give or take the socket buffers.
 */
const postChunked = async (path: string, total: number, headers: Record<string, string>) => {
  let pulled = 0
  const chunk = new Uint8Array(64 * 1024).fill(0x20)
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= total) return controller.close()
      pulled += chunk.length
      controller.enqueue(chunk)
    }
  })
  const response = await fetch(`${f.app.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${f.account.testKey}`, ...headers },
    body,
    duplex: "half"
  } as RequestInit)
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text), pulled }
}

const createStay = async () => {
  const res = await call(f.app, "POST", "/api/partners/reservations", {
    key: f.account.testKey,
    json: reservationBody(property(), { guests_count: 2 })
  })
  expect(res.status).toBe(201)
  return (res.body.checkin_url as string).split("/checkin/")[1]!
}

describe("a body that is not what the route reads is a 4xx in the Error shape, never a 500", () => {
  test("multipart/form-data with a body that is not multipart, on JSON routes → 415", async () => {
    const token = await createStay()
    const routes: Array<[string, string]> = [
      ["POST", "/api/partners/reservations"],
      ["PATCH", "/api/partners/reservations"],
      ["PATCH", "/api/partners/properties"],
      ["POST", "/api/partners/webhooks"],
      ["POST", `/api/checkin/${token}/guests`],
      ["POST", "/api/panel/session/code"]
    ]
    for (const [method, path] of routes) {
      for (const contentType of ["multipart/form-data", "multipart/form-data; boundary=xyz"]) {
        // An empty body too: the route picked the multipart parser by the content type (the fuzz test's find).
        for (const body of ["this is not multipart", ""]) {
          const res = await call(f.app, method, path, {
            key: f.account.testKey,
            body,
            headers: { "content-type": contentType }
          })
          expectErrorShape(res, 415, "unsupported_media_type")
          expect(res.body.error).toContain("application/json")
        }
      }
    }
  })

  test("the photo upload with a body that is not multipart → 400 invalid_request naming the body", async () => {
    const token = await createStay()
    const guest = await call(f.app, "POST", `/api/checkin/${token}/guests`, {
      json: { ...colombian(), motivo: "Tránsito" }
    })
    expect(guest.status).toBe(201)
    for (const contentType of ["multipart/form-data", "multipart/form-data; boundary=xyz"]) {
      const res = await call(f.app, "PUT", `/api/checkin/${token}/guests/${guest.body.guest_id}/document`, {
        body: "this is not multipart",
        headers: { "content-type": contentType }
      })
      expectErrorShape(res, 400, "invalid_request")
      expect(fieldsOf(res)).toEqual(["body"])
    }
    // A body that ends inside a file: platform-bun's reader answered 500 and left a rejected promise
    // unhandled, which ends a Bun process (here: "Unhandled error between tests").
    const boundary = "truncatedboundary"
    const truncated = await call(f.app, "PUT", `/api/checkin/${token}/guests/${guest.body.guest_id}/document`, {
      body: `--${boundary}\r\nContent-Disposition: form-data; name="front"; filename="f.jpg"\r\n` +
        `Content-Type: image/jpeg\r\n\r\n${"A".repeat(100_000)}`,
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` }
    })
    expectErrorShape(truncated, 400, "invalid_request")
    expect(fieldsOf(truncated)).toEqual(["body"])
    const json = await call(f.app, "PUT", `/api/checkin/${token}/guests/${guest.body.guest_id}/document`, {
      json: { front: "x" }
    })
    expectErrorShape(json, 415, "unsupported_media_type")
    expect(json.body.error).toContain("multipart/form-data")
  })

  test("the photo upload: a file name is never a path (found by the fuzz test)", async () => {
    const withPhotos = await admin(f.app, (c) =>
      c.CreateProperty({
        account_id: f.account.accountId,
        name: "Fotos",
        environment: "test",
        requires_document_photos: true
      }))
    const stay = await call(f.app, "POST", "/api/partners/reservations", {
      key: f.account.testKey,
      json: reservationBody(withPhotos.property_id, { guests_count: 5 })
    })
    const token = (stay.body.checkin_url as string).split("/checkin/")[1]!
    const upload = async (files: Array<[string, Uint8Array, string]>) => {
      const guest = await call(f.app, "POST", `/api/checkin/${token}/guests`, {
        json: { ...colombian({ numero_documento: String(Math.floor(Math.random() * 1e9)) }), motivo: "Tránsito" }
      })
      expect(guest.status).toBe(201)
      const form = new FormData()
      for (const [field, content, name] of files) form.append(field, new Blob([content as BlobPart]), name)
      const res = await fetch(`${f.app.baseUrl}/api/checkin/${token}/guests/${guest.body.guest_id}/document`, {
        method: "PUT",
        body: form
      })
      return { status: res.status, body: await res.json(), guestId: guest.body.guest_id as string }
    }
    // "/" and "." named the temporary directory itself: a 500.
    for (const name of ["/", ".", ".."]) {
      const res = await upload([["front", JPEG, name]])
      expect(res.status).toBe(200)
    }
    // Two files with one name were one temporary file: the back photo was stored as the front.
    const same = await upload([["front", JPEG, "photo"], ["back", PNG, "photo"]])
    expect(same.status).toBe(200)
    const stored = await f.db.query<{ side: string; content_type: string }>(
      "SELECT side, content_type FROM guest_documents WHERE guest_id = $1 ORDER BY side DESC",
      [same.guestId]
    )
    expect(stored).toEqual([{ side: "front", content_type: "image/jpeg" }, { side: "back", content_type: "image/png" }])
  })

  test("no Content-Type, or text/plain, on a JSON route → 415 naming application/json; nothing created", async () => {
    const before = await reservationCount()
    const body = JSON.stringify(reservationBody(property()))
    for (const headers of [{}, { "content-type": "text/plain" }, { "content-type": "application/jsonx" }]) {
      const res = await postRaw(body, headers)
      expectErrorShape(res, 415, "unsupported_media_type")
      expect(res.body.error).toContain("application/json")
      expect(res.body.details.expected).toBe("application/json")
    }
    // Parameters are fine: a charset of UTF-8 is what JSON is anyway.
    const withCharset = await postRaw(JSON.stringify(reservationBody(property())), {
      "content-type": "Application/JSON; charset=UTF-8"
    })
    expect(withCharset.status).toBe(201)
    expect(await reservationCount()).toBe(before + 1)
  })

  test("the admin RPC refuses a body that is not JSON in the Error shape, before reading it", async () => {
    const res = await call(f.app, "POST", "/rpc/admin", {
      body: "[]",
      headers: { "content-type": "text/plain", authorization: `Bearer ${f.app.adminToken}` }
    })
    expectErrorShape(res, 415, "unsupported_media_type")
    const deep = await call(f.app, "POST", "/rpc/admin", {
      body: "[".repeat(20_000) + "]".repeat(20_000),
      headers: { ...JSON_TYPE, authorization: `Bearer ${f.app.adminToken}` }
    })
    expectErrorShape(deep, 400, "invalid_json")
  })
})

describe("JSON that no one should send → 400 invalid_json with details {}", () => {
  test("20,000 nested arrays → invalid_json, not a 500 (stack overflow)", async () => {
    const res = await postRaw("[".repeat(20_000) + "]".repeat(20_000))
    expectErrorShape(res, 400, "invalid_json")
    expect(res.body.details).toEqual({})
  })

  test("10,000 nested arrays → invalid_json, and the answer does not echo the body", async () => {
    const res = await postRaw("[".repeat(10_000) + "]".repeat(10_000))
    expectErrorShape(res, 400, "invalid_json")
    expect(res.text.length).toBeLessThan(400)
  })

  test("nesting of 64 is read; 65 is not", async () => {
    /** `levels` objects, one in the other; in the body they nest `levels + 1` deep. */
    const nested = (levels: number) => {
      let value: unknown = "x"
      for (let i = 0; i < levels; i++) value = { v: value }
      return value
    }
    const ok = await postRaw(JSON.stringify(reservationBody(property(), { metadata: nested(63) })))
    expect(ok.status).toBe(201)
    const deep = await postRaw(JSON.stringify(reservationBody(property(), { metadata: nested(64) })))
    expectErrorShape(deep, 400, "invalid_json")
    expect(deep.body.error).toContain("64")
  })

  test("invalid UTF-8 → invalid_json; nothing is stored (it used to be stored as U+FFFD)", async () => {
    const before = await reservationCount()
    const text = JSON.stringify(reservationBody(property(), { guest_name: "Ana QQ" }))
    const bytes = new TextEncoder().encode(text)
    const at = bytes.indexOf(0x51) // the first Q
    bytes[at] = 0xff
    bytes[at + 1] = 0xfe
    const res = await postRaw(bytes)
    expectErrorShape(res, 400, "invalid_json")
    expect(res.body.error).toContain("UTF-8")
    expect(await reservationCount()).toBe(before)
    const replaced = await f.db.query("SELECT 1 FROM reservations WHERE guest_name LIKE '%' || chr(65533) || '%'")
    expect(replaced).toHaveLength(0)
  })

  test("a key twice in one object → invalid_json naming the key; nothing is stored", async () => {
    const before = await reservationCount()
    const text = JSON.stringify(reservationBody(property())).replace("{", "{\"guest_name\":\"Someone Else\",")
    const res = await postRaw(text)
    expectErrorShape(res, 400, "invalid_json")
    expect(res.body.error).toContain("guest_name")
    // The same key in two different objects is fine.
    const nested = await postRaw(JSON.stringify(reservationBody(property(), { metadata: { guest_name: "x" } })))
    expect(nested.status).toBe(201)
    expect(await reservationCount()).toBe(before + 1)
    // Escapes are read: "\u0061" is the key "a".
    const escaped = await postRaw(JSON.stringify(reservationBody(property(), { metadata: { a: 1 } })).replace(
      "{\"a\":1}",
      "{\"a\":1,\"\\u0061\":2}"
    ))
    expectErrorShape(escaped, 400, "invalid_json")
  })
})

describe("the body limits are enforced while reading, chunked or not, in the Error shape", () => {
  test("a chunked body over 1 MB → 400 invalid_request; the server stops reading soon after the limit", async () => {
    const res = await postChunked("/api/partners/reservations", 64 * MB, JSON_TYPE)
    expectErrorShape(res, 400, "invalid_request")
    expect(fieldsOf(res)).toEqual(["body"])
    expect(res.pulled).toBeLessThan(16 * MB)
  })

  test("a chunked body of 30 MB → the Error shape, not Bun's empty 413", async () => {
    const res = await postChunked("/api/partners/reservations", 30 * MB, JSON_TYPE)
    expectErrorShape(res, 400, "invalid_request")
  })

  test("a Content-Length of 30 MB → the Error shape, not Bun's empty 413", async () => {
    const res = await postRaw(new Uint8Array(30 * MB).fill(0x20))
    expectErrorShape(res, 400, "invalid_request")
  })

  test("the admin RPC is held to the same limit", async () => {
    const res = await postChunked("/rpc/admin", 8 * MB, { ...JSON_TYPE, authorization: `Bearer ${f.app.adminToken}` })
    expectErrorShape(res, 400, "invalid_request")
  })

  test("a chunked photo upload over the multipart limit → 400 invalid_request while reading", async () => {
    const token = await createStay()
    const guest = await call(f.app, "POST", `/api/checkin/${token}/guests`, {
      json: { ...colombian(), motivo: "Tránsito" }
    })
    const boundary = "hygieneboundary"
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="front"; filename="front.jpg"\r\n` +
        "Content-Type: image/jpeg\r\n\r\n"
    )
    let sent = 0
    const chunk = new Uint8Array(256 * 1024).fill(0x41)
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head)
      },
      pull(controller) {
        if (sent >= 64 * MB) return controller.close()
        sent += chunk.length
        controller.enqueue(chunk)
      }
    })
    const response = await fetch(`${f.app.baseUrl}/api/checkin/${token}/guests/${guest.body.guest_id}/document`, {
      method: "PUT",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: "half"
    } as RequestInit)
    const res = { status: response.status, headers: response.headers, body: await response.json() }
    expectErrorShape(res, 400, "invalid_request")
    expect(fieldsOf(res)).toEqual(["body"])
    expect(sent).toBeLessThan(40 * MB)
  })
})

describe("path parameters longer than the router's default", () => {
  test("endpoint 8 with a 1,000-character external_id answers as a 121-character one: 400 naming it", async () => {
    const of = async (length: number) =>
      call(f.app, "GET", `/api/partners/registrations/${"a".repeat(length)}`, { key: f.account.testKey })
    const reference = await of(121)
    expectErrorShape(reference, 400, "invalid_request")
    expect(fieldsOf(reference)).toEqual(["external_id"])
    for (const length of [257, 1000, 4000]) {
      const res = await of(length)
      expect(res.status).toBe(400)
      expect(res.body).toEqual(reference.body)
    }
  })
})

describe("error bodies never echo more than 200 characters of input", () => {
  test("a long string where an enum is expected", async () => {
    const res = await call(f.app, "POST", "/api/partners/reservations", {
      key: f.account.testKey,
      json: reservationBody(property(), { currency: "X".repeat(50_000) })
    })
    expectErrorShape(res, 400, "invalid_request")
    const text = JSON.stringify(res.body)
    // booleans, not the texts: a failure must not print 50 KB
    expect(text.includes("X".repeat(201))).toBe(false)
    expect(text.length).toBeLessThan(1_000)
  })

  test("errors of the domain that quote input: an rnt_id, a webhook id in the path (the fuzz test)", async () => {
    const { property_id: _, ...withoutProperty } = reservationBody(property())
    const rnt = await call(f.app, "POST", "/api/partners/reservations", {
      key: f.account.testKey,
      json: { ...withoutProperty, rnt_id: "R".repeat(5_000) }
    })
    expectErrorShape(rnt, 404, "property_not_found")
    expect(JSON.stringify(rnt.body).includes("R".repeat(201))).toBe(false)
    const webhook = await call(f.app, "PATCH", `/api/partners/webhooks/${"w".repeat(3_000)}`, {
      key: f.account.testKey,
      json: { include_guests: true }
    })
    expectErrorShape(webhook, 404, "webhook_not_found")
    expect(JSON.stringify(webhook.body).includes("w".repeat(201))).toBe(false)
    // Short input is quoted whole.
    const short = await call(f.app, "PATCH", "/api/partners/webhooks/not-a-uuid", {
      key: f.account.testKey,
      json: { include_guests: true }
    })
    expect(short.body.details).toEqual({ id: "not-a-uuid" })
  })

  test("a long unknown path in a 404", async () => {
    const res = await call(f.app, "GET", `/api/partners/${"z".repeat(5_000)}`, { key: f.account.testKey })
    expectErrorShape(res, 404, "not_found")
    expect(JSON.stringify(res.body).includes("z".repeat(201))).toBe(false)
  })

  test("a long path on a known route with the wrong method in a 405", async () => {
    const path = `/api/partners/registrations/${"z".repeat(5_000)}`
    const res = await call(f.app, "DELETE", path, { key: f.account.testKey })
    expectErrorShape(res, 405, "method_not_allowed")
    expect(JSON.stringify(res.body).includes("z".repeat(201))).toBe(false)
  })
})

describe("values nobody could mean → 400 invalid_request naming the field", () => {
  const refused = async (path: string, json: unknown, field: string, method = "POST") => {
    const res = await call(f.app, method, path, { key: f.account.testKey, json })
    expectErrorShape(res, 400, "invalid_request")
    expect(fieldsOf(res)).toContain(field)
  }

  test("check_in and check_out outside 2000–2100", async () => {
    const before = await reservationCount()
    const stay = (check_in: string, check_out: string) => reservationBody(property(), { check_in, check_out })
    await refused("/api/partners/reservations", stay("1900-01-01", "1900-01-03"), "check_in")
    await refused("/api/partners/reservations", stay("9999-01-01", "9999-01-03"), "check_out")
    await refused("/api/partners/reservations", reservationBody(property(), { check_in: "1999-12-31" }), "check_in")
    await refused("/api/partners/reservations", reservationBody(property(), { check_out: "2101-01-01" }), "check_out")
    await refused(
      "/api/partners/registrations",
      registrationBody(property(), [colombian()], { check_in: "1900-01-01", check_out: "1900-01-03" }),
      "check_in"
    )
    await refused("/api/partners/reservations", { external_id: "X", check_out: "9999-12-31" }, "check_out", "PATCH")
    expect(await reservationCount()).toBe(before)
    const edges = await call(f.app, "POST", "/api/partners/reservations", {
      key: f.account.testKey,
      json: reservationBody(property(), { check_in: "2000-01-01", check_out: "2100-12-31" })
    })
    expect(edges.status).toBe(201)
  })

  test("total_amount above 1e12", async () => {
    await refused("/api/partners/reservations", reservationBody(property(), { total_amount: 1e308 }), "total_amount")
    await refused("/api/partners/reservations", reservationBody(property(), { total_amount: 1e12 + 1 }), "total_amount")
    const most = await call(f.app, "POST", "/api/partners/reservations", {
      key: f.account.testKey,
      json: reservationBody(property(), { total_amount: 1e12 })
    })
    expect(most.status).toBe(201)
  })

  test("a lone UTF-16 surrogate in a name", async () => {
    const lone = (field: string) =>
      JSON.stringify(reservationBody(property(), { [field]: "Ana SURROGATE" })).replace("SURROGATE", "\\ud800")
    const res = await postRaw(lone("guest_name"))
    expectErrorShape(res, 400, "invalid_request")
    expect(fieldsOf(res)).toEqual(["guest_name"])
    const low = await postRaw(
      JSON.stringify(reservationBody(property(), { guest_name: "x" })).replace("\"x\"", "\"\\udc00 Ana\"")
    )
    expect(fieldsOf(low)).toEqual(["guest_name"])
    // A well-formed pair (an emoji) is a name like any other.
    const pair = await postRaw(JSON.stringify(reservationBody(property(), { guest_name: "Ana \ud83d\ude00" })))
    expect(pair.status).toBe(201)
  })

  test("control characters in names", async () => {
    for (const name of ["Ana\u0000", "Ana\u0007Pérez", "Ana\nPérez", "Ana\u009bPérez"]) {
      await refused("/api/partners/reservations", reservationBody(property(), { guest_name: name }), "guest_name")
    }
    await refused(
      "/api/partners/registrations",
      registrationBody(property(), [colombian({ nombre: "Ana\u0001" })]),
      "guests[0].nombre"
    )
  })

  test("the check-in page's guest and signer, and the panel's inputs, follow the same rules", async () => {
    const token = await createStay()
    const guest = await call(f.app, "POST", `/api/checkin/${token}/guests`, {
      json: { ...colombian({ apellido: "Pérez\u0000" }), motivo: "Tránsito" }
    })
    expectErrorShape(guest, 400, "invalid_request")
    expect(fieldsOf(guest)).toEqual(["apellido"])
    const signer = await call(f.app, "POST", `/api/checkin/${token}/contract`, {
      json: { signer_name: "Ana\u0000", accepted: true }
    })
    expectErrorShape(signer, 400, "invalid_request")
    expect(fieldsOf(signer)).toEqual(["signer_name"])
    const signup = await call(f.app, "POST", "/api/panel/signup", {
      body: JSON.stringify({ name: "Hotel X", email: "x@example.co" }).replace("Hotel X", "Hotel \\ud800"),
      headers: JSON_TYPE
    })
    expectErrorShape(signup, 400, "invalid_request")
    expect(fieldsOf(signup)).toEqual(["name"])
  })

  test("a webhook URL with a control character or a lone surrogate", async () => {
    for (const tail of ["a\u0000", "a\tb", "\ud800"]) {
      const url = `https://hooks.example.com/${tail}`
      const res = await call(f.app, "POST", "/api/partners/webhooks", { key: f.account.testKey, json: { url } })
      expectErrorShape(res, 400, "invalid_request")
      expect(fieldsOf(res)).toEqual(["url"])
    }
  })
})

describe("the admin RPC's entrance: messages @effect/rpc mishandles", () => {
  const rpc = (message: unknown) =>
    call(f.app, "POST", "/rpc/admin", {
      body: JSON.stringify(message),
      headers: { ...JSON_TYPE, authorization: `Bearer ${f.app.adminToken}` }
    })
  const request = (overrides: Record<string, unknown>) => ({
    _tag: "Request",
    id: "1",
    tag: "ListKeys",
    payload: { account_id: "x" },
    headers: [],
    ...overrides
  })

  test("a Request without headers, or with headers that are not pairs, was a 500 → 400 naming headers", async () => {
    const { headers: _, ...withoutHeaders } = request({})
    for (const message of [withoutHeaders, request({ headers: { a: 1 } })]) {
      const res = await rpc(message)
      expectErrorShape(res, 400, "invalid_request")
      expect(fieldsOf(res)).toEqual(["headers"])
    }
  })

  test("a payload its schema refuses was a defect with a schema dump → 400 naming the fields", async () => {
    const res = await rpc(request({ tag: "CreateAccount", payload: { name: 1 } }))
    expectErrorShape(res, 400, "invalid_request")
    expect(fieldsOf(res)).toEqual(["name", "email"])
  })

  test("an unknown tag, a bad id, a message that is not a Request, or not JSON → 400, never a defect", async () => {
    expect(fieldsOf(await rpc(request({ tag: "DropDatabase" })))).toEqual(["tag"])
    expect(fieldsOf(await rpc(request({ id: {} })))).toEqual(["id"])
    expect(fieldsOf(await rpc({ _tag: "Ack", requestId: "x" }))).toEqual(["_tag"])
    expect(fieldsOf(await rpc([request({})]))).toEqual(["body"])
    const broken = await call(f.app, "POST", "/rpc/admin", {
      body: "{\"_tag\":",
      headers: { ...JSON_TYPE, authorization: `Bearer ${f.app.adminToken}` }
    })
    expectErrorShape(broken, 400, "invalid_json")
  })

  test("a NUL in a stored payload string was a database error (a defect) → 400 naming the field", async () => {
    const res = await rpc(request({ tag: "CreateAccount", payload: { name: "Hotel\u0000", email: "nul@example.co" } }))
    expectErrorShape(res, 400, "invalid_request")
    expect(fieldsOf(res)).toEqual(["name"])
  })

  test("a well-formed call without the token is still the RPC's own unauthorized failure (for the CLI)", async () => {
    const res = await call(f.app, "POST", "/rpc/admin", { body: JSON.stringify(request({})), headers: JSON_TYPE })
    expect(res.status).toBe(200)
    expect(res.body[0].exit.cause.error).toEqual({
      _tag: "AdminError",
      message: "missing or wrong admin token",
      code: "unauthorized"
    })
  })
})

test("the admin RPC still works through the guard (the CLI's path)", async () => {
  const email = `${externalId("g")}@example.co`.toLowerCase()
  const account = await admin(f.app, (c) => c.CreateAccount({ name: "Guarded", email }))
  expect(account.name).toBe("Guarded")
})
