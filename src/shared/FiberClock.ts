import { Clock, Context, type Fiber } from "effect"

/**
 * The time of the fiber's `Clock` (the `TestClock` under `TestContext`), in milliseconds, read inside
 * `Effect.withFiberRuntime` — the same clock `Clock.currentTimeMillis` reads, without its two run-loop steps on the
 * per-request paths (docs/performance.md, "Effect steps per request").
 */
export const currentTimeMillis = (fiber: Fiber.RuntimeFiber<unknown, unknown>): number =>
  Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()
