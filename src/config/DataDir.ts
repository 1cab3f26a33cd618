import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/** `DATA_DIR` (or a file the service keeps there) cannot be written: start-up stops and says what to fix. */
export class DataDirNotWritable extends Schema.TaggedError<DataDirNotWritable>()("DataDirNotWritable", {
  message: Schema.String
}) {}

const describe = (error: unknown) => {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined
  const text = error instanceof Error ? error.message : String(error)
  return code === undefined ? text : `${code}, ${text}`
}

/**
 * Writes `content` to `file` (mode 0600) unless the file exists — another instance starting at the same time wrote
 * it first, and its content wins. Any other failure (a read-only or foreign-owned volume) fails the start with
 * what to fix: a container whose `DATA_DIR` is a bind mount its user cannot write used to report, later, that the
 * file "does not hold" a key.
 */
export const writeNewFile = (file: string, content: string) =>
  Effect.tryPromise({
    try: async () => {
      await NodeFs.mkdir(NodePath.dirname(file), { recursive: true })
      await NodeFs.writeFile(file, content, { mode: 0o600, flag: "wx" }).catch((error: unknown) => {
        if (typeof error !== "object" || error === null || !("code" in error) || error.code !== "EEXIST") throw error
      })
    },
    catch: (error) =>
      new DataDirNotWritable({
        message: `cannot write ${file} (${describe(error)}): DATA_DIR must be a directory this process ` +
          `(uid ${process.getuid?.() ?? "?"}) can write — give that user the directory (chown) or mount a writable volume`
      })
  })
