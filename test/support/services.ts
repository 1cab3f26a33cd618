import { ConfigProvider, Layer, ManagedRuntime } from "effect"
import * as AppConfig from "../../src/config/AppConfig.ts"
import * as Database from "../../src/db/Database.ts"
import { Resolver, SafeHttp } from "../../src/net/SafeHttp.ts"
import * as SecretBox from "../../src/secrets/SecretBox.ts"
import { ReservationsLayer } from "../../src/App.ts"
import * as NodeOs from "node:os"
import { type RunningApp, TEST_SECRETS_KEY } from "./app.ts"

/**
 * A runtime holding one background service (`layer`) on the same database and data directory as `app`,
 * with what such services need: the database, `AppConfig` (from `env` beyond the database and data directory),
 * outbound HTTP with private addresses allowed (the fakes listen on 127.0.0.1), and the reservation core with its
 * ports as the app wires it (`App.ReservationsLayer`): a service that changes reservations goes through it. Tests drive it round by round, on a `TestClock`, while the app runs with
 * ROLE=api so that no loop of its own competes.
 */
export const serviceRuntime = <A, E>(
  app: Pick<RunningApp, "dataDir" | "env">,
  layer: Layer.Layer<A, E, any>,
  env: Readonly<Record<string, string>> = {}
): ManagedRuntime.ManagedRuntime<A, unknown> => {
  const config = AppConfig.layer.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
      new Map([
        ["DATABASE_URL", app.env.DATABASE_URL ?? ""],
        ["DATA_DIR", app.dataDir],
        ["SECRETS_KEY", app.env.SECRETS_KEY ?? ""],
        ["SECRETS_KEY_PREVIOUS", app.env.SECRETS_KEY_PREVIOUS ?? ""],
        ...Object.entries(env)
      ])
    )))
  )
  return ManagedRuntime.make(
    (layer as Layer.Layer<A, E, never>).pipe(
      Layer.provide(SafeHttp.layer({ policy: { allowPrivate: true } }).pipe(Layer.provide(Resolver.system))),
      Layer.provide(ReservationsLayer),
      // The app's own key (its SECRETS_KEY, or the embedded app's DATA_DIR/secrets-key): the same stored secrets.
      Layer.provide(SecretBox.layer),
      Layer.provide(Database.layer),
      Layer.provide(config)
    )
  )
}

/**
 * The service's database layer as App builds it (`Database.layer` on `AppConfig`), for PostgreSQL at `url`, with
 * `settings` (e.g. `DB_POOL_SIZE`) beside the required ones.
 */
export const serviceDatabase = (url: string, settings: ReadonlyArray<readonly [string, string]> = []) =>
  Database.layer.pipe(Layer.provide(AppConfig.layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
    new Map([["DATABASE_URL", url], ["DATA_DIR", NodeOs.tmpdir()], ["SECRETS_KEY", TEST_SECRETS_KEY], ...settings])
  ))))))
