/**
 * The version of the partner API contract: `info.version` of `/openapi.json` and `api_version` of every webhook
 * body. It lives below both so that the webhook code can stamp events without depending on the HTTP contract.
 */
export const API_VERSION = "2026-10-01"
