import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { AdminRpcs } from "../../src/admin/AdminRpcs.ts"
import { App } from "../../src/App.ts"
import * as AppConfig from "../../src/config/AppConfig.ts"
import * as Logging from "../../src/config/Logging.ts"
import { DEFAULT_TOKEN } from "./fakeTra.ts"

export interface RunningApp {
  readonly baseUrl: string
  readonly adminToken: string
  readonly dataDir: string
  readonly env: Readonly<Record<string, string>>
  readonly stop: () => Promise<void>
}

/**
 * The `SECRETS_KEY` of every app the suite starts on PostgreSQL (required there, design §9) unless a test sets
 * its own; embedded apps generate theirs into `DATA_DIR`.
 */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString("base64")

export const tempDir = (prefix: string) => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), `${prefix}-`))

/**
 * What a test file starts and stops after its tests: an app, a fake or a server (`stop`), a database (`drop`), a
 * runtime (`dispose`) or a browser (`close`).
 */
export type Started =
  | { readonly stop: () => unknown }
  | { readonly drop: () => Promise<void> }
  | { readonly dispose: () => Promise<void> }
  | { readonly close: () => Promise<void> }

/**
 * Stops what a file started, one after another in the order given (a runtime before the app it uses, the app
 * before its database), passing over what was never started because set-up failed before it.
 */
export const stopAll = async (...started: ReadonlyArray<Started | undefined>) => {
  for (const resource of started) {
    if (resource === undefined) continue
    if ("dispose" in resource) await resource.dispose()
    else if ("drop" in resource) await resource.drop()
    else if ("close" in resource) await resource.close()
    else await resource.stop()
  }
}

/**
 * Boots the real application layer in-process on a random port, configured only through `env` (as the
 * process would be), and answers its base URL. Nothing is mocked: HTTP, database and RPC are real. `around` is
 * built first, under everything (bench/ops.ts puts a supervisor there).
 */
export const startApp = async (env: Record<string, string>, around: Layer.Layer<never> = Layer.empty): Promise<RunningApp> => {
  const dataDir = env.DATA_DIR ?? await tempDir("app")
  const adminToken = env.ADMIN_TOKEN ?? `admin-${Math.random().toString(36).slice(2)}`
  const full: Record<string, string> = {
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "Error",
    LOG_FORMAT: "pretty",
    ...(env.DATABASE_URL === undefined ? {} : { SECRETS_KEY: TEST_SECRETS_KEY }),
    ...env,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken
  }
  const provider = Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(full))))
  const config = AppConfig.layer.pipe(Layer.provide(provider))
  const runtime = ManagedRuntime.make(
    App.pipe(
      Layer.provide(config),
      Layer.provide(Logging.layer.pipe(Layer.provide(config))),
      Layer.provide(provider),
      Layer.provide(around)
    )
  )
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  const baseUrl = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
  return { baseUrl, adminToken, dataDir, env: full, stop: () => runtime.dispose() }
}

/** Calls the admin RPC of a running app, as the CLI does. */
export const admin = <A, E>(
  app: Pick<RunningApp, "baseUrl" | "adminToken">,
  use: (client: RpcClient.FromGroup<typeof AdminRpcs, any>) => Effect.Effect<A, E>
): Promise<A> => {
  const http = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      client.pipe(HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.make(app.adminToken)))))
  ).pipe(Layer.provide(FetchHttpClient.layer))
  const protocol = RpcClient.layerProtocolHttp({ url: `${app.baseUrl}/rpc/admin` }).pipe(
    Layer.provide([http, RpcSerialization.layerJson])
  )
  return Effect.runPromise(RpcClient.make(AdminRpcs).pipe(Effect.flatMap(use), Effect.scoped, Effect.provide(protocol)))
}

/** An account with a sandbox (two test properties, one test key) and one live key. */
export const seedAccount = async (app: RunningApp, name = "Hotelera Andina") => {
  const account = await admin(app, (c) => c.CreateAccount({ name, email: `${name.replace(/\W/g, "").toLowerCase()}@example.co` }))
  const sandbox = await admin(app, (c) => c.CreateSandbox({ account_id: account.account_id }))
  const live = await admin(app, (c) => c.CreateKey({ account_id: account.account_id, environment: "live" }))
  return { accountId: account.account_id, testKey: sandbox.api_key, liveKey: live.api_key, testProperties: sandbox.properties }
}

/** What `CreateProperty` takes besides the account: the property's name and settings. */
export type PropertyFields = Omit<Parameters<RpcClient.FromGroup<typeof AdminRpcs, never>["CreateProperty"]>[0], "account_id">

/** A property of `accountId`, created through the admin RPC as `cli properties create` does. */
export const createProperty = (app: RunningApp, accountId: string, fields: PropertyFields) =>
  admin(app, (c) => c.CreateProperty({ account_id: accountId, ...fields }))

/** A property of `accountId` that reports to the TRA with the fake TRA's `DEFAULT_TOKEN`: named, with its RNT. */
export const traProperty = (
  app: RunningApp,
  accountId: string,
  name: string,
  rntId: string,
  settings: Omit<PropertyFields, "name" | "rnt_id" | "tra_token"> = {}
) => createProperty(app, accountId, { name, rnt_id: rntId, tra_token: Redacted.make(DEFAULT_TOKEN), ...settings })

export interface HttpResult<B = any> {
  readonly status: number
  readonly headers: Headers
  readonly body: B
}

/** A plain HTTP call, so tests see the exact wire: status, headers and JSON body. */
export const call = async <B = any>(
  app: Pick<RunningApp, "baseUrl">,
  method: string,
  path: string,
  options: { readonly key?: string; readonly json?: unknown; readonly body?: string; readonly headers?: Record<string, string> } = {}
): Promise<HttpResult<B>> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`
  let body: string | undefined = options.body
  if (options.json !== undefined) {
    body = JSON.stringify(options.json)
    headers["content-type"] = "application/json"
  }
  const response = await fetch(`${app.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = text === "" ? null : JSON.parse(text)
  } catch {
    // not JSON: leave the text for the assertion to show
  }
  return { status: response.status, headers: response.headers, body: parsed as B }
}
