import Pg from "pg"

/**
 * Named (prepared) statements for the statements a process runs again and again (issue 28, docs/performance.md
 * "Prepared statements"). PostgreSQL parses, analyses and plans an unnamed statement on every execution; a named
 * one is parsed once per connection and then only bound and executed, which halves the database's CPU for a short
 * statement such as the key lookup. `pg` sends a statement as named when its query has a `name`; this client gives
 * one to every parameterised text it has seen `PREPARE_AFTER` times, with the same text and the same parameters,
 * so no call site changes: the hot paths (key lookup, properties list, reservation by external_id, the create
 * transaction, the delivery claim and record) are named within their first executions, a one-off statement
 * (DDL, a migration, an operator's query) never is. As pgjdbc's `prepareThreshold` (5 by default) does.
 *
 * Bounded: at most `MAX_NAMED` texts are named per process (each named statement costs every connection a cached
 * plan on the server), and the counts of texts not yet named are forgotten when there are `MAX_COUNTED` of them.
 *
 * A named statement's result type is fixed when it is parsed: after a migration adds a column, a `SELECT *` that
 * was prepared before fails with 0A000 "cached plan must not change result type"; and a statement deallocated
 * behind the client's back (`DISCARD ALL` by a pooler) fails with 26000. Either way the connection's names are
 * renewed (a new generation: the next execution parses again under a fresh name) and, outside a transaction, the
 * statement is run again at once; inside one, the transaction fails as it would have, and its retry works.
 * `DB_PREPARED_STATEMENTS=false` turns naming off (a transaction-mode pooler older than PgBouncer 1.21).
 */
export const PREPARE_AFTER = 5
export const MAX_NAMED = 200
const MAX_COUNTED = 5_000

type Callback = (error: Error | null | undefined, result: Pg.QueryResult) => void

/** Per process: each text's executions until it is named, then its name's stem. */
const seen = new Map<string, number | string>()
let named = 0

/** The name's stem for `text` if it is to run as a named statement now; counts the execution otherwise. */
const stemFor = (text: string): string | undefined => {
  const entry = seen.get(text)
  if (typeof entry === "string") return entry
  const count = (entry ?? 0) + 1
  if (count < PREPARE_AFTER || named >= MAX_NAMED) {
    if (entry === undefined && seen.size - named >= MAX_COUNTED) {
      for (const [key, value] of seen) if (typeof value === "number") seen.delete(key)
    }
    seen.set(text, count)
    return undefined
  }
  named++
  const stem = `p${named}`
  seen.set(text, stem)
  return stem
}

/** How many texts this process runs as named statements (tests and docs). */
export const namedCount = () => named

/** A prepared statement that no longer matches the server: renew the connection's names and run it again. */
const isStale = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code
  return code === "26000" || (code === "0A000" && String((error as Error).message).includes("cached plan"))
}

/** A `pg` client that names the statements it runs often (see above); everything else is `pg`'s own. */
export class PreparingClient extends Pg.Client {
  /** Bumped when the server's statements no longer match: names are `stem_generation`. */
  private generation = 0

  // `pg`'s overloads: (text, values?, callback?), (config, values?, callback?), (Submittable, callback?).
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    if (typeof config !== "string" || !Array.isArray(values) || values.length === 0) {
      return super.query(config as never, values as never, callback as never) as never
    }
    const stem = stemFor(config)
    if (stem === undefined) return super.query(config as never, values as never, callback as never) as never
    const run = (done: Callback) => super.query({ name: `${stem}_${this.generation}`, text: config, values }, done)
    const retried = (done: Callback): Callback => (error, result) => {
      if (!error || !isStale(error)) return done(error, result)
      this.generation++
      // `pg` reports the error before the server's ReadyForQuery: the status is still the one before the
      // statement, idle ("I") when it ran on its own; the run again waits in `pg`'s queue for that message.
      if (this.getTransactionStatus() === "I") return void run(done)
      done(error, result)
    }
    if (typeof callback === "function") return run(retried(callback as Callback)) as never
    return new Promise<Pg.QueryResult>((resolve, reject) =>
      run(retried((error, result) => (error ? reject(error) : resolve(result))))
    ) as never
  }
}
