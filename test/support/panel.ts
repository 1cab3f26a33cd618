import { expect } from "bun:test"
import { call, type HttpResult, type RunningApp } from "./app.ts"
import type { FakeSmtp } from "./smtp.ts"

/**
 * A panel user's HTTP client, as a browser would be: it keeps the `panel_session` cookie the sign-in sets and
 * sends the session's `X-Panel-CSRF` on state-changing requests (unless told otherwise).
 */
export interface PanelClient {
  readonly request: <B = any>(
    method: string,
    path: string,
    options?: {
      readonly json?: unknown
      readonly headers?: Record<string, string>
      /** `false`: no CSRF header; a string: that value instead of the session's. */
      readonly csrf?: boolean | string
    }
  ) => Promise<HttpResult<B>>
  /** Asks for a code, reads it from the fake SMTP server and signs in; answers the sign-in's body. */
  readonly signIn: (email: string) => Promise<{ account_id: string; account_name: string; email: string }>
  readonly cookie: () => string | undefined
  readonly csrf: () => string | undefined
  /** Forgets the session, as a closed browser. */
  readonly forget: () => void
}

const sessionCookieOf = (headers: Headers): string | undefined => {
  for (const line of headers.getSetCookie()) {
    const match = /^panel_session=([^;]*)/.exec(line)
    if (match !== null) return match[1]
  }
  return undefined
}

export const panelClient = (app: Pick<RunningApp, "baseUrl">, smtp: FakeSmtp): PanelClient => {
  let cookie: string | undefined
  let csrf: string | undefined
  const request: PanelClient["request"] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    if (cookie !== undefined) headers.cookie = `panel_session=${cookie}`
    const stateChanging = method !== "GET" && method !== "HEAD"
    if (stateChanging && options.csrf !== false) {
      const value = typeof options.csrf === "string" ? options.csrf : csrf
      if (value !== undefined) headers["x-panel-csrf"] = value
    }
    const result = await call(app, method, path, { ...(options.json === undefined ? {} : { json: options.json }), headers })
    const set = sessionCookieOf(result.headers)
    if (set !== undefined) cookie = set === "" ? undefined : set
    const token = result.headers.get("x-panel-csrf")
    if (token !== null) csrf = token
    return result
  }
  const signIn: PanelClient["signIn"] = async (email) => {
    const since = Date.now()
    const asked = await request("POST", "/api/panel/session/code", { json: { email } })
    expect(asked.status).toBe(202)
    const code = await smtp.waitForCode(email, { since })
    const signedIn = await request("POST", "/api/panel/session", { json: { email, code } })
    expect(signedIn.status).toBe(200)
    return signedIn.body
  }
  return {
    request,
    signIn,
    cookie: () => cookie,
    csrf: () => csrf,
    forget: () => {
      cookie = undefined
      csrf = undefined
    }
  }
}
