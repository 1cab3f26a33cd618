import { Effect, Option, Schema } from "effect"
import { createHash, getRandomValues } from "node:crypto"
import { Environment } from "../shared/Environment.ts"

/** Keys carry their environment in the prefix (spec Authentication rule 2). */
export const keyPrefix = (environment: Environment) => `svc_${environment}_`

/** Most active keys one account may hold per environment (spec Authentication rule 7). */
export const MAX_ACTIVE_KEYS_PER_TYPE = 3

// 32 random bytes → 43 base64url characters; the whole key is `svc_<env>_<secret>`.
const SECRET_PATTERN = /^svc_(test|live)_([A-Za-z0-9_-]{43})$/

/** A fresh key: the only moment its plain text exists (stored as a hash, shown once). */
export const generate = (environment: Environment) =>
  Effect.sync(() => {
    const secret = Buffer.from(getRandomValues(new Uint8Array(32))).toString("base64url")
    const key = `${keyPrefix(environment)}${secret}`
    return { key, hash: hash(key), displayPrefix: displayPrefix(key) }
  })

export const hash = (key: string) => createHash("sha256").update(key).digest("hex")

/** What operators see in `keys list`: enough to tell keys apart, too little to use one. */
export const displayPrefix = (key: string) => key.slice(0, keyPrefix("test").length + 6)

/** The environment a well-formed key claims; malformed keys are rejected before any database work. */
export const parse = (key: string): Option.Option<Environment> => {
  const match = SECRET_PATTERN.exec(key)
  return Option.liftPredicate(match?.[1], Schema.is(Environment))
}
