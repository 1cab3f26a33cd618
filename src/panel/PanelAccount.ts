import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Accounts } from "../accounts/Accounts.ts"
import { Alerts } from "../alerts/Alerts.ts"
import { type ReportingSettingsChange, Properties } from "../properties/Properties.ts"
import { ReservationRepo } from "../reservations/ReservationRepo.ts"
import type { ReservationRow } from "../reservations/ReservationRow.ts"
import { PartnerReservations } from "../reservations/PartnerReservations.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { Sandbox } from "../sandbox/Sandbox.ts"
import {
  InvalidRequest,
  OwnerRequired,
  RegistrationNotFound
} from "../shared/errors.ts"
import { Audit } from "../audit/Audit.ts"
import { PanelAuth } from "./PanelAuth.ts"
import {
  isHolder,
  type PanelUser,
  type ReservationsQuery,
  type ReservationSummary
} from "./Panel.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * What a signed-in account holder or member does in the panel (design §8). Every rule is the partner API's
 * own, reached through the same services — the test environment, reservations; keys through `PanelKeys`,
 * webhooks and deliveries through `PanelWebhooks` —: one implementation of each rule, two entrances. The panel
 * adds only who may do it (its session) and the audit log.
 */

/** A page position: the last row's `updated_at` and id, opaque to the client. */
const Cursor = Schema.parseJson(Schema.Struct({ u: Schema.Date, i: Schema.UUID }))
const encodeCursor = (row: { readonly updated_at: Date; readonly id: string }) =>
  Buffer.from(JSON.stringify({ u: row.updated_at.toISOString(), i: row.id })).toString("base64url")
const decodeCursor = (cursor: string) =>
  Schema.decodeUnknownOption(Cursor)(Buffer.from(cursor, "base64url").toString("utf8"))

/** The repository's request for a page of the panel's reservation list: its filters, after the cursor's row. */
const pageRequest = (
  user: PanelUser,
  query: ReservationsQuery,
  after: Option.Option<typeof Cursor.Type>,
  limit: number
) => ({
  accountId: user.accountId,
  environment: query.environment ?? "live",
  status: query.status,
  from: query.from,
  to: query.to,
  externalIdContains: query.q,
  after: Option.getOrUndefined(Option.map(after, ({ u, i }) => ({ updatedAt: u, id: i }))),
  limit
})

const badCursor = () =>
  new InvalidRequest({
    message: "invalid request: cursor",
    details: { fields: [{ field: "cursor", message: "must be the next_cursor of a previous page" }] }
  })

export class PanelAccount extends Effect.Service<PanelAccount>()("panel/PanelAccount", {
  dependencies: [Audit.Default, ReservationRepo.Default],
  effect: Effect.gen(function*() {
    const {
      sql, accounts, sandbox, properties, reservations, partnerReservations, repo, auth, audit,
      alertList
    } = yield* Effect.all({
      sql: SqlClient.SqlClient, accounts: Accounts, sandbox: Sandbox, properties: Properties,
      reservations: Reservations,
      partnerReservations: PartnerReservations, repo: ReservationRepo, auth: PanelAuth, audit: Audit, alertList: Alerts
    })

    // ------------------------------------------------------------------------------------------- account

    const account = (user: PanelUser) =>
      Effect.gen(function*() {
        const row = yield* accounts.get(user.accountId).pipe(Effect.orDie)
        const members = yield* accounts.members(user.accountId)
        return {
          account_id: row.account_id,
          name: row.name,
          email: row.email,
          members: members.map((member) => member.email),
          sandbox: row.sandbox_created_at !== null,
          live_enabled: row.live_enabled,
          signed_in_as: user.email,
          is_holder: isHolder(user)
        }
      })

    // -------------------------------------------------------------------------------------- test environment

    const createSandbox = (user: PanelUser) =>
      Effect.gen(function*() {
        const created = yield* sandbox.create(user.accountId, { once: true }).pipe(
          Effect.catchTags({ AccountNotFound: Effect.die, ExternalIdInUse: Effect.die })
        )
        yield* audit.recordBy(user, "sandbox.created", created.key_id, {})
        return created
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    // ---------------------------------------------------------------------------------------------- properties

    const listProperties = (user: PanelUser) =>
      Effect.map(properties.listWithSettings(user.accountId), (list) => ({ properties: list }))

    const updateSettings = (user: PanelUser, propertyId: string, settings: ReportingSettingsChange) =>
      Effect.gen(function*() {
        const updated = yield* properties.updateSettings(user.accountId, propertyId, settings)
        const names = Object.entries(settings).filter(([, value]) => value !== undefined).map(([name]) => name)
        if (names.length > 0) {
          yield* audit.recordBy(user, "property.settings_changed", `${propertyId}: ${names.join(", ")}`, {
            property: updated.name,
            environment: updated.environment,
            settings: names
          })
        }
        return updated
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    // ------------------------------------------------------------------------------------------- reservations

    /** What was reported, what failed and why: statuses and dates, no guest personal data (design §8). */
    const listReservations = (user: PanelUser, query: ReservationsQuery) =>
      Effect.gen(function*() {
        const after = query.cursor === undefined ? Option.none() : decodeCursor(query.cursor)
        if (query.cursor !== undefined && Option.isNone(after)) return yield* badCursor()
        const limit = query.limit ?? 50
        const rows = yield* repo.page(pageRequest(user, query, after, limit))
        const page = rows.slice(0, limit)
        const last = page[page.length - 1]
        return {
          reservations: page.map(summaryOf),
          next_cursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null
        }
      })

    const summaryOf = (row: ReservationRow): ReservationSummary => ({
      ...reservations.views.registrationStatus(row),
      check_in: row.check_in,
      check_out: row.check_out,
      property_id: row.property_id,
      updated_at: row.updated_at.toISOString()
    })

    /** The reservation view's "record departure" (design §6.8): the partner API's rules, on a row of the account. */
    const recordDeparture = (user: PanelUser, reservationId: string, departedOn: string) =>
      Effect.gen(function*() {
        const found = yield* repo.findById(reservationId)
        if (Option.isNone(found) || found.value.account_id !== user.accountId) {
          return yield* new RegistrationNotFound({
            message: `No reservation ${reservationId} in this account.`,
            details: { reservation_id: reservationId }
          })
        }
        const before = found.value
        const row = yield* partnerReservations.departById(reservationId, departedOn)
        if (row.departed_on !== before.departed_on) {
          yield* audit.recordBy(user, "reservation.departure_recorded", `${row.external_id} ${departedOn}`, {
            external_id: row.external_id,
            departed_on: departedOn
          })
        }
        return summaryOf(row)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("PanelAccount.recordDeparture"))

    // ----------------------------------------------------------------------------------------------- members

    const listMembers = (user: PanelUser) =>
      Effect.map(accounts.members(user.accountId), (members) => ({
        holder: user.accountEmail.toLowerCase(),
        members: members.map((member) => ({ ...member, added_at: member.added_at.toISOString() }))
      }))

    const ownerOnly = (user: PanelUser) =>
      isHolder(user)
        ? Effect.void
        : Effect.fail(new OwnerRequired({ message: "only the account's own e-mail may change its members", details: {} }))

    const addMember = (user: PanelUser, email: string) =>
      Effect.gen(function*() {
        yield* ownerOnly(user)
        if (email === user.accountEmail.toLowerCase()) return yield* listMembers(user)
        yield* accounts.addMember(user.accountId, email, user.email)
        yield* audit.recordBy(user, "member.added", email, { email })
        return yield* listMembers(user)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const removeMember = (user: PanelUser, email: string) =>
      Effect.gen(function*() {
        yield* ownerOnly(user)
        const member = email.trim().toLowerCase()
        yield* accounts.removeMember(user.accountId, member)
        yield* auth.endSessionsOf(user.accountId, member)
        yield* audit.recordBy(user, "member.removed", member, { email: member })
        return yield* listMembers(user)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const auditLog = (user: PanelUser, limit: number | undefined) => audit.list(user.accountId, limit ?? 100)

    /** design §9: the panel shows the alerts the holder was mailed. */
    const alerts = (user: PanelUser) => alertList.list(user.accountId)

    return {
      account,
      createSandbox,
      listProperties,
      updateSettings,
      listReservations,
      recordDeparture,
      listMembers,
      addMember,
      removeMember,
      auditLog,
      alerts
    } as const
  })
}) {}
