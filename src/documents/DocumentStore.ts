import { FileSystem, Path } from "@effect/platform"
import { BunFileSystem, BunPath } from "@effect/platform-bun"
import { Context, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import { isUuid } from "../shared/Uuid.ts"

export type DocumentSide = "front" | "back"

export interface DocumentKey {
  readonly guestId: string
  readonly side: DocumentSide
}

/**
 * Where guest document photos live (design §5): never in PostgreSQL, never in an API body. The port keeps
 * the storage swappable (filesystem by default, an object store later); `guest_documents` records what it
 * holds. Storage failures are infrastructure failures: they die, and the caller's job is retried.
 */
export class DocumentStore extends Context.Tag("documents/DocumentStore")<DocumentStore, {
  readonly put: (key: DocumentKey, bytes: Uint8Array) => Effect.Effect<void>
  readonly get: (key: DocumentKey) => Effect.Effect<Option.Option<Uint8Array>>
  /** Deletes every document of a guest (retention, design §5); deleting nothing is not an error. */
  readonly removeGuest: (guestId: string) => Effect.Effect<void>
}>() {}


/**
 * Files under `DATA_DIR/documents/<guest id>/<side>`, mode 0600. A write goes to a temporary file first and
 * is renamed into place, so a crash never leaves a half-written photo under the real name.
 */
export const filesystem = Layer.effect(
  DocumentStore,
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = path.resolve((yield* AppConfig).dataDir, "documents")
    yield* fs.makeDirectory(root, { recursive: true, mode: 0o700 }).pipe(Effect.orDie)

    // Guest ids come from the database; checking the shape keeps any other string out of the path.
    const dirOf = (guestId: string) =>
      isUuid(guestId) ? Effect.succeed(path.join(root, guestId)) : Effect.dieMessage(`not a guest id: ${guestId}`)

    return DocumentStore.of({
      put: (key, bytes) =>
        Effect.gen(function*() {
          const dir = yield* dirOf(key.guestId)
          yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 })
          const temporary = path.join(dir, `.${key.side}.${randomUUID()}.tmp`)
          yield* fs.writeFile(temporary, bytes, { mode: 0o600 })
          yield* fs.rename(temporary, path.join(dir, key.side))
        }).pipe(Effect.orDie),
      get: (key) =>
        Effect.gen(function*() {
          const file = path.join(yield* dirOf(key.guestId), key.side)
          return (yield* fs.exists(file)) ? Option.some(yield* fs.readFile(file)) : Option.none()
        }).pipe(Effect.orDie),
      removeGuest: (guestId) =>
        Effect.flatMap(dirOf(guestId), (dir) => fs.remove(dir, { recursive: true, force: true })).pipe(Effect.orDie)
    })
  })
).pipe(Layer.provide([BunFileSystem.layer, BunPath.layer]))
