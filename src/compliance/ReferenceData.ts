import { Data, Effect, Either, ParseResult, Schema } from "effect"
import { isCountryCode } from "../reservations/countries.ts"
import { DocumentType, Motivo } from "../reservations/Reservation.ts"
import countriesFile from "./reference/countries.json" with { type: "json" }
import documentsFile from "./reference/documents.json" with { type: "json" }
import motivosFile from "./reference/motivos.json" with { type: "json" }

/**
 * The reference tables of the authority reports (issue 5 item 1; domain notes §6.1 "keep all codes as versioned
 * data tables, each with its source noted"): ISO 3166 alpha-2 → SIRE country code, spec `tipo_documento` → TRA
 * label and SIRE code, spec `motivo` → TRA wording. The data lives in `./reference/*.json` (bundled by static
 * import: no file system at run time); each file names its sources by the tags of `domain/colombia-reporting.md`.
 *
 * A value that is not in a table is `undefined`, never a default: the caller keeps that guest's report waiting
 * with a warning naming the field (design §6.9). The tables are validated when the layer is built, so a broken
 * file stops the service at start (a defect), not at the first report.
 */

// ---------------------------------------------------------------------------------------------------------------
// File schemas
// ---------------------------------------------------------------------------------------------------------------

const Text = Schema.String.pipe(Schema.minLength(1))

/** `YYYY-MM-DD`: the day the table was last reviewed. */
const Version = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a YYYY-MM-DD date" })
)

/** Where a table's facts come from: a public repository file, a web page, or one of our own documents. */
const Source = Schema.Struct({
  tag: Text,
  description: Text,
  url: Schema.optional(Text),
  repo: Schema.optional(Text),
  path: Schema.optional(Text),
  commit: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9a-f]{40}$/))),
  document: Schema.optional(Text)
}).pipe(
  Schema.filter((s) =>
    s.url !== undefined || (s.repo !== undefined && s.path !== undefined) || s.document !== undefined ||
    "a source needs a url, a repo and path, or a document"
  )
)
const Sources = Schema.Array(Source).pipe(Schema.minItems(1))

/**
 * A SIRE numeric code as the file carries it: digits without leading zeros, at most 3 (countries.json
 * "padding": C12, C13 and C3's copy of the portal form write them unpadded; C4's "023" is refused so that a
 * padded value cannot slip in from one source).
 */
export const SireCode = Schema.String.pipe(
  Schema.pattern(/^[1-9]\d{0,2}$/, { message: () => "must be 1 to 3 digits without leading zeros" })
)

const IsoCountry = Schema.String.pipe(
  Schema.filter((key) => isCountryCode(key) || `${JSON.stringify(key)} is not an assigned ISO 3166-1 alpha-2 code`)
)

/** Source tag → the code that source gives (documentation; never used by the lookups). */
const Candidates = Schema.Record({ key: Text, value: Schema.String.pipe(Schema.pattern(/^\d{1,3}$/)) })

/** A table of values per source, documenting how a country was mapped (never read by the lookups). */
const Documented = Schema.Struct({
  description: Text,
  values: Schema.Record({ key: IsoCountry, value: Candidates })
})

const CountriesFile = Schema.Struct({
  version: Version,
  description: Text,
  rule: Text,
  padding: Text,
  sources: Sources,
  entries: Schema.Record({ key: IsoCountry, value: SireCode }),
  /** Where the sources disagree: each source's value (`entries` holds the chosen one; countries.json "rule"). */
  conflicts: Documented,
  /** Mapped from the one source that has the country. */
  single_source: Documented,
  unmapped: Schema.Struct({
    description: Text,
    no_source: Schema.Array(IsoCountry),
    /** What is known about an unmapped country, for the operator who has to confirm its code. */
    candidates: Schema.Record({ key: IsoCountry, value: Text }),
    not_iso: Schema.Record({ key: Text, value: Text })
  })
}).pipe(
  Schema.filter((file) => {
    const issues: Array<Schema.FilterIssue> = []
    const issue = (path: ReadonlyArray<string>, message: string) => issues.push({ path, message })
    // CO is the destination of every entry movement (design §6.13, Sire.ts): without it no file can be written.
    if (file.entries["CO"] !== "169") issue(["entries", "CO"], "Colombia must map to 169 (agreed by C4, C12, C13)")
    // Two countries with one code would report a guest as the wrong nationality.
    const seen = new Map<string, string>()
    for (const [iso, code] of Object.entries(file.entries)) {
      const other = seen.get(code)
      if (other !== undefined) issue(["entries", iso], `code ${code} is also the code of ${other}`)
      seen.set(code, iso)
    }
    for (const iso of file.unmapped.no_source) {
      if (Object.hasOwn(file.entries, iso)) issue(["unmapped", iso], `${iso} is both mapped and listed as unmapped`)
    }
    return issues
  })
).annotations({ identifier: "countries.json" })

const DocumentEntry = Schema.Struct({
  tra: Text,
  /** null: a Colombian document, whose holder never goes to SIRE (domain notes §2.5, §4.1). */
  sire: Schema.NullOr(SireCode)
})

/** A note must explain an entry that exists (a renamed entry must not leave its note behind). */
const notesMatchEntries = (
  file: { readonly entries: object; readonly notes: Readonly<Record<string, string>> }
): ReadonlyArray<Schema.FilterIssue> =>
  Object.keys(file.notes)
    .filter((key) => !Object.hasOwn(file.entries, key))
    .map((key) => ({ path: ["notes", key], message: "a note for an entry that does not exist" }))

/** A file of entries with notes on some of them (documents.json, motivos.json), under the common head. */
const NotedFile = <A extends object, I>(identifier: string, entries: Schema.Schema<A, I>) =>
  Schema.Struct({
    version: Version,
    description: Text,
    sources: Sources,
    entries,
    notes: Schema.Record({ key: Text, value: Text })
  }).pipe(Schema.filter(notesMatchEntries)).annotations({ identifier })

// A Record keyed by the spec's literal enum requires every value: a tipo_documento without an entry fails here.
const DocumentsFile = NotedFile("documents.json", Schema.Record({ key: DocumentType, value: DocumentEntry }))

const MotivosFile = NotedFile("motivos.json", Schema.Record({ key: Motivo, value: Text }))

// ---------------------------------------------------------------------------------------------------------------
// The lookups
// ---------------------------------------------------------------------------------------------------------------

export interface ReferenceData {
  /** The SIRE country code of an ISO alpha-2 code (`"US"` → `"249"`), or undefined when no trustworthy code exists. */
  readonly sireCountry: (iso2: string) => string | undefined
  /** The TRA `tipo_identificacion` label of a spec `tipo_documento`. */
  readonly traDocument: (tipo: string) => string | undefined
  /** The SIRE document code of a spec `tipo_documento`; undefined for Colombian documents and unknown values. */
  readonly sireDocument: (tipo: string) => string | undefined
  /** The TRA `motivo` wording of a spec `motivo`. */
  readonly traMotivo: (motivo: string) => string | undefined
  /** The `version` of each table, `+overrides` appended when overrides changed it: recorded with each report. */
  readonly versions: { readonly countries: string; readonly documents: string; readonly motivos: string }
}

/** The raw content of the three files, as parsed JSON. */
export interface ReferenceFiles {
  readonly countries: unknown
  readonly documents: unknown
  readonly motivos: unknown
}

export const bundledFiles: ReferenceFiles = { countries: countriesFile, documents: documentsFile, motivos: motivosFile }

/**
 * Deployment corrections layered over the tables, validated like the files: an operator who has checked the
 * portal's dropdown corrects a code (`{ countries: { RU: "676" } }`, the DIAN value of a conflict) or adds a
 * country no source has (countries.json "unmapped"). `null` removes an entry.
 */
export interface ReferenceOverrides {
  readonly countries?: Readonly<Record<string, string | null>>
  readonly documents?: Readonly<Record<string, { readonly tra?: string; readonly sire?: string | null } | null>>
  readonly motivos?: Readonly<Record<string, string | null>>
}

export class ReferenceDataError extends Data.TaggedError("ReferenceDataError")<{
  readonly file: "countries" | "documents" | "motivos"
  readonly message: string
}> {}

const decode = <A, I>(
  file: ReferenceDataError["file"],
  schema: Schema.Schema<A, I>,
  input: unknown
): Either.Either<A, ReferenceDataError> =>
  Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(input).pipe(
    Either.mapLeft((error) =>
      new ReferenceDataError({
        file,
        message: `reference data ${file}.json is invalid: ${
          ParseResult.ArrayFormatter.formatErrorSync(error)
            .map((issue) => `${issue.path.length === 0 ? "(file)" : issue.path.join(".")}: ${issue.message}`)
            .join("; ")
        }`
      })
    )
  )

const applied = <V>(
  entries: Readonly<Record<string, V>>,
  overrides: Readonly<Record<string, V | null>> | undefined
): Record<string, V> => {
  const merged: Record<string, V> = { ...entries }
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (value === null) delete merged[key]
    else merged[key] = value
  }
  return merged
}

const withEntries = (file: unknown, entries: object): unknown =>
  typeof file === "object" && file !== null ? { ...file, entries } : file

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const rawEntries = (file: unknown): Readonly<Record<string, unknown>> =>
  isObject(file) && isObject(file["entries"]) ? file["entries"] : {}

/**
 * An overridden country is no longer "unmapped": it leaves `no_source` (and its candidates), so that setting
 * the code of a country no source had is not refused as mapped twice.
 */
const withoutUnmapped = (file: unknown, keys: ReadonlyArray<string>): unknown => {
  if (!isObject(file) || !isObject(file["unmapped"])) return file
  const unmapped = file["unmapped"]
  const drop = (value: unknown) =>
    Array.isArray(value)
      ? value.filter((key) => !keys.includes(key))
      : isObject(value)
      ? Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)))
      : value
  return {
    ...file,
    unmapped: { ...unmapped, no_source: drop(unmapped["no_source"]), candidates: drop(unmapped["candidates"]) }
  }
}

/** A lookup that never answers for inherited keys (`"constructor"`, `"__proto__"`…). */
const lookup = <V>(entries: Readonly<Record<string, V>>) => {
  const map = new Map(Object.entries(entries))
  return (key: string): V | undefined => map.get(key)
}

/**
 * Validates `files` with `overrides` applied and builds the lookups: a pure function of its input.
 */
export const build = (
  files: ReferenceFiles = bundledFiles,
  overrides: ReferenceOverrides = {}
): Either.Either<ReferenceData, ReferenceDataError> =>
  Either.gen(function*() {
    const countriesInput = overrides.countries === undefined
      ? files.countries
      : withoutUnmapped(
        withEntries(files.countries, applied(rawEntries(files.countries), overrides.countries)),
        Object.keys(overrides.countries)
      )
    const documentsInput = overrides.documents === undefined ? files.documents : withEntries(
      files.documents,
      applied(
        rawEntries(files.documents),
        Object.fromEntries(
          Object.entries(overrides.documents).map(([tipo, change]) => {
            const current = rawEntries(files.documents)[tipo]
            return [tipo, change === null ? null : { ...(isObject(current) ? current : {}), ...change }]
          })
        )
      )
    )
    const motivosInput = overrides.motivos === undefined
      ? files.motivos
      : withEntries(files.motivos, applied(rawEntries(files.motivos), overrides.motivos))

    const countries = yield* decode("countries", CountriesFile, countriesInput)
    const documents = yield* decode("documents", DocumentsFile, documentsInput)
    const motivos = yield* decode("motivos", MotivosFile, motivosInput)

    const country = lookup<string>(countries.entries)
    const document = lookup(documents.entries)
    const motivo = lookup<string>(motivos.entries)
    const version = (base: string, changed: object | undefined) =>
      changed === undefined || Object.keys(changed).length === 0 ? base : `${base}+overrides`

    return {
      // ISO codes are stored upper case (spec); a lower-case lookup is still the same country.
      sireCountry: (iso2) => country(iso2.trim().toUpperCase()),
      traDocument: (tipo) => document(tipo)?.tra,
      sireDocument: (tipo) => document(tipo)?.sire ?? undefined,
      traMotivo: (m) => motivo(m),
      versions: {
        countries: version(countries.version, overrides.countries),
        documents: version(documents.version, overrides.documents),
        motivos: version(motivos.version, overrides.motivos)
      }
    } satisfies ReferenceData
  })

/** `build` as an Effect. */
export const make = (
  files: ReferenceFiles = bundledFiles,
  overrides: ReferenceOverrides = {}
): Effect.Effect<ReferenceData, ReferenceDataError> =>
  Effect.suspend(() => Either.match(build(files, overrides), { onLeft: Effect.fail, onRight: Effect.succeed }))

/** `build` for pure code and tests: throws the `ReferenceDataError`. */
export const makeSync = (files: ReferenceFiles = bundledFiles, overrides: ReferenceOverrides = {}): ReferenceData =>
  Either.getOrThrowWith(build(files, overrides), (error) => error)

