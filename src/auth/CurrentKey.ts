import { Context } from "effect"
import type { Environment } from "../shared/Environment.ts"

/** Per-minute limits of every key of one account (design §4 `accounts limits`). */
export interface KeyLimits {
  readonly reads: number
  readonly writes: number
  readonly tests: number
}

/** The authenticated API key of the current partner request: it decides account and environment. */
export interface AuthenticatedKey {
  readonly keyId: string
  readonly accountId: string
  readonly environment: Environment
  readonly limits: KeyLimits
}

export class CurrentKey extends Context.Tag("auth/CurrentKey")<CurrentKey, AuthenticatedKey>() {}
