import { Schema } from "effect"

/** test = sandbox (svc_test_ keys, simulated reports); live = production (svc_live_ keys). */
export const Environment = Schema.Literal("test", "live")
export type Environment = typeof Environment.Type
