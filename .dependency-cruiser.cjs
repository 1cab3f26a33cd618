// @ts-check
/**
 * Which file may import which: `npm run lint:deps` (also run by .ci/run after the type check).
 *
 * Layers, lowest first. A file may import files of its own layer or of a lower one, never of a higher one.
 * Paths in the table without `src/` or `migrations/` are under `src/`.
 *
 * | layer          | holds                          | files (one regex per layer below)                        |
 * |----------------|--------------------------------|----------------------------------------------------------|
 * | domain         | pure rules and schemas;        | src/shared/**, and each module's pure files:             |
 * |                | no services, no I/O            | reservations/machine/** (the machine),                   |
 * |                |                                | reservations/{Reservation,ReservationRow,Views,          |
 * |                |                                |   CheckinToken,countries}.ts,                            |
 * |                |                                | compliance/{Tra,TraInputs,Sire,Simulated,WouldSend,      |
 * |                |                                |   ReferenceData,ReferenceTables}.ts,                     |
 * |                |                                | compliance/reference/**,                                 |
 * |                |                                | webhooks/{Webhook,Event,Signature,RetryPolicy}.ts,       |
 * |                |                                | properties/Property.ts, auth/{ApiKey,CurrentKey}.ts,     |
 * |                |                                | accounts/KeyLimits.ts,                                   |
 * |                |                                | documents/DocumentKind.ts, net/UrlSafety.ts,             |
 * |                |                                | checkin/Checkin.ts, mail/Messages.ts,                    |
 * |                |                                | panel/{Panel,Secrets}.ts, alerts/Alert.ts                |
 * | infrastructure | configuration, database,       | src/config/**, src/db/**, migrations/**,                 |
 * |                | outbound HTTP, file store,     | net/{SafeHttp,ErrorCode}.ts, documents/DocumentStore.ts, |
 * |                | outbound mail                  | mail/Mailer.ts                                           |
 * | services       | Effect services that own       | every other file of a module folder (src/<module>/),     |
 * |                | state and transactions         | e.g. accounts/Accounts.ts, auth/ApiKeys.ts, trm/**,      |
 * |                |                                | ratelimit/**,                                            |
 * |                |                                | compliance/{Reference,ReportRuns,TraClient}.ts           |
 * | entrances      | how the outside reaches the    |                                                          |
 * |                | services, in three kinds:      |                                                          |
 * |   http         | the middleware and helpers     | src/http/** (imports no module folder),                  |
 * |                | every page and API uses, each  | src/<module>/{*Api,Page}.ts, src/<module>/page/**        |
 * |                | module's contract and pages,   | (checkin, panel), auth/PartnerAuth.ts,                   |
 * |                | and the partner API assembled  | src/routes/** (PartnerApi, its document, each group's    |
 * |                | with its handlers              |   handlers; imported only by the composition)            |
 * |   admin        | the operators' RPC             | src/admin/**                                             |
 * |   workers      | background loops               | src/workers/**, webhooks/DeliveryLoop.ts                 |
 * | composition    | wires layers, starts processes | src/App.ts, src/main.ts, src/cli.ts, src/tra-thread.ts   |
 *
 * The three entrance kinds do not import one another: only the composition files put them together.
 * Within the http entrance, `src/http/` is the bottom (middleware, pages, document helpers: it imports only
 * shared/, config/, db/ and net/, never a module) and `src/routes/` the top (`PartnerApi` composes every
 * module's `Api.ts` contract, and each group's handlers are built against it): a module imports `http/`,
 * never `routes/`, so no module and `http/` import each other.
 * Beside the layers, modules (the folders of src/) stand in one order, MODULE_ORDER below: a folder imports only
 * folders of lower rows, so no two folders import each other.
 * The reservation machine (`reservations/machine/`) is the core every module builds on: it imports only
 * `shared/` and the reservation's own schemas, never another module.
 * Each rule below says in its name and comment which of these a violation breaks. Type-only imports count
 * (`tsPreCompilationDeps`): a type is a dependency on the module that defines it.
 */

/**
 * Joins alternatives into one anchored regular expression.
 * @param {...string} patterns
 */
const anyOf = (...patterns) => `^(${patterns.join("|")})`

const DOMAIN = anyOf(
  "src/shared/",
  "src/reservations/machine/",
  "src/reservations/(Reservation|ReservationRow|Views|CheckinToken|countries)\\.ts$",
  "src/compliance/(Tra|TraInputs|Sire|Simulated|WouldSend|ReferenceData|ReferenceTables)\\.ts$",
  "src/compliance/reference/",
  "src/webhooks/(Webhook|Event|Signature|RetryPolicy)\\.ts$",
  "src/properties/Property\\.ts$",
  "src/auth/(ApiKey|CurrentKey)\\.ts$",
  "src/accounts/KeyLimits\\.ts$",
  "src/documents/DocumentKind\\.ts$",
  "src/net/UrlSafety\\.ts$",
  "src/checkin/Checkin\\.ts$",
  "src/panel/(Panel|Secrets)\\.ts$",
  "src/alerts/Alert\\.ts$",
  "src/mail/Messages\\.ts$"
)

const INFRASTRUCTURE = anyOf(
  "src/config/",
  "src/db/",
  "migrations/",
  "src/net/(SafeHttp|ErrorCode)\\.ts$",
  "src/documents/DocumentStore\\.ts$",
  "src/mail/Mailer\\.ts$"
)

const HTTP = anyOf(
  "src/http/",
  "src/routes/",
  "src/[^/]+/(\\w*Api|Page)\\.ts$",
  "src/[^/]+/page/",
  "src/auth/PartnerAuth\\.ts$"
)
const ADMIN = anyOf("src/admin/")
const WORKERS = anyOf("src/workers/", "src/webhooks/DeliveryLoop\\.ts$")
const ENTRANCES = [HTTP, ADMIN, WORKERS]

const COMPOSITION = anyOf("src/(App|main|cli|tra-thread)\\.ts$")

/** Services: whatever else sits in a module folder. */
const SERVICES = { path: "^src/[^/]+/", pathNot: [DOMAIN, INFRASTRUCTURE, ...ENTRANCES] }

/** Our own files: rules about layers ignore npm packages and node built-ins. */
const OWN = "^(src|migrations)/"

/**
 * Modules in one order (issue 24), lowest first: a folder of `src/` imports only folders of lower rows, never one of
 * its own row or a higher one, so no two folders import each other. `reservations` is the core: what it needs from
 * later modules it declares as ports (`reservations/Ports.ts`) that they provide. The composition files
 * (`App.ts`, `main.ts`, `cli.ts`) sit above everything. docs/architecture.md draws this order.
 */
const MODULE_ORDER = [
  ["shared"],
  ["config"],
  ["db", "secrets", "net", "trm"],
  ["jobs"],
  ["http", "telemetry", "mail", "audit", "accounts"],
  ["ratelimit"],
  ["auth"],
  ["properties"],
  ["reservations", "sandbox"],
  ["webhooks", "compliance"],
  ["documents", "alerts"],
  ["checkin", "panel", "admin", "health", "workers"],
  ["routes"]
]

/** One rule per row: nothing in it imports its own row (but its own folder) or a row above. */
const moduleOrderRules = MODULE_ORDER.map((row, index) => ({
  name: `module-order-${row.join("-")}`,
  severity: /** @type {const} */ ("error"),
  comment: `Module order (issue 24): ${row.join(", ")} may import only ${
    MODULE_ORDER.slice(0, index).flat().join(", ") || "nothing of ours"
  } (and its own folder); see MODULE_ORDER and docs/architecture.md.`,
  from: { path: `^src/(${row.join("|")})/` },
  to: {
    path: [`^src/(${MODULE_ORDER.slice(index).flat().join("|")})/`, COMPOSITION],
    pathNot: "^src/$1/"
  }
}))

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...moduleOrderRules,
    {
      name: "bench-peer-libraries-only-in-bench",
      severity: "error",
      comment: "Hono, zod and Fastify are devDependencies for the bench's peers (bench/peers/, issue 28) only: the "
        + "service is Effect's HttpApi and Schema, and a production bundle never carries them.",
      from: { path: "^(src|migrations)/" },
      to: { path: "(^|/)node_modules/(hono|zod|fastify|@fastify/[^/]+)/" }
    },
    {
      name: "module-order-every-folder-placed",
      severity: "error",
      comment: "A new folder of src/ takes its place in MODULE_ORDER before anything imports it.",
      from: { path: "^src/" },
      to: { path: "^src/[^/]+/", pathNot: `^src/(${MODULE_ORDER.flat().join("|")})/` }
    },
    {
      name: "no-circular",
      severity: "error",
      comment: "Import cycle: two modules depend on each other, directly or through others. Break the cycle, "
        + "usually by moving what both need down a layer.",
      from: {},
      to: { circular: true }
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "This import cannot be resolved to a file. Without this rule a resolver problem would drop edges "
        + "and let the layer rules pass on a graph that is not the real one.",
      from: {},
      to: { couldNotResolve: true }
    },
    {
      name: "layer-domain-imports-only-domain",
      severity: "error",
      comment: "Layer rule: a domain file (pure rules and schemas) imports only other domain files, never "
        + "infrastructure, services, entrances or composition.",
      from: { path: DOMAIN },
      to: { path: OWN, pathNot: DOMAIN }
    },
    {
      name: "machine-is-the-core",
      severity: "error",
      comment: "The reservation machine (one state, one decide) depends on nothing but shared/ and the "
        + "reservation's own schemas: every module may build on it, it builds on none of them.",
      from: { path: "^src/reservations/machine/" },
      to: {
        path: OWN,
        pathNot: ["^src/reservations/machine/", "^src/shared/", "^src/reservations/(Reservation|ReservationRow|countries)\\.ts$"]
      }
    },
    {
      name: "layer-infrastructure-not-above",
      severity: "error",
      comment: "Layer rule: an infrastructure file imports only infrastructure and domain files, never "
        + "services, entrances or composition.",
      from: { path: INFRASTRUCTURE },
      to: { path: OWN, pathNot: [DOMAIN, INFRASTRUCTURE] }
    },
    {
      name: "layer-services-not-to-entrances",
      severity: "error",
      comment: "Layer rule: a service imports services, infrastructure and domain files, never an entrance "
        + "(http, admin, workers) or the composition root. An entrance maps service results to its own "
        + "answers (e.g. domain errors to AdminError), not the other way round.",
      from: SERVICES,
      to: { path: [...ENTRANCES, COMPOSITION] }
    },
    {
      name: "layer-entrances-not-to-composition",
      severity: "error",
      comment: "Layer rule: an entrance never imports the composition root (App.ts, main.ts, cli.ts).",
      from: { path: ENTRANCES },
      to: { path: COMPOSITION }
    },
    {
      name: "http-middleware-imports-no-module",
      severity: "error",
      comment: "Entrance rule: src/http/ is the middleware and the helpers every module's pages and API use; it "
        + "imports only shared/, config/, db/ and net/, never a module folder (what needs the modules — "
        + "PartnerApi, the partner document, the handlers — is in src/routes/).",
      from: { path: "^src/http/" },
      to: { path: OWN, pathNot: "^src/(http|shared|config|db|net)/" }
    },
    {
      name: "routes-only-from-composition",
      severity: "error",
      comment: "Entrance rule: src/routes/ assembles the partner API from every module's contract and handlers; "
        + "only the composition (App.ts, main.ts, cli.ts) imports it. A module keeps its contract (Api.ts) and "
        + "never imports routes/.",
      from: { path: OWN, pathNot: ["^src/routes/", COMPOSITION] },
      to: { path: "^src/routes/" }
    },
    {
      name: "entrance-http-not-to-admin-or-workers",
      severity: "error",
      comment: "Entrance rule: the partner HTTP API does not import the admin RPC or the worker loops; only "
        + "App.ts / cli.ts compose entrances.",
      from: { path: HTTP },
      to: { path: [ADMIN, WORKERS] }
    },
    {
      name: "entrance-admin-not-to-http-or-workers",
      severity: "error",
      comment: "Entrance rule: the admin RPC does not import the partner HTTP API or the worker loops; only "
        + "App.ts / cli.ts compose entrances.",
      from: { path: ADMIN },
      to: { path: [HTTP, WORKERS] }
    },
    {
      name: "entrance-workers-not-to-http-or-admin",
      severity: "error",
      comment: "Entrance rule: a worker loop does not import the partner HTTP API or the admin RPC; only "
        + "App.ts / cli.ts compose entrances.",
      from: { path: WORKERS },
      to: { path: [HTTP, ADMIN] }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports are dependencies too (see the header).
    tsPreCompilationDeps: true,
    // Imports carry explicit `.ts` extensions (`allowImportingTsExtensions`); tsconfig's resolution applies.
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".json"]
    },
    reporterOptions: {
      text: { highlightFocused: true }
    }
  }
}
