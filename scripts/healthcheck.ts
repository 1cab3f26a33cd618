/**
 * The image's HEALTHCHECK: `GET /readyz` on the address the service listens on — `HOST` (default 0.0.0.0 in the
 * image), or loopback when it listens on every address — and `PORT`. Exits 0 when ready, 1 otherwise (within 4 s:
 * the check's own timeout is 5 s).
 */
const host = process.env.HOST === undefined || process.env.HOST === "" || process.env.HOST === "0.0.0.0"
  ? "127.0.0.1"
  : process.env.HOST === "::"
  ? "[::1]"
  : process.env.HOST.includes(":")
  ? `[${process.env.HOST}]`
  : process.env.HOST
const url = `http://${host}:${process.env.PORT || "3000"}/readyz`

try {
  const response = await fetch(url, { signal: AbortSignal.timeout(4_000) })
  process.exit(response.ok ? 0 : 1)
} catch {
  process.exit(1)
}
