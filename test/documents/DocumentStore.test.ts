import { describe, expect, test } from "bun:test"
import { ConfigProvider, Effect, Exit, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { DocumentStore, filesystem } from "../../src/documents/DocumentStore.ts"
import { tempDir } from "../support/app.ts"
import { JPEG, PNG } from "../support/photos.ts"

const withStore = async <A>(use: (store: DocumentStore["Type"], dataDir: string) => Effect.Effect<A>) => {
  const dataDir = await tempDir("documents")
  const config = AppConfig.layer.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", dataDir]]))))
  )
  return Effect.runPromiseExit(
    Effect.flatMap(DocumentStore, (store) => use(store, dataDir)).pipe(Effect.provide(filesystem.pipe(Layer.provide(config))))
  )
}

describe("DocumentStore (filesystem, DATA_DIR/documents)", () => {
  test("put, get, overwrite and removeGuest; files are private to the service", async () => {
    const guestId = randomUUID()
    const exit = await withStore((store, dataDir) =>
      Effect.gen(function*() {
        expect(Option.isNone(yield* store.get({ guestId, side: "front" }))).toBe(true)
        yield* store.put({ guestId, side: "front" }, JPEG)
        yield* store.put({ guestId, side: "back" }, JPEG)
        yield* store.put({ guestId, side: "back" }, PNG)
        expect(Option.getOrThrow(yield* store.get({ guestId, side: "front" }))).toEqual(JPEG)
        expect(Option.getOrThrow(yield* store.get({ guestId, side: "back" }))).toEqual(PNG)
        const dir = NodePath.join(dataDir, "documents", guestId)
        const files = yield* Effect.promise(() => NodeFs.readdir(dir))
        expect(files.sort()).toEqual(["back", "front"]) // no temporary files left behind
        const mode = (yield* Effect.promise(() => NodeFs.stat(NodePath.join(dir, "front")))).mode & 0o777
        expect(mode).toBe(0o600)
        yield* store.removeGuest(guestId)
        yield* store.removeGuest(guestId) // nothing left: still fine
        expect(Option.isNone(yield* store.get({ guestId, side: "front" }))).toBe(true)
      })
    )
    expect(Exit.isSuccess(exit)).toBe(true)
  })

  test("a key that is not a guest id never reaches the file system", async () => {
    const exit = await withStore((store) => store.put({ guestId: "../../etc", side: "front" }, JPEG))
    expect(Exit.isFailure(exit) && Exit.isInterrupted(exit) === false).toBe(true)
  })
})
