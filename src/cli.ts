import { Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { BunContext, BunRuntime } from "@effect/platform-bun"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import type { RpcClientError } from "@effect/rpc/RpcClientError"
import { Cause, Config, Console, Data, Effect, Layer, Option, ParseResult, Redacted } from "effect"
import * as NodeFs from "node:fs/promises"
import { AdminError } from "./admin/AdminError.ts"
import { AdminRpcs } from "./admin/AdminRpcs.ts"
import { tokenFile } from "./admin/AdminToken.ts"
import * as AppConfig from "./config/AppConfig.ts"
import * as Database from "./db/Database.ts"
import { runMigrations } from "./db/migrations.ts"

/**
 * The ops CLI (design §4): a client of the admin RPC, except `migrate`, which connects to DATABASE_URL.
 * Every command prints one JSON document on stdout, or `{error, code}` on stderr with a non-zero exit.
 */

class CliFailure extends Data.TaggedError("CliFailure")<{ readonly code: string; readonly message: string }> {}

const root = Command.make("cli", {
  url: Options.text("url").pipe(Options.optional, Options.withDescription("admin RPC base URL [ADMIN_URL]")),
  token: Options.text("token").pipe(Options.optional, Options.withDescription("admin token [ADMIN_TOKEN, token file]"))
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

/** Calls the admin RPC of the running service with the global `--url` / `--token`. */
const withAdmin = <A>(
  use: (client: RpcClient.FromGroup<typeof AdminRpcs, RpcClientError>) => Effect.Effect<A, AdminError | RpcClientError>
) =>
  Effect.gen(function*() {
    const globals = yield* root
    const port = yield* Config.integer("PORT").pipe(Config.withDefault(3000))
    const url = Option.isSome(globals.url)
      ? globals.url.value
      : yield* Config.string("ADMIN_URL").pipe(Config.withDefault(`http://127.0.0.1:${port}`))
    const token = Option.isSome(globals.token) ? globals.token.value : yield* configuredToken
    const http = Layer.effect(
      HttpClient.HttpClient,
      Effect.map(HttpClient.HttpClient, (client) =>
        client.pipe(HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.make(token)))))
    ).pipe(Layer.provide(FetchHttpClient.layer))
    const protocol = RpcClient.layerProtocolHttp({ url: `${url.replace(/\/+$/, "")}/rpc/admin` }).pipe(
      Layer.provide([http, RpcSerialization.layerJson])
    )
    const result = yield* RpcClient.make(AdminRpcs).pipe(
      Effect.flatMap(use),
      Effect.scoped,
      Effect.provide(protocol),
      Effect.catchTag("RpcClientError", (error) =>
        Effect.fail(
          new CliFailure({ code: "admin_unreachable", message: `cannot call the admin RPC at ${url}: ${error.message}` })
        )),
      // The client validates payloads before sending: a refused value is the caller's mistake.
      Effect.catchAllDefect((defect) =>
        Effect.fail(
          ParseResult.isParseError(defect)
            ? new CliFailure({ code: "invalid_request", message: ParseResult.TreeFormatter.formatErrorSync(defect) })
            : new CliFailure({ code: "admin_unreachable", message: `cannot call the admin RPC at ${url}: ${String(defect)}` })
        )
      )
    )
    yield* print(result)
  })

const account = Options.text("account").pipe(Options.withDescription("account id"))
const optionalText = (name: string) => Options.text(name).pipe(Options.optional)
const flag = (name: string) => Options.boolean(name)
const value = <A>(option: Option.Option<A>) => Option.getOrUndefined(option)

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
  }))

const accountsCreate = Command.make(
  "create",
  { name: Options.text("name"), email: Options.text("email") },
  ({ email, name }) => withAdmin((client) => client.CreateAccount({ name, email }))
)

const accountsLimits = Command.make(
  "limits",
  {
    account,
    reads: Options.integer("reads").pipe(Options.optional),
    writes: Options.integer("writes").pipe(Options.optional),
    tests: Options.integer("tests").pipe(Options.optional),
    reset: flag("reset")
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
)

const accountsEnableLive = Command.make(
  "enable-live",
  { account },
  (o) => withAdmin((client) => client.EnableLive({ account_id: o.account }))
)

const sandboxCreate = Command.make(
  "create",
  { account },
  (o) => withAdmin((client) => client.CreateSandbox({ account_id: o.account }))
)

const keysCreate = Command.make(
  "create",
  { account, env: Options.choice("env", ["test", "live"]) },
  (o) => withAdmin((client) => client.CreateKey({ account_id: o.account, environment: o.env }))
)
const keysRevoke = Command.make(
  "revoke",
  { key: Options.text("key").pipe(Options.withDescription("key id")) },
  (o) => withAdmin((client) => client.RevokeKey({ key_id: o.key }))
)
const keysList = Command.make("list", { account }, (o) => withAdmin((client) => client.ListKeys({ account_id: o.account })))

/** Flags shared by `properties create` and `properties update`; on update, omitted = unchanged. */
const propertyFlags = {
  rnt: optionalText("rnt"),
  externalId: optionalText("external-id"),
  internalName: optionalText("internal-name"),
  noTra: flag("no-tra"),
  tra: flag("tra").pipe(Options.withDescription("report to TRA again (update)")),
  noSire: flag("no-sire"),
  sire: flag("sire").pipe(Options.withDescription("report to SIRE again (update)")),
  contract: flag("contract"),
  noContract: flag("no-contract"),
  photos: flag("photos"),
  noPhotos: flag("no-photos"),
  checkinDisabled: flag("checkin-disabled"),
  checkinEnabled: flag("checkin-enabled"),
  traToken: optionalText("tra-token"),
  sireHotelCode: optionalText("sire-hotel-code"),
  sireCityCode: optionalText("sire-city-code"),
  establishmentName: optionalText("establishment-name"),
  tipoAcomodacion: optionalText("tipo-acomodacion"),
  defaultRoom: optionalText("default-room").pipe(
    Options.withDescription("TRA numero_habitacion when a reservation has no room_number")
  )
}

/** A pair of flags → true, false, or unchanged; both at once is a usage error. */
const toggle = (on: boolean, off: boolean, names: string) =>
  on && off
    ? Effect.fail(new CliFailure({ code: "invalid_arguments", message: `${names}: pass one of the two, not both` }))
    : Effect.succeed(off ? false : on ? true : undefined)

type PropertyFlagValues = Command.Command.ParseConfig<typeof propertyFlags>

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

const propertiesCreate = Command.make(
  "create",
  {
    account,
    name: Options.text("name"),
    env: Options.choice("env", ["test", "live"]).pipe(Options.withDefault("live" as const)),
    ...propertyFlags
  },
  (o) =>
    Effect.flatMap(settingsOf(o), (settings) =>
      withAdmin((client) =>
        client.CreateProperty({ account_id: o.account, name: o.name, environment: o.env, ...settings })
      ))
)
// No --env here: a property's environment is fixed at creation.
const propertiesUpdate = Command.make(
  "update",
  { property: Options.text("property"), name: optionalText("name"), ...propertyFlags },
  (o) =>
    Effect.flatMap(settingsOf(o), (settings) =>
      withAdmin((client) => client.UpdateProperty({ property_id: o.property, name: value(o.name), ...settings })))
)

const reportsRun = Command.make(
  "run",
  { date: optionalText("date").pipe(Options.withDescription("Bogotá date YYYY-MM-DD (default today)")) },
  (o) => withAdmin((client) => client.RunReports({ date: value(o.date) }))
)

const sireFiles = Command.make(
  "files",
  { property: optionalText("property") },
  (o) => withAdmin((client) => client.SireFiles({ property_id: value(o.property) }))
)
const sireConfirm = Command.make(
  "confirm",
  { file: Options.text("file") },
  (o) => withAdmin((client) => client.ConfirmSireFile({ file_id: o.file }))
)

const cli = root.pipe(Command.withSubcommands([
  migrate,
  Command.make("accounts").pipe(Command.withSubcommands([accountsCreate, accountsLimits, accountsEnableLive])),
  Command.make("sandbox").pipe(Command.withSubcommands([sandboxCreate])),
  Command.make("keys").pipe(Command.withSubcommands([keysCreate, keysRevoke, keysList])),
  Command.make("properties").pipe(Command.withSubcommands([propertiesCreate, propertiesUpdate])),
  Command.make("reports").pipe(Command.withSubcommands([reportsRun])),
  Command.make("sire").pipe(Command.withSubcommands([sireFiles, sireConfirm]))
]))

const run = Command.run(cli, { name: "partner-registration cli", version: "0.1.0" })

const fail = (code: string, message: string) =>
  Console.error(JSON.stringify({ error: message, code })).pipe(
    Effect.zipRight(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

/** @effect/cli prints usage errors itself; we report them once, as our own `{error, code}` document. */
const withoutCliErrorOutput = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.consoleWith((console) => Effect.withConsole(effect, { ...console, error: () => Effect.void }))

const program = run(process.argv).pipe(
  withoutCliErrorOutput,
  Effect.catchAll((error): Effect.Effect<void> => {
    if (error instanceof AdminError) return fail(error.code, error.message)
    if (error instanceof CliFailure) return fail(error.code, error.message)
    if (error instanceof Database.DatabaseUnavailable) return fail("database_unavailable", error.message)
    if (ValidationError.isValidationError(error)) {
      const text = "error" in error ? HelpDoc.toAnsiText(error.error).replace(/\u001b\[[0-9;]*m/g, "").trim() : ""
      return fail("invalid_arguments", `${text || "invalid command line"}; see --help`)
    }
    return fail("internal_error", String(error))
  }),
  Effect.catchAllCause((cause) => fail("internal_error", Cause.pretty(cause))),
  Effect.provide(BunContext.layer)
)

BunRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
