const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Whether `value` has the shape of a uuid. Ids from paths and CLI flags are checked before they reach a
 * `uuid` column: PostgreSQL would answer a malformed one with an error, not with "not found".
 */
export const isUuid = (value: string): boolean => UUID.test(value)
