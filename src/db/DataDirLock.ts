import { Context, DateTime, Effect, Option, Predicate, Schema } from "effect"
import * as NodeFsSync from "node:fs"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/**
 * The embedded database is single-process (design §9): PGlite keeps its files in `DATA_DIR/pg` and two
 * processes on them corrupt each other. `DATA_DIR/service.lock` names the process that holds the directory;
 * a second process refuses to start, naming the first, before it opens anything.
 */

export const LOCK_FILE = "service.lock"

/** What the lock file holds: enough for an operator to find the process that has the directory. */
export const LockHolder = Schema.Struct({
  pid: Schema.Number,
  host: Schema.String,
  started_at: Schema.String,
  port: Schema.Number
})
export type LockHolder = typeof LockHolder.Type

const decodeHolder = Schema.decodeUnknownOption(Schema.parseJson(LockHolder))

/** The lock this process holds (embedded mode). */
export interface HeldLock {
  /** Records the port once the server listens (`PORT=0` lets the system choose one). */
  readonly listening: (port: number) => Effect.Effect<void>
}

/** The lock held by this process; with `DATABASE_URL` there is none, and `listening` does nothing. */
export class Held extends Context.Reference<Held>()("db/DataDirLock/Held", {
  defaultValue: (): HeldLock => ({ listening: () => Effect.void })
}) {}

/** Another live process holds `DATA_DIR`: start-up stops with this, naming it. */
export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  lockFile: Schema.String,
  holder: LockHolder
}) {
  override get message() {
    const { holder } = this
    return `the embedded database in ${NodePath.dirname(this.lockFile)} is in use by another process of this service `
      + `(pid ${holder.pid} on ${holder.host}, started ${holder.started_at}, port ${holder.port}; `
      + `lock file ${this.lockFile}). `
      + `Stop that process first, or give this one another DATA_DIR. Only one process may use an embedded database; `
      + `several instances need DATABASE_URL`
  }
}

/** The lock file exists but cannot be read as a lock: refused rather than guessed at. */
export class DataDirLockUnreadable extends Schema.TaggedError<DataDirLockUnreadable>()("DataDirLockUnreadable", {
  lockFile: Schema.String
}) {
  override get message() {
    return `the lock file ${this.lockFile} exists but is not a lock this service wrote; `
      + `if no process uses this DATA_DIR, delete the file and start again`
  }
}

/** A Node.js system error's `code` (`EPERM`, `EEXIST`…); undefined for anything else. */
const codeOf = (error: unknown): unknown => Predicate.hasProperty(error, "code") ? error.code : undefined

/**
 * Whether `holder` still runs. Our own pid cannot be the holder (we do not hold it yet): in a container the
 * restarted process often gets the pid of the one that was killed. A pid on another host cannot be checked, so
 * it counts as running (a DATA_DIR on a shared volume).
 */
const isRunning = (holder: LockHolder) =>
  Effect.sync(() => {
    if (holder.host !== NodeOs.hostname()) return true
    if (holder.pid === process.pid) return false
    try {
      process.kill(holder.pid, 0)
    } catch (error) {
      // EPERM: the pid exists under another user.
      return codeOf(error) === "EPERM"
    }
    const stat = procStat(holder.pid)
    if (stat === undefined) return true
    // A killed process not yet reaped by its parent still answers `kill(pid, 0)`.
    if (stat.state === "Z") return false
    // After a reboot the pid may belong to another program, started after the lock was written (the holder
    // wrote it after it started). A minute of margin: a wall clock stepped forward since the holder started
    // would make it look younger, and taking a live holder's lock is the one mistake that must not happen.
    return stat.startedAt === undefined || stat.startedAt <= Date.parse(holder.started_at) + 60_000
  })

/**
 * A process's state and start time (epoch ms) from Linux's /proc; undefined elsewhere. The start time is in
 * clock ticks since boot (field 22), 100 a second for every Linux program (USER_HZ).
 */
const procStat = (pid: number): { readonly state: string; readonly startedAt: number | undefined } | undefined => {
  try {
    // "PID (command) STATE …": the command may hold spaces or parentheses; the fields follow the last ")".
    const stat = NodeFsSync.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const bootTime = /^btime (\d+)$/m.exec(NodeFsSync.readFileSync("/proc/stat", "utf8"))?.[1]
    const ticks = Number(fields[19])
    return {
      state: fields[0] ?? "",
      startedAt: bootTime === undefined || !Number.isFinite(ticks) ? undefined : Number(bootTime) * 1000 + ticks * 10
    }
  } catch {
    return undefined
  }
}

const readHolder = (file: string) =>
  Effect.promise(() => NodeFs.readFile(file, "utf8").catch(() => undefined)).pipe(
    Effect.map((text) => text === undefined ? undefined : Option.getOrNull(decodeHolder(text)))
  )

const sameHolder = (a: LockHolder, b: LockHolder) =>
  a.pid === b.pid && a.started_at === b.started_at && a.host === b.host

/**
 * Takes `DATA_DIR/service.lock` for this process (`O_EXCL`: of two processes starting together exactly one
 * creates it) and removes it when the scope closes. A lock whose process no longer runs (killed with SIGKILL,
 * a power cut) is moved aside and taken over: renaming is atomic, so of two processes taking over the same
 * stale lock only one moves it; one that moved a fresh lock instead puts it back and looks again.
 */
export const acquire = (dataDir: string, port: number) =>
  Effect.gen(function*() {
    const file = NodePath.resolve(dataDir, LOCK_FILE)
    yield* Effect.promise(() => NodeFs.mkdir(NodePath.dirname(file), { recursive: true }))
    const mine: LockHolder = {
      pid: process.pid,
      host: NodeOs.hostname(),
      started_at: DateTime.formatIso(yield* DateTime.now),
      port
    }
    const create = Effect.tryPromise({
      try: () => NodeFs.writeFile(file, JSON.stringify(mine) + "\n", { flag: "wx", mode: 0o644 }),
      catch: (error) => error
    })

    let held = false
    for (let round = 0; round < 5 && !held; round++) {
      const created = yield* Effect.either(create)
      if (created._tag === "Right") {
        held = true
        continue
      }
      if (codeOf(created.left) !== "EEXIST") return yield* Effect.die(created.left)
      const holder = yield* readHolder(file)
      if (holder === undefined) continue // removed meanwhile: try again
      if (holder === null) return yield* new DataDirLockUnreadable({ lockFile: file })
      if (yield* isRunning(holder)) return yield* new DataDirInUse({ lockFile: file, holder })
      const aside = `${file}.stale-${process.pid}`
      const moved = yield* Effect.promise(() => NodeFs.rename(file, aside).then(() => true, () => false))
      if (!moved) continue
      const movedHolder = yield* readHolder(aside)
      if (movedHolder !== undefined && movedHolder !== null && !sameHolder(movedHolder, holder)) {
        // Another process took the stale lock over between our read and our rename: give its lock back.
        yield* Effect.promise(() => NodeFs.link(aside, file).catch(() => undefined))
      } else {
        yield* Effect.logWarning(
          `took over the lock ${file} of pid ${holder.pid} (started ${holder.started_at}), which no longer runs`
        )
      }
      yield* Effect.promise(() => NodeFs.rm(aside, { force: true }))
    }
    if (!held) return yield* Effect.dieMessage(`could not take the lock ${file}: it kept changing`)

    // Changed or removed only while it is still ours (an operator may have deleted it and started another process).
    const whileOurs = (change: Effect.Effect<void>) =>
      Effect.flatMap(readHolder(file), (holder) =>
        holder !== undefined && holder !== null && sameHolder(holder, mine) ? change : Effect.void)
    yield* Effect.addFinalizer(() => whileOurs(Effect.promise(() => NodeFs.rm(file, { force: true }))))

    const listening = (port: number) =>
      whileOurs(Effect.promise(async () => {
        // Written aside and renamed over: a reader never sees half a lock.
        const next = `${file}.${process.pid}.tmp`
        await NodeFs.writeFile(next, JSON.stringify({ ...mine, port }) + "\n", { mode: 0o644 })
        await NodeFs.rename(next, file)
      }))
    return { listening } satisfies HeldLock
  })
