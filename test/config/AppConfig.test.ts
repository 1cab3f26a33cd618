import { describe, expect, test } from "bun:test"
import { ConfigProvider, Duration, Effect, Either, LogLevel, Option, Redacted } from "effect"
import * as AppConfig from "../../src/config/AppConfig.ts"

const read = (env: Record<string, string>) =>
  Effect.runSync(AppConfig.make.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either))

/** Reading `name=value` fails, and the error names the variable. */
const expectRefused = (name: string, value: string) => {
  const result = read({ [name]: value })
  expect(Either.isLeft(result)).toBe(true)
  if (Either.isLeft(result)) expect(String(result.left)).toContain(name)
}

describe("AppConfig (design §4)", () => {
  test("defaults", () => {
    const config = Either.getOrThrow(read({}))
    expect(config).toMatchObject({ port: 3000, host: "0.0.0.0", dataDir: "./data", role: "all", dbPoolSize: 10 })
    expect(config.logLevel).toBe(LogLevel.Info)
    expect(config.publicBaseUrl).toBe("http://localhost:3000")
    expect(Option.isNone(config.databaseUrl)).toBe(true)
    expect(Option.isNone(config.redisUrl)).toBe(true)
    expect(Option.isNone(config.adminToken)).toBe(true)
    expect(Option.isNone(config.logFormat)).toBe(true)
    expect(config.allowPrivateUrls).toBe(false)
    expect(config.dbPreparedStatements).toBe(true)
    expect(config).toMatchObject({ traBaseUrl: "https://pms.mincit.gov.co", traConcurrency: 4, sireMode: "manual" })
    expect(config.reportsEvery).toEqual(Duration.hours(1))
    expect(Option.isNone(config.sireGatewayUrl)).toBe(true)
  })

  test("LOG_LEVEL: the README's names and Effect's labels, in any case; empty is Info; anything else is refused", () => {
    const cases: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
      ["All", LogLevel.All], ["Trace", LogLevel.Trace], ["Debug", LogLevel.Debug], ["Info", LogLevel.Info],
      ["Warning", LogLevel.Warning], ["Error", LogLevel.Error], ["Fatal", LogLevel.Fatal], ["None", LogLevel.None],
      ["warning", LogLevel.Warning], ["WARN", LogLevel.Warning], ["OFF", LogLevel.None], ["debug", LogLevel.Debug],
      ["", LogLevel.Info], [" Warning ", LogLevel.Warning]
    ]
    for (const [value, level] of cases) {
      expect({ value, level: Either.getOrThrow(read({ LOG_LEVEL: value })).logLevel }).toEqual({ value, level })
    }
    const refused = read({ LOG_LEVEL: "Verbose" })
    expect(Either.isLeft(refused)).toBe(true)
    expect(String(Either.isLeft(refused) ? refused.left : "")).toContain(
      "expected one of All, Trace, Debug, Info, Warning, Error, Fatal, None, got \"Verbose\""
    )
  })

  test("reporting settings (design §4)", () => {
    const config = Either.getOrThrow(read({
      TRA_BASE_URL: "http://127.0.0.1:9999/tra",
      TRA_CONCURRENCY: "8",
      SIRE_MODE: "gateway",
      SIRE_GATEWAY_URL: "https://sire-gateway.example.co/upload",
      SIRE_GATEWAY_TOKEN: "gw-token",
      REPORTS_EVERY: "15 minutes"
    }))
    expect(config).toMatchObject({ traBaseUrl: "http://127.0.0.1:9999/tra", traConcurrency: 8, sireMode: "gateway" })
    expect(Option.getOrThrow(config.sireGatewayUrl)).toBe("https://sire-gateway.example.co/upload")
    expect(String(Option.getOrThrow(config.sireGatewayToken))).toBe("<redacted>")
    expect(config.reportsEvery).toEqual(Duration.minutes(15))
  })

  // The on/off settings: true/1 and false/0, and empty (unset) means each one's default.
  test.each([
    ["WEBHOOK_ALLOW_PRIVATE_URLS", "allowPrivateUrls", false],
    ["DB_PREPARED_STATEMENTS", "dbPreparedStatements", true]
  ] as const)("%s reads true/1 and false/0, unset is its default", (name, field, whenUnset) => {
    const reads = ["true", "1", "false", "0", ""].map((value) => [value, Either.getOrThrow(read({ [name]: value }))[field]])
    expect(reads).toEqual([["true", true], ["1", true], ["false", false], ["0", false], ["", whenUnset]])
  })

  test("PUBLIC_BASE_URL follows PORT unless set; a trailing slash is dropped", () => {
    expect(Either.getOrThrow(read({ PORT: "8080" })).publicBaseUrl).toBe("http://localhost:8080")
    expect(Either.getOrThrow(read({ PUBLIC_BASE_URL: "https://checkin.example.co/" })).publicBaseUrl).toBe(
      "https://checkin.example.co"
    )
  })

  test("an empty value means unset", () => {
    const config = Either.getOrThrow(read({ ROLE: "", LOG_FORMAT: " ", DATABASE_URL: "", REDIS_URL: "", ADMIN_TOKEN: "" }))
    expect(config.role).toBe("all")
    expect(Option.isNone(config.logFormat)).toBe(true)
    expect(Option.isNone(config.databaseUrl)).toBe(true)
    expect(Option.isNone(config.redisUrl)).toBe(true)
    expect(Option.isNone(config.adminToken)).toBe(true)
  })

  test("secrets are Redacted", () => {
    const config = Either.getOrThrow(read({ DATABASE_URL: "postgres://u:pw@h/db", ADMIN_TOKEN: "tok" }))
    expect(String(Option.getOrThrow(config.databaseUrl))).toBe("<redacted>")
    expect(Redacted.value(Option.getOrThrow(config.adminToken))).toBe("tok")
  })

  test.each([
    ["ROLE", "workers"],
    ["LOG_FORMAT", "xml"],
    ["PORT", "abc"],
    ["WEBHOOK_ALLOW_PRIVATE_URLS", "yes please"],
    ["DB_PREPARED_STATEMENTS", "off"],
    ["TRA_BASE_URL", "ftp://pms.mincit.gov.co"],
    ["TRA_CONCURRENCY", "0"],
    ["SIRE_MODE", "portal"],
    ["SIRE_MODE", "gateway"],
    ["REPORTS_EVERY", "often"]
  ])("%s=%s is refused, naming the variable", expectRefused)

  test("mail: no SMTP_URL by default (.eml files), MAIL_FROM no-reply@localhost (design §4, §8)", () => {
    const config = Either.getOrThrow(read({}))
    expect(Option.isNone(config.smtpUrl)).toBe(true)
    expect(config.mailFrom).toBe("no-reply@localhost")
    const empty = Either.getOrThrow(read({ SMTP_URL: " ", MAIL_FROM: "" }))
    expect(Option.isNone(empty.smtpUrl)).toBe(true)
    expect(empty.mailFrom).toBe("no-reply@localhost")
  })

  test.each([
    ["smtp://user:p%40ss@mail.example.co:587"],
    ["smtps://user:pass@mail.example.co"],
    ["smtp://127.0.0.1:2525"]
  ])("SMTP_URL=%s is read, redacted", (url) => {
    const config = Either.getOrThrow(read({ SMTP_URL: url }))
    expect(String(Option.getOrThrow(config.smtpUrl))).toBe("<redacted>")
    expect(Redacted.value(Option.getOrThrow(config.smtpUrl))).toBe(url)
  })

  test.each([
    ["Panel de reservas <no-reply@hotel.example.co>"],
    ["no-reply@hotel.example.co"]
  ])("MAIL_FROM=%s is read as given", (from) => {
    expect(Either.getOrThrow(read({ MAIL_FROM: from })).mailFrom).toBe(from)
  })

  test.each([
    ["SMTP_URL", "https://mail.example.co"],
    ["SMTP_URL", "mail.example.co:587"],
    ["SMTP_URL", "smtp://"],
    ["MAIL_FROM", "not an address"],
    ["MAIL_FROM", "a@example.co, b@example.co"]
  ])("%s=%s is refused, naming the variable", expectRefused)

  test("a refused SMTP_URL is not repeated in the error (it may hold a password)", () => {
    const result = read({ SMTP_URL: "http://user:hunter2@mail.example.co" })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(String(result.left)).not.toContain("hunter2")
  })
})
