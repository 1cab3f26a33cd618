import { Effect, type Fiber, FiberRef, Option, Tracer } from "effect"

/**
 * The W3C trace context (`traceparent`) a job keeps from the span that created it (design §9 "Traces"; column
 * `trace_parent`, migration 0016), so the loop that works it later continues the same trace.
 */

/**
 * Whether spans are exported (`OTEL_EXPORTER_OTLP_ENDPOINT`; set by `telemetry/Telemetry.ts`'s layer). Off, no
 * context is stored: the spans of Effect's own tracer go nowhere, and the statements stay as they were.
 */
export const Exported = FiberRef.unsafeMake(false)

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/**
 * The current span as a `traceparent` (`00-<trace id>-<span id>-<flags>`); null outside any span or when spans
 * are not exported.
 */
export const current: Effect.Effect<string | null> = Effect.flatMap(FiberRef.get(Exported), (exported) =>
  exported
    ? Effect.map(
      Effect.option(Effect.currentSpan),
      Option.match({
        onNone: () => null,
        onSome: (span) => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
      })
    )
    : Effect.succeed(null))

/** `{ trace_parent }` for an insert when there is a context to keep, else nothing (the column stays NULL). */
export const column = (traceParent: string | null): { readonly trace_parent?: string } =>
  traceParent === null ? {} : { trace_parent: traceParent }

/** The span a stored `traceparent` names, to parent (or link) the work on it; None when absent or malformed. */
export const parse = (traceParent: string | null | undefined): Option.Option<Tracer.ExternalSpan> => {
  const match = traceParent == null ? null : TRACEPARENT.exec(traceParent)
  return match === null
    ? Option.none()
    : Option.some(Tracer.externalSpan({
      traceId: match[1]!,
      spanId: match[2]!,
      sampled: (Number.parseInt(match[3]!, 16) & 1) === 1
    }))
}

/** `withSpan` options making the span a child of the stored context, when there is one. */
export const parentOf = (traceParent: string | null | undefined): { readonly parent?: Tracer.AnySpan } =>
  Option.match(parse(traceParent), { onNone: () => ({}), onSome: (parent) => ({ parent }) })

// The tracer Effect uses when none is installed: its spans are never exported (traces off, docs/observability.md).
const nativeTracer = Effect.runSync(Effect.tracer)

/** Whether the fiber's spans go anywhere: a tracer is installed (OpenTelemetry's, or a test's recording one). */
export const isTracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean => fiber.currentTracer !== nativeTracer

/**
 * `Effect.withSpan` while a tracer is installed; otherwise the effect alone. Effect's own tracer keeps its spans
 * nowhere, yet each costs ~30 run-loop steps (the span's start and end, and a fiber-ref scope making it the
 * parent of what runs inside): this checks in one step (docs/performance.md, "Effect steps per request"). Not
 * for code that reads `Effect.currentSpan` as a span it needs.
 */
export const withSpan = (name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => isTracing(fiber) ? Effect.withSpan(self, name, options) : self)
