import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Context, Data, Duration, Effect, Either, Layer, Metric, Option, ParseResult, Redacted, Schema } from "effect"
import * as Metrics from "../shared/Metrics.ts"
import * as TraceContext from "../shared/TraceContext.ts"

/**
 * The SIRE gateway client (`SIRE_MODE=gateway`, design §6.13). Migración has no public API (domain notes §2.2),
 * so a gateway run by the operator takes our file and does the upload: `POST {SIRE_GATEWAY_URL}` with the file
 * as a `text/plain; charset=utf-8` body, `X-Sire-Hotel-Code` and `X-Sire-City-Code` headers, and
 * `Authorization: Bearer {SIRE_GATEWAY_TOKEN}` when a token is set. It answers
 * `{processed, valid, invalid, errors:[{line, message}]}`, the counts the portal shows after a load (C3), with
 * lines numbered from 1.
 *
 * One attempt per call, never retried here: the report run owns retries and the "possible duplicate" record
 * (design §6.9, §7), so every failure comes back as an outcome saying what the caller may do with the file.
 * The token is never logged nor put in an outcome, even when the gateway echoes it back.
 */

/** One line the gateway refused, numbered from 1 as in the file. */
export interface SireLineError {
  readonly line: number
  readonly message: string
}

export type SireOutcome = Data.TaggedEnum<{
  /** The gateway processed the file; lines in `errors` were refused, the others accepted. */
  Answered: {
    readonly processed: number
    readonly valid: number
    readonly invalid: number
    readonly errors: ReadonlyArray<SireLineError>
  }
  /** 401/403: the gateway refused our credentials. Nothing was uploaded; fix the configuration, then resend. */
  Misconfigured: { readonly status: number; readonly reason: string }
  /** Any other 4xx: the whole file was refused and will be refused again as it is. */
  Rejected: { readonly status: number; readonly reason: string }
  /** 5xx, timeout, network error or an unreadable answer: the file may or may not have been uploaded. */
  Unknown: { readonly reason: string }
}>
export const SireOutcome = Data.taggedEnum<SireOutcome>()

export interface SireFileUpload {
  readonly hotelCode: string
  readonly cityCode: string
  /** The file as `Sire.sireFile` writes it. */
  readonly content: string
}

export class SireGateway extends Context.Tag("compliance/SireGateway")<SireGateway, {
  readonly submit: (file: SireFileUpload) => Effect.Effect<SireOutcome>
}>() {}

export interface SireGatewayOptions {
  /** `SIRE_GATEWAY_URL`. */
  readonly url: string
  /** `SIRE_GATEWAY_TOKEN`. */
  readonly token: Option.Option<Redacted.Redacted<string>>
  /** Limit of the whole call (connection, upload, answer). Default 60 seconds: a file of many lines is uploaded
   * through a portal on the gateway's side. */
  readonly timeout?: Duration.DurationInput
}

export const DEFAULT_TIMEOUT: Duration.DurationInput = "60 seconds"

/** The answer of design §6.13. `errors` may be left out when nothing was refused. */
const Count = Schema.Int.pipe(Schema.nonNegative())
const Answer = Schema.Struct({
  processed: Count,
  valid: Count,
  invalid: Count,
  errors: Schema.optionalWith(
    Schema.Array(Schema.Struct({ line: Schema.Int.pipe(Schema.positive()), message: Schema.String })),
    { default: () => [] }
  )
}).pipe(
  Schema.filter((answer) => answer.valid + answer.invalid === answer.processed || "valid + invalid ≠ processed"),
  Schema.filter((answer) =>
    answer.errors.every((error) => error.line <= answer.processed) || "an error names a line beyond those processed"
  )
)

/** How much of a refusal's body is kept as its reason. */
const REASON_LIMIT = 300

/** A JSON object body, as far as `reasonOf` reads it. */
const JsonObjectBody = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/** The `detail`, `message` or `error` of a JSON body (what authorities' clients read, notes §1.5), else the text. */
const reasonOf = (body: string): string => {
  const text = body.trim()
  const json = Schema.decodeUnknownOption(JsonObjectBody)(text)
  if (Option.isSome(json)) {
    for (const key of ["detail", "message", "error"]) {
      const value = json.value[key]
      if (typeof value === "string" && value.trim() !== "") return value.trim().slice(0, REASON_LIMIT)
    }
  }
  return text.replace(/\s+/g, " ").slice(0, REASON_LIMIT)
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).host
  } catch {
    return "the SIRE gateway"
  }
}

export const make = (
  options: SireGatewayOptions
): Effect.Effect<Context.Tag.Service<SireGateway>, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    // No trace headers to a third party.
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerPropagation(false))
    const timeout = Duration.decode(options.timeout ?? DEFAULT_TIMEOUT)
    // The host only: the URL itself may carry a credential in its query string.
    const host = hostOf(options.url)
    const secret = Option.map(options.token, Redacted.value).pipe(Option.filter((token) => token !== ""))
    /** A gateway may echo our request in an error body; whatever it says, the token never leaves this module. */
    const scrub = (text: string): string =>
      Option.match(secret, { onNone: () => text, onSome: (token) => text.split(token).join("<redacted>") })

    const classify = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<SireOutcome> =>
      Effect.gen(function*() {
        const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
        const status = response.status
        if (status >= 200 && status < 300) {
          const answer = Either.flatMap(
            Either.try((): unknown => JSON.parse(body)),
            (json) => Schema.decodeUnknownEither(Answer)(json)
          )
          if (Either.isLeft(answer)) {
            const why = ParseResult.isParseError(answer.left)
              ? ParseResult.TreeFormatter.formatErrorSync(answer.left).replace(/\s+/g, " ")
              : "not JSON"
            const reason = `${host} answered HTTP ${status} with an unreadable answer (${why})`
            return SireOutcome.Unknown({ reason: scrub(reason) })
          }
          return SireOutcome.Answered(answer.right)
        }
        const reason = reasonOf(body)
        const said = scrub(reason === "" ? `HTTP ${status}` : `HTTP ${status}: ${reason}`)
        if (status === 401 || status === 403) return SireOutcome.Misconfigured({ status, reason: said })
        if (status >= 400 && status < 500) return SireOutcome.Rejected({ status, reason: said })
        return SireOutcome.Unknown({ reason: `${host} answered ${said}` })
      })

    const submit = (file: SireFileUpload): Effect.Effect<SireOutcome> => {
      const lines = file.content.split("\r\n").length - 1
      const request = HttpClientRequest.post(options.url).pipe(
        HttpClientRequest.setHeaders({
          accept: "application/json",
          "x-sire-hotel-code": file.hotelCode,
          "x-sire-city-code": file.cityCode
        }),
        (request) =>
          Option.match(options.token, {
            onNone: () => request,
            onSome: (token) => HttpClientRequest.bearerToken(request, token)
          }),
        HttpClientRequest.bodyText(file.content, "text/plain; charset=utf-8")
      )
      return client.execute(request).pipe(
        Effect.flatMap(classify),
        Effect.timeoutTo({
          duration: timeout,
          onSuccess: (outcome): SireOutcome => outcome,
          onTimeout: () => SireOutcome.Unknown({ reason: `no answer from ${host} within ${Duration.format(timeout)}` })
        }),
        Effect.catchAll((error) =>
          Effect.succeed(SireOutcome.Unknown({ reason: scrub(`no answer from ${host} (${error.reason})`) }))
        ),
        Effect.tap((outcome) =>
          SireOutcome.$match(outcome, {
            Answered: (a) =>
              Effect.logInfo(`SIRE gateway processed ${a.processed} lines: ${a.valid} valid, ${a.invalid} invalid`),
            Misconfigured: (o) => Effect.logWarning(`SIRE gateway refused the credentials: ${o.reason}`),
            Rejected: (o) => Effect.logWarning(`SIRE gateway refused the file: ${o.reason}`),
            Unknown: (o) => Effect.logWarning(`SIRE gateway outcome unknown: ${o.reason}`)
          })
        ),
        Effect.tap((outcome) =>
          Metric.increment(
            Metric.tagged(Metric.tagged(Metrics.authoritySubmissions, "authority", "sire"), "outcome", outcome._tag)
          )
        ),
        Effect.annotateLogs({ sireHotelCode: file.hotelCode, lines }),
        TraceContext.withSpan("SireGateway.submit", {
          attributes: { "sire.hotel_code": file.hotelCode, "sire.lines": lines }
        })
      )
    }

    return SireGateway.of({ submit })
  })

/** The gateway client of design §6.13; compose with `FetchHttpClient.layer`. */
export const layer = (options: SireGatewayOptions): Layer.Layer<SireGateway, never, HttpClient.HttpClient> =>
  Layer.effect(SireGateway, make(options))
