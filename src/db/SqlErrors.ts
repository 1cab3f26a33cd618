import type { SqlError } from "@effect/sql"

/** PostgreSQL's SQLSTATE for a unique violation. */
const UNIQUE_VIOLATION = "23505"

/** A statement broke a unique constraint: for the few callers where that is an expected outcome, not a defect. */
export const isUniqueViolation = (error: SqlError.SqlError): boolean => {
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && "code" in cause && cause.code === UNIQUE_VIOLATION
}

/** Node's codes for a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

/**
 * SQLSTATEs of a server that is not there for us: class 08 (connection exception), 57P01–57P03 (shut down by
 * an administrator, crashed, not accepting connections yet), 53300 (too many connections).
 */
const isUnavailableState = (code: string) => code.startsWith("08") || /^57P0[123]$/.test(code) || code === "53300"

/** What `pg` says when a connection broke or none could be had within `connectionTimeoutMillis`. */
const PG_MESSAGES = [
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error",
  "Connection closed",
  "Client was closed"
]

/**
 * The database could not be reached or the connection was lost — not a fault of the statement. Follows the
 * chain of causes (an `SqlError` wraps `pg`'s error, which may wrap the socket's).
 */
export const isUnavailable = (error: unknown): boolean => {
  for (let current: unknown = error, depth = 0; typeof current === "object" && current !== null && depth < 5; depth++) {
    const code = "code" in current ? current.code : undefined
    const message = "message" in current ? current.message : undefined
    if (typeof code === "string") {
      if (NETWORK_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isUnavailableState(code))) return true
    }
    if (typeof message === "string" && PG_MESSAGES.some((text) => message.includes(text))) return true
    current = "cause" in current ? current.cause : undefined
  }
  return false
}
