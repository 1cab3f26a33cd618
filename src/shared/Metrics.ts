import { Metric, MetricBoundaries } from "effect"

/**
 * The service's metrics (design §9), as Effect `Metric`s: the code that knows a fact updates them wherever it
 * runs, and `telemetry/Telemetry.ts` exports them in the Prometheus text format on `METRICS_PORT`. Updating a
 * metric costs a registry lookup and nothing more when no listener is configured. Names follow Prometheus'
 * conventions (the exporter adds `_total` to counters); labels are bounded sets — route templates, never paths
 * or ids. The list with meanings is in docs/observability.md.
 */

/** Seconds: 5 ms to 10 s, the range of an API answer. */
const requestBoundaries = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

/** Seconds: 100 ms to 30 minutes, the range of a report run (it waits for the authorities). */
const runBoundaries = MetricBoundaries.fromIterable([0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800])

/** Requests answered, by method, route template and status (`http_server_requests_total`). */
export const httpRequests = Metric.counter("http_server_requests", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})

/** Time to answer, by method and route template. */
export const httpRequestDuration = Metric.histogram(
  "http_server_request_duration_seconds",
  requestBoundaries,
  "Time from the request to its answer, by method and route template"
)

/** Rows of each durable job queue by state (`queue`: webhook_deliveries, mail, tra_submissions, …). */
export const jobQueueItems = Metric.gauge("job_queue_items", {
  description: "Rows of each job queue by state (sampled from the database at each scrape)"
})

/** Age of each queue's oldest pending row; 0 when none is pending. */
export const jobQueueOldestPendingAge = Metric.gauge("job_queue_oldest_pending_age_seconds", {
  description: "Age of the oldest pending row of each job queue, 0 when none is pending"
})

/** Webhook delivery attempts by outcome: delivered, http_error, network_error, endpoint_inactive. */
export const webhookAttempts = Metric.counter("webhook_attempts", {
  description: "Webhook delivery attempts by outcome (delivered, http_error, network_error, endpoint_inactive)",
  incremental: true
})

/** Rows of the webhook delivery history deleted past `EVENT_RETENTION_DAYS`, by table (events, webhook_deliveries). */
export const webhookHistoryDeleted = Metric.counter("webhook_history_deleted", {
  description: "Rows of the webhook delivery history deleted past EVENT_RETENTION_DAYS, by table (events, webhook_deliveries)",
  incremental: true
})

/** Calls to the authorities by authority (tra, sire) and outcome (the client's classification of the answer). */
export const authoritySubmissions = Metric.counter("authority_submissions", {
  description: "Submissions to the authorities (tra, sire) by outcome (Accepted, Rejected, Misconfigured, Unknown, …)",
  incremental: true
})

/** Live reports by authority (tra, sire_entry, sire_exit) and state: due, overdue or error. */
export const complianceReports = Metric.gauge("compliance_reports", {
  description: "Live reports by authority and state: due (pending, due today or earlier), overdue (past sends_on, " +
    "not success), error"
})

/** How long each report run took. */
export const reportRunDuration = Metric.histogram(
  "report_run_duration_seconds",
  runBoundaries,
  "Duration of each report run (claim, authority calls, settlement)"
)

/** Requests refused by a rate limit, by bucket (reads, writes, tests, and the panel's and check-in's own). */
export const rateLimitRefusals = Metric.counter("rate_limit_refusals", {
  description: "Requests refused by a rate limit, by bucket",
  incremental: true
})

/** This instance's database connections by state: in_use, idle. */
export const dbPoolConnections = Metric.gauge("db_pool_connections", {
  description: "Database pool connections of this instance by state (in_use, idle)"
})

/** Statements of this instance waiting for a free connection. */
export const dbPoolWaiting = Metric.gauge("db_pool_waiting_requests", {
  description: "Queries of this instance waiting for a free pool connection"
})

/** The pool's size (`DB_POOL_SIZE`; 1 on the embedded database). */
export const dbPoolMax = Metric.gauge("db_pool_max_connections", {
  description: "The pool size of this instance"
})
