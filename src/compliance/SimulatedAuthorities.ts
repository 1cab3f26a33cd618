import { Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { SimulatedAuthorities } from "../reservations/Ports.ts"
import { ReferenceStore } from "./ReferenceStore.ts"
import { simulatedMincitCode, simulatedWarnings } from "./Simulated.ts"

/**
 * The reservations' port for the simulated authorities of test keys (`reservations/Ports.ts`, design §6.12): the
 * rules of `Simulated.ts` over the reference tables with the operators' overrides in effect, as a live run reads them.
 */
export const layer = Layer.effect(
  SimulatedAuthorities,
  Effect.gen(function*() {
    const reference = yield* ReferenceStore
    const { sirePlaces } = yield* AppConfig
    return {
      code: simulatedMincitCode,
      warnings: (source) => Effect.map(reference.effective, (data) => simulatedWarnings(data, source, sirePlaces))
    }
  })
).pipe(Layer.provide(ReferenceStore.Default))
