import { describe, expect, test } from "bun:test"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import * as AppConfig from "../../src/config/AppConfig.ts"

const read = (env: Record<string, string>) =>
  Effect.runSync(AppConfig.make.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either))

describe("AppConfig (design §4)", () => {
  test("defaults", () => {
    const config = Either.getOrThrow(read({}))
    expect(config).toMatchObject({ port: 3000, host: "0.0.0.0", dataDir: "./data", role: "all", logLevel: "Info", dbPoolSize: 10 })
    expect(config.publicBaseUrl).toBe("http://localhost:3000")
    expect(Option.isNone(config.databaseUrl)).toBe(true)
    expect(Option.isNone(config.redisUrl)).toBe(true)
    expect(Option.isNone(config.adminToken)).toBe(true)
    expect(Option.isNone(config.logFormat)).toBe(true)
    expect(config.allowPrivateUrls).toBe(false)
  })

  test.each([
    ["true", true],
    ["1", true],
    ["false", false],
    ["0", false],
    ["", false]
  ])("WEBHOOK_ALLOW_PRIVATE_URLS=%p reads %p", (value, expected) => {
    expect(Either.getOrThrow(read({ WEBHOOK_ALLOW_PRIVATE_URLS: value })).allowPrivateUrls).toBe(expected)
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
    ["WEBHOOK_ALLOW_PRIVATE_URLS", "yes please"]
  ])("%s=%s is refused, naming the variable", (name, value) => {
    const result = read({ [name]: value })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(String(result.left)).toContain(name)
  })
})
