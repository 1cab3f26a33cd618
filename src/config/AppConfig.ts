import { Array as Arr, Config, ConfigError, Context, Duration, Effect, Either, Layer, LogLevel, Option, Redacted } from "effect"
import addressparser from "nodemailer/lib/addressparser/index.js"

/** Design §4: `TRM_URL`'s default. */
export const DEFAULT_TRM_URL = "https://www.datos.gov.co/resource/32sa-8pi3.json"

export type Role = "all" | "api" | "worker"

/** Design §4: `MAIL_FROM`'s default. */
export const DEFAULT_MAIL_FROM = "no-reply@localhost"

/** Design §4: `TRA_BASE_URL`'s default, the MinCIT PMS web service (domain notes §1.2). */
export const DEFAULT_TRA_BASE_URL = "https://pms.mincit.gov.co"

/**
 * The process configuration, read once from the environment (design §4). Business code reads this service,
 * never `process.env`; tests build it from a `ConfigProvider.fromMap`.
 */
export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  readonly publicBaseUrl: string
  /** Whether `PUBLIC_BASE_URL` was set (the panel's same-origin check falls back to the request's Host). */
  readonly publicBaseUrlSet: boolean
  readonly role: Role
  readonly adminToken: Option.Option<Redacted.Redacted>
  readonly redisUrl: Option.Option<Redacted.Redacted>
  /** LOG_LEVEL, by the names the README lists (`Warning`, `None`, …) or Effect's labels (`WARN`, `OFF`, …). */
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: Option.Option<"pretty" | "json">
  /** Pool size of the PostgreSQL client (embedded mode always uses one connection). */
  readonly dbPoolSize: number
  /** Whether often-run statements go as named (prepared) statements (db/PreparedStatements.ts; default true). */
  readonly dbPreparedStatements: boolean
  /** The TRM dataset's resource URL (Socrata on datos.gov.co; domain notes §3). */
  readonly trmUrl: string
  /**
   * Lets partner-supplied URLs (webhooks, document photos) be http:// or private/loopback addresses; for local
   * development and tests only (design §4, §7).
   */
  readonly allowPrivateUrls: boolean
  /** The MinCIT PMS web service (`/one/`, `/two/` under it). */
  readonly traBaseUrl: string
  /** Requests in flight to the TRA at most, per instance. */
  readonly traConcurrency: number
  /** How SIRE files leave: kept for an operator (`manual`) or posted to a gateway (design §6.13). */
  readonly sireMode: "manual" | "gateway"
  readonly sireGatewayUrl: Option.Option<string>
  readonly sireGatewayToken: Option.Option<Redacted.Redacted>
  /**
   * How SIRE lines write the Colombian end of a movement (columns 11–12): Colombia's country code or the
   * hotel's city code (`compliance/Sire.ts` `SirePlaces`; the sources conflict).
   */
  readonly sirePlaces: "countries" | "cities"
  /** Interval of the periodic report run. */
  readonly reportsEvery: Duration.Duration
  /** Interval of the alert scan (design §9). */
  readonly alertsEvery: Duration.Duration
  /**
   * Outbound mail server, `smtp://user:pass@host:587` or `smtps://…` (design §8); unset: messages are written
   * as `.eml` files under `DATA_DIR/mail`. Redacted: the URL carries the SMTP password.
   */
  readonly smtpUrl: Option.Option<Redacted.Redacted>
  /** The `From` of every message: an address, optionally with a display name (`Hotel Panel <no-reply@…>`). */
  readonly mailFrom: string
  /**
   * How long a report run holds the reservations it claimed; it renews the hold while it works, so another
   * instance takes them over this long after a crash (design §7). Default 1 minute.
   */
  readonly reportLease: Duration.Duration
  /** Crash-test failpoints (`FAILPOINTS`, comma-separated names; `shared/Failpoints.ts`). Empty in production. */
  readonly failpoints: ReadonlySet<string>
  /**
   * On SIGTERM/SIGINT, how long requests in flight get to finish once the listener has closed (design §9);
   * `SHUTDOWN_DRAIN_SECONDS`, default 10.
   */
  readonly shutdownDrain: Duration.Duration
  /**
   * How long delivered webhook events and their deliveries are kept (`EVENT_RETENTION_DAYS`, default 90, at least
   * 7: the recovery window of design §6.14); the worker deletes older ones (`webhooks/HistoryRetention.ts`).
   */
  readonly eventRetentionDays: number
  /** `open`: anyone may sign up in the panel (test environment only until an operator enables live), design §8. */
  readonly panelSignup: "open" | "closed"
  /**
   * `SECRETS_KEY`: the AES-256-GCM key (32 bytes, base64) of the secrets stored in the database (design §3, §9);
   * unset: generated into `DATA_DIR/secrets-key` in embedded mode, refused at start with `DATABASE_URL`
   * (`secrets/SecretBox.ts`).
   */
  readonly secretsKey: Option.Option<Redacted.Redacted<Uint8Array>>
  /** `SECRETS_KEY_PREVIOUS`: still read during a rotation, never written with (design §9). */
  readonly secretsKeyPrevious: Option.Option<Redacted.Redacted<Uint8Array>>
  /**
   * The Prometheus listener's port (design §9), on `HOST`; unset: no listener. Never the public port: the
   * metrics name routes and queues an outsider has no business seeing. 0 picks a free port (tests).
   */
  readonly metricsPort: Option.Option<number>
  /**
   * The OpenTelemetry collector's OTLP/HTTP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`, the standard variable);
   * spans go to `<it>/v1/traces`. Unset: no exporter is loaded and no request span is made.
   */
  readonly otlpEndpoint: Option.Option<string>
  /** `service.name` of the spans and metrics (`OTEL_SERVICE_NAME`, the standard variable). */
  readonly otelServiceName: string
}

export class AppConfig extends Context.Tag("config/AppConfig")<AppConfig, AppConfigShape>() {}

/** An optional setting where an empty value (`ROLE=`) means unset, as operators expect from a shell. */
const optionalChoice = <const A extends string>(name: string, values: ReadonlyArray<A>) =>
  Config.string(name).pipe(
    Config.option,
    Config.mapOrFail((value) => {
      const set = Option.filter(value, (v) => v.trim() !== "")
      if (Option.isNone(set)) return Either.right(Option.none<A>())
      const choice = Arr.findFirst(values, (choice) => choice === set.value)
      return Option.isSome(choice)
        ? Either.right(choice)
        : Either.left(
          ConfigError.InvalidData([name], `expected one of ${values.join(", ")}, got ${JSON.stringify(set.value)}`)
        )
    })
  )

/** An on/off setting: `true`/`1` or `false`/`0`; unset or empty is `whenUnset`; anything else is refused. */
const optionalSwitch = (name: string, whenUnset: boolean) =>
  optionalChoice(name, ["true", "false", "1", "0"]).pipe(
    Config.map(Option.match({ onNone: () => whenUnset, onSome: (value) => value === "true" || value === "1" }))
  )

/**
 * `LOG_LEVEL`: a level's name (`All`, `Trace`, `Debug`, `Info`, `Warning`, `Error`, `Fatal`, `None`) or Effect's
 * label for it (`WARN`, `OFF`, …), in any case; empty means `Info`. Anything else stops the start with the list:
 * an unknown level used to fall back to Info silently, so `LOG_LEVEL=Warning` logged every request.
 */
const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.option,
  Config.mapOrFail((value) => {
    const set = Option.filter(Option.map(value, (v) => v.trim().toLowerCase()), (v) => v !== "")
    if (Option.isNone(set)) return Either.right(LogLevel.Info)
    const level = LogLevel.allLevels.find((l) =>
      l._tag.toLowerCase() === set.value || l.label.toLowerCase() === set.value
    )
    if (level !== undefined) return Either.right(level)
    const names = LogLevel.allLevels.map((l) => l._tag).join(", ")
    const given = JSON.stringify(Option.getOrElse(value, () => ""))
    return Either.left(ConfigError.InvalidData(["LOG_LEVEL"], `expected one of ${names}, got ${given}`))
  })
)

/** An http(s) URL setting; empty means the default (`fallback`), or unset when there is none. */
const httpUrl = (name: string) =>
  Config.string(name).pipe(
    Config.option,
    Config.mapOrFail((value) => {
      const set = Option.filter(Option.map(value, (v) => v.trim()), (v) => v !== "")
      if (Option.isNone(set)) return Either.right(Option.none<string>())
      return URL.canParse(set.value) && /^https?:$/.test(new URL(set.value).protocol)
        ? Either.right(set)
        : Either.left(ConfigError.InvalidData([name], `expected an http(s) URL, got ${JSON.stringify(set.value)}`))
    })
  )

/** `SMTP_URL`: smtp: or smtps: with a host; empty means unset. Errors never repeat the value (it holds a password). */
const smtpUrl = Config.redacted("SMTP_URL").pipe(
  Config.option,
  Config.mapOrFail((value) => {
    const set = Option.filter(value, (url) => Redacted.value(url).trim() !== "")
    if (Option.isNone(set)) return Either.right(Option.none<Redacted.Redacted>())
    const text = Redacted.value(set.value).trim()
    const parsed = URL.canParse(text) ? new URL(text) : undefined
    return parsed !== undefined && /^smtps?:$/.test(parsed.protocol) && parsed.hostname !== ""
      ? Either.right(Option.some(Redacted.make(text)))
      : Either.left(ConfigError.InvalidData(["SMTP_URL"], "expected smtp://[user:pass@]host[:port] or smtps://…"))
  })
)

/**
 * A 32-byte key in base64 (`openssl rand -base64 32`); empty means unset. Errors never repeat the value: it is
 * the key.
 */
const secretsKey = (name: string) =>
  Config.redacted(name).pipe(
    Config.option,
    Config.mapOrFail((value) => {
      const set = Option.filter(Option.map(value, (v) => Redacted.value(v).trim()), (v) => v !== "")
      if (Option.isNone(set)) return Either.right(Option.none<Redacted.Redacted<Uint8Array>>())
      const bytes = /^[A-Za-z0-9+/]+={0,2}$|^[A-Za-z0-9_-]+$/.test(set.value)
        ? Buffer.from(set.value, "base64")
        : Buffer.alloc(0)
      return bytes.length === 32
        ? Either.right(Option.some(Redacted.make(new Uint8Array(bytes))))
        : Either.left(ConfigError.InvalidData(
          [name],
          `expected 32 bytes in base64 (44 characters, e.g. from \`openssl rand -base64 32\`); got ${bytes.length} bytes`
        ))
    })
  )

/** `MAIL_FROM`: one address, bare or with a display name; empty means the default. */
const mailFrom = Config.string("MAIL_FROM").pipe(
  Config.option,
  Config.mapOrFail((value) => {
    const set = Option.filter(Option.map(value, (v) => v.trim()), (v) => v !== "")
    if (Option.isNone(set)) return Either.right(DEFAULT_MAIL_FROM)
    const addresses = addressparser(set.value, { flatten: true })
    return addresses.length === 1 && /^[^\s@]+@[^\s@]+$/.test(addresses[0]!.address)
      ? Either.right(set.value)
      : Either.left(
        ConfigError.InvalidData(["MAIL_FROM"], `expected one e-mail address, got ${JSON.stringify(set.value)}`)
      )
  })
)

const config = Config.all({
  port: Config.integer("PORT").pipe(Config.withDefault(3000)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
  publicBaseUrl: Config.option(Config.string("PUBLIC_BASE_URL")),
  role: optionalChoice("ROLE", ["all", "api", "worker"]).pipe(Config.map(Option.getOrElse(() => "all" as const))),
  adminToken: Config.option(Config.redacted("ADMIN_TOKEN")),
  redisUrl: Config.option(Config.redacted("REDIS_URL")),
  logLevel,
  logFormat: optionalChoice("LOG_FORMAT", ["pretty", "json"]),
  dbPoolSize: Config.integer("DB_POOL_SIZE").pipe(Config.withDefault(10)),
  dbPreparedStatements: optionalSwitch("DB_PREPARED_STATEMENTS", true),
  traBaseUrl: httpUrl("TRA_BASE_URL").pipe(Config.map(Option.getOrElse(() => DEFAULT_TRA_BASE_URL))),
  traConcurrency: Config.integer("TRA_CONCURRENCY").pipe(
    Config.withDefault(4),
    Config.validate({ message: "TRA_CONCURRENCY must be between 1 and 64", validation: (n) => n >= 1 && n <= 64 })
  ),
  sireMode: optionalChoice("SIRE_MODE", ["manual", "gateway"]).pipe(Config.map(Option.getOrElse(() => "manual" as const))),
  sireGatewayUrl: httpUrl("SIRE_GATEWAY_URL"),
  sireGatewayToken: Config.option(Config.redacted("SIRE_GATEWAY_TOKEN")),
  sirePlaces: optionalChoice("SIRE_PLACES", ["countries", "cities"]).pipe(
    Config.map(Option.getOrElse(() => "countries" as const))
  ),
  reportsEvery: Config.duration("REPORTS_EVERY").pipe(Config.withDefault(Duration.hours(1))),
  alertsEvery: Config.duration("ALERTS_EVERY").pipe(Config.withDefault(Duration.minutes(5))),
  smtpUrl,
  mailFrom,
  reportLease: Config.duration("REPORT_LEASE").pipe(
    Config.withDefault(Duration.minutes(1)),
    Config.validate({
      message: "REPORT_LEASE must be between 1 second and 1 hour",
      validation: (lease) => Duration.between(lease, { minimum: Duration.seconds(1), maximum: Duration.hours(1) })
    })
  ),
  failpoints: Config.string("FAILPOINTS").pipe(
    Config.withDefault(""),
    Config.map((value) => new Set(value.split(",").map((name) => name.trim()).filter((name) => name !== "")))
  ),
  shutdownDrain: Config.integer("SHUTDOWN_DRAIN_SECONDS").pipe(
    Config.withDefault(10),
    Config.validate({
      message: "SHUTDOWN_DRAIN_SECONDS must be a whole number of seconds between 0 and 3600",
      validation: (seconds) => seconds >= 0 && seconds <= 3600
    }),
    Config.map(Duration.seconds)
  ),
  eventRetentionDays: Config.integer("EVENT_RETENTION_DAYS").pipe(
    Config.withDefault(90),
    Config.validate({
      message: "EVENT_RETENTION_DAYS must be a whole number of days between 7 and 3650",
      validation: (days) => days >= 7 && days <= 3650
    })
  ),
  panelSignup: optionalChoice("PANEL_SIGNUP", ["open", "closed"]).pipe(
    Config.map(Option.getOrElse(() => "closed" as const))
  ),
  secretsKey: secretsKey("SECRETS_KEY"),
  secretsKeyPrevious: secretsKey("SECRETS_KEY_PREVIOUS"),
  allowPrivateUrls: optionalSwitch("WEBHOOK_ALLOW_PRIVATE_URLS", false),
  // Empty means unset, as for the other optional settings.
  metricsPort: Config.string("METRICS_PORT").pipe(
    Config.option,
    Config.mapOrFail((value) => {
      const set = Option.filter(Option.map(value, (v) => v.trim()), (v) => v !== "")
      if (Option.isNone(set)) return Either.right(Option.none<number>())
      const port = Number(set.value)
      return /^\d+$/.test(set.value) && port <= 65535
        ? Either.right(Option.some(port))
        : Either.left(
          ConfigError.InvalidData(["METRICS_PORT"], `expected a port (0–65535), got ${JSON.stringify(set.value)}`)
        )
    })
  ),
  otlpEndpoint: httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.map(Option.map((url) => url.replace(/\/+$/, "")))),
  otelServiceName: Config.string("OTEL_SERVICE_NAME").pipe(
    Config.withDefault(""),
    Config.map((name) => name.trim() === "" ? "partner-registration" : name.trim())
  ),
  trmUrl: Config.string("TRM_URL").pipe(
    Config.option,
    Config.mapOrFail((value) => {
      const url = Option.getOrElse(Option.filter(Option.map(value, (v) => v.trim()), (v) => v !== ""), () => DEFAULT_TRM_URL)
      return URL.canParse(url) && /^https?:$/.test(new URL(url).protocol)
        ? Either.right(url)
        : Either.left(ConfigError.InvalidData(["TRM_URL"], `expected an http(s) URL, got ${JSON.stringify(url)}`))
    })
  )
})

export const make: Effect.Effect<AppConfigShape, import("effect/ConfigError").ConfigError> = Effect.map(
  config,
  (c) => ({
    ...c,
    databaseUrl: Option.filter(c.databaseUrl, (url) => Redacted.value(url).trim() !== ""),
    redisUrl: Option.filter(c.redisUrl, (url) => Redacted.value(url).trim() !== ""),
    adminToken: Option.filter(c.adminToken, (token) => Redacted.value(token).trim() !== ""),
    sireGatewayToken: Option.filter(c.sireGatewayToken, (token) => Redacted.value(token).trim() !== ""),
    publicBaseUrl: Option.getOrElse(c.publicBaseUrl, () => `http://localhost:${c.port}`).replace(/\/+$/, ""),
    publicBaseUrlSet: Option.isSome(Option.filter(c.publicBaseUrl, (url) => url.trim() !== ""))
  })
).pipe(
  Effect.filterOrFail(
    (c) => c.sireMode === "manual" || Option.isSome(c.sireGatewayUrl),
    () => ConfigError.InvalidData(["SIRE_GATEWAY_URL"], "SIRE_MODE=gateway needs SIRE_GATEWAY_URL")
  ),
  Effect.filterOrFail(
    (c) => !Option.exists(c.metricsPort, (port) => port !== 0 && port === c.port),
    () =>
      ConfigError.InvalidData(["METRICS_PORT"], "METRICS_PORT must differ from PORT: metrics are never on the public port")
  )
)

export const layer = Layer.effect(AppConfig, make)
