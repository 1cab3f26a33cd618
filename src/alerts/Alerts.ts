import { SqlClient } from "@effect/sql"
import { DateTime, Duration, Effect, Layer, Schedule, Schema } from "effect"
import { Warnings as TraWarnings } from "../compliance/TraInputs.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { enqueueMail } from "../mail/MailQueue.ts"
import { MailTemplate } from "../mail/Messages.ts"
import { ReservationRow } from "../reservations/ReservationRow.ts"
import { todayInBogota } from "../shared/Calendar.ts"
import { type AlertList, type FoundAlert, reportAlerts, webhookAlert } from "./Alert.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * Alerts to the account holder (design §9): a scan — at start, then every `ALERTS_EVERY` on workers — finds
 * the causes of `Alert.ts` in PostgreSQL, stores each new one (`UNIQUE (account_id, cause)`: once per cause,
 * however many instances scan) and queues its e-mail in the same transaction, in the account's language; the
 * panel lists them. A cause that is gone (the report was retried and accepted, the endpoint answers again) is
 * marked resolved. Nothing is kept in memory: a crash between two scans loses no alert.
 */

/** A webhook endpoint counts as failing once every delivery has failed for this long (design §9). */
export const WEBHOOK_FAILING_FOR = Duration.hours(24)

const Candidate = Schema.Struct({
  id: ReservationRow.fields.id,
  account_id: Schema.String,
  external_id: ReservationRow.fields.external_id,
  check_in: ReservationRow.fields.check_in,
  reservation_status: ReservationRow.fields.reservation_status,
  tra: ReservationRow.fields.tra,
  sire: ReservationRow.fields.sire,
  property_name: Schema.String
})
const decodeCandidates = Schema.decodeUnknown(Schema.Array(Candidate))

const FailingEndpoint = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  url: Schema.String,
  failing_since: Schema.DateFromSelf,
  last_error: Schema.NullOr(Schema.String)
})
const decodeEndpoints = Schema.decodeUnknown(Schema.Array(FailingEndpoint))

interface Raised extends FoundAlert {
  readonly accountId: string
  readonly subjectOf: string
  readonly property: string | null
  readonly since: Date | null
}

/** Notices that ride along with a report without holding it (so a report pending with only one is not blocked). */
const NOTICES = [TraWarnings.roomMissing]

export class Alerts extends Effect.Service<Alerts>()("alerts/Alerts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const panelUrl = `${config.publicBaseUrl.replace(/\/$/, "")}/panel`

    /** Live reservations whose reports may call for an alert today. */
    const reportCauses = (today: string) =>
      Effect.gen(function*() {
        const rows = yield* sql`
          SELECT r.id, r.account_id, r.external_id, r.check_in, r.reservation_status, r.tra, r.sire,
            p.name AS property_name
          FROM reservations r JOIN properties p ON p.id = r.property_id
          WHERE r.environment = 'live' AND (
            (r.tra->>'status') = 'error' OR (r.sire->>'status') = 'error' OR (r.sire->'exit'->>'status') = 'error'
            OR (r.reservation_status <> 'cancelled' AND r.check_in <= ${today} AND (
              ((r.tra->>'status') = 'pending' AND r.tra ? 'warning')
              OR ((r.sire->>'status') = 'pending' AND r.sire ? 'warning'))))`
        return (yield* decodeCandidates(rows)).flatMap((row) =>
          reportAlerts(row, today, { notices: NOTICES }).map((found): Raised => ({
            ...found,
            accountId: row.account_id,
            subjectOf: row.external_id,
            property: row.property_name,
            since: null
          }))
        )
      })

    /**
     * Active live endpoints with no successful delivery since their first failed one, at least 24 h ago:
     * `failing_since` is the creation of the oldest delivery attempted and not delivered after the last success.
     */
    const webhookCauses = (now: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql`
          WITH last_success AS (
            SELECT endpoint_id, max(delivered_at) AS at FROM webhook_deliveries
            WHERE status = 'delivered' GROUP BY endpoint_id
          )
          SELECT e.id, e.account_id, e.url, f.failing_since, f.last_error
          FROM webhook_endpoints e
          LEFT JOIN last_success s ON s.endpoint_id = e.id
          CROSS JOIN LATERAL (
            SELECT min(d.created_at) AS failing_since,
              (array_agg(d.last_error ORDER BY d.seq DESC) FILTER (WHERE d.last_error IS NOT NULL))[1] AS last_error
            FROM webhook_deliveries d
            WHERE d.endpoint_id = e.id AND d.status <> 'delivered' AND d.attempts > 0
              AND d.created_at > COALESCE(s.at, '-infinity'::timestamptz)
          ) f
          WHERE e.is_active AND e.environment = 'live'
            AND f.failing_since <= ${new Date(now.getTime() - Duration.toMillis(WEBHOOK_FAILING_FOR))}`
        return (yield* decodeEndpoints(rows)).map((endpoint): Raised => ({
          ...webhookAlert({ id: endpoint.id, failingSince: endpoint.failing_since, lastError: endpoint.last_error }),
          accountId: endpoint.account_id,
          subjectOf: endpoint.url,
          property: null,
          since: endpoint.failing_since
        }))
      })

    /**
     * Stores a new cause and queues its e-mail, together. A cause alerted before is not mailed again; if it had
     * been resolved and is back (a retried report failed again), its alert is open again.
     */
    const raise = (found: Raised, at: Date) =>
      Effect.gen(function*() {
        const stored = yield* sql<{ email: string; language: "es" | "en"; inserted: boolean }>`
          WITH stored AS (
            INSERT INTO alerts (account_id, kind, cause, authority, reservation_id, endpoint_id, message, created_at)
            VALUES (${found.accountId}, ${found.kind}, ${found.cause}, ${found.authority}, ${found.reservationId},
              ${found.endpointId}, ${found.message}, ${at})
            ON CONFLICT (account_id, cause) DO UPDATE SET resolved_at = NULL, message = EXCLUDED.message
              WHERE alerts.resolved_at IS NOT NULL
            RETURNING account_id, (xmax = 0) AS inserted)
          SELECT a.email, a.language, stored.inserted FROM stored JOIN accounts a ON a.id = stored.account_id`
        const account = stored[0]
        if (account === undefined || !account.inserted) return false
        yield* enqueueMail({
          to: account.email,
          language: account.language,
          template: MailTemplate.alert({
            kind: found.kind,
            authority: found.authority,
            subject_of: found.subjectOf,
            property: found.property,
            message: found.message,
            since: found.since === null ? null : found.since.toISOString(),
            panel_url: panelUrl
          })
        })
        return true
      }).pipe(sql.withTransaction, Effect.provideService(SqlClient.SqlClient, sql))

    /** One scan: new causes raised (and mailed), gone ones resolved. Answers how many were raised and resolved. */
    const scan = Effect.gen(function*() {
      const now = DateTime.toDateUtc(yield* DateTime.now)
      const today = yield* todayInBogota
      const found = [...(yield* reportCauses(today)), ...(yield* webhookCauses(now))]
      let raised = 0
      for (const alert of found) if (yield* raise(alert, now)) raised++
      const current = found.map((alert) => `${alert.accountId}|${alert.cause}`)
      const resolved = yield* sql<{ id: string }>`
        UPDATE alerts SET resolved_at = ${now}
        WHERE resolved_at IS NULL
          ${current.length === 0 ? sql`` : sql`AND (account_id::text || '|' || cause) NOT IN ${sql.in(current)}`}
        RETURNING id`
      return { raised, resolved: resolved.length }
    }).pipe(Effect.orDie, TraceContext.withSpan("Alerts.scan"))

    /** The account's alerts, newest first (the panel). */
    const list = (accountId: string, limit = 100) =>
      Effect.map(
        sql<{
          id: string
          kind: FoundAlert["kind"]
          authority: "tra" | "sire" | null
          reservation_id: string | null
          external_id: string | null
          endpoint_id: string | null
          endpoint_url: string | null
          message: string
          created_at: Date
          resolved_at: Date | null
        }>`
          SELECT al.id, al.kind, al.authority, al.reservation_id, r.external_id, al.endpoint_id, e.url AS endpoint_url,
            al.message, al.created_at, al.resolved_at
          FROM alerts al
          LEFT JOIN reservations r ON r.id = al.reservation_id
          LEFT JOIN webhook_endpoints e ON e.id = al.endpoint_id
          WHERE al.account_id = ${accountId}
          ORDER BY al.created_at DESC, al.id LIMIT ${limit}`,
        (rows): AlertList => ({
          alerts: rows.map((row) => ({
            ...row,
            created_at: row.created_at.toISOString(),
            resolved_at: row.resolved_at === null ? null : row.resolved_at.toISOString()
          }))
        })
      ).pipe(Effect.orDie)

    return { scan, list } as const
  })
}) {}

/** The scan loop (ROLE=worker|all): at start, then every `ALERTS_EVERY`, logged, never failing the loop. */
export const loop = Layer.scopedDiscard(Effect.gen(function*() {
  const alerts = yield* Alerts
  const { alertsEvery } = yield* AppConfig
  yield* Effect.forkScoped(Effect.repeat(
    alerts.scan.pipe(
      Effect.tap(({ raised, resolved }) =>
        raised + resolved > 0 ? Effect.logInfo("alerts", { raised, resolved }) : Effect.void),
      Effect.catchAllCause((cause) => Effect.logError("alert scan failed", cause))
    ),
    Schedule.spaced(alertsEvery)
  ))
}))
