import { HttpApiSchema } from "@effect/platform"
import { Predicate, Schema } from "effect"

/**
 * Every expected failure of the partner API: one `Schema.TaggedError` per stable error code of the spec's
 * error table (plus `not_found` / `method_not_allowed` / `unsupported_media_type`, design §6.2). Handlers fail
 * with the class (`yield* new PropertyNotFound({ message })`); on the wire each becomes exactly
 * `{error, code, details}` through its `Body` schema, which is what the `HttpApi` contract declares. The few
 * failures that only operator services raise (`AccountNotFound`, `KeyNotFound`, `NothingToRetry`…) live here
 * too, so that services depend on this module alone and each entrance (partner API, admin RPC) maps them to its
 * own answer.
 */

export const Details = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type Details = typeof Details.Type

const fields = {
  message: Schema.String,
  details: Schema.optionalWith(Details, { default: () => ({}) })
}

/** The spec's Error shape. */
export const ErrorBody = <const Code extends string>(code: Code) =>
  Schema.Struct({ error: Schema.String, code: Schema.Literal(code), details: Details })

interface ErrorClass<Self> {
  new(props: { readonly message: string; readonly details?: Details }): Self
  readonly identifier: string
}

/**
 * What each code means (spec "Errors", design §6.2, docs/panel.md): the description of its wire schema, which the
 * OpenAPI documents show beside the code. A code missing here is described by its name alone.
 */
const MEANINGS: Readonly<Record<string, string>> = {
  invalid_json: "the body is not valid JSON",
  invalid_request: "a missing field or an invalid format; `details.fields` names every failing field",
  invalid_webhook_url: "the webhook URL is not public HTTPS",
  registration_rejected: "the guest registration was not accepted; the message gives the reason",
  unauthorized: "the key (or the panel session) is missing, invalid or revoked",
  property_out_of_scope: "the property does not belong to the account",
  sandbox_property_required: "a test key was used on a real property",
  live_property_required: "a live key was used on a test property",
  property_not_found: "the property does not exist or has check-in disabled",
  registration_not_found: "no reservation of the caller with that external_id",
  webhook_not_found: "the webhook endpoint does not exist, is not the caller's or was deactivated",
  delivery_not_found: "the delivery does not exist or is not the caller's",
  reservation_conflict: "the external_id exists with different data; use PATCH",
  creation_in_progress: "another creation with that external_id is running; retry in a few seconds",
  registration_open: "the external_id was created without guests; they register through the link",
  reservation_cancelled: "the reservation is cancelled",
  already_reported: "already reported to an authority; it cannot be changed through the API",
  guests_already_registered: "guests_count is lower than the guests already registered",
  duplicate_document: "a document number repeats among the guests",
  external_id_in_use: "the external id is already assigned to another property",
  webhook_limit_reached: "the key's account already has 5 active webhook endpoints in this environment",
  rate_limited: "limit exceeded; wait the seconds in the Retry-After header",
  internal_error: "server error; retry (`details.request_id` identifies it in the logs)",
  trm_unavailable: "the exchange rate for USD conversion could not be obtained; retry in a few minutes",
  service_unavailable: "the database cannot be reached right now; nothing was changed, retry (docs/reliability.md)",
  not_found: "no such route",
  method_not_allowed: "the path exists, not with this method; the Allow header lists the methods",
  csrf_rejected: "a state-changing request without a same-origin Origin or the session's X-Panel-CSRF",
  invalid_code: "a wrong, expired, spent or burnt e-mailed code",
  live_not_enabled: "a live key on a self-signed-up account that an operator has not enabled yet",
  sandbox_exists: "the account's test environment was already created",
  owner_required: "only the account's own e-mail may change its members",
  member_not_found: "no such member of the account",
  key_not_found: "no such key of the account",
  key_limit_reached: "the account already has 3 active keys of that type",
  account_not_found: "no such account"
}

/** A `{message, details}` error of this module, as {@link clipError} rebuilds it. */
interface ClippableError {
  readonly message: string
  readonly details: Details
}

/** Every error class given a wire schema, by tag: {@link clipError} rebuilds a clipped copy with its own class. */
const errorClasses = new Map<string, ErrorClass<ClippableError>>()

/**
 * The wire schema of one error class: decodes a `{error, code, details}` body into the class (for the typed
 * client) and encodes an instance into that body, dropping `_tag` (stack-notes P11).
 */
const wire = <Self extends ClippableError, const Code extends string>(
  cls: ErrorClass<Self>,
  code: Code,
  status: number
) => {
  errorClasses.set(cls.identifier, cls)
  return Schema.transform(ErrorBody(code), Schema.instanceOf(cls), {
    strict: true,
    decode: (body) => new cls({ message: body.error, details: body.details }),
    encode: (error) => ({ error: error.message, code, details: error.details })
  }).annotations(HttpApiSchema.annotations({
    status,
    identifier: `${cls.identifier}Error`,
    description: MEANINGS[code] === undefined ? code : `${code}: ${MEANINGS[code]}`
  }))
}

export class InvalidJson extends Schema.TaggedError<InvalidJson>()("InvalidJson", fields) {}
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", fields) {}
export class InvalidWebhookUrl extends Schema.TaggedError<InvalidWebhookUrl>()("InvalidWebhookUrl", fields) {}
export class RegistrationRejected extends Schema.TaggedError<RegistrationRejected>()("RegistrationRejected", fields) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields) {}
export class PropertyOutOfScope extends Schema.TaggedError<PropertyOutOfScope>()("PropertyOutOfScope", fields) {}
export class SandboxPropertyRequired
  extends Schema.TaggedError<SandboxPropertyRequired>()("SandboxPropertyRequired", fields)
{}
export class LivePropertyRequired extends Schema.TaggedError<LivePropertyRequired>()("LivePropertyRequired", fields) {}
export class PropertyNotFound extends Schema.TaggedError<PropertyNotFound>()("PropertyNotFound", fields) {}
export class RegistrationNotFound extends Schema.TaggedError<RegistrationNotFound>()("RegistrationNotFound", fields) {}
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()("WebhookNotFound", fields) {}
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()("DeliveryNotFound", fields) {}
export class ReservationConflict extends Schema.TaggedError<ReservationConflict>()("ReservationConflict", fields) {}
export class CreationInProgress extends Schema.TaggedError<CreationInProgress>()("CreationInProgress", fields) {}
export class RegistrationOpen extends Schema.TaggedError<RegistrationOpen>()("RegistrationOpen", fields) {}
export class ReservationCancelled extends Schema.TaggedError<ReservationCancelled>()("ReservationCancelled", fields) {}
export class AlreadyReported extends Schema.TaggedError<AlreadyReported>()("AlreadyReported", fields) {}
export class GuestsAlreadyRegistered
  extends Schema.TaggedError<GuestsAlreadyRegistered>()("GuestsAlreadyRegistered", fields)
{}
export class DuplicateDocument extends Schema.TaggedError<DuplicateDocument>()("DuplicateDocument", fields) {}
export class ExternalIdInUse extends Schema.TaggedError<ExternalIdInUse>()("ExternalIdInUse", fields) {}
export class WebhookLimitReached extends Schema.TaggedError<WebhookLimitReached>()("WebhookLimitReached", fields) {}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", fields) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {}
export class TrmUnavailable extends Schema.TaggedError<TrmUnavailable>()("TrmUnavailable", fields) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {}
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", fields) {}
/**
 * The database is away (refused, lost or timed-out connection): the request could not be served and changed
 * nothing; the error middleware answers it for any route (docs/reliability.md).
 */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields) {}
/** A body route sent another content type than it reads (`application/json`, or the photo upload's multipart). */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", fields) {}

// Failures of the operator services (accounts, keys, reports, reference data). The partner API never answers with
// them, so they stay out of `allErrorBodies`, which is the spec's table; the admin RPC maps them to its own
// `AdminError` codes.
/** No account has the given id. */
export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", fields) {}
/** No API key has the given id. */
export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", fields) {}
/** The account already has the most active keys allowed in that environment. */
export class KeyLimitReached extends Schema.TaggedError<KeyLimitReached>()("KeyLimitReached", fields) {}
/** No reservation has the given id (`cli reports retry`). */
export class ReservationNotFound extends Schema.TaggedError<ReservationNotFound>()("ReservationNotFound", fields) {}
/** `cli reports retry` on a reservation none of whose reports is in `error` (design §9). */
export class NothingToRetry extends Schema.TaggedError<NothingToRetry>()("NothingToRetry", fields) {}
/** `cli reference unset` of a key that has no override. */
export class OverrideNotFound extends Schema.TaggedError<OverrideNotFound>()("OverrideNotFound", fields) {}

// The account panel's own failures (design §8), beyond the spec's table.
/** A state-changing panel request without a same-origin `Origin` or the session's `X-Panel-CSRF`. */
export class CsrfRejected extends Schema.TaggedError<CsrfRejected>()("CsrfRejected", fields) {}
/** A wrong, expired, spent or burnt (5 wrong tries) e-mailed code. */
export class InvalidCode extends Schema.TaggedError<InvalidCode>()("InvalidCode", fields) {}
/** A self-signed-up account asked for a live key before an operator enabled live (`accounts enable-live`). */
export class LiveNotEnabled extends Schema.TaggedError<LiveNotEnabled>()("LiveNotEnabled", fields) {}
/** The account's test environment was already created. */
export class SandboxExists extends Schema.TaggedError<SandboxExists>()("SandboxExists", fields) {}
/** Only the account's own e-mail (the holder) may change its members. */
export class OwnerRequired extends Schema.TaggedError<OwnerRequired>()("OwnerRequired", fields) {}
/** No such member of the account. */
export class MemberNotFound extends Schema.TaggedError<MemberNotFound>()("MemberNotFound", fields) {}

/** The error table: class → (stable code, HTTP status). The single place a code or status is written. */
export const InvalidJsonBody = wire(InvalidJson, "invalid_json", 400)
export const InvalidRequestBody = wire(InvalidRequest, "invalid_request", 400)
export const InvalidWebhookUrlBody = wire(InvalidWebhookUrl, "invalid_webhook_url", 400)
export const RegistrationRejectedBody = wire(RegistrationRejected, "registration_rejected", 400)
export const UnauthorizedBody = wire(Unauthorized, "unauthorized", 401)
export const PropertyOutOfScopeBody = wire(PropertyOutOfScope, "property_out_of_scope", 403)
export const SandboxPropertyRequiredBody = wire(SandboxPropertyRequired, "sandbox_property_required", 403)
export const LivePropertyRequiredBody = wire(LivePropertyRequired, "live_property_required", 403)
export const PropertyNotFoundBody = wire(PropertyNotFound, "property_not_found", 404)
export const RegistrationNotFoundBody = wire(RegistrationNotFound, "registration_not_found", 404)
export const WebhookNotFoundBody = wire(WebhookNotFound, "webhook_not_found", 404)
export const DeliveryNotFoundBody = wire(DeliveryNotFound, "delivery_not_found", 404)
export const ReservationConflictBody = wire(ReservationConflict, "reservation_conflict", 409)
export const CreationInProgressBody = wire(CreationInProgress, "creation_in_progress", 409)
export const RegistrationOpenBody = wire(RegistrationOpen, "registration_open", 409)
export const ReservationCancelledBody = wire(ReservationCancelled, "reservation_cancelled", 409)
export const AlreadyReportedBody = wire(AlreadyReported, "already_reported", 409)
export const GuestsAlreadyRegisteredBody = wire(GuestsAlreadyRegistered, "guests_already_registered", 409)
export const DuplicateDocumentBody = wire(DuplicateDocument, "duplicate_document", 409)
export const ExternalIdInUseBody = wire(ExternalIdInUse, "external_id_in_use", 409)
export const WebhookLimitReachedBody = wire(WebhookLimitReached, "webhook_limit_reached", 409)
export const RateLimitedBody = wire(RateLimited, "rate_limited", 429)
export const InternalErrorBody = wire(InternalError, "internal_error", 500)
export const TrmUnavailableBody = wire(TrmUnavailable, "trm_unavailable", 503)
export const NotFoundBody = wire(NotFound, "not_found", 404)
export const MethodNotAllowedBody = wire(MethodNotAllowed, "method_not_allowed", 405)
/**
 * design §6.2's third framework code, answered by the error middleware's body guard. Not in `allErrorBodies`
 * (the spec's table, pinned by its test) and not declared on the endpoints: every body route can answer it.
 */
export const UnsupportedMediaTypeBody = wire(UnsupportedMediaType, "unsupported_media_type", 415)
/**
 * 503 while PostgreSQL is away (the spec has no code for it: docs/reliability.md). Like the 415, answered by
 * the error middleware on any route, so neither in `allErrorBodies` nor declared on the endpoints.
 */
export const ServiceUnavailableBody = wire(ServiceUnavailable, "service_unavailable", 503)
/** Operator failures, encoded like the rest should one ever leave through HTTP; not part of the spec's table. */
export const AccountNotFoundBody = wire(AccountNotFound, "account_not_found", 404)
export const KeyNotFoundBody = wire(KeyNotFound, "key_not_found", 404)
export const KeyLimitReachedBody = wire(KeyLimitReached, "key_limit_reached", 409)
export const ReservationNotFoundBody = wire(ReservationNotFound, "reservation_not_found", 404)
export const NothingToRetryBody = wire(NothingToRetry, "nothing_to_retry", 409)
export const OverrideNotFoundBody = wire(OverrideNotFound, "override_not_found", 404)
/** The account panel's codes (design §8; docs/panel.md). */
export const CsrfRejectedBody = wire(CsrfRejected, "csrf_rejected", 403)
export const InvalidCodeBody = wire(InvalidCode, "invalid_code", 401)
export const LiveNotEnabledBody = wire(LiveNotEnabled, "live_not_enabled", 403)
export const SandboxExistsBody = wire(SandboxExists, "sandbox_exists", 409)
export const OwnerRequiredBody = wire(OwnerRequired, "owner_required", 403)
export const MemberNotFoundBody = wire(MemberNotFound, "member_not_found", 404)

/** Every error body of the partner API (the spec's table), for the table test and for documentation. */
export const allErrorBodies = [
  InvalidJsonBody,
  InvalidRequestBody,
  InvalidWebhookUrlBody,
  RegistrationRejectedBody,
  UnauthorizedBody,
  PropertyOutOfScopeBody,
  SandboxPropertyRequiredBody,
  LivePropertyRequiredBody,
  PropertyNotFoundBody,
  RegistrationNotFoundBody,
  WebhookNotFoundBody,
  DeliveryNotFoundBody,
  ReservationConflictBody,
  CreationInProgressBody,
  RegistrationOpenBody,
  ReservationCancelledBody,
  AlreadyReportedBody,
  GuestsAlreadyRegisteredBody,
  DuplicateDocumentBody,
  ExternalIdInUseBody,
  WebhookLimitReachedBody,
  RateLimitedBody,
  InternalErrorBody,
  TrmUnavailableBody,
  NotFoundBody,
  MethodNotAllowedBody
] as const

/** Renders an error instance as the spec's Error body, for the few responses built outside `HttpApi`. */
export const toBody = (code: string, message: string, details: Details = {}) => ({ error: message, code, details })

/** The most characters of a client's input that an error body repeats (a path, a value, a key; design §6.2). */
export const MAX_ECHO = 200

/**
 * At most {@link MAX_ECHO} characters of `text` (never half of a surrogate pair), marked when cut: the one
 * rule for repeating a client's input in an error body, whichever entrance builds it.
 */
export const clip = (text: string, max: number = MAX_ECHO): string => {
  if (text.length <= max) return text
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max
  return `${text.slice(0, end)}… (${text.length} characters)`
}

const clipDetails = (value: unknown): unknown =>
  typeof value === "string"
    ? clip(value)
    : Array.isArray(value)
    ? value.map(clipDetails)
    : typeof value === "object" && value !== null
    ? clipEntries(value)
    : value

const clipEntries = (value: object): Details =>
  Object.fromEntries(Object.entries(value).map(([key, item]) => [key, clipDetails(item)]))

const longestToken = (text: string): number => {
  let longest = 0
  for (const token of text.split(/\s+/)) longest = Math.max(longest, token.length)
  return longest
}

const hasLongString = (value: unknown): boolean =>
  typeof value === "string"
    ? value.length > MAX_ECHO
    : Array.isArray(value)
    ? value.some(hasLongString)
    : typeof value === "object" && value !== null && Object.values(value).some(hasLongString)

/**
 * One of our errors (`{message, details}`) as it may go on the wire: messages quote input (`no property X`,
 * `No active webhook endpoint X`), and an id of a path or an `rnt_id` can be thousands of characters. Every
 * word of the message and every string of `details` longer than {@link MAX_ECHO} is clipped; the message as a
 * whole is capped as a backstop. The same error (no copy) when nothing is long: the usual case costs a scan.
 */
export const clipError = <E>(error: E): E | ClippableError => {
  const Class = Predicate.hasProperty(error, "_tag") && typeof error._tag === "string"
    ? errorClasses.get(error._tag)
    : undefined
  if (Class === undefined || !(error instanceof Class)) return error
  const { message, details } = error
  if (longestToken(message) <= MAX_ECHO && message.length <= 1000 && !hasLongString(details)) return error
  const clippedMessage = clip(message.split(/(\s+)/).map((token) => clip(token)).join(""), 1000)
  return new Class({ message: clippedMessage, details: clipEntries(details) })
}

const ACTUAL = ", actual "

/**
 * A schema issue's message with the input it quotes clipped: effect's messages end in `, actual <the
 * value>`, which can be a whole body. Our own messages quote nothing longer than a date; the overall cap is a
 * backstop.
 */
export const clipIssueMessage = (message: string): string => {
  const at = message.indexOf(ACTUAL)
  const clipped = at === -1 ? message : message.slice(0, at + ACTUAL.length) + clip(message.slice(at + ACTUAL.length))
  return clip(clipped, 1000)
}
