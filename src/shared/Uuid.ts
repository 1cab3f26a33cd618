const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Whether `value` has the shape of a uuid. Ids from paths and CLI flags are checked before they reach a
 * `uuid` column: PostgreSQL would answer a malformed one with an error, not with "not found".
 */
export const isUuid = (value: string): boolean => UUID.test(value)

/** The nil UUID: no row has it (ids come from `gen_random_uuid()`). */
export const NIL_UUID = "00000000-0000-0000-0000-000000000000"

/**
 * What to look a uuid column up by for `value`, written `id = ${lookupId(value)}`: the value when it is a UUID,
 * else the nil UUID, which matches nothing (PostgreSQL would refuse the text). The column's index serves it;
 * `id::text = ${value}`, written before for the same tolerance, read the whole table on every lookup.
 */
export const lookupId = (value: string): string => isUuid(value) ? value : NIL_UUID
