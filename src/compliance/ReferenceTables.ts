import { Either, Option, ParseResult, Schema } from "effect"
import { COUNTRY_CODES } from "../reservations/countries.ts"
import { DocumentType, Motivo } from "../reservations/Reservation.ts"
import { type ReferenceData, type ReferenceFiles, type ReferenceOverrides, SireCode } from "./ReferenceData.ts"

/**
 * The reference tables as an operator sees them (design §6.10, §9: `cli reference list|set|unset`): four tables
 * with stable names, each a map from a value the partner API accepts to what an authority is sent. They are
 * views of the bundled files (`ReferenceData.ts`, `reference/*.json`): an operator's corrections become
 * `ReferenceOverrides` and are checked by the files' own schemas when the tables are built (`build`), so a
 * value the bundled data could not hold is refused.
 *
 * - `sire-countries`: ISO 3166-1 alpha-2 → SIRE country code (countries.json).
 * - `sire-documents`: spec `tipo_documento` → SIRE document code (documents.json `sire`; none for Colombian
 *   documents, whose holders never go to SIRE).
 * - `tra-documents`: spec `tipo_documento` → TRA `tipo_identificacion` label (documents.json `tra`).
 * - `tra-motivos`: spec `motivo` → TRA wording (motivos.json).
 *
 * There is no cities table: the TRA takes the guest's city as written and SIRE's city column is the property's
 * own DIVIPOLA code (`--sire-city-code`), so no city is ever mapped.
 */

export const TableName = Schema.Literal("sire-countries", "sire-documents", "tra-documents", "tra-motivos")
export type TableName = typeof TableName.Type

export interface Table {
  readonly name: TableName
  /** What a key maps to, for help and listings. */
  readonly description: string
  /** Every key the table has, in a stable order: the values the partner API accepts. */
  readonly keys: ReadonlyArray<string>
  readonly key: Schema.Schema<string>
  readonly value: Schema.Schema<string>
  /**
   * A key may have no value. True where the bundled data itself has gaps (a country with no trustworthy code;
   * the Colombian documents' SIRE code): withdrawing a wrong code there makes its reports wait with a warning
   * instead of misreporting. The TRA tables need a value for every key (the files' schemas say so).
   */
  readonly gaps: boolean
  /** The value in `data`, or null when the table has none. */
  readonly lookup: (data: ReferenceData, key: string) => string | null
}

const member = (keys: ReadonlyArray<string>, rule: string) =>
  Schema.String.pipe(Schema.filter((key) => keys.includes(key), { message: () => rule }))

const oneOf = (keys: ReadonlyArray<string>) => `must be one of: ${keys.join(", ")}`

/** A TRA label or wording: the files' non-empty text, without the stray spaces a typed value can carry. */
const Wording = Schema.String.pipe(
  Schema.filter((text) => text.length > 0 && text.trim() === text, {
    message: () => "must be non-empty text that neither starts nor ends with a space"
  })
)

/** A table over `keys`; a key outside them is refused with `rule`, by default the list of them. */
const table = <Name extends TableName>(
  name: Name,
  description: string,
  keys: ReadonlyArray<string>,
  columns: { readonly value: Schema.Schema<string>; readonly gaps: boolean; readonly rule?: string },
  lookup: (data: ReferenceData, key: string) => string | undefined
): Table & { readonly name: Name } => ({
  name,
  description,
  keys,
  key: member(keys, columns.rule ?? oneOf(keys)),
  value: columns.value,
  gaps: columns.gaps,
  lookup: (data, key) => lookup(data, key) ?? null
})

export const tables: { readonly [Name in TableName]: Table & { readonly name: Name } } = {
  "sire-countries": table(
    "sire-countries",
    "ISO 3166-1 alpha-2 country of nacionalidad, pais_procedencia or pais_residencia → SIRE country code",
    COUNTRY_CODES,
    { value: SireCode, gaps: true, rule: "must be an assigned ISO 3166-1 alpha-2 country code in capitals, such as RU" },
    (data, key) => data.sireCountry(key)
  ),
  "sire-documents": table("sire-documents", "tipo_documento → SIRE document code; none for Colombian documents",
    DocumentType.literals, { value: SireCode, gaps: true }, (data, key) => data.sireDocument(key)),
  "tra-documents": table("tra-documents", "tipo_documento → TRA tipo_identificacion label",
    DocumentType.literals, { value: Wording, gaps: false }, (data, key) => data.traDocument(key)),
  "tra-motivos": table("tra-motivos", "motivo → TRA motivo wording",
    Motivo.literals, { value: Wording, gaps: false }, (data, key) => data.traMotivo(key))
}

export const tableNames: ReadonlyArray<TableName> = TableName.literals

/** What a key or value of `table` was refused for: the schema's own message. */
export const check = (schema: Schema.Schema<string>, input: string): Either.Either<string, string> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema)(input),
    (error) => ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.message).join("; ")
  )

/** One stored correction: `value` null withdraws the bundled value (only where the table has gaps). */
export interface Override {
  readonly table: TableName
  readonly key: string
  readonly value: string | null
}

/**
 * The corrections as `ReferenceOverrides` for `build`. A SIRE and a TRA correction of the same document merge
 * into one entry (documents.json keeps both codes of a document together).
 */
export const toOverrides = (overrides: ReadonlyArray<Override>): ReferenceOverrides => {
  const countries: Record<string, string | null> = {}
  const documents: Record<string, { tra?: string; sire?: string | null }> = {}
  const motivos: Record<string, string | null> = {}
  for (const { table, key, value } of overrides) {
    switch (table) {
      case "sire-countries":
        countries[key] = value
        break
      case "sire-documents":
        documents[key] = { ...documents[key], sire: value }
        break
      case "tra-documents":
        // A TRA label cannot be withdrawn (gaps: false); a stored null would have been refused when set.
        if (value !== null) documents[key] = { ...documents[key], tra: value }
        break
      case "tra-motivos":
        motivos[key] = value
        break
    }
  }
  const some = (record: object) => Object.keys(record).length > 0
  return {
    ...(some(countries) ? { countries } : {}),
    ...(some(documents) ? { documents } : {}),
    ...(some(motivos) ? { motivos } : {})
  }
}

// ---------------------------------------------------------------------------------------------------------------
// What the bundled files say about a key: the facts an operator weighs before overriding it

const PerSource = Schema.Record({ key: Schema.String, value: Schema.String })
const BySource = Schema.Struct({ values: Schema.Record({ key: Schema.String, value: PerSource }) })
const CountriesNotes = Schema.Struct({
  conflicts: Schema.optional(BySource),
  single_source: Schema.optional(BySource),
  unmapped: Schema.optional(Schema.Struct({ candidates: Schema.optional(PerSource) }))
})
const FileNotes = Schema.Struct({ notes: Schema.optional(PerSource) })

/**
 * Where the bundled value of a key comes from, in the files' own words: the code each source gives where they
 * disagree or only one has the country (countries.json `conflicts`, `single_source`), what is known of a country
 * no source has (`unmapped.candidates`), a document's or motivo's note. Null when the files say nothing more.
 * Only documentation is read here; the files' full schemas are `ReferenceData.build`'s.
 */
export const provenance = (files: ReferenceFiles): (table: TableName, key: string) => string | null => {
  const read = <A, I>(schema: Schema.Schema<A, I>, file: unknown) =>
    Option.getOrUndefined(Schema.decodeUnknownOption(schema)(file))
  const countries = read(CountriesNotes, files.countries)
  const maps = (record: Readonly<Record<string, string>> | undefined) => new Map(Object.entries(record ?? {}))
  const bySource = (documented: typeof BySource.Type | undefined) =>
    new Map(Object.entries(documented?.values ?? {}).map(([key, values]) =>
      [key, Object.entries(values).map(([source, code]) => `${source} ${code}`).join(", ")] as const
    ))
  const conflicts = bySource(countries?.conflicts)
  const single = bySource(countries?.single_source)
  const candidates = maps(countries?.unmapped?.candidates)
  const documents = maps(read(FileNotes, files.documents)?.notes)
  const motivos = maps(read(FileNotes, files.motivos)?.notes)
  return (table, key) => {
    switch (table) {
      case "sire-countries": {
        const disagree = conflicts.get(key)
        if (disagree !== undefined) return `the sources disagree: ${disagree}`
        const only = single.get(key)
        if (only !== undefined) return `one source only: ${only}`
        return candidates.get(key) ?? null
      }
      case "sire-documents":
      case "tra-documents":
        return documents.get(key) ?? null
      case "tra-motivos":
        return motivos.get(key) ?? null
    }
  }
}
