import { Effect } from "effect"

/**
 * Named places where a test can stop the process dead, to prove that a crash there loses nothing (design §7,
 * issue "nothing stuck, ever"): `FAILPOINTS=tra.after_answer` (`AppConfig.failpoints`) makes the process kill
 * itself with SIGKILL — no finalizer, no flush, exactly like `kill -9` — the moment it reaches that place.
 * Unset (always, outside the crash tests), every failpoint is a no-op.
 */
export type Failpoint =
  | "report.after_claim"
  | "tra.before_send"
  | "tra.after_answer"
  | "tra.after_record"
  | "sire.before_send"
  | "sire.after_answer"
  | "sire.after_record"

/** `failpoint(name)` dies there, as `kill -9` would, when `name` is among the `armed` ones. */
export const make = (armed: ReadonlySet<string>) => (name: Failpoint): Effect.Effect<void> =>
  armed.has(name)
    ? Effect.sync(() => {
      process.kill(process.pid, "SIGKILL")
    }).pipe(Effect.zipRight(Effect.never))
    : Effect.void
