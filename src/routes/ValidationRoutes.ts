import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../auth/CurrentKey.ts"
import * as Validation from "../compliance/Validation.ts"
import { PartnerApi } from "./PartnerApi.ts"

export const ValidationLive = HttpApiBuilder.group(PartnerApi, "validation", (handlers) =>
  Effect.gen(function*() {
    const validation = yield* Validation.make
    return handlers.handle("validate", ({ payload }) => Effect.flatMap(CurrentKey, (key) => validation.validate(key, payload)))
  }))
