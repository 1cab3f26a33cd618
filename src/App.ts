import { FetchHttpClient, HttpApi, HttpApiBuilder, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { BunHttpServer } from "@effect/platform-bun"
import { Context, Effect, Exit, FiberRef, Layer, Logger, LogLevel, Option } from "effect"
import packageJson from "../package.json" with { type: "json" }
import { Accounts } from "./accounts/Accounts.ts"
import * as AlertsModule from "./alerts/Alerts.ts"
import * as AdminHandlers from "./admin/AdminHandlers.ts"
import * as AdminToken from "./admin/AdminToken.ts"
import { ApiKeys } from "./auth/ApiKeys.ts"
import * as PartnerAuth from "./auth/PartnerAuth.ts"
import { AppConfig } from "./config/AppConfig.ts"
import * as Database from "./db/Database.ts"
import * as DataDirLock from "./db/DataDirLock.ts"
import * as JobLeases from "./jobs/JobLeases.ts"
import { runMigrations } from "./db/migrations.ts"
import * as ApiDocs from "./http/ApiDocs.ts"
import * as ErrorMiddleware from "./http/ErrorMiddleware.ts"
import { withServers } from "./http/OpenApiDocument.ts"
import * as RequestDrain from "./http/RequestDrain.ts"
import { PartnerApi, WorkerApi } from "./routes/PartnerApi.ts"
import { PropertiesLive } from "./routes/PropertiesRoutes.ts"
import { ReservationsLive } from "./routes/ReservationsRoutes.ts"
import { ValidationLive } from "./routes/ValidationRoutes.ts"
import { ReferenceLive } from "./routes/ReferenceRoutes.ts"
import { WebhooksLive } from "./routes/WebhooksRoutes.ts"
import { CheckinLive } from "./routes/CheckinRoutes.ts"
import * as PanelRoutes from "./routes/PanelRoutes.ts"
import { PartnerHealthLive, WorkerHealthLive } from "./routes/HealthRoutes.ts"
import { Properties } from "./properties/Properties.ts"
import { Sandbox } from "./sandbox/Sandbox.ts"
import * as CheckinPage from "./checkin/Page.ts"
import { GuestCheckin } from "./checkin/GuestCheckin.ts"
import { ReferenceStore } from "./compliance/ReferenceStore.ts"
import { ReportOps } from "./compliance/ReportOps.ts"
import * as ReportRunsModule from "./compliance/ReportRuns.ts"
import { sireFiles } from "./compliance/SireRecords.ts"
import * as SimulatedAuthorities from "./compliance/SimulatedAuthorities.ts"
import { SireGateway } from "./compliance/SireGateway.ts"
import * as SireGatewayModule from "./compliance/SireGateway.ts"
import * as TraClient from "./compliance/TraClient.ts"
import * as DocumentStore from "./documents/DocumentStore.ts"
import * as PhotoFetcher from "./documents/PhotoFetcher.ts"
import { photoQueue } from "./documents/PhotoJobs.ts"
import * as HistoryRetention from "./webhooks/HistoryRetention.ts"
import * as Retention from "./documents/Retention.ts"
import * as Mailer from "./mail/Mailer.ts"
import * as MailQueueModule from "./mail/MailQueue.ts"
import { Resolver, SafeHttp } from "./net/SafeHttp.ts"
import * as SecretBox from "./secrets/SecretBox.ts"
import * as StoredSecrets from "./secrets/StoredSecrets.ts"
import { Modifications } from "./reservations/Modifications.ts"
import { Registrations } from "./reservations/Registrations.ts"
import { PartnerReservations } from "./reservations/PartnerReservations.ts"
import { Reservations } from "./reservations/Reservations.ts"
import { Deliveries } from "./webhooks/Deliveries.ts"
import * as DeliveryLoop from "./webhooks/DeliveryLoop.ts"
import { reservationEvents } from "./webhooks/Outbox.ts"
import { WebhookEndpoints } from "./webhooks/WebhookEndpoints.ts"
import * as Trm from "./trm/Trm.ts"
import * as RateLimits from "./ratelimit/RateLimits.ts"
import * as Telemetry from "./telemetry/Telemetry.ts"
import * as Heartbeat from "./workers/Heartbeat.ts"
import * as PanelPage from "./panel/Page.ts"
import { PanelAccount } from "./panel/PanelAccount.ts"
import { PanelWebhooks } from "./panel/PanelWebhooks.ts"
import { PanelAuth } from "./panel/PanelAuth.ts"
import { PanelKeys } from "./panel/PanelKeys.ts"

/** Applies pending migrations before anything else touches the database (design §3). */
const MigrateOnStart = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.tap((applied) => applied.length > 0 ? Effect.logInfo(`applied migrations: ${applied.join(", ")}`) : Effect.void)
  )
)

/**
 * The reservation core with the ports the later modules provide (`reservations/Ports.ts`): its events (webhooks),
 * photo fetches (documents) and simulated authorities (compliance). One Reservations shared by every service
 * built on it: layers are memoized by reference.
 */
export const ReservationsLayer = Reservations.Default.pipe(
  Layer.provide([reservationEvents, photoQueue, SimulatedAuthorities.layer])
)

/**
 * The partner API's reservation endpoints over the core, with what they read beside it: the SIRE files of a
 * cancellation or a departure (compliance) and the TRM of USD amounts (one TRM cache).
 */
export const PartnerReservationsLayer = PartnerReservations.Default.pipe(
  Layer.provide([ReservationsLayer, sireFiles]),
  Layer.provide(Trm.layer),
  Layer.provide(FetchHttpClient.layer)
)

/**
 * Outbound calls to partner-supplied URLs (webhooks, document photos) under design §7's URL policy.
 * WEBHOOK_ALLOW_PRIVATE_URLS lifts it for development and tests, and says so at start.
 */
const OutboundLayer = Layer.unwrapEffect(Effect.gen(function*() {
  const { allowPrivateUrls } = yield* AppConfig
  if (allowPrivateUrls) {
    yield* Effect.logWarning(
      "WEBHOOK_ALLOW_PRIVATE_URLS is on: partner URLs may be http:// or private addresses (development and tests only)"
    )
  }
  return SafeHttp.layer({ policy: { allowPrivate: allowPrivateUrls } })
})).pipe(Layer.provide(Resolver.system))

/**
 * The authority clients (design §6.10, §6.13): the TRA web service and, with SIRE_MODE=gateway, the SIRE
 * gateway; in manual mode no SIRE call is ever made (files are kept for an operator).
 */
const AuthorityClients = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Layer.mergeAll(
    TraClient.layer({ baseUrl: config.traBaseUrl, concurrency: config.traConcurrency }),
    Option.match(config.sireGatewayUrl, {
      onNone: () =>
        Layer.succeed(SireGateway, { submit: () => Effect.dieMessage("SIRE_MODE=manual: no SIRE gateway is configured") }),
      onSome: (url) => SireGatewayModule.layer({ url, token: config.sireGatewayToken })
    })
  )
)).pipe(Layer.provide(FetchHttpClient.layer))

// The reference tables come from ReferenceStore at the start of each run (bundled data and operators' overrides).
const ReportRunsLayer = ReportRunsModule.ReportRuns.Default.pipe(
  Layer.provide([AuthorityClients, ReservationsLayer])
)

// One SafeHttp shared by the API (URL checks, test pings) and the loops.
const DeliveriesLayer = Deliveries.Default.pipe(Layer.provide(OutboundLayer))

const WebhookEndpointsLayer = WebhookEndpoints.Default.pipe(Layer.provide(OutboundLayer))

/** The account panel (design §8) over the partner API's own services: one rule, two entrances. */
const PanelAuthLayer = PanelAuth.Default.pipe(Layer.provide(RateLimits.layer))
const PanelLayer = Layer.mergeAll(
  PanelAuthLayer,
  PanelKeys.Default.pipe(Layer.provide([PanelAuthLayer, Accounts.Default, ApiKeys.Default])),
  PanelAccount.Default.pipe(Layer.provide([
    PanelAuthLayer,
    Accounts.Default,
    Sandbox.Default,
    Properties.Default,
    ReservationsLayer,
    PartnerReservationsLayer,
    AlertsModule.Alerts.Default
  ])),
  PanelWebhooks.Default.pipe(Layer.provide([Accounts.Default, WebhookEndpointsLayer, DeliveriesLayer]))
)

const Services = Layer.mergeAll(
  Accounts.Default,
  ApiKeys.Default,
  Properties.Default,
  Sandbox.Default,
  ReservationsLayer,
  PartnerReservationsLayer,
  Registrations.DefaultWithoutDependencies.pipe(Layer.provide([ReservationsLayer, PartnerReservationsLayer])),
  Modifications.DefaultWithoutDependencies.pipe(Layer.provide([ReservationsLayer, PartnerReservationsLayer])),
  WebhookEndpointsLayer,
  RateLimits.layer,
  PanelLayer,
  DeliveriesLayer,
  OutboundLayer,
  ReportRunsLayer,
  ReferenceStore.Default,
  ReportOps.Default.pipe(Layer.provide(ReservationsLayer)),
  MailQueueModule.MailQueue.Default,
  StoredSecrets.StoredSecrets.Default,
  GuestCheckin.Default.pipe(Layer.provide([ReservationsLayer, DocumentStore.filesystem]))
)

const docs = { path: "/docs", documentPath: "/openapi.json" } as const

/**
 * The reference page and the document, compressed, served by this process alone (issue 14); the page may call
 * the document's server (`PUBLIC_BASE_URL`) for Scalar's "Test Request".
 */
const DocsLayer = Layer.unwrapEffect(Effect.map(AppConfig, (config) => {
  const connectSources = config.publicBaseUrlSet ? [new URL(config.publicBaseUrl).origin] : []
  return Layer.mergeAll(ApiDocs.scalarLayer({ ...docs, connectSources }), ApiDocs.openApiLayer({ path: docs.documentPath }))
}))

const nonApiRoutes = [
  ...ApiDocs.routes(docs),
  // The admin RPC reads a JSON body (`RpcSerialization.layerJson`): the same guard as the API's JSON routes.
  { method: "POST", path: "/rpc/admin", body: "json" as const },
  ...CheckinPage.routes,
  ...PanelPage.routes,
  ...PanelRoutes.routes
]

/**
 * The router drops path parameters longer than its `maxParamLength` (100 by default): the route then does not
 * match, and the error middleware answered 405 for a path that exists for GET. No limit here: a parameter of
 * any length reaches its path schema, which names it (endpoint 8's `external_id`: at most 120 characters);
 * the request line itself is bounded by Bun's header limit. (The limit guards regex parameters, which we do
 * not use.)
 */
const LongPathParams = HttpRouter.setRouterConfig({ maxParamLength: Number.MAX_SAFE_INTEGER })

/**
 * The contract as `/openapi.json` and `/docs` show it: `PartnerApi` with this process's `servers`
 * (PUBLIC_BASE_URL). Both read it from here, so the page shows the very document that is served; it is
 * generated once per process.
 */
const DocumentedPartnerApi = Layer.effect(
  HttpApi.Api,
  Effect.map(AppConfig, (config) => ({
    // As `HttpApiBuilder.api` does (with `as any`): the tag holds the api erased to its base type, which
    // platform's types cannot relate to a concrete api (an endpoint's absent schemas are `Schema<never>`).
    api: withServers(PartnerApi, config) as never,
    context: Context.empty()
  }))
)

/** Partner API, OpenAPI, docs, health and the admin RPC: what ROLE=api|all serves. */
const PartnerHttp = HttpApiBuilder.serve().pipe(
  Layer.provide(DocsLayer.pipe(Layer.provide(DocumentedPartnerApi))),
  Layer.provide(ErrorMiddleware.layer(
    ErrorMiddleware.routesOf(PartnerApi, nonApiRoutes),
    [CheckinPage.coveredHeaders, PanelPage.coveredHeaders]
  )),
  Layer.provide(AdminHandlers.layer),
  Layer.provide(CheckinPage.layer),
  Layer.provide(PanelPage.layer),
  Layer.provide(PanelRoutes.openApiRoute),
  Layer.provide(HttpApiBuilder.api(PartnerApi).pipe(
    Layer.provide([PropertiesLive, ReservationsLive, ValidationLive, ReferenceLive, WebhooksLive, CheckinLive, PanelRoutes.layer, PartnerHealthLive]),
    Layer.provide(PartnerAuth.layer)
  )),
  Layer.provide(AdminToken.layer),
  Layer.provide(LongPathParams)
)

/** What ROLE=worker serves: health only. */
const WorkerHttp = HttpApiBuilder.serve().pipe(
  Layer.provide(ErrorMiddleware.layer(ErrorMiddleware.routesOf(WorkerApi, []))),
  Layer.provide(HttpApiBuilder.api(WorkerApi).pipe(Layer.provide(WorkerHealthLive)))
)

/**
 * Per-request spans cost ~30 % of throughput (stack-notes §6): made only when traces are exported
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`), and then not for the probes, which would bury the requests.
 */
const requestSpans = (traced: boolean) =>
  HttpMiddleware.withTracerDisabledWhen((request) =>
    !traced || request.url === "/healthz" || request.url === "/readyz"
  )

/** Background loops (ROLE=worker|all): heartbeat, document photos, webhook deliveries, report runs, e-mail. */
const Workers = Layer.mergeAll(
  Heartbeat.layer,
  MailQueueModule.loop.pipe(Layer.provide(Mailer.layer)),
  PhotoFetcher.loop.pipe(
    Layer.provide(PhotoFetcher.PhotoFetcher.Default),
    Layer.provide([ReservationsLayer, DocumentStore.filesystem])
  ),
  Retention.loop.pipe(
    Layer.provide(Retention.Retention.Default),
    Layer.provide([ReservationsLayer, DocumentStore.filesystem])
  ),
  DeliveryLoop.layer,
  HistoryRetention.loop.pipe(Layer.provide(HistoryRetention.HistoryRetention.Default)),
  ReportRunsModule.loop,
  AlertsModule.loop.pipe(Layer.provide(AlertsModule.Alerts.Default))
)

/**
 * The start-up and stop lines (design §9) are written at any LOG_LEVEL but `None`: an operator who quiets the log
 * to warnings still sees the process start, on which port, and stop.
 */
const lifecycleLine = <A, E, R>(line: Effect.Effect<A, E, R>) =>
  Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) =>
    LogLevel.greaterThan(minimum, LogLevel.Info) && minimum._tag !== "None"
      ? Logger.withMinimumLogLevel(line, LogLevel.Info)
      : line)

/**
 * What outlives everything but the database (design §9): the requests in flight and the job leases this
 * process holds. When the rest has stopped — requests drained, loops ended — it gives back the leases still
 * held, so another instance takes that work at once, and writes the one shutdown line.
 */
const Lifecycle = Layer.scopedContext(Effect.gen(function*() {
  const leases = yield* JobLeases.make
  const requests = yield* RequestDrain.make
  yield* Effect.addFinalizer((exit) =>
    Effect.gen(function*() {
      const released = yield* leases.releaseAll
      // A start-up that failed says so itself (main.ts); a stop by SIGTERM/SIGINT interrupts the process.
      if (!Exit.isInterrupted(exit)) return
      const { drained, cut } = yield* requests.outcome
      yield* Effect.logInfo(
        `stopped: drained ${drained} request${drained === 1 ? "" : "s"} in flight`
          + (cut > 0 ? ` (${cut} cut off after SHUTDOWN_DRAIN_SECONDS)` : "")
          + `, released ${released} job lease${released === 1 ? "" : "s"}`
      ).pipe(
        Effect.annotateLogs({ drained_requests: drained, cut_requests: cut, released_leases: released }),
        lifecycleLine
      )
    })
  )
  return Context.make(JobLeases.JobLeases, leases).pipe(Context.add(RequestDrain.RequestDrain, requests))
}))

/**
 * The one start-up line once everything listens and runs (design §9), and the first thing a stop does: close
 * the listener and let the requests in flight finish, for up to SHUTDOWN_DRAIN_SECONDS, before any layer
 * below is torn down.
 */
const Started = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const database = yield* Database.Database
  const server = yield* HttpServer.HttpServer
  const requests = yield* RequestDrain.RequestDrain
  const port = server.address._tag === "TcpAddress" ? server.address.port : config.port
  yield* Effect.flatMap(DataDirLock.Held, (lock) => lock.listening(port))
  yield* Effect.logInfo(
    `started: version ${packageJson.version}, role ${config.role}, port ${port}, ${database.mode} database, `
      + `pid ${process.pid}; listening on ${HttpServer.formatAddress(server.address)}`
  ).pipe(
    Effect.annotateLogs({ version: packageJson.version, role: config.role, port, database: database.mode }),
    lifecycleLine
  )
  yield* Effect.addFinalizer(() => requests.drain(config.shutdownDrain))
}))

/**
 * The one production composition: HTTP and/or workers by ROLE, over the services, over the migrated
 * database. Exposes the HTTP server and the metrics listener (tests read their addresses) and the database.
 */
export const App = Layer.unwrapEffect(Effect.map(AppConfig, (config) => {
  const http = (config.role === "worker" ? WorkerHttp : PartnerHttp).pipe(
    requestSpans(Option.isSome(config.otlpEndpoint))
  )
  const workers = config.role === "api" ? Layer.empty : Workers
  // No cap of Bun's own: it would answer 413 with an empty body. Every body that is read is read through the
  // error middleware's guard, which stops at the route's limit and answers in the Error shape; a body nobody
  // reads is never buffered (Bun stops taking it once the answer is sent).
  const server = BunHttpServer.layer({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER
  })
  return Started.pipe(
    Layer.provideMerge(Layer.mergeAll(http, workers, Telemetry.metrics).pipe(Layer.provide(Services))),
    Layer.provideMerge(server),
    Layer.provideMerge(Lifecycle),
    Layer.provide(StoredSecrets.sealOnStart.pipe(Layer.provide(StoredSecrets.StoredSecrets.Default))),
    Layer.provide(MigrateOnStart),
    Layer.provideMerge(Database.layer),
    // First: a missing SECRETS_KEY stops start-up before the database is touched.
    Layer.provideMerge(SecretBox.layer),
    // Below even that: every layer above is built, and forks its fibers, with the tracer in place.
    Layer.provide(Telemetry.tracing)
  )
}))
