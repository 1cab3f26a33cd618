import { Schema } from "effect"

/**
 * Failures of the admin RPC, printed by the CLI as `{error, code}` on stderr. Codes are stable:
 * account_not_found, key_not_found, key_limit_reached, property_not_found, external_id_in_use,
 * invalid_request, unauthorized, file_not_found, reservation_not_found, nothing_to_retry, override_not_found,
 * secret_unreadable.
 */
export class AdminError extends Schema.TaggedError<AdminError>()("AdminError", {
  message: Schema.String,
  code: Schema.String
}) {}
