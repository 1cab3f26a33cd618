import { createHash, createHmac, timingSafeEqual } from "node:crypto"

/**
 * How the panel keeps its secrets (design §8): e-mailed codes and session tokens are stored only as hashes and
 * compared in constant time; the CSRF token is derived from the session token, so it needs no storage and dies
 * with the session. Generating them (a CSPRNG) happens at the edges (`PanelAuth`).
 */

/** SHA-256 hex: how a session token is stored (a 256-bit random token needs no salt). */
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex")

/** How a 6-digit code is stored: salted, so equal codes of two rows never look alike. */
export const hashCode = (salt: string, code: string): string =>
  createHash("sha256").update(`${salt}:${code}`).digest("hex")

/** Constant-time equality of two hex digests (a length mismatch is simply false). */
export const sameDigest = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "hex")
  const right = Buffer.from(b, "hex")
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right)
}

/** The `X-Panel-CSRF` value of a session: an HMAC keyed by the session token. */
export const csrfToken = (sessionToken: string): string =>
  createHmac("sha256", sessionToken).update("panel-csrf").digest("base64url")

/** Constant-time equality of two strings (for the CSRF header). */
export const sameText = (a: string, b: string): boolean => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
