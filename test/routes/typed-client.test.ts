import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { expect, test } from "bun:test"
import { Effect } from "effect"
import { PartnerApi } from "../../src/routes/PartnerApi.ts"
import { appFixture } from "../support/fixture.ts"

const f = appFixture()

const makeClient = (key: string) =>
  HttpApiClient.make(PartnerApi, {
    baseUrl: f.app.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("authorization", `Bearer ${key}`))
  })
type Client = Effect.Effect.Success<ReturnType<typeof makeClient>>

const withClient = <A, E>(key: string, use: (client: Client) => Effect.Effect<A, E>) =>
  Effect.runPromise(makeClient(key).pipe(Effect.flatMap(use), Effect.provide(FetchHttpClient.layer)))

test("the typed client derived from PartnerApi decodes successes and the spec's errors", async () => {
  const listed = await withClient(f.account.testKey, (client) => client.properties.list())
  expect(listed.properties.map((p) => p.name)).toEqual(["Hotel Sandbox Centro", "Hotel Sandbox Playa"])

  const mapped = await withClient(f.account.testKey, (client) =>
    client.properties.map({ payload: { mappings: [{ property_id: f.account.testProperties[0]!.property_id, external_id: "PMS-T" }] } }))
  expect(mapped).toEqual({ ok: true, mappings: [{ property_id: f.account.testProperties[0]!.property_id, external_id: "PMS-T" }] })

  const refused = await withClient(f.account.liveKey, (client) =>
    client.properties.map({ payload: { mappings: [{ property_id: f.account.testProperties[0]!.property_id, external_id: "X" }] } })
      .pipe(Effect.flip))
  expect(refused._tag).toBe("LivePropertyRequired")

  const unauthorized = await withClient("svc_test_nope", (client) => client.properties.list().pipe(Effect.flip))
  expect(unauthorized._tag).toBe("Unauthorized")
})
