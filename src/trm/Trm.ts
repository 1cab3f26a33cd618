import { HttpClient } from "@effect/platform"
import { Cache, Context, Data, Duration, Effect, Exit, Layer, Schedule, Schema } from "effect"
import { AppConfig, DEFAULT_TRM_URL } from "../config/AppConfig.ts"
import { TrmUnavailable } from "../shared/errors.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * The official USD→COP rate (TRM) and the USD conversion of design §6.11; facts in
 * `domain/colombia-reporting.md` §3. The rate of a day is found by **date containment**, never "latest":
 * weekend and holiday rows span several days, and the newest row may already be tomorrow's.
 */

/** One published rate: `rate` exactly as the dataset writes it (a decimal with a dot), dates `YYYY-MM-DD`. */
export interface TrmRate {
  readonly rate: string
  readonly valid_from: string
  readonly valid_to: string
}

export interface TrmProviderShape {
  /** The rate valid on `date` (`YYYY-MM-DD`, a Bogotá calendar day). */
  readonly rateFor: (date: string) => Effect.Effect<TrmRate, TrmUnavailable>
}

export class TrmProvider extends Context.Tag("trm/TrmProvider")<TrmProvider, TrmProviderShape>() {}

export { DEFAULT_TRM_URL }

// The Bogotá calendar moved to shared/Calendar.ts; re-exported for the callers that still import it from here.
export { bogotaZone, todayInBogota } from "../shared/Calendar.ts"

// ---------------------------------------------------------------------------------------------------------------
// Conversion (exact decimal arithmetic)
// ---------------------------------------------------------------------------------------------------------------

const DECIMAL = /^(\d+)(?:\.(\d+))?$/

/** A non-negative decimal as (integer of all its digits, number of decimals): "3950.45" → (395045n, 2). */
const parseDecimal = (value: number | string, what: string): { readonly units: bigint; readonly scale: number } => {
  // For a number, String() gives the shortest decimal that reads back as the same double: 10.05 → "10.05",
  // the value the partner wrote, not the binary approximation 10.050000000000000710…
  const text = typeof value === "number" ? String(value) : value.trim()
  if (typeof value === "number" && !Number.isFinite(value)) throw new RangeError(`${what} must be finite, got ${text}`)
  const match = DECIMAL.exec(text)
  if (match === null) throw new RangeError(`${what} must be a non-negative decimal with a dot, got ${JSON.stringify(text)}`)
  const decimals = match[2] ?? ""
  return { units: BigInt(match[1]! + decimals), scale: decimals.length }
}

/**
 * Converts a USD amount to whole Colombian pesos at `rate`, rounding half-up (…,5 goes up). Exact: both
 * numbers become scaled BigInts, so no binary floating-point error can move a result across a .5 boundary.
 * Throws a `RangeError` for a negative, non-finite or malformed input (the API validates amounts first).
 */
export const usdToCop = (amount: number | string, rate: string): string => {
  const a = parseDecimal(amount, "amount")
  const r = parseDecimal(rate, "rate")
  const product = a.units * r.units
  const divisor = 10n ** BigInt(a.scale + r.scale)
  const whole = product / divisor
  const remainder = product % divisor
  return (remainder * 2n >= divisor ? whole + 1n : whole).toString()
}

// ---------------------------------------------------------------------------------------------------------------
// datos.gov.co (Socrata) provider
// ---------------------------------------------------------------------------------------------------------------

/** Socrata floating timestamps, no zone: "2026-11-21T00:00:00.000" (a bare date is accepted too). */
const SocrataDate = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?$/))

/** One row of the TRM dataset; every field is a string (domain notes §3). Unknown fields are ignored. */
const TrmRow = Schema.Struct({
  valor: Schema.String.pipe(Schema.pattern(/^\d+(\.\d+)?$/), Schema.filter((v) => /[1-9]/.test(v) || "rate must be > 0")),
  unidad: Schema.Literal("COP"),
  vigenciadesde: SocrataDate,
  vigenciahasta: SocrataDate
})
const TrmRows = Schema.Array(TrmRow)
type TrmRow = typeof TrmRow.Type

const DATE = /^\d{4}-\d{2}-\d{2}$/
const isCalendarDate = (date: string) =>
  DATE.test(date) && new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) === date

/** Why one attempt failed; `transient` failures are retried. Internal: callers only ever see `TrmUnavailable`. */
class AttemptFailed extends Data.TaggedError("AttemptFailed")<{ readonly reason: string; readonly transient: boolean }> {}

export interface TrmProviderOptions {
  /** The dataset's resource URL (`TRM_URL`). */
  readonly url: string
  /** Limit of one attempt: connection, answer and body. Default 5 seconds. */
  readonly timeout?: Duration.DurationInput
  /** Gaps between attempts of one lookup. Default 200 ms then 400 ms, so 3 attempts at most. */
  readonly retrySchedule?: Schedule.Schedule<unknown, unknown>
  /** How many dates the in-memory cache holds. Default 1000. */
  readonly cacheCapacity?: number
}

/** The containment query of domain notes §3: the rows whose validity interval contains `date`. */
export const queryFor = (date: string) => {
  const day = `'${date}T00:00:00.000'`
  return {
    $where: `vigenciadesde <= ${day} AND vigenciahasta >= ${day}`,
    $order: "vigenciadesde DESC",
    $limit: "10"
  }
}

/** "3950.40" and "3950.4" are the same rate; compared as text, never as floats. */
const sameDecimal = (x: string, y: string) => {
  const normal = (v: string) => v.includes(".") ? v.replace(/0+$/, "").replace(/\.$/, "") : v
  return normal(x).replace(/^0+(?=\d)/, "") === normal(y).replace(/^0+(?=\d)/, "")
}

/**
 * The row to use among those containing `date`. One is expected. Should the dataset ever hold several (a
 * correction published as a new row, or a duplicate), the domain notes give no rule, so ours is: the row whose
 * validity began latest is the most recent certification covering the day, and it supersedes an older, wider
 * span; among equal starts the narrowest span wins. Rows that still tie but disagree on the value are refused
 * rather than guessed (money). Returns undefined when no row contains `date`.
 */
const pick = (rows: ReadonlyArray<TrmRow>, date: string): TrmRate | "ambiguous" | undefined => {
  const rates: Array<TrmRate> = rows
    .map((row) => ({ rate: row.valor, valid_from: row.vigenciadesde.slice(0, 10), valid_to: row.vigenciahasta.slice(0, 10) }))
    // Containment is checked here as well: a server that ignored `$where` must never hand us tomorrow's row.
    .filter((r) => r.valid_from <= date && date <= r.valid_to)
    .sort((x, y) =>
      x.valid_from === y.valid_from ? x.valid_to.localeCompare(y.valid_to) : y.valid_from.localeCompare(x.valid_from)
    )
  const best = rates[0]
  if (best === undefined) return undefined
  const tied = rates.filter((r) => r.valid_from === best.valid_from && r.valid_to === best.valid_to)
  return tied.every((r) => sameDecimal(r.rate, best.rate)) ? best : "ambiguous"
}

const defaultRetry: Schedule.Schedule<unknown, unknown> = Schedule.exponential("200 millis").pipe(
  Schedule.intersect(Schedule.recurs(2))
)

/**
 * `DatosGovTrmProvider` (domain notes §6.1): looks the day up on the Socrata dataset at `options.url`.
 * Successes are cached per date for the life of the process (a published rate never changes); failures are
 * never cached, so the next call tries again.
 */
export const make = (options: TrmProviderOptions): Effect.Effect<TrmProviderShape, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    // No trace headers to a third party.
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerPropagation(false))
    const timeout = Duration.decode(options.timeout ?? "5 seconds")
    const host = new URL(options.url).host

    const attempt = (date: string): Effect.Effect<ReadonlyArray<TrmRow>, AttemptFailed> =>
      client.get(options.url, { urlParams: queryFor(date), headers: { accept: "application/json" } }).pipe(
        Effect.mapError((error) => new AttemptFailed({ reason: `no answer from ${host} (${error.reason})`, transient: true })),
        Effect.flatMap((response) => {
          if (response.status >= 200 && response.status < 300) {
            return response.json.pipe(
              Effect.mapError(() => new AttemptFailed({ reason: `${host} answered with a body that is not JSON`, transient: true })),
              Effect.flatMap((body) =>
                Schema.decodeUnknown(TrmRows)(body).pipe(
                  // A well-formed answer of the wrong shape will not fix itself in a few hundred milliseconds.
                  Effect.mapError(() => new AttemptFailed({ reason: `${host} answered rows of an unexpected shape`, transient: false }))
                )
              )
            )
          }
          // 5xx and throttling (429) are worth another try; any other 4xx means our query is wrong.
          const transient = response.status >= 500 || response.status === 429
          return Effect.zipRight(
            Effect.ignore(response.text),
            Effect.fail(new AttemptFailed({ reason: `${host} answered HTTP ${response.status}`, transient }))
          )
        }),
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => new AttemptFailed({ reason: `no answer from ${host} within ${Duration.format(timeout)}`, transient: true })
        })
      )

    const lookup = (date: string): Effect.Effect<TrmRate, TrmUnavailable> =>
      attempt(date).pipe(
        Effect.retry({ schedule: options.retrySchedule ?? defaultRetry, while: (error) => error.transient }),
        Effect.flatMap((rows) => {
          const picked = pick(rows, date)
          if (picked === undefined) {
            return Effect.fail(new AttemptFailed({ reason: `${host} has no rate valid on ${date}`, transient: false }))
          }
          if (picked === "ambiguous") {
            return Effect.fail(new AttemptFailed({ reason: `${host} has conflicting rates for ${date}`, transient: false }))
          }
          return Effect.succeed(picked)
        }),
        Effect.tapError((error) => Effect.logWarning(`TRM unavailable for ${date}: ${error.reason}`)),
        Effect.mapError((error) =>
          new TrmUnavailable({
            message: `the USD→COP exchange rate (TRM) for ${date} could not be obtained: ${error.reason}; retry in a few minutes`,
            details: { date }
          })
        ),
        TraceContext.withSpan("TrmProvider.lookup", { attributes: { date } })
      )

    const cache = yield* Cache.makeWith({
      capacity: options.cacheCapacity ?? 1000,
      lookup,
      // Failures are dropped at once (see also the invalidate below, which does not depend on the clock moving).
      timeToLive: (exit) => Exit.isSuccess(exit) ? Duration.infinity : Duration.zero
    })

    const rateFor = (date: string): Effect.Effect<TrmRate, TrmUnavailable> =>
      isCalendarDate(date)
        ? cache.get(date).pipe(Effect.tapError(() => cache.invalidate(date)))
        : Effect.dieMessage(`TrmProvider.rateFor: expected a YYYY-MM-DD date, got ${JSON.stringify(date)}`)

    return TrmProvider.of({ rateFor })
  })

export const layerWith = (options: TrmProviderOptions): Layer.Layer<TrmProvider, never, HttpClient.HttpClient> =>
  Layer.effect(TrmProvider, make(options))

/** The production provider on `TRM_URL`; compose with `FetchHttpClient.layer`. */
export const layer: Layer.Layer<TrmProvider, never, AppConfig | HttpClient.HttpClient> = Layer.effect(
  TrmProvider,
  Effect.flatMap(AppConfig, (config) => make({ url: config.trmUrl }))
)

/** A fixed table, for tests and simulations: `rates` maps a date to its rate; a missing date is unavailable. */
export const layerTest = (rates: Readonly<Record<string, string>>): Layer.Layer<TrmProvider> =>
  Layer.succeed(
    TrmProvider,
    TrmProvider.of({
      rateFor: (date) => {
        const rate = rates[date]
        return rate === undefined
          ? Effect.fail(new TrmUnavailable({ message: `no TRM for ${date}`, details: { date } }))
          : Effect.succeed({ rate, valid_from: date, valid_to: date })
      }
    })
  )

// Exposed for unit tests of the selection rule.
export const _internal = { pick, isCalendarDate }
