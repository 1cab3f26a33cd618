import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"

/** How often a worker records that it is alive. */
export const HEARTBEAT_EVERY = "15 seconds"

/**
 * The worker's heartbeat: a row per worker instance in `worker_heartbeats`, refreshed on a schedule, so an
 * operator (and the role test) can see which instances run background loops. It is the first background
 * loop; the report and delivery loops of later issues are started the same way, only under ROLE=worker|all.
 */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { role } = yield* AppConfig
  const instanceId = `${process.pid}-${randomUUID().slice(0, 8)}`
  const startedAt = DateTime.toDateUtc(yield* DateTime.now)
  const beat = Effect.gen(function*() {
    const now = DateTime.toDateUtc(yield* DateTime.now)
    yield* sql`
      INSERT INTO worker_heartbeats (instance_id, role, started_at, last_seen_at)
      VALUES (${instanceId}, ${role}, ${startedAt}, ${now})
      ON CONFLICT (instance_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at`
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("heartbeat failed", cause)))
  yield* beat
  yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(HEARTBEAT_EVERY)))
  yield* Effect.addFinalizer(() => sql`DELETE FROM worker_heartbeats WHERE instance_id = ${instanceId}`.pipe(Effect.ignore))
}))
