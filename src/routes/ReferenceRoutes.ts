import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either } from "effect"
import { partnerSources, partnerTable } from "../compliance/PartnerReference.ts"
import { ReferenceStore } from "../compliance/ReferenceStore.ts"
import { PartnerApi } from "./PartnerApi.ts"

export const ReferenceLive = HttpApiBuilder.group(PartnerApi, "reference", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ReferenceStore
    // The bundled files are checked once here: a broken one stops the start, as the report tables do.
    const sources = yield* Either.match(partnerSources(), { onLeft: Effect.dieMessage, onRight: Effect.succeed })
    return handlers.handle("table", ({ path }) =>
      Effect.map(store.list({}), ({ entries }) => ({ table: path.table, entries: partnerTable(path.table, entries, sources) })))
  }))
