import { DateTime, Effect, Option } from "effect"
import { Accounts } from "../accounts/Accounts.ts"
import { Audit } from "../audit/Audit.ts"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import type { Environment } from "../shared/Environment.ts"
import { DeliveryNotFound, InvalidRequest, LiveNotEnabled, WebhookNotFound } from "../shared/errors.ts"
import { isUuid } from "../shared/Uuid.ts"
import { Deliveries } from "../webhooks/Deliveries.ts"
import { type DeliveryCounts, DeliveryStore, type PanelDelivery } from "../webhooks/DeliveryStore.ts"
import { bodyFor } from "../webhooks/Signature.ts"
import type { RecoverDeliveries, UpdateWebhook } from "../webhooks/Webhook.ts"
import { WebhookEndpoints } from "../webhooks/WebhookEndpoints.ts"
import type { CreatePanelWebhook, DeliveriesQuery, PanelUser } from "./Panel.ts"

/**
 * Webhooks in the panel (design §8, issue 26): an account's endpoints added, changed, deactivated, tested, their
 * secret rotated and their failed deliveries recovered — each through the partner API's own service
 * (`WebhookEndpoints`, `Deliveries`), so its rules hold here too (public HTTPS, 5 active per environment) — and the
 * delivery log read as Svix's is: filters, pages, and one delivery with its payload and every attempt. The panel
 * adds who may do it (its session), the live check of a self-signed-up account, and the audit log.
 */

/** The panel acts on an environment of the account as a partner key of it would (rate limits aside). */
export const asKey = (user: PanelUser, environment: Environment): AuthenticatedKey => ({
  keyId: `panel:${user.sessionId}`,
  accountId: user.accountId,
  environment,
  limits: { reads: 0, writes: 0, tests: 0 }
})

/** An active endpoint as the panel finds it before acting on it. */
interface Endpoint {
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly include_guests: boolean
}

const NO_DELIVERIES: DeliveryCounts = { pending: 0, retrying: 0, delivered: 0, failed: 0 }

/** A page position in the delivery log: the last row's `seq`, opaque to the client. */
const encodeCursor = (seq: number) => Buffer.from(String(seq)).toString("base64url")
const decodeCursor = (cursor: string): Option.Option<number> => {
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  return /^[1-9]\d{0,17}$/.test(text) ? Option.some(Number(text)) : Option.none()
}

const badCursor = () =>
  new InvalidRequest({
    message: "invalid request: cursor",
    details: { fields: [{ field: "cursor", message: "must be the next_cursor of a previous page" }] }
  })

const webhookNotFound = (id: string) =>
  new WebhookNotFound({ message: `No webhook endpoint ${id} in this account.`, details: { id } })

const deliveryNotFound = (id: string) =>
  new DeliveryNotFound({ message: `No delivery ${id} in this account.`, details: { id } })

/** The event's body as it was sent to the endpoint, as JSON (a body that is not JSON is shown as its text). */
const payloadOf = (body: string, includeGuests: boolean): unknown => {
  const sent = bodyFor(body, includeGuests)
  try {
    return JSON.parse(sent)
  } catch {
    return sent
  }
}

export class PanelWebhooks extends Effect.Service<PanelWebhooks>()("panel/PanelWebhooks", {
  dependencies: [Audit.Default, DeliveryStore.Default],
  effect: Effect.gen(function*() {
    const { accounts, endpoints, deliveries, store, audit } = yield* Effect.all({
      accounts: Accounts,
      endpoints: WebhookEndpoints,
      deliveries: Deliveries,
      store: DeliveryStore,
      audit: Audit
    })

    /** The live environment only for an account an operator enabled (design §8), as for live keys. */
    const usable = (user: PanelUser, environment: Environment) =>
      environment === "test" ? Effect.void : Effect.flatMap(accounts.get(user.accountId).pipe(Effect.orDie), (row) =>
        row.live_enabled
          ? Effect.void
          : Effect.fail(new LiveNotEnabled({ message: "the live environment is not enabled for this account yet", details: {} })))

    /** An action on one of the account's active webhook endpoints, in that endpoint's environment. */
    const onEndpoint = <A, E>(
      user: PanelUser,
      endpointId: string,
      action: (key: AuthenticatedKey, endpoint: Endpoint) => Effect.Effect<A, E>
    ) =>
      Effect.flatMap(
        isUuid(endpointId)
          ? Effect.orDie(store.activeEndpointOf(user.accountId, endpointId))
          : Effect.succeed(Option.none()),
        (endpoint): Effect.Effect<A, E | WebhookNotFound> =>
          Option.isNone(endpoint)
            ? Effect.fail(webhookNotFound(endpointId))
            : action(asKey(user, endpoint.value.environment), endpoint.value)
      )

    // ---------------------------------------------------------------------------------------------- endpoints

    const list = (user: PanelUser, environment: Environment) =>
      Effect.gen(function*() {
        const { endpoints: active } = yield* endpoints.list(asKey(user, environment))
        const since = new Date(DateTime.toEpochMillis(yield* DateTime.now) - 7 * 86_400_000)
        const counts = yield* Effect.orDie(store.outcomesSince(user.accountId, environment, since))
        return {
          endpoints: active.map((endpoint) => ({ ...endpoint, last_7_days: counts.get(endpoint.id) ?? NO_DELIVERIES }))
        }
      }).pipe(Effect.orDie)

    /** Endpoint 10 from the panel: the secret is in this answer only. */
    const create = (user: PanelUser, body: CreatePanelWebhook) =>
      Effect.gen(function*() {
        const { environment, ...webhook } = body
        yield* usable(user, environment)
        const created = yield* endpoints.create(asKey(user, environment), webhook)
        yield* audit.recordBy(user, "webhook.created", created.id, { url: created.url, environment })
        return created
      })

    /** Endpoint 11; the audit log names the fields whose value changed (the page's form sends them all). */
    const update = (user: PanelUser, id: string, body: UpdateWebhook) =>
      onEndpoint(user, id, (key, before) =>
        Effect.tap(endpoints.update(key, id, body), (updated) => {
          const fields = [
            ...(updated.url === before.url ? [] : ["url"]),
            ...(JSON.stringify(updated.events) === JSON.stringify(before.events) ? [] : ["events"]),
            ...(updated.include_guests === before.include_guests ? [] : ["include_guests"])
          ]
          return fields.length === 0
            ? Effect.void
            : audit.recordBy(user, "webhook.updated", id, { url: before.url, new_url: updated.url, fields })
        }))

    /** Endpoint 12: deactivated; its pending deliveries end failed. */
    const deactivate = (user: PanelUser, id: string) =>
      onEndpoint(user, id, (key, endpoint) =>
        Effect.tap(endpoints.deactivate(key, id), () => audit.recordBy(user, "webhook.deactivated", id, { url: endpoint.url })))

    /** Endpoint 13: the new secret is in this answer only; the old one stops at once. */
    const rotate = (user: PanelUser, id: string) =>
      onEndpoint(user, id, (key, endpoint) =>
        Effect.tap(endpoints.rotate(key, id), () => audit.recordBy(user, "webhook.secret_rotated", id, { url: endpoint.url })))

    const test = (user: PanelUser, id: string) => onEndpoint(user, id, (key) => deliveries.ping(key, id))

    /** Design §6.14 Recover, from the endpoint's row. */
    const recover = (user: PanelUser, id: string, body: RecoverDeliveries) =>
      onEndpoint(user, id, (key) => endpoints.recover(key, id, body))

    // --------------------------------------------------------------------------------------------- deliveries

    /** The delivery log: a page of the filtered deliveries, most recent first, with the counts by status. */
    const listDeliveries = (user: PanelUser, query: DeliveriesQuery) =>
      Effect.gen(function*() {
        const before = query.cursor === undefined ? Option.none() : decodeCursor(query.cursor)
        if (query.cursor !== undefined && Option.isNone(before)) return yield* badCursor()
        const owner = { accountId: user.accountId, environment: query.environment ?? "live" }
        const filters = {
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(query.event === undefined ? {} : { event: query.event }),
          ...(query.external_id === undefined ? {} : { externalId: query.external_id }),
          ...(query.endpoint_id === undefined ? {} : { endpointId: query.endpoint_id })
        }
        const limit = query.limit ?? 50
        const [rows, counts] = yield* Effect.all([
          store.panelPage(owner, filters, before, limit),
          store.panelCounts(owner, filters)
        ], { concurrency: 1 }).pipe(Effect.orDie)
        const page = rows.slice(0, limit)
        const last = page[page.length - 1]
        return {
          deliveries: page.map(withoutSeq),
          next_cursor: rows.length > limit && last !== undefined ? encodeCursor(last.seq) : null,
          counts
        }
      })

    /** One delivery: the payload as sent and each attempt with the receiver's answer (design §8). */
    const delivery = (user: PanelUser, id: string) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* deliveryNotFound(id)
        const found = yield* Effect.orDie(store.panelDetail(user.accountId, id))
        if (Option.isNone(found)) return yield* deliveryNotFound(id)
        const { delivery, attempts, body, includeGuests } = found.value
        return {
          ...withoutSeq(delivery),
          payload: payloadOf(body, includeGuests),
          attempt_details: attempts.map((attempt) => ({
            at: attempt.attempted_at,
            status_code: attempt.http_status,
            duration_ms: attempt.duration_ms,
            error: attempt.error,
            response_excerpt: attempt.response_excerpt ?? null
          }))
        }
      })

    const redeliver = (user: PanelUser, id: string) =>
      Effect.flatMap(deliveries.environmentOf(user.accountId, id), Option.match({
        onNone: () => Effect.fail(deliveryNotFound(id)),
        onSome: (environment) => deliveries.redeliver(asKey(user, environment), id)
      }))

    return { list, create, update, deactivate, rotate, test, recover, listDeliveries, delivery, redeliver } as const
  })
}) {}

const withoutSeq = ({ seq: _, ...delivery }: PanelDelivery) => delivery
