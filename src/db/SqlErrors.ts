import type { SqlError } from "@effect/sql"

/** PostgreSQL's SQLSTATE for a unique violation. */
const UNIQUE_VIOLATION = "23505"

/** A statement broke a unique constraint: for the few callers where that is an expected outcome, not a defect. */
export const isUniqueViolation = (error: SqlError.SqlError): boolean => {
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && "code" in cause && cause.code === UNIQUE_VIOLATION
}
