import { afterAll, beforeAll, expect, test } from "bun:test"
import * as NodeFs from "node:fs/promises"
import { Webhook } from "standardwebhooks"
import { call } from "../support/app.ts"
import { appFixture } from "../support/fixture.ts"
import { type Json, responseProblems } from "../support/openapi.ts"
import { ROOT } from "../support/process.ts"
import { bodyOf, type Receiver, startReceiver, verifyReceived } from "../support/receiver.ts"

/**
 * Issue 14, item 3: a client generated from the live `/openapi.json` (openapi-typescript + openapi-fetch) drives
 * the real server through a PMS's flow (`generated-client/flow.ts`), and that flow type-checks under `tsc`
 * against the freshly generated types. The document and the server cannot drift apart without this failing.
 */

const f = appFixture({ WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
let receiver: Receiver

beforeAll(() => {
  receiver = startReceiver()
})

afterAll(() => {
  receiver?.stop()
})

const PROJECT = `${ROOT}test/routes/generated-client/`
const GENERATED = `${PROJECT}generated/`

const run = async (command: ReadonlyArray<string>) => {
  const child = Bun.spawn([...command], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe"
  })
  const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()])
  return { code: await child.exited, output: `${stdout}${stderr}` }
}

test("a client generated from the served /openapi.json type-checks and drives the real server", async () => {
  const document: Json = (await call(f.app, "GET", "/openapi.json")).body
  await NodeFs.rm(GENERATED, { recursive: true, force: true })
  await NodeFs.mkdir(GENERATED, { recursive: true })
  await NodeFs.writeFile(`${GENERATED}openapi.json`, JSON.stringify(document, null, 2))

  const generated = await run([
    `${ROOT}node_modules/.bin/openapi-typescript`,
    `${GENERATED}openapi.json`,
    "--output",
    `${GENERATED}partner.ts`
  ])
  expect({ code: generated.code, output: generated.code === 0 ? "" : generated.output }).toEqual({ code: 0, output: "" })

  // tsc on the generated project runs while the flow runs against the server.
  const typeCheck = run([`${ROOT}node_modules/.bin/tsc`, "--noEmit", "-p", `${PROJECT}tsconfig.json`])

  const byEvent = (type: string, externalId?: string) => (request: { body: string; headers: Record<string, string> }) =>
    request.headers["x-service-event"] === type &&
    (externalId === undefined || bodyOf(request as never).data?.external_id === externalId)
  // Loaded by path, not imported: the root tsconfig does not see the generated types this file imports.
  const { pmsFlow } = await import(`${PROJECT}flow.ts`)
  const outcome = await pmsFlow({
    baseUrl: f.app.baseUrl,
    apiKey: f.account.testKey,
    receiverUrl: receiver.url,
    waitForEvent: async (type: string, externalId?: string) => {
      await receiver.waitFor(byEvent(type, externalId), 15_000)
    }
  })

  const checked = await typeCheck
  expect({ code: checked.code, output: checked.output }).toEqual({ code: 0, output: "" })

  // Every answer the client got is what the document says it answers (status and body schema).
  expect(outcome.exchanges.length).toBeGreaterThan(15)
  expect(responseProblems(document, outcome.exchanges)).toEqual([])
  const operations = new Set(outcome.exchanges.map((exchange: Json) => `${exchange.method} ${exchange.schemaPath}`))
  expect([...operations].sort()).toEqual([
    "DELETE /api/partners/webhooks/{id}",
    "GET /api/partners/properties",
    "GET /api/partners/reference/{table}",
    "GET /api/partners/registrations",
    "GET /api/partners/registrations/{external_id}",
    "GET /api/partners/webhooks",
    "GET /api/partners/webhooks/deliveries",
    "PATCH /api/partners/properties",
    "PATCH /api/partners/reservations",
    "PATCH /api/partners/webhooks/{id}",
    "POST /api/partners/registrations",
    "POST /api/partners/registrations/validate",
    "POST /api/partners/reservations",
    "POST /api/partners/reservations/cancel",
    "POST /api/partners/webhooks",
    "POST /api/partners/webhooks/deliveries/{id}/redeliver",
    "POST /api/partners/webhooks/{id}/recover",
    "POST /api/partners/webhooks/{id}/rotate-secret",
    "POST /api/partners/webhooks/{id}/test"
  ])

  // The receiver's side: the ping, the reservation's events, the redelivered event twice, all signed with the
  // rotated secret after the rotation.
  const pings = receiver.matching(byEvent("ping"))
  expect(pings.map((request) => bodyOf(request).id)).toEqual([outcome.pingEventId])
  const redelivered = await receiver.waitForCount(
    2,
    (request) => request.headers["x-service-event-id"] === outcome.redeliveredEventId,
    15_000
  )
  expect(redelivered.map((request) => bodyOf(request).type)).toEqual(["reservation.created", "reservation.created"])
  const registration = await receiver.waitFor(byEvent("registration.completed", outcome.registrationExternalId), 15_000)
  expect(bodyOf(registration[0]!).data.guests.map((guest: Json) => guest.numero_documento)).toEqual(["1020304050"])
  // Both signatures: the spec's, and the Standard Webhooks one as the official package checks it (design §6.14).
  const standard = new Webhook(outcome.secret)
  for (const request of receiver.matching((request) => request.headers["x-service-event"] !== "ping")) {
    const headers = Object.fromEntries(
      ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => [name, request.headers[name] ?? ""])
    )
    expect({
      event: request.headers["x-service-event"],
      verified: verifyReceived(request, outcome.secret),
      standard: (standard.verify(request.body, headers) as Json).id
    }).toEqual({ event: request.headers["x-service-event"], verified: true, standard: bodyOf(request).id })
  }
}, 120_000)
