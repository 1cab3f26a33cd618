import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { AppConfig } from "../config/AppConfig.ts"
import { writeNewFile } from "../config/DataDir.ts"

/**
 * Secrets at rest (design §3, §9): TRA tokens and webhook signing secrets are stored as
 * `v1:<key id>:<base64url(iv ‖ ciphertext ‖ tag)>`, AES-256-GCM under `SECRETS_KEY`. The key id (the first
 * 8 hex digits of the key's SHA-256) says which key opens a value, so during a rotation values under
 * `SECRETS_KEY_PREVIOUS` still open while new ones are sealed under the current key. The `v1:<key id>` prefix is
 * also the GCM's additional data: a value cannot be passed off as sealed under another key or version.
 */

const VERSION = "v1"
const IV_BYTES = 12
const TAG_BYTES = 16

/** `DATABASE_URL` is set and `SECRETS_KEY` is not: instances sharing a database must share the key. */
export class SecretsKeyRequired extends Schema.TaggedError<SecretsKeyRequired>()("SecretsKeyRequired", {
  message: Schema.String
}) {}

/** A stored value that neither key opens: sealed under a third key, or altered. */
export class SecretUnreadable extends Schema.TaggedError<SecretUnreadable>()("SecretUnreadable", {
  message: Schema.String,
  key_id: Schema.String
}) {}

interface Key {
  readonly id: string
  readonly bytes: Uint8Array
}

/** The first 8 hex digits of the key's SHA-256: names a key in logs and stored values without revealing it. */
export const keyIdOf = (key: Uint8Array): string => createHash("sha256").update(key).digest("hex").slice(0, 8)

const keyOf = (bytes: Uint8Array): Key => ({ id: keyIdOf(bytes), bytes })

/** Whether `stored` is a sealed value (anything else is plaintext written before secrets were sealed). */
export const isSealed = (stored: string): boolean => stored.startsWith(`${VERSION}:`)

/** The key id a sealed value names. */
export const keyIdIn = (stored: string): string | undefined =>
  isSealed(stored) ? stored.slice(VERSION.length + 1).split(":", 1)[0] : undefined

const seal = (key: Key, plain: string): string => {
  const header = `${VERSION}:${key.id}`
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv("aes-256-gcm", key.bytes, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(header))
  const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
  return `${header}:${Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url")}`
}

const open = (key: Key, stored: string): string | undefined => {
  const header = `${VERSION}:${key.id}`
  const data = Buffer.from(stored.slice(header.length + 1), "base64url")
  if (data.length < IV_BYTES + TAG_BYTES) return undefined
  try {
    const decipher = createDecipheriv("aes-256-gcm", key.bytes, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(header))
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES))
    return Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()])
      .toString("utf8")
  } catch {
    return undefined
  }
}

export interface SecretBoxShape {
  /** The current key's id: what `seal` writes. */
  readonly keyId: string
  /** The ids of the keys `open` knows: the current one, then the previous one if set. */
  readonly keyIds: ReadonlyArray<string>
  /** Seals under the current key (a fresh IV each time: equal secrets never look alike). */
  readonly seal: (plain: string) => string
  /**
   * Opens a value sealed under the current or the previous key. Plaintext (a row written before secrets were
   * sealed, or by an older instance during a deploy) is answered as it is: start-up and `secrets rotate` seal it.
   */
  readonly open: (stored: string) => Effect.Effect<string, SecretUnreadable>
  /** Whether `stored` is sealed under the current key (`secrets rotate` leaves those alone). */
  readonly isCurrent: (stored: string) => boolean
}

export class SecretBox extends Context.Tag("secrets/SecretBox")<SecretBox, SecretBoxShape>() {}

/** The box over a current key and, during a rotation, the previous one. */
export const make = (current: Uint8Array, previous: Option.Option<Uint8Array> = Option.none()): SecretBoxShape => {
  const keys = [keyOf(current), ...Option.toArray(Option.map(previous, keyOf))]
  const currentKey = keys[0]!
  return {
    keyId: currentKey.id,
    keyIds: keys.map((k) => k.id),
    seal: (plain) => seal(currentKey, plain),
    open: (stored) => {
      if (!isSealed(stored)) return Effect.succeed(stored)
      const id = keyIdIn(stored) ?? ""
      // Two keys may share an 8-digit id (1 in 4 billion): each is tried; the tag tells the right one.
      const candidates = keys.filter((k) => k.id === id)
      const plain = candidates.map((key) => open(key, stored)).find((text) => text !== undefined)
      return plain !== undefined ? Effect.succeed(plain) : Effect.fail(
        new SecretUnreadable({
          message: candidates.length === 0
            ? `a stored secret is sealed under key ${id}, which is neither SECRETS_KEY (${currentKey.id})`
              + `${keys[1] === undefined ? "" : ` nor SECRETS_KEY_PREVIOUS (${keys[1].id})`}`
            : `a stored secret under key ${id} does not open: it was altered`,
          key_id: id
        })
      )
    },
    isCurrent: (stored) => keyIdIn(stored) === currentKey.id
  }
}

export const keyFile = (dataDir: string) => NodePath.resolve(dataDir, "secrets-key")

const decodeKeyFile = (text: string): Uint8Array | undefined => {
  const bytes = Buffer.from(text.trim(), "base64")
  return bytes.length === 32 ? new Uint8Array(bytes) : undefined
}

/**
 * Embedded mode without `SECRETS_KEY`: the key in `DATA_DIR/secrets-key`, generated (mode 0600) at first
 * start, as the admin token is (`admin/AdminToken.ts`). Losing the file loses the stored secrets: it is backed
 * up with `DATA_DIR`.
 */
const keyFromFile = (dataDir: string) =>
  Effect.gen(function*() {
    const file = keyFile(dataDir)
    const read = Effect.promise(() => NodeFs.readFile(file, "utf8").then((text) => text, () => undefined))
    const existing = yield* read
    // Another process may win the race to write it: its key is then the one read back.
    if (existing === undefined) yield* writeNewFile(file, `${randomBytes(32).toString("base64")}\n`)
    const stored = existing ?? (yield* read) ?? ""
    const key = decodeKeyFile(stored)
    if (key === undefined) {
      return yield* new SecretsKeyRequired({
        message: `${file} does not hold a 32-byte base64 key; restore it from a backup, or set SECRETS_KEY`
      })
    }
    if (existing === undefined) yield* Effect.logInfo(`secrets key generated and written to ${file} (mode 0600)`)
    return key
  })

/**
 * `SECRETS_KEY`, else (embedded mode only) `DATA_DIR/secrets-key`; with `DATABASE_URL` and no `SECRETS_KEY`
 * start-up stops: several instances share the database, and a key of one instance's own would make the
 * others' secrets unreadable.
 */
export const layer = Layer.effect(
  SecretBox,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const current = Option.isSome(config.secretsKey)
      ? Redacted.value(config.secretsKey.value)
      : Option.isSome(config.databaseUrl)
      ? yield* new SecretsKeyRequired({
        message: "SECRETS_KEY is required when DATABASE_URL is set: the same 32-byte base64 key on every instance "
          + "(generate one with `openssl rand -base64 32`); it encrypts the TRA tokens and webhook secrets "
          + "stored in the database"
      })
      : yield* keyFromFile(config.dataDir)
    return make(current, Option.map(config.secretsKeyPrevious, Redacted.value))
  })
)
