import { Context, Effect } from "effect"

/**
 * The job leases this process holds (design §7, §9): webhook deliveries, report runs' reservations, e-mails
 * and document photo fetches are rows claimed under a lease (`lease_until`), so a crashed process's work is
 * taken over when the lease ends. A process that stops on SIGTERM does better: once its loops have stopped it
 * gives back what it still holds, so another instance takes it at once instead of a lease later.
 *
 * Each queue registers a kind with the statement that gives its rows back, notes what it claims (and renews)
 * and what it settles; the composition root calls `releaseAll` when the workers have stopped, before the
 * database closes.
 */

/** One queue's leases as this process holds them. */
export interface HeldLeases {
  /** `ids` are held until `until` (a claim, or a renewal: the newer time replaces the older). */
  readonly held: (ids: ReadonlyArray<string>, until: Date) => Effect.Effect<void>
  /**
   * Runs `claim` (a statement leasing rows until `until`) and notes what it returns as held. The statement
   * stays interruptible — a stop never waits for a claim stuck on a lost database — but once its rows are
   * back nothing can come between them and the note. (Interrupted mid-statement, the rows it may have leased
   * are not noted: they lapse, as after a crash.)
   */
  readonly claimed: <A, E, R>(
    claim: Effect.Effect<ReadonlyArray<A>, E, R>,
    until: Date,
    idOf: (row: A) => string
  ) => Effect.Effect<ReadonlyArray<A>, E, R>
  /** `ids` were recorded: the statement that recorded them cleared their lease. */
  readonly settled: (ids: ReadonlyArray<string>) => Effect.Effect<void>
}

/**
 * Gives back the rows of `ids` whose lease is still exactly `until` (ours: a lease that lapsed and was taken
 * by another instance has another time, and is left alone); answers how many rows it released.
 */
export type ReleaseLeases = (ids: ReadonlyArray<string>, until: Date) => Effect.Effect<number>

export interface JobLeasesShape {
  readonly register: (kind: string, release: ReleaseLeases) => Effect.Effect<HeldLeases>
  /** Gives back every lease still held, kind by kind; answers how many rows were released. */
  readonly releaseAll: Effect.Effect<number>
}

const noteClaimed = (held: HeldLeases["held"]): HeldLeases["claimed"] => (claim, until, idOf) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.tap(restore(claim), (rows) => held(rows.map(idOf), until))
  )

const untracked: JobLeasesShape = {
  register: () => Effect.succeed({ held: () => Effect.void, claimed: (claim) => claim, settled: () => Effect.void }),
  releaseAll: Effect.succeed(0)
}

/**
 * Tracking is the composition root's choice: without a `JobLeases` provided (a test building one service),
 * nothing is tracked and leases simply lapse, as after a crash.
 */
export class JobLeases extends Context.Reference<JobLeases>()("jobs/JobLeases", { defaultValue: () => untracked }) {}

/** A registry for one process. */
export const make: Effect.Effect<JobLeasesShape> = Effect.sync(() => {
  const kinds: Array<{ readonly kind: string; readonly release: ReleaseLeases; readonly held: Map<string, Date> }> = []

  const register = (kind: string, release: ReleaseLeases) =>
    Effect.sync((): HeldLeases => {
      const held = new Map<string, Date>()
      kinds.push({ kind, release, held })
      const note: HeldLeases["held"] = (ids, until) =>
        Effect.sync(() => {
          for (const id of ids) held.set(id, until)
        })
      return {
        held: note,
        claimed: noteClaimed(note),
        settled: (ids) =>
          Effect.sync(() => {
            for (const id of ids) held.delete(id)
          })
      }
    })

  const releaseAll = Effect.forEach(kinds, ({ kind, release, held }) => {
    // One statement per lease time: a claim leases its whole batch until the same instant.
    const byUntil = new Map<number, Array<string>>()
    for (const [id, until] of held) byUntil.set(until.getTime(), [...(byUntil.get(until.getTime()) ?? []), id])
    held.clear()
    return Effect.forEach(byUntil, ([until, ids]) => release(ids, new Date(until))).pipe(
      Effect.map((counts) => counts.reduce((sum, n) => sum + n, 0)),
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning(`could not release the ${kind} leases; they lapse on their own`, cause), 0)
      )
    )
  }).pipe(Effect.map((counts) => counts.reduce((sum, n) => sum + n, 0)))

  return { register, releaseAll }
})
