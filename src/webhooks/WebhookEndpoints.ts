import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Either } from "effect"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { SafeHttp } from "../net/SafeHttp.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { isUuid } from "../shared/Uuid.ts"
import { InvalidWebhookUrl, WebhookLimitReached, WebhookNotFound } from "../shared/errors.ts"
import { DeliveryStore } from "./DeliveryStore.ts"
import { newSecret } from "./Signature.ts"
import {
  type CreateWebhook,
  type EventType,
  Limits,
  type RecoverDeliveries,
  recoveryWindow,
  type UpdateWebhook,
  type WebhookEndpoint
} from "./Webhook.ts"

export interface EndpointRow {
  readonly id: string
  readonly account_id: string
  readonly environment: string
  readonly url: string
  readonly events: ReadonlyArray<EventType>
  readonly include_guests: boolean
  readonly is_active: boolean
  readonly secret_rotated_at: Date | null
  readonly created_at: Date
}

// Not the secret: it is stored sealed and leaves only on creation and rotation, as generated.
const COLUMNS = "id, account_id, environment, url, events, include_guests, is_active, secret_rotated_at, created_at"

export const endpointView = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  events: row.events,
  include_guests: row.include_guests,
  is_active: row.is_active,
  created_at: row.created_at.toISOString(),
  secret_rotated_at: row.secret_rotated_at?.toISOString() ?? null
})


export const webhookNotFound = (id: string) =>
  new WebhookNotFound({ message: `No active webhook endpoint ${id} for this key.`, details: { id } })

/**
 * Endpoints 9–13: a key's webhook endpoints, scoped to its (account, environment) (design §6.1). A
 * deactivated endpoint is gone from the API (design §6.14); its secret never leaves except on creation and
 * rotation.
 */
export class WebhookEndpoints extends Effect.Service<WebhookEndpoints>()("webhooks/WebhookEndpoints", {
  dependencies: [DeliveryStore.Default],
  effect: Effect.gen(function*() {
    const { sql, deliveries, http, box } = yield* Effect.all({
      sql: SqlClient.SqlClient, deliveries: DeliveryStore, http: SafeHttp, box: SecretBox
    })

    /** Spec rule 9 / design §7: only public HTTPS (unless WEBHOOK_ALLOW_PRIVATE_URLS). */
    const checkUrl = (url: string) =>
      Either.match(http.check(url), {
        onLeft: (unsafe) =>
          Effect.fail(
            new InvalidWebhookUrl({
              message: `url must be a public HTTPS URL: ${unsafe.reason}.`,
              details: { field: "url", reason: unsafe.reason }
            })
          ),
        onRight: () => Effect.void
      })

    const now = Effect.map(DateTime.now, DateTime.toDateUtc)

    const list = (key: AuthenticatedKey) =>
      sql<EndpointRow>`
        SELECT ${sql.literal(COLUMNS)} FROM webhook_endpoints
        WHERE account_id = ${key.accountId} AND environment = ${key.environment} AND is_active
        ORDER BY created_at, id`.pipe(
        Effect.map((rows) => ({ endpoints: rows.map(endpointView) })),
        Effect.orDie
      )

    const create = (key: AuthenticatedKey, body: CreateWebhook) =>
      Effect.gen(function*() {
        yield* checkUrl(body.url)
        const createdAt = yield* now
        return yield* Effect.gen(function*() {
          // Serializes creations of one (account, environment), so the limit holds under concurrency.
          yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`webhooks:${key.accountId}:${key.environment}`}))`
          const [counted] = yield* sql<{ active: number }>`
            SELECT count(*)::int AS active FROM webhook_endpoints
            WHERE account_id = ${key.accountId} AND environment = ${key.environment} AND is_active`
          if (counted!.active >= Limits.activeEndpoints) {
            return yield* new WebhookLimitReached({
              message: `At most ${Limits.activeEndpoints} active webhook endpoints per key; deactivate one first.`,
              details: { limit: Limits.activeEndpoints }
            })
          }
          const secret = newSecret()
          const [row] = yield* sql<EndpointRow>`
            INSERT INTO webhook_endpoints ${
            sql.insert({
              account_id: key.accountId,
              environment: key.environment,
              url: body.url,
              events: JSON.stringify(body.events ?? ["*"]),
              include_guests: body.include_guests ?? false,
              secret: box.seal(secret),
              created_at: createdAt
            })
          } RETURNING ${sql.literal(COLUMNS)}`
          return { ...endpointView(row!), secret }
        }).pipe(sql.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const update = (key: AuthenticatedKey, id: string, body: UpdateWebhook) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* webhookNotFound(id)
        if (body.url !== undefined) yield* checkUrl(body.url)
        const changes = {
          ...(body.url === undefined ? {} : { url: body.url }),
          ...(body.events === undefined ? {} : { events: JSON.stringify(body.events) }),
          ...(body.include_guests === undefined ? {} : { include_guests: body.include_guests })
        }
        const rows = Object.keys(changes).length === 0
          ? yield* sql<EndpointRow>`
              SELECT ${sql.literal(COLUMNS)} FROM webhook_endpoints
              WHERE id = ${id} AND account_id = ${key.accountId} AND environment = ${key.environment} AND is_active`
          : yield* sql<EndpointRow>`
              UPDATE webhook_endpoints SET ${sql.update(changes)}
              WHERE id = ${id} AND account_id = ${key.accountId} AND environment = ${key.environment} AND is_active
              RETURNING ${sql.literal(COLUMNS)}`
        if (rows.length === 0) return yield* webhookNotFound(id)
        return endpointView(rows[0]!)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /** Endpoint 12: deactivates; its pending deliveries end `failed` (design §6.14). */
    const deactivate = (key: AuthenticatedKey, id: string) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* webhookNotFound(id)
        const at = yield* now
        return yield* Effect.gen(function*() {
          const rows = yield* sql<{ id: string }>`
            UPDATE webhook_endpoints SET is_active = false, deactivated_at = ${at}
            WHERE id = ${id} AND account_id = ${key.accountId} AND environment = ${key.environment} AND is_active
            RETURNING id`
          if (rows.length === 0) return yield* webhookNotFound(id)
          yield* deliveries.failPending(id, "the webhook endpoint was deactivated")
          return { ok: true, id, is_active: false }
        }).pipe(sql.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /** Endpoint 13: the old secret stops at once; every later attempt is signed with the new one (rule 11). */
    const rotate = (key: AuthenticatedKey, id: string) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* webhookNotFound(id)
        const at = yield* now
        const secret = newSecret()
        const rows = yield* sql<{ id: string }>`
          UPDATE webhook_endpoints SET secret = ${box.seal(secret)}, secret_rotated_at = ${at}
          WHERE id = ${id} AND account_id = ${key.accountId} AND environment = ${key.environment} AND is_active
          RETURNING id`
        if (rows.length === 0) return yield* webhookNotFound(id)
        return { id: rows[0]!.id, secret }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * Recover (design §6.14): the endpoint's failed deliveries created in the window, queued again, each with a
     * fresh retry cycle. The endpoint row is locked so that a deactivation cannot interleave.
     */
    const recover = (key: AuthenticatedKey, id: string, body: RecoverDeliveries) =>
      Effect.gen(function*() {
        const at = yield* DateTime.now
        const window = yield* recoveryWindow(body, at)
        if (!isUuid(id)) return yield* webhookNotFound(id)
        return yield* Effect.gen(function*() {
          const rows = yield* sql<{ id: string }>`
            SELECT id FROM webhook_endpoints
            WHERE id = ${id} AND account_id = ${key.accountId} AND environment = ${key.environment} AND is_active
            FOR UPDATE`
          if (rows.length === 0) return yield* webhookNotFound(id)
          return { recovered: yield* deliveries.recoverFailed(id, window, DateTime.toDateUtc(at)) }
        }).pipe(sql.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    return { list, create, update, deactivate, rotate, recover } as const
  })
}) {}
