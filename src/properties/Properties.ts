import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql"
import { Effect, Either, Redacted } from "effect"
import { Accounts } from "../accounts/Accounts.ts"
import type { AuthenticatedKey } from "../auth/CurrentKey.ts"
import { query } from "../db/Database.ts"
import { isUniqueViolation } from "../db/SqlErrors.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { ExternalIdInUse, InvalidRequest, PropertyNotFound } from "../shared/errors.ts"
import type { Environment } from "../shared/Environment.ts"
import { checkScope, type Property, type PropertyMapping, type PropertyScope } from "./Property.ts"
import { lookupId } from "../shared/Uuid.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/** A property as stored, authority settings included (never returned by the partner API). */
interface PropertyRow {
  readonly id: string
  readonly account_id: string
  readonly environment: Environment
  readonly name: string
  readonly internal_name: string | null
  readonly external_id: string | null
  readonly rnt_id: string | null
  readonly checkin_enabled: boolean
  readonly reports_tra: boolean
  readonly reports_sire: boolean
  readonly requires_contract_signature: boolean
  readonly requires_document_photos: boolean
}

/** What an operator may set on a property (CLI `properties create|update`); omitted = default / unchanged. */
export interface PropertySettings {
  readonly name?: string | undefined
  readonly environment?: Environment | undefined
  readonly rnt_id?: string | undefined
  readonly external_id?: string | undefined
  readonly internal_name?: string | undefined
  readonly reports_tra?: boolean | undefined
  readonly reports_sire?: boolean | undefined
  readonly requires_contract_signature?: boolean | undefined
  readonly requires_document_photos?: boolean | undefined
  readonly checkin_enabled?: boolean | undefined
  readonly tra_token?: Redacted.Redacted<string> | undefined
  readonly sire_hotel_code?: string | undefined
  readonly sire_city_code?: string | undefined
  readonly establishment_name?: string | undefined
  readonly tipo_acomodacion?: string | undefined
  readonly default_room?: string | undefined
}

const PROPERTY_COLUMNS = `id, account_id, environment, name, internal_name, external_id, rnt_id, checkin_enabled,
  reports_tra, reports_sire, requires_contract_signature, requires_document_photos`

/** The reporting settings the panel shows; the TRA token only as whether one is set. */
interface SettingsRow {
  readonly tra_token_set: boolean
  readonly establishment_name: string | null
  readonly tipo_acomodacion: string | null
  readonly default_room: string | null
  readonly sire_hotel_code: string | null
  readonly sire_city_code: string | null
}
const SETTINGS_COLUMNS = `tra_token IS NOT NULL AS tra_token_set, establishment_name, tipo_acomodacion, default_room,
  sire_hotel_code, sire_city_code`

/** A change of reporting settings from the panel: omitted = unchanged, `null` = cleared. */
export interface ReportingSettingsChange {
  readonly tra_token?: string | null
  readonly establishment_name?: string | null
  readonly tipo_acomodacion?: string | null
  readonly default_room?: string | null
  readonly sire_hotel_code?: string | null
  readonly sire_city_code?: string | null
}


export const toProperty = (row: PropertyRow): Property => ({
  property_id: row.id,
  external_id: row.external_id,
  rnt_id: row.rnt_id,
  name: row.name,
  internal_name: row.internal_name,
  checkin_enabled: row.checkin_enabled,
  compliance: { tra: row.reports_tra, sire: row.reports_sire },
  requires_contract_signature: row.requires_contract_signature,
  requires_document_photos: row.requires_document_photos
})

const toAdminView = (row: PropertyRow) => ({ ...toProperty(row), environment: row.environment })

/**
 * Final external_id per property after applying a batch onto the current mapping, or the first external_id
 * that would name two properties. Pure: the all-or-nothing rule of spec rule 4 is decided here.
 */
export const planMappings = (
  current: ReadonlyArray<{ readonly id: string; readonly external_id: string | null }>,
  batch: ReadonlyArray<PropertyMapping>
): Either.Either<Map<string, string | null>, { readonly external_id: string; readonly property_ids: [string, string] }> => {
  const final = new Map(current.map((p) => [p.id, p.external_id] as const))
  for (const mapping of batch) final.set(mapping.property_id, mapping.external_id)
  const owner = new Map<string, string>()
  for (const [id, externalId] of final) {
    if (externalId === null) continue
    const other = owner.get(externalId)
    if (other !== undefined) return Either.left({ external_id: externalId, property_ids: [other, id] })
    owner.set(externalId, id)
  }
  return Either.right(final)
}

/** Properties of an account: listing and mapping for partners, creation and settings for operators. */
export class Properties extends Effect.Service<Properties>()("properties/Properties", {
  dependencies: [Accounts.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    // The TRA token is stored sealed (design §3); only the report run opens it (`DueReports`).
    const box = yield* SecretBox

    /**
     * Endpoint 1: every property of the key's (account, environment). Hot path: one indexed statement, run with
     * `query` (docs/performance.md); bench/baseline.ts sends the same text.
     */
    const list = (key: AuthenticatedKey): Effect.Effect<Array<Property>> =>
      Effect.map(
        query(sql<PropertyRow>`
        SELECT ${sql.literal(PROPERTY_COLUMNS)} FROM properties
        WHERE account_id = ${key.accountId} AND environment = ${key.environment}
        ORDER BY created_at, id`).pipe(Effect.orDie),
        (rows) => rows.map(toProperty)
      )

    /** Endpoint 2: all-or-nothing; rows of the scope are locked so concurrent batches serialise. */
    const map = (key: AuthenticatedKey, batch: ReadonlyArray<PropertyMapping>) =>
      Effect.gen(function*() {
        const ids = batch.map((m) => m.property_id)
        const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i)
        if (duplicates.length > 0) {
          return yield* new InvalidRequest({
            message: `property ${duplicates[0]} appears more than once in mappings`,
            details: {
              fields: batch.flatMap((m, i) =>
                duplicates.includes(m.property_id)
                  ? [{ field: `mappings[${i}].property_id`, message: "appears more than once" }]
                  : []
              )
            }
          })
        }
        const targets = yield* sql<PropertyScope & { id: string }>`
          SELECT id, account_id, environment, checkin_enabled FROM properties WHERE id IN ${sql.in(ids)}`
        const byId = new Map(targets.map((t) => [t.id, t]))
        for (const id of ids) {
          yield* checkScope(byId.get(id), key, id)
        }
        const current = yield* sql<{ id: string; external_id: string | null }>`
          SELECT id, external_id FROM properties
          WHERE account_id = ${key.accountId} AND environment = ${key.environment}
          ORDER BY id FOR UPDATE`
        const final = yield* Either.mapLeft(planMappings(current, batch), (clash) =>
          new ExternalIdInUse({
            message: `external_id ${JSON.stringify(clash.external_id)} would be on two properties`,
            details: { external_id: clash.external_id, property_ids: clash.property_ids }
          }))
        // Clear first, then set: the unique index never sees an intermediate duplicate (swaps work).
        yield* sql`UPDATE properties SET external_id = NULL, updated_at = now() WHERE id IN ${sql.in(ids)}`
        const assigned = batch.filter((m) => m.external_id !== null)
        if (assigned.length > 0) {
          yield* sql`
            UPDATE properties AS p SET external_id = v.external_id, updated_at = now()
            FROM jsonb_to_recordset(${JSON.stringify(assigned)}::jsonb) AS v(property_id uuid, external_id text)
            WHERE p.id = v.property_id`
        }
        return { ok: true, mappings: batch.map((m) => ({ property_id: m.property_id, external_id: final.get(m.property_id) ?? null })) }
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(new ExternalIdInUse({ message: "an external_id is already assigned to another property" }))
            : Effect.die(error)),
        TraceContext.withSpan("Properties.map")
      )

    // The partial unique index refused an operator's external_id; any other SqlError is a defect.
    const settingsConflict = (error: SqlError.SqlError) =>
      isUniqueViolation(error)
        ? Effect.fail(new ExternalIdInUse({ message: "that external_id is already on another property" }))
        : Effect.die(error)

    const create = (accountId: string, settings: PropertySettings & { readonly name: string }) =>
      Effect.gen(function*() {
        yield* accounts.lock(accountId)
        const [row] = yield* sql<PropertyRow>`
          INSERT INTO properties ${
          sql.insert({
            account_id: accountId,
            environment: settings.environment ?? "live",
            name: settings.name,
            internal_name: settings.internal_name ?? null,
            external_id: settings.external_id ?? null,
            rnt_id: settings.rnt_id ?? null,
            checkin_enabled: settings.checkin_enabled ?? true,
            reports_tra: settings.reports_tra ?? true,
            reports_sire: settings.reports_sire ?? true,
            requires_contract_signature: settings.requires_contract_signature ?? false,
            requires_document_photos: settings.requires_document_photos ?? false,
            tra_token: settings.tra_token === undefined ? null : box.seal(Redacted.value(settings.tra_token)),
            establishment_name: settings.establishment_name ?? null,
            tipo_acomodacion: settings.tipo_acomodacion ?? null,
            default_room: settings.default_room ?? null,
            sire_hotel_code: settings.sire_hotel_code ?? null,
            sire_city_code: settings.sire_city_code ?? null
          })
        } RETURNING ${sql.literal(PROPERTY_COLUMNS)}`
        return toAdminView(row!)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", settingsConflict), TraceContext.withSpan("Properties.create"))

    const update = (propertyId: string, settings: PropertySettings) =>
      Effect.gen(function*() {
        const changes = Object.fromEntries(
          Object.entries(settings)
            .filter(([field, value]) => value !== undefined && field !== "environment")
            .map(([field, value]) => [field, Redacted.isRedacted(value) ? box.seal(String(Redacted.value(value))) : value])
        )
        const rows = Object.keys(changes).length === 0
          ? yield* sql<PropertyRow>`
              SELECT ${sql.literal(PROPERTY_COLUMNS)} FROM properties WHERE id = ${lookupId(propertyId)}`
          : yield* sql<PropertyRow>`
              UPDATE properties SET ${sql.update(changes)}, updated_at = now()
              WHERE id = ${lookupId(propertyId)} RETURNING ${sql.literal(PROPERTY_COLUMNS)}`
        if (rows[0] === undefined) {
          return yield* new PropertyNotFound({ message: `no property ${propertyId}` })
        }
        return toAdminView(rows[0])
      }).pipe(Effect.catchTag("SqlError", settingsConflict), TraceContext.withSpan("Properties.update"))

    /** What the panel shows of a property: the spec's Property, its environment and its reporting settings. */
    const panelView = (row: PropertyRow & SettingsRow) => ({
      ...toAdminView(row),
      settings: {
        tra_token_set: row.tra_token_set,
        establishment_name: row.establishment_name,
        tipo_acomodacion: row.tipo_acomodacion,
        default_room: row.default_room,
        sire_hotel_code: row.sire_hotel_code,
        sire_city_code: row.sire_city_code
      }
    })

    /** The panel: every property of an account, both environments, live first; the TRA token only as "set". */
    const listWithSettings = (accountId: string) =>
      sql<PropertyRow & SettingsRow>`
        SELECT ${sql.literal(PROPERTY_COLUMNS)}, ${sql.literal(SETTINGS_COLUMNS)} FROM properties
        WHERE account_id = ${accountId} ORDER BY environment, created_at, id`.pipe(
        Effect.map((rows) => rows.map(panelView)),
        Effect.orDie,
        TraceContext.withSpan("Properties.listWithSettings")
      )

    /**
     * The panel's write-only authority settings of one of the account's properties (design §8): `null` clears
     * a setting; an unknown property or one of another account is `property_not_found`.
     */
    const updateSettings = (accountId: string, propertyId: string, settings: ReportingSettingsChange) =>
      Effect.gen(function*() {
        const changes = Object.fromEntries(
          Object.entries(settings)
            .filter(([, value]) => value !== undefined)
            .map(([field, value]) => [field, field === "tra_token" && typeof value === "string" ? box.seal(value) : value])
        )
        const scope = sql`id = ${lookupId(propertyId)} AND account_id = ${accountId}`
        const rows = Object.keys(changes).length === 0
          ? yield* sql<PropertyRow & SettingsRow>`
              SELECT ${sql.literal(PROPERTY_COLUMNS)}, ${sql.literal(SETTINGS_COLUMNS)} FROM properties WHERE ${scope}`
          : yield* sql<PropertyRow & SettingsRow>`
              UPDATE properties SET ${sql.update(changes)}, updated_at = now() WHERE ${scope}
              RETURNING ${sql.literal(PROPERTY_COLUMNS)}, ${sql.literal(SETTINGS_COLUMNS)}`
        if (rows[0] === undefined) {
          return yield* new PropertyNotFound({ message: `no property ${propertyId} in this account`, details: { property_id: propertyId } })
        }
        return panelView(rows[0])
      }).pipe(Effect.catchTag("SqlError", Effect.die), TraceContext.withSpan("Properties.updateSettings"))

    return { list, map, create, update, listWithSettings, updateSettings } as const
  })
}) {}
