import { Effect } from "effect"
import * as SecretBox from "../../src/secrets/SecretBox.ts"
import { TEST_SECRETS_KEY } from "./app.ts"

/** The key id of `TEST_SECRETS_KEY`: what every sealed value of an app on PostgreSQL starts with. */
export const TEST_KEY_ID = SecretBox.keyIdOf(Buffer.from(TEST_SECRETS_KEY, "base64"))

/**
 * Opens a value as the database stores it, with the suite's key (or `key`, base64), failing on plaintext: a
 * test reading a secret column sees that it is sealed and what it holds.
 */
export const openStored = (stored: unknown, key: string = TEST_SECRETS_KEY): Promise<string> => {
  if (typeof stored !== "string" || !SecretBox.isSealed(stored)) {
    return Promise.reject(new Error(`not a sealed value: ${JSON.stringify(stored)}`))
  }
  return Effect.runPromise(SecretBox.make(Buffer.from(key, "base64")).open(stored))
}
