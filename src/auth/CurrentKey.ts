import { Context } from "effect"
import type { KeyLimits } from "../accounts/KeyLimits.ts"
import type { Environment } from "../shared/Environment.ts"

/** The authenticated API key of the current partner request: it decides account and environment. */
export interface AuthenticatedKey {
  readonly keyId: string
  readonly accountId: string
  readonly environment: Environment
  readonly limits: KeyLimits
}

export class CurrentKey extends Context.Tag("auth/CurrentKey")<CurrentKey, AuthenticatedKey>() {}
