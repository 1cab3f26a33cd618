import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import { writeNewFile } from "../config/DataDir.ts"

/** The secret that authenticates the admin RPC. */
export class AdminToken extends Context.Tag("admin/AdminToken")<AdminToken, Redacted.Redacted>() {}

export const tokenFile = (dataDir: string) => NodePath.resolve(dataDir, "admin-token")

/**
 * `ADMIN_TOKEN`, else the token in `DATA_DIR/admin-token`, generated (mode 0600) at first start. Several
 * instances must share one token, so they should set `ADMIN_TOKEN` (design §4).
 */
export const layer = Layer.effect(
  AdminToken,
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.adminToken)) return config.adminToken.value
    const file = tokenFile(config.dataDir)
    const existing = yield* Effect.promise(() => NodeFs.readFile(file, "utf8").then((t) => t.trim(), () => ""))
    if (existing !== "") return Redacted.make(existing)
    const token = randomBytes(32).toString("hex")
    // Another instance may win the race to write it: its token is then the one read back.
    yield* writeNewFile(file, `${token}\n`)
    const stored = yield* Effect.promise(() => NodeFs.readFile(file, "utf8").then((t) => t.trim()))
    yield* Effect.logInfo(`admin token generated and written to ${file} (mode 0600)`)
    return Redacted.make(stored)
  })
)
