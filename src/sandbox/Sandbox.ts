import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Accounts } from "../accounts/Accounts.ts"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { Properties } from "../properties/Properties.ts"
import { toProperty } from "../properties/Properties.ts"
import { SandboxExists } from "../shared/errors.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * An account's test environment (spec Authentication rule 8): two test properties that report TRA and SIRE
 * (the second also requires contract signature and document photos) and a test key. For operators (`cli sandbox
 * create`) running it again keeps the existing test properties and issues another key (up to the 3-key limit);
 * the panel creates it once per account (`once`: again → 409 sandbox_exists, design §8).
 */
export class Sandbox extends Effect.Service<Sandbox>()("sandbox/Sandbox", {
  dependencies: [Accounts.Default, ApiKeys.Default, Properties.Default],
  effect: Effect.gen(function*() {
    const { sql, accounts, keys, properties } = yield* Effect.all({
      sql: SqlClient.SqlClient, accounts: Accounts, keys: ApiKeys, properties: Properties
    })

    const create = (accountId: string, options: { readonly once?: boolean } = {}) =>
      Effect.gen(function*() {
        yield* accounts.lock(accountId)
        if (options.once === true && (yield* accounts.get(accountId)).sandbox_created_at !== null) {
          return yield* new SandboxExists({ message: "this account's test environment already exists" })
        }
        yield* accounts.markSandbox(accountId)
        const existing = yield* sql<Parameters<typeof toProperty>[0]>`
          SELECT * FROM properties WHERE account_id = ${accountId} AND environment = 'test'
          ORDER BY created_at, id`
        const created = existing.length > 0
          ? existing.map(toProperty)
          : [
            yield* properties.create(accountId, {
              name: "Hotel Sandbox Centro",
              environment: "test",
              internal_name: "sandbox-1",
              rnt_id: "SBX-00001"
            }),
            yield* properties.create(accountId, {
              name: "Hotel Sandbox Playa",
              environment: "test",
              internal_name: "sandbox-2",
              rnt_id: "SBX-00002",
              requires_contract_signature: true,
              requires_document_photos: true
            })
          ].map(({ environment: _environment, ...property }) => property)
        const key = yield* keys.create(accountId, "test")
        return { api_key: key.api_key, key_id: key.key_id, properties: created }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("Sandbox.create"))

    return { create } as const
  })
}) {}
