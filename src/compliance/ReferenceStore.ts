import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Either, Option, Ref, Schema } from "effect"
import { Audit } from "../audit/Audit.ts"
import { InvalidRequest, OverrideNotFound } from "../shared/errors.ts"
import { build, bundledFiles, make, type ReferenceData } from "./ReferenceData.ts"
import {
  check,
  type Override,
  provenance,
  type Table,
  type TableName,
  tableNames,
  tables,
  toOverrides
} from "./ReferenceTables.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * The operators' corrections of the reference tables (design §6.10, §9): stored in `reference_overrides`,
 * audited in `audit_log`, and read by every report run at its start (`effective`), so a correction is in effect
 * at the next run of every instance without a restart — the database is the truth, no instance keeps its own.
 *
 * A correction is checked with the bundled files' schemas together with the corrections already in effect
 * (`build`): a SIRE code of the wrong shape, or one another country already has, is refused and nothing is
 * stored. A stored correction that a later release's bundled data contradicts (the release gave another country
 * that code) is left out of the tables, logged and shown by `list` with the reason, instead of stopping every
 * report run.
 */

/** Who changed the tables: the admin RPC knows no person, only that its token was presented (design §4). */
const ACTOR = "operator"

const OverrideRow = Schema.Struct({
  table_name: Schema.Literal(...tableNames),
  key: Schema.String,
  value: Schema.NullOr(Schema.String),
  note: Schema.NullOr(Schema.String),
  updated_at: Schema.DateFromSelf
})
type OverrideRow = typeof OverrideRow.Type

/** One key of a table as `cli reference list` shows it. */
export interface Entry {
  readonly table: TableName
  readonly key: string
  /** What the report runs send now; null: nothing (reports needing it wait with a warning). */
  readonly value: string | null
  /** What the bundled data says. */
  readonly bundled: string | null
  /** Where the bundled value comes from, in the files' words (each source's code where they disagree…). */
  readonly sources: string | null
  /** A stored correction exists for this key (in effect unless `ignored` says why not). */
  readonly overridden: boolean
  readonly note: string | null
  readonly updated_at: string | null
  /** Why the stored correction is not in effect (it contradicts the bundled data of this release); else null. */
  readonly ignored: string | null
}

/** The stored corrections in effect, the tables they give, and those left out with the reason. */
interface Resolved {
  readonly data: ReferenceData
  readonly ignored: ReadonlyMap<string, string>
}

const id = (table: TableName, key: string) => `${table}\u0000${key}`
const asOverride = (row: OverrideRow): Override => ({ table: row.table_name, key: row.key, value: row.value })

/** `reference data countries.json is invalid: entries.RU: …` → `entries.RU: …`: the file is ours, not theirs. */
const reason = (message: string) => message.replace(/^reference data \S+ is invalid: /, "")

/**
 * The tables with as many stored corrections as fit, oldest first: all of them normally; when some no longer
 * fit the bundled data, each that does not is left out with the reason.
 */
export const resolve = (rows: ReadonlyArray<Override>): Either.Either<Resolved, string> => {
  const all = build(undefined, toOverrides(rows))
  if (Either.isRight(all)) return Either.right({ data: all.right, ignored: new Map() })
  const kept: Array<Override> = []
  const ignored = new Map<string, string>()
  for (const row of rows) {
    const tried = build(undefined, toOverrides([...kept, row]))
    if (Either.isRight(tried)) kept.push(row)
    else ignored.set(id(row.table, row.key), reason(tried.left.message))
  }
  return Either.map(
    Either.mapLeft(build(undefined, toOverrides(kept)), (error) => error.message),
    (data) => ({ data, ignored })
  )
}

export class ReferenceStore extends Effect.Service<ReferenceStore>()("compliance/ReferenceStore", {
  dependencies: [Audit.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* Audit
    // The bundled tables are checked once here; broken bundled data is a defect at start, as before.
    const bundled = yield* Effect.orDie(make())
    const about = provenance(bundledFiles)

    const stored = SqlSchema.findAll({
      Request: Schema.Void,
      Result: OverrideRow,
      execute: () =>
        sql`SELECT table_name, key, value, note, updated_at FROM reference_overrides ORDER BY updated_at, table_name, key`
    })
    const load = stored(undefined).pipe(Effect.orDie)

    /** The last resolution and what it was computed from: runs reuse it while nobody changes the corrections. */
    const last = yield* Ref.make(Option.none<{ readonly input: string; readonly resolved: Resolved }>())

    const resolved = (rows: ReadonlyArray<OverrideRow>) =>
      Effect.gen(function*() {
        const overrides = rows.map(asOverride)
        const input = JSON.stringify(overrides)
        const cached = yield* Ref.get(last)
        if (Option.isSome(cached) && cached.value.input === input) return cached.value.resolved
        const outcome = resolve(overrides)
        // Only the bundled data itself can fail here, and it was checked at start.
        if (Either.isLeft(outcome)) return yield* Effect.dieMessage(outcome.left)
        for (const [key, why] of outcome.right.ignored) {
          yield* Effect.logWarning("a reference override is not in effect; fix or unset it", {
            override: key.replace("\u0000", " "),
            reason: why
          })
        }
        yield* Ref.set(last, Option.some({ input, resolved: outcome.right }))
        return outcome.right
      })

    /** The tables a report run maps with: bundled, with the stored corrections in effect now. */
    const effective = Effect.map(Effect.flatMap(load, resolved), (r) => r.data).pipe(
      TraceContext.withSpan("ReferenceStore.effective")
    )

    const entryOf = (table: Table, key: string, rows: ReadonlyArray<OverrideRow>, current: Resolved): Entry => {
      const row = rows.find((candidate) => candidate.table_name === table.name && candidate.key === key)
      return {
        table: table.name,
        key,
        value: table.lookup(current.data, key),
        bundled: table.lookup(bundled, key),
        sources: about(table.name, key),
        overridden: row !== undefined,
        note: row?.note ?? null,
        updated_at: row?.updated_at.toISOString() ?? null,
        ignored: current.ignored.get(id(table.name, key)) ?? null
      }
    }

    const refuse = (message: string) => new InvalidRequest({ message })

    /** Checks a key (and value) with the table's schemas; answers the table. */
    const checked = (name: TableName, key: string, value?: string | null) =>
      Effect.gen(function*() {
        const table = tables[name]
        const badKey = Either.getLeft(check(table.key, key))
        if (Option.isSome(badKey)) return yield* refuse(`key ${JSON.stringify(key)} of ${name} ${badKey.value}`)
        if (value === null && !table.gaps) {
          return yield* refuse(
            `${name} needs a value for every key: the TRA refuses a report without it; set the right value instead`
          )
        }
        if (typeof value === "string") {
          const badValue = Either.getLeft(check(table.value, value))
          if (Option.isSome(badValue)) {
            return yield* refuse(`value ${JSON.stringify(value)} for ${name} ${key} ${badValue.value}`)
          }
        }
        return table
      })

    /** Every key of the tables (or of one table, or one key), as in effect now. */
    const list = (filter: { readonly table?: TableName | undefined; readonly key?: string | undefined }) =>
      Effect.gen(function*() {
        if (filter.table !== undefined && filter.key !== undefined) yield* checked(filter.table, filter.key)
        const rows = yield* load
        const current = yield* resolved(rows)
        const chosen = filter.table === undefined ? tableNames : [filter.table]
        return {
          entries: chosen.flatMap((name) => {
            const table = tables[name]
            const keys = filter.key === undefined ? table.keys : table.keys.filter((key) => key === filter.key)
            return keys.map((key) => entryOf(table, key, rows, current))
          })
        }
      })

    /**
     * One change of the stored corrections, in a transaction that holds the table against other writers: the
     * corrections in effect after it must still build, and none that was in effect may drop out because of it.
     */
    const change = (
      name: TableName,
      key: string,
      next: (rows: ReadonlyArray<OverrideRow>, at: Date) => Effect.Effect<ReadonlyArray<OverrideRow>, OverrideNotFound>,
      write: (at: Date) => Effect.Effect<unknown, never>,
      action: "reference.set" | "reference.unset",
      describe: string
    ) =>
      Effect.gen(function*() {
        const table = tables[name]
        yield* sql`LOCK TABLE reference_overrides IN SHARE ROW EXCLUSIVE MODE`.pipe(Effect.orDie)
        const at = DateTime.toDateUtc(yield* DateTime.now)
        const rows = yield* load
        const before = yield* resolved(rows)
        const after = yield* Effect.flatMap(next(rows, at), (candidate) =>
          Either.match(resolve(candidate.map(asOverride)), {
            onLeft: (message) => Effect.dieMessage(message),
            onRight: (result) => Effect.succeed({ rows: candidate, result })
          }))
        const dropped = [...after.result.ignored.keys()].filter((entry) => !before.ignored.has(entry))
        if (dropped.length > 0) {
          const first = dropped[0]!
          const [droppedTable, droppedKey] = first.split("\u0000")
          const why = after.result.ignored.get(first)
          return yield* refuse(
            first === id(name, key)
              ? `${name} ${key} = ${describe} is refused: ${why}`
              : `${describe} for ${name} ${key} would put the override of ${droppedTable} ${droppedKey} out of effect (${why}); `
                + "change that one first"
          )
        }
        yield* write(at)
        const previous = table.lookup(before.data, key)
        const entry = entryOf(table, key, after.rows, after.result)
        yield* audit.record({
          accountId: null,
          actor: ACTOR,
          action,
          target: `${name} ${key}`,
          ip: null,
          details: { table: name, key, old: previous, new: entry.value, bundled: entry.bundled, note: entry.note }
        })
        // The next run of this instance builds the tables again from the stored rows (the cache key changed).
        return { ...entry, previous }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /** `cli reference set`: `value` null withdraws the key's value (tables with gaps only). */
    const set = (input: {
      readonly table: TableName
      readonly key: string
      readonly value: string | null
      readonly note?: string | undefined
    }) =>
      Effect.flatMap(checked(input.table, input.key, input.value), () => {
        const note = input.note ?? null
        return change(
          input.table,
          input.key,
          (rows, at) =>
            Effect.succeed([
              ...rows.filter((row) => !(row.table_name === input.table && row.key === input.key)),
              { table_name: input.table, key: input.key, value: input.value, note, updated_at: at }
            ]),
          (at) =>
            sql`
              INSERT INTO reference_overrides (table_name, key, value, note, updated_at)
              VALUES (${input.table}, ${input.key}, ${input.value}, ${note}, ${at})
              ON CONFLICT (table_name, key) DO UPDATE SET value = EXCLUDED.value, note = EXCLUDED.note,
                updated_at = EXCLUDED.updated_at`.pipe(Effect.orDie),
          "reference.set",
          input.value === null ? "no value" : JSON.stringify(input.value)
        )
      }).pipe(TraceContext.withSpan("ReferenceStore.set"))

    /** `cli reference unset`: back to the bundled value. */
    const unset = (input: { readonly table: TableName; readonly key: string }) =>
      Effect.flatMap(checked(input.table, input.key), () =>
        change(
          input.table,
          input.key,
          (rows) =>
            rows.some((row) => row.table_name === input.table && row.key === input.key)
              ? Effect.succeed(rows.filter((row) => !(row.table_name === input.table && row.key === input.key)))
              : Effect.fail(
                new OverrideNotFound({
                  message: `${input.table} ${input.key} has no override to unset; it has the bundled value`
                })
              ),
          () =>
            sql`DELETE FROM reference_overrides WHERE table_name = ${input.table} AND key = ${input.key}`.pipe(
              Effect.orDie
            ),
          "reference.unset",
          "going back to the bundled value"
        )).pipe(TraceContext.withSpan("ReferenceStore.unset"))

    return { effective, list, set, unset } as const
  })
}) {}
