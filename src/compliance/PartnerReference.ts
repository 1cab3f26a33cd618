import { Either, ParseResult, Schema } from "effect"
import { COUNTRY_CODES } from "../reservations/countries.ts"
import { DocumentType, Motivo } from "../reservations/Reservation.ts"
import { bundledFiles, type ReferenceFiles } from "./ReferenceData.ts"
import type { Entry } from "./ReferenceStore.ts"
import type { TableName } from "./ReferenceTables.ts"
import tiposAcomodacionFile from "./reference/tipos_acomodacion.json" with { type: "json" }

/**
 * The reference tables as a partner sees them (design §8b, `GET /api/partners/reference/{table}`): per value the
 * partner API accepts, what the TRA and SIRE are sent for it, with the public sources of that mapping. Built by
 * `partnerTable`, a pure function of the operator's listing (`ReferenceStore.list`: the value in effect, the
 * bundled one, whether an override applies) and of the bundled files, which name their sources.
 */

export const PartnerTableName = Schema.Literal("countries", "document_types", "motivos", "tipos_acomodacion")
export type PartnerTableName = typeof PartnerTableName.Type

export interface PartnerEntry {
  readonly key: string
  readonly tra: string | null
  readonly sire: string | null
  readonly source: string
}

const Text = Schema.String.pipe(Schema.minLength(1))

/** A file's sources, as much of them as a citation needs (the full schemas are `ReferenceData.ts`'s). */
const Cited = Schema.Struct({
  tag: Text,
  repo: Schema.optional(Text),
  path: Schema.optional(Text),
  commit: Schema.optional(Text),
  url: Schema.optional(Text),
  document: Schema.optional(Text)
})
const CitedFile = Schema.Struct({
  version: Text,
  sources: Schema.Array(Cited).pipe(Schema.minItems(1)),
  notes: Schema.optional(Schema.Record({ key: Schema.String, value: Text }))
})
type CitedFile = typeof CitedFile.Type

/** `tipos_acomodacion.json`: values sent as written, so each entry maps to itself (checked, like the other files). */
const TiposAcomodacionFile = Schema.Struct({
  ...CitedFile.fields,
  description: Text,
  entries: Schema.Record({ key: Text, value: Text })
}).pipe(
  Schema.filter((file) =>
    Object.entries(file.entries).every(([key, value]) => key === value) ||
    "the TRA gets tipo_acomodacion as written: every entry must map to itself"
  ),
  Schema.filter((file) =>
    Object.keys(file.notes ?? {}).every((key) => Object.hasOwn(file.entries, key)) || "a note must explain an entry"
  )
)

export interface PartnerFiles extends ReferenceFiles {
  readonly tiposAcomodacion: unknown
}

export const bundledPartnerFiles: PartnerFiles = { ...bundledFiles, tiposAcomodacion: tiposAcomodacionFile }

/** How a file cites its sources. */
interface Citations {
  readonly file: string
  readonly data: CitedFile
}

const citation = (source: typeof Cited.Type) => {
  const where = source.repo !== undefined && source.path !== undefined
    ? `${source.repo} ${source.path}${source.commit === undefined ? "" : ` @${source.commit.slice(0, 7)}`}`
    : source.url ?? source.document ?? ""
  return `${source.tag} ${where}`
}

/** `note` followed by where each source it names can be read. */
const cite = ({ data, file }: Citations, note: string) => {
  const named = data.sources.filter((source) => new RegExp(`\\b${source.tag}\\b`).test(note))
  const where = [...new Set(named.map(citation))]
  return `${file} ${data.version}: ${note}${where.length === 0 ? "" : ` (${where.join("; ")})`}`
}

/** What an operator's override in effect changed, before the bundled source it replaces. */
const overridden = (column: "tra" | "sire", entry: Entry | undefined) =>
  entry !== undefined && entry.overridden && entry.ignored === null
    ? [`${column}: override by the operator (bundled: ${entry.bundled === null ? "none" : JSON.stringify(entry.bundled)})`]
    : []

const withOverrides = (columns: ReadonlyArray<readonly ["tra" | "sire", Entry | undefined]>, bundledSource: string) =>
  [...columns.flatMap(([column, entry]) => overridden(column, entry)), bundledSource].join("; ")

export interface PartnerSources {
  readonly countries: Citations
  readonly documents: Citations
  readonly motivos: Citations
  readonly tiposAcomodacion: Citations & { readonly entries: Readonly<Record<string, string>> }
}

const decode = <A, I>(file: string, schema: Schema.Schema<A, I>, input: unknown) =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema)(input),
    (error) => `reference data ${file} is invalid: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
  )

/** The files' sources and versions; Left names a broken file (a defect at start, as for the other tables). */
export const partnerSources = (files: PartnerFiles = bundledPartnerFiles): Either.Either<PartnerSources, string> =>
  Either.gen(function*() {
    const tipos = yield* decode("tipos_acomodacion.json", TiposAcomodacionFile, files.tiposAcomodacion)
    return {
      countries: { file: "countries.json", data: yield* decode("countries.json", CitedFile, files.countries) },
      documents: { file: "documents.json", data: yield* decode("documents.json", CitedFile, files.documents) },
      motivos: { file: "motivos.json", data: yield* decode("motivos.json", CitedFile, files.motivos) },
      tiposAcomodacion: { file: "tipos_acomodacion.json", data: tipos, entries: tipos.entries }
    }
  })

/** The operator's entries of one of their tables, by key. */
const byKey = (entries: ReadonlyArray<Entry>, table: TableName) =>
  new Map(entries.filter((entry) => entry.table === table).map((entry) => [entry.key, entry] as const))

/**
 * One table as the partner API answers it, from `ReferenceStore.list`'s entries (all four operator tables) and
 * the files' sources. The TRA takes no country (its PMS body has none, domain notes §1.3) and SIRE neither a
 * motivo nor an accommodation type (its file's 13 columns, §2.3): those columns are null.
 */
export const partnerTable = (
  table: PartnerTableName,
  operator: ReadonlyArray<Entry>,
  sources: PartnerSources
): ReadonlyArray<PartnerEntry> => {
  switch (table) {
    case "countries": {
      const sire = byKey(operator, "sire-countries")
      return COUNTRY_CODES.map((key) => {
        const entry = sire.get(key)
        const note = entry?.sources ?? (entry?.bundled === null
          ? "no public source has a code"
          : "C12 (Migración's list) and C4 (the DIAN table) agree")
        const chosen = note.startsWith("the sources disagree") ? `${note}; C12's value is taken (Migración's own list)` : note
        return { key, tra: null, sire: entry?.value ?? null, source: withOverrides([["sire", entry]], cite(sources.countries, chosen)) }
      })
    }
    case "document_types": {
      const tra = byKey(operator, "tra-documents")
      const sire = byKey(operator, "sire-documents")
      return DocumentType.literals.map((key) => {
        const note = sources.documents.data.notes?.[key] ?? "spec tipo_documento → TRA label and SIRE document code"
        return {
          key,
          tra: tra.get(key)?.value ?? null,
          sire: sire.get(key)?.value ?? null,
          source: withOverrides([["tra", tra.get(key)], ["sire", sire.get(key)]], cite(sources.documents, note))
        }
      })
    }
    case "motivos": {
      const tra = byKey(operator, "tra-motivos")
      return Motivo.literals.map((key) => {
        const note = sources.motivos.data.notes?.[key] ??
          "the spec's value (S) is the TRA form's wording, as C10, C3, C5 and C4 write it"
        return {
          key,
          tra: tra.get(key)?.value ?? null,
          sire: null,
          source: withOverrides([["tra", tra.get(key)]], cite(sources.motivos, note))
        }
      })
    }
    case "tipos_acomodacion": {
      const file = sources.tiposAcomodacion
      return Object.keys(file.entries).map((key) => ({
        key,
        tra: file.entries[key] ?? null,
        sire: null,
        source: cite(
          file,
          file.data.notes?.[key] ?? "an option of the TRA web form as C5 copied it; sent as written (S: free text)"
        )
      }))
    }
  }
}
