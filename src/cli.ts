import { AutoCorrect, CliConfig, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { FetchHttpClient, HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { BunContext, BunRuntime } from "@effect/platform-bun"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import type { RpcClientError } from "@effect/rpc/RpcClientError"
import {
  Array as Arr,
  Cause,
  Config,
  Console,
  Data,
  Effect,
  Either,
  Layer,
  Option,
  ParseResult,
  Predicate,
  Redacted,
  Schema,
  SchemaAST
} from "effect"
import * as NodeFs from "node:fs/promises"
import { AdminError } from "./admin/AdminError.ts"
import { AccountName, AdminRpcs, Limit, ReferenceNote, ReportListStatus } from "./admin/AdminRpcs.ts"
import { tokenFile } from "./admin/AdminToken.ts"
import { check, TableName, tables } from "./compliance/ReferenceTables.ts"
import * as AppConfig from "./config/AppConfig.ts"
import * as Database from "./db/Database.ts"
import { runMigrations } from "./db/migrations.ts"
import { Email, IsoDate } from "./reservations/Reservation.ts"
import { Environment } from "./shared/Environment.ts"

/**
 * The ops CLI (design §4): a client of the admin RPC, except `migrate`, which connects to DATABASE_URL.
 * Every command prints one JSON document on stdout. A failure is one line on stderr: the `{error, code}`
 * document, or `error: …` when stderr is a terminal; exit 2 when the command line was refused before anything
 * was sent, 1 otherwise (docs/decisions.md, "Ops CLI: help, colour and errors").
 */

class CliFailure extends Data.TaggedError("CliFailure")<{
  readonly code: string
  readonly message: string
  /** The command line itself was refused: nothing was sent or changed (exit 2). */
  readonly usage?: boolean
}> {}

const EXAMPLE_ID = "0b9f6f8e-3c1a-4d8e-9a55-2f4f1c7a9d10"

// ---------------------------------------------------------------------------------------------------------------
// Help text and option values

/** An option's help: what it is for, its default ("Required." if it has none) and an example. */
interface OptionHelp {
  readonly what: string
  readonly default: string
  readonly example: string
}

const describedAs = (help: OptionHelp) => <A>(self: Options.Options<A>) =>
  self.pipe(
    Options.withDescription(help.what),
    Options.withDescription(help.default === "Required." ? help.default : `Default: ${help.default}`),
    Options.withDescription(`Example: ${help.example}`)
  )

/** Values refused by the service's own schema: reported with the code the service would answer, `invalid_request`. */
const refusedByApi = new WeakSet<ValidationError.ValidationError>()

/**
 * A text option held to `schema` while the command line is parsed, so a bad value is refused before anything
 * is sent, in one line naming the option, the rule and the value. `rule` words it where the schema has no
 * message of its own; which values pass is always the schema's decision.
 */
const checkedBy = <A, I extends string>(
  name: string,
  schema: Schema.Schema<A, I>,
  options: { readonly rule?: string; readonly api?: boolean } = {}
) =>
  Options.mapEffect((text: string) =>
    Schema.decodeUnknown(schema)(text).pipe(
      Effect.mapError((error) => {
        const rule = options.rule ?? oneLine(ParseResult.TreeFormatter.formatErrorSync(error))
        const refusal = ValidationError.invalidValue(HelpDoc.p(`--${name} ${rule} (got ${JSON.stringify(text)})`))
        if (options.api !== false) refusedByApi.add(refusal)
        return refusal
      })
    )
  )

/** A number typed as text and held to `schema`; text that is no number gets `schema`'s own message. */
const numberHeldTo = (schema: Schema.Schema<number>) =>
  Schema.compose(Schema.NumberFromString, schema).annotations(
    Option.match(SchemaAST.getMessageAnnotation(schema.ast), { onNone: () => ({}), onSome: (message) => ({ message }) })
  )

/** `reports list --limit`. */
const ReportPageLimit = Schema.Int.pipe(Schema.between(1, 1000))

const environmentRule = `must be ${Environment.literals.join(" or ")}`

/** The admin URL as typed: absolute http(s), so `localhost:3000` (a URL with scheme "localhost:") is refused. */
const HttpUrl = Schema.String.pipe(
  Schema.filter((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    message: () => "must be an http:// or https:// URL"
  })
)

/** A required option naming one record by its id, `--name PSEUDO_NAME`. */
const idOption = (name: string, pseudoName: string, what: string) =>
  Options.text(name).pipe(
    Options.withPseudoName(pseudoName),
    describedAs({ what, default: "Required.", example: `--${name} ${EXAMPLE_ID}` })
  )

const accountOption = idOption("account", "ACCOUNT_ID", "The account's id: account_id as printed by accounts create.")

const optionalText = (name: string, pseudoName: string, help: OptionHelp) =>
  Options.text(name).pipe(Options.withPseudoName(pseudoName), describedAs(help), Options.optional)

const flag = (name: string, help: Omit<OptionHelp, "example">) =>
  Options.boolean(name).pipe(describedAs({ ...help, example: `--${name}` }))

/** A per-key limit per minute of `accounts limits`, held to the admin RPC's `Limit`. */
const limitOption = (name: string, what: string, spec: number) =>
  Options.text(name).pipe(
    Options.withPseudoName("N"),
    describedAs({
      what: `${what} per minute, for each of the account's keys (the spec's default is ${spec}).`,
      default: "unchanged",
      example: `--${name} ${spec * 2}`
    }),
    checkedBy(name, numberHeldTo(Limit)),
    Options.optional
  )

const environmentOption = (help: OptionHelp) =>
  Options.text("env").pipe(
    Options.withPseudoName(Environment.literals.join("|")),
    describedAs(help),
    checkedBy("env", Environment, { rule: environmentRule })
  )

/** One block per command: what it does, what it prints, an example; the first sentence is its summary. */
interface About {
  readonly summary: string
  readonly details?: string
  readonly prints: string
  readonly example: string
}

/** Each command's summary, for the overviews in the help of `cli` and of each group. */
const summaries = new WeakMap<object, string>()

const documented = (about: About) => <Name extends string, R, E, A>(command: Command.Command<Name, R, E, A>) => {
  const described = Command.withDescription(
    command,
    HelpDoc.blocks([
      HelpDoc.p(about.summary),
      ...(about.details === undefined ? [] : [HelpDoc.p(about.details)]),
      HelpDoc.p(`Prints ${about.prints}.`),
      HelpDoc.p(`Example: ${about.example}`)
    ])
  )
  summaries.set(described, about.summary)
  return described
}

// ---------------------------------------------------------------------------------------------------------------
// Calling the service

const root = Command.make("cli", {
  url: Options.text("url").pipe(
    Options.withPseudoName("URL"),
    describedAs({
      what: "Base URL of the running service; the admin RPC is URL/rpc/admin.",
      default: "$ADMIN_URL, else http://127.0.0.1:$PORT with the service's PORT (3000 when PORT is unset)",
      example: "--url http://10.0.4.7:8080"
    }),
    checkedBy("url", HttpUrl, { api: false }),
    Options.optional
  ),
  token: Options.text("token").pipe(
    Options.withPseudoName("TOKEN"),
    describedAs({
      what: "The admin token (ADMIN_TOKEN of the service).",
      default: "$ADMIN_TOKEN, else the file DATA_DIR/admin-token the service wrote at its first start "
        + "(DATA_DIR defaults to ./data)",
      example: "--token \"$(cat /srv/partner/data/admin-token)\""
    }),
    Options.optional
  )
})

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** ADMIN_TOKEN, else the token file the service wrote in DATA_DIR (design §4). */
const configuredToken = Effect.gen(function*() {
  const fromEnv = yield* Config.option(Config.string("ADMIN_TOKEN"))
  if (Option.isSome(fromEnv) && fromEnv.value.trim() !== "") return fromEnv.value.trim()
  const file = tokenFile(yield* Config.string("DATA_DIR").pipe(Config.withDefault("./data")))
  return yield* Effect.tryPromise(() => NodeFs.readFile(file, "utf8")).pipe(
    Effect.map((t) => t.trim()),
    Effect.mapError(() =>
      new CliFailure({
        code: "admin_token_missing",
        message: `no admin token: pass --token, set ADMIN_TOKEN, or run where ${file} exists`
      })
    )
  )
})

/** The admin URL, and where it came from so that a failure to reach it says how to change it. */
interface AdminUrl {
  readonly url: string
  readonly origin: string
}

const adminUrl = (flag: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isSome(flag)) {
      return { url: flag.value, origin: "the URL comes from --url (ADMIN_URL is not used when --url is given)" }
    }
    const fromEnv = yield* Config.option(Config.string("ADMIN_URL"))
    if (Option.isSome(fromEnv) && fromEnv.value.trim() !== "") {
      const url = fromEnv.value.trim()
      if (!Schema.is(HttpUrl)(url)) {
        return yield* new CliFailure({
          code: "invalid_arguments",
          message: `ADMIN_URL must be an http:// or https:// URL (got ${JSON.stringify(url)})`,
          usage: true
        })
      }
      return { url, origin: "the URL comes from ADMIN_URL: change it or pass --url" }
    }
    // Design §4: the default is the service's own default address on this host, on the same PORT.
    const port = Option.filter(yield* Config.option(Config.string("PORT")), (p) => p.trim() !== "")
    const text = Option.getOrElse(port, () => "3000").trim()
    if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
      return yield* new CliFailure({
        code: "invalid_arguments",
        message: `PORT must be a port number from 1 to 65535 (got ${JSON.stringify(text)}); `
          + "or say where the service is with --url or ADMIN_URL",
        usage: true
      })
    }
    const assumed = Option.isSome(port) ? `PORT=${text}` : "PORT unset, so 3000"
    return {
      url: `http://127.0.0.1:${text}`,
      origin: `no --url or ADMIN_URL was given, so the URL is http://127.0.0.1:$PORT (${assumed}): `
        + "pass --url, set ADMIN_URL, or set PORT to the service's port on this host"
    }
  })

/** Why the admin RPC could not be called, in a few words. */
const unreachableReason = (error: RpcClientError): string => {
  const cause = error.cause
  if (HttpClientError.isHttpClientError(cause)) {
    if (cause._tag === "ResponseError") {
      return `it answered HTTP ${cause.response.status}, not as the admin RPC (is this the service's address?)`
    }
    const code = Predicate.hasProperty(cause.cause, "code") ? cause.cause.code : undefined
    if (code === "ECONNREFUSED") return "connection refused (nothing listens there)"
    if (code === "ENOTFOUND") return "host not found"
    if (code !== undefined) return String(code)
  }
  return error.message
}

/** Calls the admin RPC of the running service with the global `--url` / `--token`. */
const withAdmin = <A>(
  use: (client: RpcClient.FromGroup<typeof AdminRpcs, RpcClientError>) => Effect.Effect<A, AdminError | RpcClientError>
) =>
  Effect.gen(function*() {
    const globals = yield* root
    const where: AdminUrl = yield* adminUrl(globals.url)
    const token = Option.isSome(globals.token) ? globals.token.value : yield* configuredToken
    const http = Layer.effect(
      HttpClient.HttpClient,
      Effect.map(HttpClient.HttpClient, (client) =>
        client.pipe(HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.make(token)))))
    ).pipe(Layer.provide(FetchHttpClient.layer))
    const endpoint = `${where.url.replace(/\/+$/, "")}/rpc/admin`
    const protocol = RpcClient.layerProtocolHttp({ url: endpoint }).pipe(
      Layer.provide([http, RpcSerialization.layerJson])
    )
    const unreachable = (reason: string) =>
      new CliFailure({
        code: "admin_unreachable",
        message: `cannot call the admin RPC at ${endpoint}: ${reason}; ${where.origin}`
      })
    const result = yield* RpcClient.make(AdminRpcs).pipe(
      Effect.flatMap(use),
      Effect.scoped,
      Effect.provide(protocol),
      Effect.catchTag("RpcClientError", (error) => Effect.fail(unreachable(unreachableReason(error)))),
      // The client checks payloads before sending: a field no option checks (e.g. a long --external-id).
      Effect.catchAllDefect((defect) =>
        Effect.fail(
          ParseResult.isParseError(defect)
            ? new CliFailure({ code: "invalid_request", message: fieldErrors(defect), usage: true })
            : unreachable(String(defect))
        )
      )
    )
    yield* print(result)
  })

/** A payload the RPC client refused, one line: `field: message; …`, the first problem of each field. */
const fieldErrors = (error: ParseResult.ParseError) => {
  const byField = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const field = issue.path.join(".")
    if (!byField.has(field)) byField.set(field, field === "" ? issue.message : `${field}: ${issue.message}`)
  }
  return Array.from(byField.values()).join("; ")
}

const value = <A>(option: Option.Option<A>) => Option.getOrUndefined(option)

// ---------------------------------------------------------------------------------------------------------------
// Commands

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    const databaseUrl = yield* Config.option(Config.redacted("DATABASE_URL"))
    if (Option.isNone(databaseUrl) || Redacted.value(databaseUrl.value).trim() === "") {
      return yield* new CliFailure({
        code: "database_url_required",
        message: "migrate applies migrations on DATABASE_URL; it is not set (the embedded database migrates at start-up)"
      })
    }
    const applied = yield* runMigrations.pipe(
      Effect.provide(Database.layer.pipe(Layer.provide(AppConfig.layer)))
    )
    yield* print({ applied })
  })).pipe(documented({
    summary: "Apply the pending database migrations on DATABASE_URL.",
    details: "The service also migrates at start-up; run this in a deploy step before new instances start. "
      + "It connects to the database itself, not to the service, and needs DATABASE_URL.",
    prints: "{applied: [migration names]} ([] when there was nothing to do)",
    example: "DATABASE_URL=postgres://app@db.internal:5432/partner cli migrate"
  }))

const accountsCreate = Command.make(
  "create",
  {
    name: Options.text("name").pipe(
      Options.withPseudoName("NAME"),
      describedAs({
        what: "The account's name, as operators and the account panel show it.",
        default: "Required.",
        example: "--name \"Hotelera Caribe\""
      }),
      checkedBy("name", AccountName, { rule: "must not be empty nor start or end with a space" })
    ),
    email: Options.text("email").pipe(
      Options.withPseudoName("EMAIL"),
      describedAs({
        what: "The account holder's e-mail address (the API's e-mail rule).",
        default: "Required.",
        example: "--email ops@caribe.co"
      }),
      checkedBy("email", Email)
    )
  },
  ({ email, name }) => withAdmin((client) => client.CreateAccount({ name, email }))
).pipe(documented({
  summary: "Create a partner account.",
  prints: "{account_id, name, email}",
  example: "cli accounts create --name \"Hotelera Caribe\" --email ops@caribe.co"
}))

const accountsLimits = Command.make(
  "limits",
  {
    account: accountOption,
    reads: limitOption("reads", "Reads (queries, properties, delivery history)", 120),
    writes: limitOption("writes", "Writes (create, register, modify, cancel, map, manage webhooks)", 60),
    tests: limitOption("tests", "Webhook test events", 10),
    reset: flag("reset", { what: "Back to the spec's 120 reads, 60 writes and 10 tests.", default: "off" })
  },
  (o) =>
    withAdmin((client) =>
      client.SetLimits({
        account_id: o.account,
        reads: value(o.reads),
        writes: value(o.writes),
        tests: value(o.tests),
        reset: o.reset
      })
    )
).pipe(documented({
  summary: "Set an account's rate limits per key per minute; the ones not given stay as they are.",
  prints: "{account_id, limits: {reads, writes, tests}}",
  example: `cli accounts limits --account ${EXAMPLE_ID} --reads 300 --writes 120`
}))

const accountsEnableLive = Command.make(
  "enable-live",
  { account: accountOption },
  (o) => withAdmin((client) => client.EnableLive({ account_id: o.account }))
).pipe(documented({
  summary: "Let an account that signed up in the panel (PANEL_SIGNUP=open) create live keys.",
  prints: "{account_id, live_enabled: true}",
  example: `cli accounts enable-live --account ${EXAMPLE_ID}`
}))

const sandboxCreate = Command.make(
  "create",
  { account: accountOption },
  (o) => withAdmin((client) => client.CreateSandbox({ account_id: o.account }))
).pipe(documented({
  summary: "Create an account's test environment: two test properties and a first test key.",
  details: "Both properties report to TRA and SIRE (simulated); the second also requires the contract "
    + "signature and document photos at check-in.",
  prints: "{api_key, key_id, properties: [Property]}; the key is shown only here",
  example: `cli sandbox create --account ${EXAMPLE_ID}`
}))

const keysCreate = Command.make(
  "create",
  {
    account: accountOption,
    env: environmentOption({
      what: "test: a sandbox key (svc_test_…, simulated reports); live: a production key (svc_live_…).",
      default: "Required.",
      example: "--env test"
    })
  },
  (o) => withAdmin((client) => client.CreateKey({ account_id: o.account, environment: o.env }))
).pipe(documented({
  summary: "Create an API key; at most 3 active keys per environment.",
  prints: "{key_id, api_key, environment}; the key is shown only here, keep it",
  example: `cli keys create --account ${EXAMPLE_ID} --env live`
}))

const keysRevoke = Command.make(
  "revoke",
  {
    key: idOption("key", "KEY_ID", "The key's key_id (from keys create or keys list), not the key itself.")
  },
  (o) => withAdmin((client) => client.RevokeKey({ key_id: o.key }))
).pipe(documented({
  summary: "Revoke an API key: it is refused (401) at once.",
  details: "Revoking a key twice keeps the first revoked_at.",
  prints: "{key_id, revoked_at}",
  example: `cli keys revoke --key ${EXAMPLE_ID}`
}))

const keysList = Command.make("list", { account: accountOption }, (o) =>
  withAdmin((client) => client.ListKeys({ account_id: o.account }))).pipe(documented({
    summary: "List an account's API keys, revoked ones included, oldest first; never the keys themselves.",
    prints: "{keys: [{key_id, environment, prefix, name, created_at, last_used_at, revoked_at}]}",
    example: `cli keys list --account ${EXAMPLE_ID}`
  }))

/**
 * Flags shared by `properties create` and `properties update`; on update, omitted = unchanged, so only the
 * defaults differ in their help.
 */
const propertyFlags = (command: "create" | "update") => {
  const unset = command === "create" ? "none" : "unchanged"
  const onCreate = (created: string) => command === "create" ? created : "unchanged"
  const updateOnly = (what: string) => `${what} Only useful on update.`
  return {
    rnt: optionalText("rnt", "RNT", {
      what: "The property's Registro Nacional de Turismo number (rnt_id); partners may name the property by it.",
      default: unset,
      example: "--rnt 98765"
    }),
    externalId: optionalText("external-id", "ID", {
      what: "The property's id in the partner's PMS (property_external_id in the API), unique per account "
        + "and environment, 1 to 120 characters.",
      default: unset,
      example: "--external-id PMS-42"
    }),
    internalName: optionalText("internal-name", "NAME", {
      what: "A name for the partner's own use (internal_name).",
      default: unset,
      example: "--internal-name muralla-centro"
    }),
    noTra: flag("no-tra", {
      what: "Do not report this property's guests to the TRA (MinCIT).",
      default: onCreate("reported")
    }),
    tra: flag("tra", { what: updateOnly("Report this property's guests to the TRA again."), default: "unchanged" }),
    noSire: flag("no-sire", {
      what: "Do not report this property's foreign guests to SIRE (Migración Colombia).",
      default: onCreate("reported")
    }),
    sire: flag("sire", {
      what: updateOnly("Report this property's foreign guests to SIRE again."),
      default: "unchanged"
    }),
    contract: flag("contract", {
      what: "Guests must sign the contract on the check-in page.",
      default: onCreate("not required")
    }),
    noContract: flag("no-contract", { what: updateOnly("Guests no longer sign the contract."), default: "unchanged" }),
    photos: flag("photos", {
      what: "Guests must upload photos of their identity documents on the check-in page.",
      default: onCreate("not required")
    }),
    noPhotos: flag("no-photos", { what: updateOnly("Document photos are no longer required."), default: "unchanged" }),
    checkinDisabled: flag("checkin-disabled", {
      what: "Turn the guest check-in page off for this property.",
      default: onCreate("on")
    }),
    checkinEnabled: flag("checkin-enabled", {
      what: updateOnly("Turn the check-in page back on."),
      default: "unchanged"
    }),
    traToken: optionalText("tra-token", "TOKEN", {
      what: "The property's token for the TRA web service; stored, never printed back.",
      default: unset,
      example: "--tra-token \"$TRA_TOKEN\""
    }),
    sireHotelCode: optionalText("sire-hotel-code", "CODE", {
      what: "The hotel's code at Migración Colombia (SIRE), digits.",
      default: unset,
      example: "--sire-hotel-code 123456"
    }),
    sireCityCode: optionalText("sire-city-code", "CODE", {
      what: "The DIVIPOLA code of the property's city, for SIRE.",
      default: unset,
      example: "--sire-city-code 13001"
    }),
    establishmentName: optionalText("establishment-name", "NAME", {
      what: "The establishment's name as registered with the TRA.",
      default: onCreate("the property's name"),
      example: "--establishment-name \"Muralla SAS\""
    }),
    tipoAcomodacion: optionalText("tipo-acomodacion", "TIPO", {
      what: "The accommodation type reported to the TRA when a registration does not give one.",
      default: onCreate("Sencilla for one guest, Doble otherwise"),
      example: "--tipo-acomodacion Suite"
    }),
    defaultRoom: optionalText("default-room", "ROOM", {
      what: "The TRA numero_habitacion sent when a reservation has no room_number (otherwise sent blank, with a "
        + "tra.warning).",
      default: unset,
      example: "--default-room 101"
    })
  }
}

/** A pair of flags → true, false, or unchanged; both at once is a usage error. */
const toggle = (on: boolean, off: boolean, names: string) =>
  on && off
    ? Effect.fail(
      new CliFailure({ code: "invalid_arguments", message: `${names}: pass one of the two, not both`, usage: true })
    )
    : Effect.succeed(off ? false : on ? true : undefined)

type PropertyFlagValues = Command.Command.ParseConfig<ReturnType<typeof propertyFlags>>

const settingsOf = (o: PropertyFlagValues) =>
  Effect.all({
    reports_tra: toggle(o.tra, o.noTra, "--tra / --no-tra"),
    reports_sire: toggle(o.sire, o.noSire, "--sire / --no-sire"),
    requires_contract_signature: toggle(o.contract, o.noContract, "--contract / --no-contract"),
    requires_document_photos: toggle(o.photos, o.noPhotos, "--photos / --no-photos"),
    checkin_enabled: toggle(o.checkinEnabled, o.checkinDisabled, "--checkin-enabled / --checkin-disabled")
  }).pipe(Effect.map((toggles) => ({
    ...toggles,
    rnt_id: value(o.rnt),
    external_id: value(o.externalId),
    internal_name: value(o.internalName),
    tra_token: Option.getOrUndefined(Option.map(o.traToken, Redacted.make)),
    sire_hotel_code: value(o.sireHotelCode),
    sire_city_code: value(o.sireCityCode),
    establishment_name: value(o.establishmentName),
    tipo_acomodacion: value(o.tipoAcomodacion),
    default_room: value(o.defaultRoom)
  })))

const propertyName = (help: OptionHelp) =>
  Options.text("name").pipe(
    Options.withPseudoName("NAME"),
    describedAs(help),
    checkedBy("name", AccountName, { rule: "must not be empty nor start or end with a space" })
  )

const propertiesCreate = Command.make(
  "create",
  {
    account: accountOption,
    name: propertyName({
      what: "The property's name, as the partner API and the check-in page show it.",
      default: "Required.",
      example: "--name \"Hotel Muralla\""
    }),
    env: environmentOption({
      what: "test: a sandbox property (simulated reports); live: a real one. Fixed at creation.",
      default: "live",
      example: "--env test"
    }).pipe(Options.withDefault("live" as const)),
    ...propertyFlags("create")
  },
  (o) =>
    Effect.flatMap(settingsOf(o), (settings) =>
      withAdmin((client) =>
        client.CreateProperty({ account_id: o.account, name: o.name, environment: o.env, ...settings })
      ))
).pipe(documented({
  summary: "Create a property (a hotel) of an account, with its reporting and check-in settings.",
  details: "By default it reports to TRA and SIRE, requires neither contract nor photos, and has check-in on.",
  prints: "the spec's Property plus environment (never the TRA token)",
  example: `cli properties create --account ${EXAMPLE_ID} --name "Hotel Muralla" --rnt 98765 `
    + "--sire-hotel-code 123456 --sire-city-code 13001"
}))

// No --env here: a property's environment is fixed at creation.
const propertiesUpdate = Command.make(
  "update",
  {
    property: idOption(
      "property",
      "PROPERTY_ID",
      "The property's property_id (from properties create or the partner API)."
    ),
    name: propertyName({
      what: "A new name for the property.",
      default: "unchanged",
      example: "--name \"Hotel Muralla\""
    }).pipe(Options.optional),
    ...propertyFlags("update")
  },
  (o) =>
    Effect.flatMap(settingsOf(o), (settings) =>
      withAdmin((client) => client.UpdateProperty({ property_id: o.property, name: value(o.name), ...settings })))
).pipe(documented({
  summary: "Change a property's settings; everything not given stays as it is.",
  details: "Each setting that is switched by a flag has its opposite (--tra / --no-tra, --checkin-enabled / "
    + "--checkin-disabled, …); giving both is refused.",
  prints: "the Property plus environment",
  example: `cli properties update --property ${EXAMPLE_ID} --checkin-disabled --name "Hotel Muralla Nueva"`
}))

const reportsRun = Command.make(
  "run",
  {
    date: Options.text("date").pipe(
      Options.withPseudoName("YYYY-MM-DD"),
      describedAs({
        what: "Run every report due on or before this date (a Bogotá calendar date).",
        default: "today in Bogotá",
        example: "--date 2026-03-05"
      }),
      checkedBy("date", IsoDate),
      Options.optional
    )
  },
  (o) => withAdmin((client) => client.RunReports({ date: value(o.date) }))
).pipe(documented({
  summary: "Run now every live TRA and SIRE report that is due, without waiting for the next scheduled run.",
  details: "Backoff waits after failures are skipped too.",
  prints: "{date, reservations, tra: {sent, accepted, rejected}, sire: {sent, accepted, rejected}}",
  example: "cli reports run --date 2026-03-05"
}))

const sireFiles = Command.make(
  "files",
  {
    property: optionalText("property", "PROPERTY_ID", {
      what: "Only this property's files.",
      default: "every property",
      example: `--property ${EXAMPLE_ID}`
    })
  },
  (o) => withAdmin((client) => client.SireFiles({ property_id: value(o.property) }))
).pipe(documented({
  summary: "List the SIRE files to upload in Migración Colombia's portal (SIRE_MODE=manual), newest first.",
  prints: "{files: [{file_id, property_id, name, created_at, lines, status, content}]}",
  example: `cli sire files --property ${EXAMPLE_ID}`
}))

const sireConfirm = Command.make(
  "confirm",
  {
    file: idOption("file", "FILE_ID", "The file's file_id, from sire files.")
  },
  (o) => withAdmin((client) => client.ConfirmSireFile({ file_id: o.file }))
).pipe(documented({
  summary: "Confirm that a SIRE file was uploaded in Migración Colombia's portal: its movements become accepted.",
  prints: "{file_id, status}",
  example: `cli sire confirm --file ${EXAMPLE_ID}`
}))

const reportsList = Command.make(
  "list",
  {
    status: Options.text("status").pipe(
      Options.withPseudoName(ReportListStatus.literals.join("|")),
      describedAs({
        what: "Only reports in this state: pending (not sent yet: not due, held by a configuration warning, or "
          + "waiting for a retry) or error (failed; see reports retry).",
        default: "both",
        example: "--status error"
      }),
      checkedBy("status", ReportListStatus, { rule: `must be ${ReportListStatus.literals.join(" or ")}` }),
      Options.optional
    ),
    overdue: flag("overdue", {
      what: "Only reports past their due date (sends_on before today in Bogotá) that are not success.",
      default: "off"
    }),
    property: optionalText("property", "PROPERTY_ID", {
      what: "Only this property's reports.",
      default: "every property",
      example: `--property ${EXAMPLE_ID}`
    }),
    limit: Options.text("limit").pipe(
      Options.withPseudoName("N"),
      describedAs({ what: "Reports per page, from 1 to 1000.", default: "100", example: "--limit 500" }),
      checkedBy("limit", numberHeldTo(ReportPageLimit), { rule: "must be a whole number from 1 to 1000" }),
      Options.optional
    ),
    cursor: optionalText("cursor", "CURSOR", {
      what: "The next page: next_cursor of the page before (null on the last page).",
      default: "the first page",
      example: "--cursor eyJzZW5kc19vbiI6…"
    })
  },
  (o) =>
    withAdmin((client) =>
      client.ListReports({
        status: value(o.status),
        overdue: o.overdue,
        property_id: value(o.property),
        limit: value(o.limit),
        cursor: value(o.cursor)
      })
    )
).pipe(documented({
  summary: "List the live TRA and SIRE reports that are waiting or failed, by due date.",
  details: "Each reservation has up to three reports: tra, sire_entry (the arrival) and sire_exit (the "
    + "departure). A report waiting for a configuration fix (a TRA token, a SIRE hotel code, a country with no "
    + "SIRE code: see reference set) stays pending with a warning naming what to fix; one waiting for an answer says "
    + "so (\"waiting: …\"). A cancelled reservation's report that was in flight ends in error: the authority may "
    + "hold it. A page holds --limit reports; pass its next_cursor as --cursor for the next.",
  prints: "{reports: [{reservation_id, external_id, account_id, property_id, authority, status, sends_on, warning, "
    + "overdue}], next_cursor}",
  example: "cli reports list --status error --overdue"
}))

const reportsRetry = Command.make(
  "retry",
  {
    reservation: idOption(
      "reservation",
      "RESERVATION_ID",
      "The reservation's id: reservation_id in reports list and in the partner API."
    )
  },
  (o) => withAdmin((client) => client.RetryReports({ reservation_id: o.reservation }))
).pipe(documented({
  summary: "Re-queue a reservation's reports that are in error, once the cause is fixed.",
  details: "They go back to pending and the next report run (or reports run) sends them again: for the TRA "
    + "only the guests it rejected, for SIRE only the rejected entry or exit movements; accepted guests are "
    + "never sent twice. A cancelled reservation's TRA and SIRE entry are not retried (only its exit). "
    + "Fails with nothing_to_retry when no report is in error.",
  prints: "{reservation_id, requeued: [{authority, guests}], reports: [the reservation's three reports as in "
    + "reports list]}",
  example: `cli reports retry --reservation ${EXAMPLE_ID}`
}))

const tableRule = `must be one of: ${TableName.literals.join(", ")}`

const tableOption = (help: Omit<OptionHelp, "example">) =>
  Options.text("table").pipe(
    Options.withPseudoName("TABLE"),
    describedAs({ ...help, example: "--table sire-countries" }),
    checkedBy("table", TableName, { rule: tableRule })
  )

const tablesHelp = TableName.literals.map((name) => `${name}: ${tables[name].description}`).join("; ")

const keyOption = (what: string) =>
  Options.text("key").pipe(
    Options.withPseudoName("KEY"),
    describedAs({
      what: `${what} An ISO 3166-1 alpha-2 code in capitals for sire-countries, a tipo_documento (Pasaporte, `
        + "C.E, PPT…) for the document tables, a motivo as the partner API writes it for tra-motivos.",
      default: "Required.",
      example: "--key RU"
    })
  )

/** A refused value found by a table's schema, before any call: the same answer as a value an option refuses. */
const refusedValue = (path: string, option: string, table: TableName, rule: string, got: string) =>
  new CliFailure({
    code: "invalid_request",
    message: `--${option} for ${table} ${rule} (got ${JSON.stringify(got)}); see cli reference ${path} --help`,
    usage: true
  })

/** `--key` held to its table's key schema (the one the service applies). */
const checkedKey = (path: string, table: TableName, key: string) =>
  Either.match(check(tables[table].key, key), {
    onLeft: (rule) => Effect.fail(refusedValue(path, "key", table, rule, key)),
    onRight: Effect.succeed
  })

const referenceList = Command.make(
  "list",
  {
    table: tableOption({ what: `Only this table. ${tablesHelp}.`, default: "every table" }).pipe(Options.optional),
    key: Options.text("key").pipe(
      Options.withPseudoName("KEY"),
      describedAs({
        what: "Only this key of --table (which it needs: PPT is a key of two tables).",
        default: "every key",
        example: "--key RU"
      }),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function*() {
      if (Option.isSome(o.key) && Option.isNone(o.table)) {
        return yield* new CliFailure({
          code: "invalid_arguments",
          message: "--key needs --table (a key such as PPT is in two tables); see cli reference list --help",
          usage: true
        })
      }
      if (Option.isSome(o.key) && Option.isSome(o.table)) yield* checkedKey("list", o.table.value, o.key.value)
      yield* withAdmin((client) => client.ListReference({ table: value(o.table), key: value(o.key) }))
    })
).pipe(documented({
  summary: "Show the reference tables the reports are built with: bundled values and operators' overrides.",
  details: "Every key of each table, with the value the next report run sends (null: none, so reports that need "
    + "it wait with a warning), the bundled value and where it comes from (sources: each source's code where "
    + "they disagree), and whether an override changes it. An override that the bundled data of this release "
    + "contradicts is not in effect; ignored says why.",
  prints: "{entries: [{table, key, value, bundled, sources, overridden, note, updated_at, ignored}]}",
  example: "cli reference list --table sire-countries --key RU"
}))

const referenceSet = Command.make(
  "set",
  {
    table: tableOption({ what: `The table. ${tablesHelp}.`, default: "Required." }),
    key: keyOption("The key whose value to set."),
    value: optionalText("value", "VALUE", {
      what: "The value to send from the next report run on: a SIRE code is 1 to 3 digits without leading zeros, "
        + "and no two countries share one; a TRA label or wording is text. Checked like the bundled data; "
        + "give --value or --unmapped.",
      default: "none (then --unmapped is required)",
      example: "--value 673"
    }),
    unmapped: flag("unmapped", {
      what: "Withdraw the key's value instead (sire-countries and sire-documents only, which have gaps): for a "
        + "bundled code found to be wrong when the right one is not known yet. Reports that need it then wait "
        + "with a warning rather than report a guest under another country's code.",
      default: "off"
    }),
    note: Options.text("note").pipe(
      Options.withPseudoName("TEXT"),
      describedAs({
        what: "Why, or where the value comes from (up to 500 characters); kept with the override and in the audit "
          + "log.",
        default: "none",
        example: "--note \"SIRE portal dropdown, checked 2026-11-30\""
      }),
      checkedBy("note", ReferenceNote),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function*() {
      const table = tables[o.table]
      if (Option.isSome(o.value) === o.unmapped) {
        return yield* new CliFailure({
          code: "invalid_arguments",
          message: "--value / --unmapped: pass one of the two; see cli reference set --help",
          usage: true
        })
      }
      yield* checkedKey("set", o.table, o.key)
      if (o.unmapped && !table.gaps) {
        return yield* new CliFailure({
          code: "invalid_request",
          message: `--unmapped: ${o.table} needs a value for every key (the TRA refuses a report without it); set `
            + "the right value instead; see cli reference set --help",
          usage: true
        })
      }
      if (Option.isSome(o.value)) {
        const typed = o.value.value
        yield* Either.match(check(table.value, typed), {
          onLeft: (rule) => Effect.fail(refusedValue("set", "value", o.table, rule, typed)),
          onRight: () => Effect.void
        })
      }
      yield* withAdmin((client) =>
        client.SetReference({ table: o.table, key: o.key, value: value(o.value) ?? null, note: value(o.note) })
      )
    })
).pipe(documented({
  summary: "Override one value of a reference table; in effect from the next report run, on every instance.",
  details: "Stored in the database and written to the audit log (table, key, old and new value, note). A value "
    + "that the bundled data could not hold (a SIRE code of the wrong shape, or another country's code) is "
    + "refused and nothing is stored. Reports waiting for an unmapped value are sent by the next run. reference "
    + "unset goes back to the bundled value.",
  prints: "the key as reference list shows it, plus previous (the value before)",
  example: "cli reference set --table sire-countries --key RU --value 673 --note \"confirmed on the SIRE portal\""
}))

const referenceUnset = Command.make(
  "unset",
  {
    table: tableOption({ what: `The table. ${tablesHelp}.`, default: "Required." }),
    key: keyOption("The key whose override to remove.")
  },
  (o) =>
    Effect.gen(function*() {
      yield* checkedKey("unset", o.table, o.key)
      yield* withAdmin((client) => client.UnsetReference({ table: o.table, key: o.key }))
    })
).pipe(documented({
  summary: "Remove an override: the key has its bundled value again (or none) from the next report run.",
  details: "Audited like reference set. Fails with override_not_found when the key has no override.",
  prints: "the key as reference list shows it, plus previous (the value before)",
  example: "cli reference unset --table sire-countries --key RU"
}))

const secretsRotate = Command.make("rotate", {}, () => withAdmin((client) => client.RotateSecrets())).pipe(
  documented({
    summary: "Re-encrypt every stored secret (TRA tokens, webhook signing secrets) under the current SECRETS_KEY.",
    details: "Rotation: restart every instance with SECRETS_KEY=<new key> and SECRETS_KEY_PREVIOUS=<old key>, run "
      + "this once, then restart with the new key alone. Secrets already under the current key are left as they "
      + "are, so a second run prints 0. A secret under a key neither variable holds fails with "
      + "secret_unreadable, naming it; the others are re-encrypted all the same.",
    prints: "{reencrypted: N}",
    example: "cli secrets rotate"
  })
)

// ---------------------------------------------------------------------------------------------------------------
// The command tree

/** Any command, as `Command.withSubcommands` bounds the subcommands it takes (its last signature's). */
type AnyCommand = Parameters<typeof Command.withSubcommands>[1][number]

const nameOf = (command: AnyCommand) => Array.from(Command.getNames(command))[0] ?? ""

/** `accounts create   Create a partner account.`, aligned: the overview in the help of `cli` and of a group. */
const overview = (commands: ReadonlyArray<readonly [path: string, command: AnyCommand]>): HelpDoc.HelpDoc => {
  const width = Math.max(...commands.map(([path]) => path.length))
  const lines = commands.map(([path, command]) => HelpDoc.p(`${path.padEnd(width)}  ${summaries.get(command) ?? ""}`))
  return Arr.isNonEmptyReadonlyArray(lines) ? HelpDoc.enumeration(lines) : HelpDoc.empty
}

const moreHelp = (prefix: string) =>
  HelpDoc.p(`Commands (${prefix} COMMAND --help for each one's options and an example):`)

/** A group of commands (`cli keys …`), described by what it is for and an overview of its commands. */
const group = <const Commands extends Arr.NonEmptyReadonlyArray<AnyCommand>>(
  name: string,
  about: string,
  commands: Commands
) => {
  const paths = commands.map((command) => [`${name} ${nameOf(command)}`, command] as const)
  return {
    name,
    paths,
    command: Command.make(name).pipe(
      Command.withDescription(HelpDoc.blocks([HelpDoc.p(about), moreHelp(`cli ${name}`), overview(paths)])),
      Command.withSubcommands(commands)
    )
  }
}

const groups = [
  group("accounts", "Partner accounts and their rate limits.", [accountsCreate, accountsLimits, accountsEnableLive]),
  group("sandbox", "An account's test environment.", [sandboxCreate]),
  group("keys", "An account's API keys.", [keysCreate, keysRevoke, keysList]),
  group("properties", "Properties (hotels) and their reporting and check-in settings.", [
    propertiesCreate,
    propertiesUpdate
  ]),
  group("reports", "TRA and SIRE reports.", [reportsRun, reportsList, reportsRetry]),
  group("sire", "SIRE files, when SIRE_MODE=manual.", [sireFiles, sireConfirm]),
  group("reference", "The reference tables of the reports (SIRE codes, TRA labels) and operators' overrides.", [
    referenceList,
    referenceSet,
    referenceUnset
  ]),
  group("secrets", "The secrets stored in the database, encrypted under SECRETS_KEY.", [secretsRotate])
] as const

/** Every command by name: a group with its commands; `migrate` has none. */
const tree = new Map<string, ReadonlyArray<string>>([
  ["migrate", []],
  ...groups.map((g) => [g.name, g.paths.map(([, command]) => nameOf(command))] as const)
])

const cli = root.pipe(
  Command.withDescription(HelpDoc.blocks([
    HelpDoc.p(
      "Operates a running Partner Reservation Registration Service through its admin RPC (URL/rpc/admin); "
        + "only migrate works on the database itself. The global options --url and --token come before the "
        + `command: cli --url http://10.0.4.7:8080 keys list --account ${EXAMPLE_ID}`
    ),
    moreHelp("cli"),
    overview([["migrate", migrate], ...groups.flatMap((g) => g.paths)]),
    HelpDoc.p("Also: cli --version; cli --completions bash|zsh|fish prints a completion script for that shell.")
  ])),
  Command.withSubcommands([
    migrate,
    groups[0].command,
    groups[1].command,
    groups[2].command,
    groups[3].command,
    groups[4].command,
    groups[5].command,
    groups[6].command,
    groups[7].command
  ])
)

const run = Command.run(cli, {
  name: "partner-registration cli",
  version: "0.1.0",
  footer: HelpDoc.blocks([
    HelpDoc.h1("OUTPUT"),
    HelpDoc.p(
      "One JSON document on stdout. A failure is one line on stderr: {\"error\", \"code\"}, or \"error: …\" when "
        + "stderr is a terminal. Exit 0: done; 1: the command failed; 2: the command line was refused and nothing "
        + "was sent. Colours only on a terminal, never with NO_COLOR set."
    )
  ])
})

// ---------------------------------------------------------------------------------------------------------------
// Output: colour, help layout, errors

/** Options before the command that take a value, so `cli --url U keys` finds `keys` after `U`. */
const GLOBAL_VALUE_OPTIONS = new Set(["--url", "--token", "--log-level", "--completions"])

/** The commands named on a command line (`["keys", "create"]`), and the first word that names none. */
const commandLine = (args: ReadonlyArray<string>): { path: Array<string>; unknown?: string } => {
  const path: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const known = path.length === 0 ? tree.has(arg) : (tree.get(path[0]!) ?? []).includes(arg)
    if (known) {
      path.push(arg)
      if ((tree.get(path[0]!) ?? []).length === 0 || path.length === 2) return { path }
    } else if (path.length === 0 && GLOBAL_VALUE_OPTIONS.has(arg)) {
      i++
    } else if (!arg.startsWith("-")) {
      return { path, unknown: arg }
    }
  }
  return { path }
}

const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]/g

/** @effect/cli's generic line for an option's type; every option here says what it is for instead. */
const GENERIC_LINES = new Set(["A user-defined piece of text.", "A true or false value."])

/**
 * Help as @effect/cli 0.77 renders it, made readable: no ANSI unless wanted (it has no switch for colour); no
 * trailing spaces (it pads the COMMANDS list to its longest entry, 400 columns here); without its generic
 * type lines; and a subcommand's USAGE with the whole command (`$ cli keys create`, not `$ create`).
 * JSON documents pass unchanged: JSON.stringify writes no trailing spaces and none of these lines.
 */
const tidyHelp = (text: string, colour: boolean, path: ReadonlyArray<string>) => {
  const lines = (colour ? text : text.replace(ANSI, "")).split("\n").map((line) => line.trimEnd())
  const kept: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (GENERIC_LINES.has(line.replace(ANSI, "").trim())) {
      if (lines[i + 1] === "") i++
      continue
    }
    const usage = /^\$ (\S+)/.exec(line)
    kept.push(usage !== null && usage[1] !== "cli" && path.at(-1) === usage[1]
      ? `$ cli ${path.join(" ")}${line.slice(usage[0].length)}`
      : line)
  }
  return kept.join("\n")
}

/** Several lines (an @effect/cli error, a trace) as one: the one-line rule of errors. */
const oneLine = (text: string) =>
  text.replace(ANSI, "").split("\n").map((line) => line.trim()).filter((line) => line !== "").join("; ")

interface Failure {
  readonly code: string
  readonly message: string
  readonly usage: boolean
}

const helpHint = (path: ReadonlyArray<string>) => `see cli ${[...path, "--help"].join(" ")}`

const didYouMean = (word: string, choices: ReadonlyArray<string>) => {
  const near = choices.filter((choice) =>
    AutoCorrect.levensteinDistance(word, choice, CliConfig.defaultConfig) <= CliConfig.defaultConfig.autoCorrectLimit
  )
  return near.length === 0 ? "" : ` (did you mean ${near.map((c) => JSON.stringify(c)).join(" or ")}?)`
}

/** A command line @effect/cli refused, in one line saying what was expected. */
const usageFailure = (error: ValidationError.ValidationError, args: ReadonlyArray<string>): Failure => {
  const { path, unknown } = commandLine(args)
  if (ValidationError.isCommandMismatch(error) && unknown !== undefined) {
    // @effect/cli names the top level for a mistyped nested command (`cli keys lst`): name the right one.
    const choices = path.length === 0 ? Array.from(tree.keys()) : tree.get(path[0]!) ?? []
    const where = ["cli", ...path].join(" ")
    return {
      code: "invalid_arguments",
      message: `unknown command ${JSON.stringify(unknown)} for ${where}; expected one of: ${choices.join(", ")}`
        + `${didYouMean(unknown, choices)}; ${helpHint(path)}`,
      usage: true
    }
  }
  const text = "error" in error ? oneLine(HelpDoc.toAnsiText(error.error)) : ""
  return {
    code: refusedByApi.has(error) ? "invalid_request" : "invalid_arguments",
    message: `${text === "" ? "invalid command line" : text}; ${helpHint(path)}`,
    usage: true
  }
}

const failureOf = (error: unknown, args: ReadonlyArray<string>): Failure => {
  if (error instanceof AdminError) return { code: error.code, message: error.message, usage: false }
  if (error instanceof CliFailure) return { code: error.code, message: error.message, usage: error.usage === true }
  if (error instanceof Database.DatabaseUnavailable) {
    return { code: "database_unavailable", message: error.message, usage: false }
  }
  if (ValidationError.isValidationError(error)) return usageFailure(error, args)
  return { code: "internal_error", message: String(error), usage: false }
}

/**
 * One line on stderr: the `{error, code}` document for scripts, `error: …` for a person at a terminal. Written
 * directly: Bun's console.error paints its text red on a terminal, whatever NO_COLOR says.
 */
const report = (failure: Failure) =>
  Effect.sync(() => {
    process.stderr.write(
      process.stderr.isTTY === true
        ? `error: ${oneLine(failure.message)} [${failure.code}]\n`
        : `${JSON.stringify({ error: failure.message, code: failure.code })}\n`
    )
    process.exitCode = failure.usage ? 2 : 1
  })

/** Help and results through `tidyHelp`; @effect/cli's own error printing is dropped: `report` says it once. */
const withOutput = (colour: boolean, path: ReadonlyArray<string>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.consoleWith((console) =>
    Effect.withConsole(effect, {
      ...console,
      log: (...texts: ReadonlyArray<unknown>) =>
        console.log(...texts.map((text) => typeof text === "string" ? tidyHelp(text, colour, path) : text)),
      error: () => Effect.void
    })
  )

/** Colour only for a person at a terminal, and never with NO_COLOR set to anything (no-color.org). */
const colourWanted = Effect.map(
  Config.option(Config.string("NO_COLOR")),
  (noColor) => process.stdout.isTTY === true && Option.getOrElse(noColor, () => "") === ""
)

const args = process.argv.slice(2)

const program = Effect.gen(function*() {
  const colour = yield* colourWanted
  yield* run(process.argv).pipe(withOutput(colour, commandLine(args).path))
}).pipe(
  Effect.catchAll((error): Effect.Effect<void> => report(failureOf(error, args))),
  Effect.catchAllCause((cause) => report({ code: "internal_error", message: Cause.pretty(cause), usage: false })),
  Effect.provide([BunContext.layer, CliConfig.layer({ showBuiltIns: false })])
)

BunRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
