import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { afterAll, beforeAll, expect, test } from "bun:test"
import { Effect } from "effect"
import { PartnerApi } from "../../src/http/PartnerApi.ts"
import { type RunningApp, seedAccount, startApp } from "../support/app.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"

let db: TestDatabase
let app: RunningApp
let account: Awaited<ReturnType<typeof seedAccount>>

beforeAll(async () => {
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url })
  account = await seedAccount(app)
})

afterAll(async () => {
  await app?.stop()
  await db?.drop()
})

const makeClient = (key: string) =>
  HttpApiClient.make(PartnerApi, {
    baseUrl: app.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("authorization", `Bearer ${key}`))
  })
type Client = Effect.Effect.Success<ReturnType<typeof makeClient>>

const withClient = <A, E>(key: string, use: (client: Client) => Effect.Effect<A, E>) =>
  Effect.runPromise(makeClient(key).pipe(Effect.flatMap(use), Effect.provide(FetchHttpClient.layer)))

test("the typed client derived from PartnerApi decodes successes and the spec's errors", async () => {
  const listed = await withClient(account.testKey, (client) => client.properties.list())
  expect(listed.properties.map((p) => p.name)).toEqual(["Hotel Sandbox Centro", "Hotel Sandbox Playa"])

  const mapped = await withClient(account.testKey, (client) =>
    client.properties.map({ payload: { mappings: [{ property_id: account.testProperties[0]!.property_id, external_id: "PMS-T" }] } }))
  expect(mapped).toEqual({ ok: true, mappings: [{ property_id: account.testProperties[0]!.property_id, external_id: "PMS-T" }] })

  const refused = await withClient(account.liveKey, (client) =>
    client.properties.map({ payload: { mappings: [{ property_id: account.testProperties[0]!.property_id, external_id: "X" }] } })
      .pipe(Effect.flip))
  expect(refused._tag).toBe("LivePropertyRequired")

  const unauthorized = await withClient("svc_test_nope", (client) => client.properties.list().pipe(Effect.flip))
  expect(unauthorized._tag).toBe("Unauthorized")
})
