/**
 * The `code` a transport or resolver error carries (`ECONNREFUSED`, `ENOTFOUND`, Bun's `ConnectionRefused`…),
 * or `undefined` when it has none. Only the code is read: an error's message is not ours to pass on.
 */
export const errorCode = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" && cause.code !== ""
    ? cause.code
    : undefined
