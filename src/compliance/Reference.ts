import { Context, Effect, Layer } from "effect"
import { bundledFiles, make, type ReferenceData, type ReferenceFiles, type ReferenceOverrides } from "./ReferenceData.ts"

/**
 * The reference tables as a service (`ReferenceData.ts` holds the tables, their schemas and the pure lookups):
 * what the report runs map guest data with. A report run provides it for its own length, built at its start
 * from the bundled files and the operators' overrides stored at that moment (`ReferenceStore.effective`), so
 * TRA and SIRE stages read it per call, never once at start.
 */
export * from "./ReferenceData.ts"

export class Reference extends Context.Tag("compliance/Reference")<Reference, ReferenceData>() {
  /** The bundled tables (`./reference/*.json`); a broken table is a defect when the layer is built. */
  static readonly default: Layer.Layer<Reference> = Layer.effect(this, Effect.orDie(make()))

  /** Tables from other data, or the bundled ones with overrides (tests, a deployment's confirmed codes). */
  static readonly layer = (
    files: ReferenceFiles = bundledFiles,
    overrides: ReferenceOverrides = {}
  ): Layer.Layer<Reference> => Layer.effect(this, Effect.orDie(make(files, overrides)))
}
