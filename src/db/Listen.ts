import { SqlError } from "@effect/sql"
import { Effect, Stream } from "effect"
import Pg from "pg"

/**
 * `LISTEN channel` on a connection of its own: one element when listening starts (a notification may have
 * been missed while it was not) and one per notification. Unlike `PgClient.listen` of @effect/sql-pg 0.53,
 * whose listen connection swallows its errors — after the database went away the stream stayed open on a dead
 * connection and never heard another notification, so webhook deliveries waited for the loop's 30 s backstop
 * for the rest of the process's life (the chaos run, docs/reliability.md) — this stream fails when its
 * connection is lost, and the caller retries it.
 */
export const listen = (pool: Pg.Pool, channel: string): Stream.Stream<void, SqlError.SqlError> =>
  Stream.asyncScoped<void, SqlError.SqlError>((emit) =>
    Effect.gen(function*() {
      const client = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new Pg.Client(pool.options)
            // Until `connect` resolves its failure is the promise's; from here on it ends the stream.
            const lost = (cause: unknown) =>
              void emit.fail(new SqlError.SqlError({ cause, message: `LISTEN ${channel}: connection lost` }))
            client.on("error", lost)
            client.on("end", () => lost(new Error("connection ended")))
            await client.connect()
            return client
          },
          catch: (cause) => new SqlError.SqlError({ cause, message: `LISTEN ${channel}: cannot connect` })
        }),
        (client) => {
          client.removeAllListeners("end")
          client.removeAllListeners("error")
          client.on("error", () => {})
          return Effect.promise(() => client.end()).pipe(Effect.timeoutOption(1000), Effect.ignore)
        }
      )
      client.on("notification", (message) => {
        if (message.channel === channel) void emit.single(undefined)
      })
      yield* Effect.tryPromise({
        try: () => client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`),
        catch: (cause) => new SqlError.SqlError({ cause, message: `LISTEN ${channel} failed` })
      })
      void emit.single(undefined)
    })
  )
