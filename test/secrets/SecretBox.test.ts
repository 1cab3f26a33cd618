import { describe, expect, test } from "bun:test"
import { ConfigProvider, Effect, Either, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as AppConfig from "../../src/config/AppConfig.ts"
import * as SecretBox from "../../src/secrets/SecretBox.ts"
import { tempDir } from "../support/app.ts"

/** Design §3, §9: AES-256-GCM under SECRETS_KEY, a previous key during a rotation, the key file in embedded mode. */

const keyA = randomBytes(32)
const keyB = randomBytes(32)
const base64 = (key: Uint8Array) => Buffer.from(key).toString("base64")

const open = (box: SecretBox.SecretBoxShape, stored: string) => Effect.runSync(Effect.either(box.open(stored)))

describe("SecretBox", () => {
  test("seals as v1:<key id>:…, never the same text twice, and opens what it sealed", () => {
    const box = SecretBox.make(keyA)
    const first = box.seal("whsec_abc")
    const second = box.seal("whsec_abc")
    expect(first).toMatch(new RegExp(`^v1:${SecretBox.keyIdOf(keyA)}:[A-Za-z0-9_-]+$`))
    expect(SecretBox.keyIdOf(keyA)).toMatch(/^[0-9a-f]{8}$/)
    expect(first).not.toBe(second)
    expect(first).not.toContain("whsec_abc")
    expect(open(box, first)).toEqual(Either.right("whsec_abc"))
    expect(open(box, box.seal(""))).toEqual(Either.right(""))
    expect(open(box, box.seal("ñandú 🦤"))).toEqual(Either.right("ñandú 🦤"))
    expect(box.isCurrent(first)).toBe(true)
  })

  test("a rotation: the new key seals, the previous one still opens; without it the old values do not", () => {
    const old = SecretBox.make(keyA).seal("tra-token-1")
    const rotating = SecretBox.make(keyB, Option.some(keyA))
    expect(rotating.keyIds).toEqual([SecretBox.keyIdOf(keyB), SecretBox.keyIdOf(keyA)])
    expect(open(rotating, old)).toEqual(Either.right("tra-token-1"))
    expect(rotating.isCurrent(old)).toBe(false)
    expect(rotating.seal("x").startsWith(`v1:${SecretBox.keyIdOf(keyB)}:`)).toBe(true)
    const after = SecretBox.make(keyB)
    const refused = open(after, old)
    expect(Either.isLeft(refused)).toBe(true)
    if (Either.isLeft(refused)) {
      expect(refused.left._tag).toBe("SecretUnreadable")
      expect(refused.left.key_id).toBe(SecretBox.keyIdOf(keyA))
      expect(refused.left.message).toContain(`neither SECRETS_KEY (${SecretBox.keyIdOf(keyB)})`)
    }
  })

  test("an altered value, or one moved to another key id, does not open", () => {
    const box = SecretBox.make(keyA, Option.some(keyB))
    const sealed = box.seal("secret")
    const body = sealed.split(":")[2]!
    const flipped = `${body.slice(0, 20)}${body[20] === "A" ? "B" : "A"}${body.slice(21)}`
    expect(Either.isLeft(open(box, `v1:${SecretBox.keyIdOf(keyA)}:${flipped}`))).toBe(true)
    // The header is authenticated: the same bytes under the other key's id do not open.
    expect(Either.isLeft(open(box, `v1:${SecretBox.keyIdOf(keyB)}:${body}`))).toBe(true)
    expect(Either.isLeft(open(box, `v1:${SecretBox.keyIdOf(keyA)}:`))).toBe(true)
  })

  test("plaintext (written before secrets were sealed) reads as it is", () => {
    const box = SecretBox.make(keyA)
    expect(SecretBox.isSealed("whsec_plain")).toBe(false)
    expect(open(box, "whsec_plain")).toEqual(Either.right("whsec_plain"))
    expect(box.isCurrent("whsec_plain")).toBe(false)
  })
})

const configFrom = (env: Record<string, string>) =>
  AppConfig.layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))

const boxFrom = (env: Record<string, string>) =>
  Effect.runPromise(Effect.either(SecretBox.SecretBox.pipe(Effect.provide(SecretBox.layer.pipe(Layer.provide(configFrom(env)))))))

describe("SECRETS_KEY (design §9)", () => {
  test("32 bytes of base64; anything else is refused without repeating the value", () => {
    const read = (env: Record<string, string>) =>
      Effect.runSync(AppConfig.make.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either))
    const ok = Either.getOrThrow(read({ SECRETS_KEY: base64(keyA), SECRETS_KEY_PREVIOUS: base64(keyB) }))
    expect(Buffer.from(Redacted.value(Option.getOrThrow(ok.secretsKey)))).toEqual(keyA)
    expect(Buffer.from(Redacted.value(Option.getOrThrow(ok.secretsKeyPrevious)))).toEqual(keyB)
    expect(String(Option.getOrThrow(ok.secretsKey))).toBe("<redacted>")
    expect(Option.isNone(Either.getOrThrow(read({ SECRETS_KEY: " " })).secretsKey)).toBe(true)
    for (const bad of [base64(randomBytes(31)), "not base64 at all!", base64(randomBytes(33))]) {
      const refused = read({ SECRETS_KEY: bad })
      expect(Either.isLeft(refused)).toBe(true)
      const text = String(Either.isLeft(refused) ? refused.left : "")
      expect(text).toContain("SECRETS_KEY")
      expect(text).toContain("expected 32 bytes in base64")
      expect(text).not.toContain(bad)
    }
  })

  test("with DATABASE_URL and no SECRETS_KEY: refused, saying what to set", async () => {
    const refused = await boxFrom({ DATABASE_URL: "postgres://u@h/db" })
    expect(Either.isLeft(refused)).toBe(true)
    if (Either.isLeft(refused)) {
      expect(refused.left._tag).toBe("SecretsKeyRequired")
      expect(refused.left.message).toContain("SECRETS_KEY is required when DATABASE_URL is set")
    }
    const set = Either.getOrThrow(await boxFrom({ DATABASE_URL: "postgres://u@h/db", SECRETS_KEY: base64(keyA) }))
    expect(set.keyId).toBe(SecretBox.keyIdOf(keyA))
  })

  test("embedded: generated into DATA_DIR/secrets-key (0600) at first start, the same key afterwards", async () => {
    const dir = await tempDir("secrets-key")
    try {
      const first = Either.getOrThrow(await boxFrom({ DATA_DIR: dir }))
      const file = NodePath.join(dir, "secrets-key")
      const stat = await NodeFs.stat(file)
      expect(stat.mode & 0o777).toBe(0o600)
      const key = Buffer.from((await NodeFs.readFile(file, "utf8")).trim(), "base64")
      expect(key).toHaveLength(32)
      expect(first.keyId).toBe(SecretBox.keyIdOf(key))
      const sealed = first.seal("kept across restarts")
      const second = Either.getOrThrow(await boxFrom({ DATA_DIR: dir }))
      expect(second.keyId).toBe(first.keyId)
      expect(Effect.runSync(second.open(sealed))).toBe("kept across restarts")
      // SECRETS_KEY wins over the file
      expect(Either.getOrThrow(await boxFrom({ DATA_DIR: dir, SECRETS_KEY: base64(keyB) })).keyId).toBe(SecretBox.keyIdOf(keyB))
      // a damaged file stops start-up instead of sealing under a new key
      await NodeFs.writeFile(file, "short\n")
      const damaged = await boxFrom({ DATA_DIR: dir })
      expect(Either.isLeft(damaged) && damaged.left.message).toContain("does not hold a 32-byte base64 key")
    } finally {
      await NodeFs.rm(dir, { recursive: true, force: true })
    }
  })
})
