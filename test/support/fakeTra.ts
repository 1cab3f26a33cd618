import { DATE_FIELDS, DIGITS as DIGIT_FIELDS, DOCUMENT_LABEL, NOT_BLANK, ONE_FIELDS, TWO_FIELDS } from "./authority/tra-fields.ts"

/**
 * A real local HTTP stand-in for MinCIT's TRA web service for PMS providers (domain notes §6.4 "Fake TRA").
 * What it mimics, and on what evidence:
 * - `POST /one/` and `POST /two/` with the trailing slash (§1.2); another path is 404, another method 405.
 * - `Authorization: token <key>` read the way Django REST Framework's TokenAuthentication reads it (the §1.2
 *   inference): the scheme word case-insensitively, blanks around and between tolerated; a missing, malformed or
 *   unknown token is 401 `{"detail": …}` with `WWW-Authenticate: Token`.
 * - The body must be JSON (`Content-Type: application/json`, else 415) with exactly the field set of §1.3/§1.4,
 *   as the public integrations write it down in `./authority/tra-fields.ts` — never our own module's list, so a
 *   field name we get wrong is caught: a correctly spelled `ciudad_residencia` is an unknown field and leaves
 *   `cuidad_residencia` missing. Every value must be a string; the fields no source sends empty not blank; dates
 *   `YYYY-MM-DD` and real; `check_out` after `check_in`; `numero_acompanantes`, `costo`, `rnt_establecimiento` and
 *   `padre` digits; `tipo_identificacion` the one label `./authority/tra-fields.ts` gives for some document and,
 *   for a guest the test has introduced (`guests`: document number → spec `tipo_documento`), the label of that
 *   guest's document — so a plausible label for the wrong document (a D.E sent as "Pasaporte") is caught.
 *   Failures are 400 `{"<field>": ["<message>"]}`
 *   (the DRF shape of notes §1.2 and §6.4), every failing field listed.
 * - Acceptance is 201 `{"code": n}`, n counting up from `firstCode` (one counter for both endpoints). `/two/`'s
 *   `padre` must be a code this fake issued on `/one/`; its reply is `{"code": m}` or `{}` (`companionReply`),
 *   as sources conflict (§1.5).
 * - Duplicate submissions (§1.5 gap): `duplicates: "accept"` (default) registers again with a new code;
 *   `"reject"` answers 400 for a `/one/` identical to one already registered.
 * Fault injection: `faults` is consumed one per request that reached `/one/` or `/two/`, before anything else is
 * checked; when it is empty `faultFor(request)` is asked. Every request is recorded, the token redacted.
 */

/**
 * An injected fault. `"500"`/`"503"`: that status, JSON body. `"hang"` (alias `"timeout"`): never answers,
 * nothing registered. `"lost-answer"`: registers the guest (a code is issued) then never answers — the "possible
 * duplicate" case. `"no-code"`: registers, then 201 `{}`. `"non-json"`: registers, then 201 with an HTML body.
 * `"401"`: as a rotated token. `{ kind: "400-reject" }`: 400 with `{"<field>": [reason]}` (or `{"detail": reason}`
 * without a field). `{ kind: "answer" }`: any status and raw body, nothing registered.
 */
export type TraFault =
  | "500"
  | "503"
  | "hang"
  | "timeout"
  | "lost-answer"
  | "no-code"
  | "non-json"
  | "401"
  | { readonly kind: "400-reject"; readonly reason: string; readonly field?: string }
  | {
    readonly kind: "answer"
    readonly status: number
    readonly body: string
    readonly headers?: Readonly<Record<string, string>>
  }

export type TraPath = "/one/" | "/two/"

/** One request as the fake got it. */
export interface TraRequest {
  readonly method: string
  readonly path: string
  /** Header names in lower case; `authorization` redacted to its scheme word as sent + ` ***` (`token ***`). */
  readonly headers: Readonly<Record<string, string>>
  /** What the token check found (whether or not a fault answered first). */
  readonly auth: "valid" | "missing" | "malformed" | "unknown"
  /** The body parsed as JSON; the raw text when it is not JSON. */
  readonly body: unknown
  /** `Date.now()` when the body had been read. */
  readonly at: number
  /** The fault applied to it, if any. */
  readonly fault?: TraFault
  /** The status answered; undefined while pending or when the answer never came. */
  status?: number
  /** The JSON (or text) answered. */
  answer?: unknown
  /** The code issued for it, when the guest was registered (also under `no-code`, `non-json`, `lost-answer`). */
  code?: number
}

/** The request, as fault predicates see it. */
export interface TraRequestView {
  readonly path: TraPath
  readonly body: unknown
  readonly auth: TraRequest["auth"]
}

export interface FakeTraOptions {
  /** Known tokens. Default: `["fake-tra-token-0123456789abcdef"]` (`DEFAULT_TOKEN`). */
  readonly tokens?: Iterable<string>
  /** The first code issued. Default 1001. */
  readonly firstCode?: number
  /** Wait this long before every answer (hangs excepted). Default 0. */
  readonly delayMs?: number
  readonly companionReply?: "code" | "empty"
  readonly duplicates?: "accept" | "reject"
  /** The body of a 401, given the reason. Default DRF's `{"detail": message}`. */
  readonly authErrorBody?: (message: string) => unknown
}

export interface FakeTra {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string
  /** Known tokens; change it at runtime to rotate. */
  readonly tokens: Set<string>
  /**
   * The guests the test has introduced: `numero_identificacion` → the spec `tipo_documento` the hotel saw. A body
   * for one of them must carry that document's label (`DOCUMENT_LABEL`); other guests only some document's label.
   * Emptied by `reset()`.
   */
  readonly guests: Map<string, string>
  delayMs: number
  companionReply: "code" | "empty"
  duplicates: "accept" | "reject"
  /** Consumed in order, one per request to `/one/` or `/two/`. */
  readonly faults: Array<TraFault>
  /** Asked when `faults` is empty. */
  faultFor: ((request: TraRequestView) => TraFault | undefined) | undefined
  /** Every request, in arrival order. */
  readonly requests: Array<TraRequest>
  /** Requests to `/one/` (any method). */
  readonly mains: () => Array<TraRequest>
  /** Requests to `/two/` (any method). */
  readonly companions: () => Array<TraRequest>
  /** Codes issued so far: code → the registered body and its path. */
  readonly registered: ReadonlyMap<number, { readonly path: TraPath; readonly body: Readonly<Record<string, string>> }>
  /** Requests being handled right now (a delayed or hanging one included). */
  readonly inFlight: () => number
  /** The most requests in flight at once since the start or the last `clear()`. */
  readonly maxInFlight: () => number
  /** Resolves once `count` requests match; rejects after `timeoutMs` listing what did arrive. */
  readonly waitForCount: (
    count: number,
    predicate?: (r: TraRequest) => boolean,
    timeoutMs?: number
  ) => Promise<Array<TraRequest>>
  /** Forgets recorded requests and the in-flight maximum (codes, tokens and settings are kept). */
  readonly clear: () => void
  /** `clear()`, and also: no faults, codes and guests forgotten, codes restarted, settings back to the options given. */
  readonly reset: () => void
  /** Closes every connection (hanging ones included) and stops listening. */
  readonly stop: () => void
}

export const DEFAULT_TOKEN = "fake-tra-token-0123456789abcdef"

const DATE = /^\d{4}-\d{2}-\d{2}$/
const DIGITS = /^\d+$/
const isDate = (value: string) =>
  DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) &&
  new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) === value

type Errors = Record<string, Array<string>>

/** Every label the table gives some document: what the fake accepts from a guest it was not told about. */
const LABELS: ReadonlySet<string> = new Set(Object.values(DOCUMENT_LABEL))

/** DRF-style validation of a body against `fields`; returns the errors, or the body as a string record. */
const validate = (
  raw: unknown,
  fields: ReadonlyArray<string>,
  guests: ReadonlyMap<string, string>
): { readonly errors: Errors } | { readonly body: Record<string, string> } => {
  const errors: Errors = {}
  const add = (field: string, message: string) => void (errors[field] ??= []).push(message)
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { errors: { non_field_errors: ["Datos inválidos. Se esperaba un diccionario."] } }
  }
  const record = raw as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!fields.includes(key)) add(key, "Campo desconocido.")
  }
  const body: Record<string, string> = {}
  for (const field of fields) {
    const value = record[field]
    if (value === undefined) add(field, "Este campo es requerido.")
    else if (typeof value !== "string") add(field, "Not a valid string.")
    else if (NOT_BLANK.has(field) && value.trim() === "") add(field, "Este campo no puede estar en blanco.")
    else if (DIGIT_FIELDS.has(field) && !DIGITS.test(value)) add(field, "Debe contener solo dígitos.")
    else if (DATE_FIELDS.has(field) && !isDate(value)) {
      add(field, "Fecha con formato erróneo. Use uno de los siguientes formatos en su lugar: YYYY-MM-DD.")
    } else if (field === "tipo_identificacion" && !LABELS.has(value)) {
      add(field, `Escoja una opción válida. ${value} no es una de las opciones disponibles.`)
    } else body[field] = value
  }
  // The one label of the document this guest showed: another document's label is a misreport, not a choice.
  const tipo = body.numero_identificacion === undefined ? undefined : guests.get(body.numero_identificacion)
  if (tipo !== undefined && body.tipo_identificacion !== undefined && body.tipo_identificacion !== DOCUMENT_LABEL[tipo]) {
    add(
      "tipo_identificacion",
      `${body.tipo_identificacion} no es el tipo de documento de ${body.numero_identificacion} (${tipo}: ${
        DOCUMENT_LABEL[tipo] ?? "sin etiqueta"
      }).`
    )
  }
  if (body.check_in !== undefined && body.check_out !== undefined && body.check_out <= body.check_in) {
    add("check_out", "La fecha de salida debe ser posterior a la de llegada.")
  }
  if (body.rnt_establecimiento !== undefined && body.rnt_establecimiento.length > 20) {
    add("rnt_establecimiento", "Asegúrese de que este campo no tenga más de 20 caracteres.")
  }
  return Object.keys(errors).length > 0 ? { errors } : { body }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Authorization as DRF's TokenAuthentication splits it: `<scheme> <key>` on blanks. */
const checkAuth = (
  header: string | null,
  tokens: ReadonlySet<string>
): { readonly auth: TraRequest["auth"]; readonly redacted: string | undefined } => {
  if (header === null) return { auth: "missing", redacted: undefined }
  const parts = header.trim().split(/\s+/)
  const scheme = parts[0] ?? ""
  // The scheme word is kept as sent (so tests can check its case); whatever follows it is hidden.
  const redacted = parts.length > 1 ? `${scheme} ***` : "***"
  // Another scheme (or none): DRF treats it as no credentials at all.
  if (scheme.toLowerCase() !== "token") return { auth: "missing", redacted }
  if (parts.length !== 2) return { auth: "malformed", redacted }
  return { auth: tokens.has(parts[1]!) ? "valid" : "unknown", redacted }
}

const AUTH_MESSAGES = {
  missing: "Las credenciales de autenticación no se proveyeron.",
  malformed: "Cabecera token inválida.",
  unknown: "Token inválido."
} as const

/** Starts the fake on 127.0.0.1, a free port. */
export const startFakeTra = (options: FakeTraOptions = {}): FakeTra => {
  const firstCode = options.firstCode ?? 1001
  const authErrorBody = options.authErrorBody ?? ((message: string) => ({ detail: message }))
  const requests: Array<TraRequest> = []
  const registered = new Map<number, { readonly path: TraPath; readonly body: Record<string, string> }>()
  const listeners = new Set<() => void>()
  const hanging = new Set<() => void>()
  let nextCode = firstCode
  let inFlight = 0
  let maxInFlight = 0

  const issue = (path: TraPath, body: Record<string, string>) => {
    const code = nextCode++
    registered.set(code, { path, body })
    return code
  }

  /** A /one/ body already registered (same guest, same stay, same establishment). */
  const isDuplicate = (body: Record<string, string>) =>
    [...registered.values()].some((entry) =>
      entry.path === "/one/" && ONE_FIELDS.every((name) => entry.body[name] === body[name])
    )

  const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
    Response.json(value, { status, headers })

  const hang = (request: Request) =>
    new Promise<Response>((resolve) => {
      const release = () => {
        hanging.delete(release)
        resolve(new Response(null, { status: 503 }))
      }
      hanging.add(release)
      request.signal.addEventListener("abort", release, { once: true })
    })

  const handle = async (request: Request, record: TraRequest, parsed: unknown, isJson: boolean) => {
    const path = record.path as TraPath
    const fault = record.fault
    // Registers a valid body (best effort, as a server that registers then fails would) for the faults that do.
    const registerIfValid = () => {
      const result = validate(parsed, path === "/one/" ? ONE_FIELDS : TWO_FIELDS, fake.guests)
      if ("body" in result) record.code = issue(path, result.body)
    }
    if (fault !== undefined) {
      if (fault === "hang" || fault === "timeout") return hang(request)
      if (fault === "lost-answer") {
        registerIfValid()
        return hang(request)
      }
      if (delay() > 0) await sleep(delay())
      if (typeof fault === "object") {
        if (fault.kind === "answer") {
          record.answer = fault.body
          return new Response(fault.body, { status: fault.status, headers: fault.headers ?? {} })
        }
        const answer = fault.field === undefined ? { detail: fault.reason } : { [fault.field]: [fault.reason] }
        record.answer = answer
        return json(400, answer)
      }
      switch (fault) {
        case "500":
        case "503":
          record.answer = { detail: "Error interno del servidor." }
          return json(Number(fault), record.answer)
        case "401":
          record.answer = authErrorBody(AUTH_MESSAGES.unknown)
          return json(401, record.answer, { "www-authenticate": "Token" })
        case "no-code":
          registerIfValid()
          record.answer = {}
          return json(201, {})
        case "non-json":
          registerIfValid()
          record.answer = "<html><body>OK</body></html>"
          return new Response(record.answer as string, { status: 201, headers: { "content-type": "text/html" } })
      }
    }
    if (delay() > 0) await sleep(delay())
    if (record.auth !== "valid") {
      record.answer = authErrorBody(AUTH_MESSAGES[record.auth])
      return json(401, record.answer, { "www-authenticate": "Token" })
    }
    const contentType = request.headers.get("content-type") ?? ""
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      record.answer = { detail: `Tipo de medio "${contentType}" no soportado.` }
      return json(415, record.answer)
    }
    if (!isJson) {
      record.answer = { detail: "JSON parse error." }
      return json(400, record.answer)
    }
    const result = validate(parsed, path === "/one/" ? ONE_FIELDS : TWO_FIELDS, fake.guests)
    if ("errors" in result) {
      record.answer = result.errors
      return json(400, result.errors)
    }
    const body = result.body
    if (path === "/two/") {
      const parent = registered.get(Number(body.padre))
      if (parent === undefined || parent.path !== "/one/") {
        record.answer = { padre: [`Clave primaria "${body.padre}" inválida - objeto no existe.`] }
        return json(400, record.answer)
      }
    } else if (fake.duplicates === "reject" && isDuplicate(body)) {
      record.answer = { non_field_errors: ["Este huésped ya fue registrado para estas fechas."] }
      return json(400, record.answer)
    }
    const code = issue(path, body)
    record.code = code
    record.answer = path === "/two/" && fake.companionReply === "empty" ? {} : { code }
    return json(201, record.answer)
  }

  const delay = () => fake.delayMs

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    // Never close an idle connection: a hanging answer must stay open until the client gives up.
    idleTimeout: 0,
    fetch: async (request) => {
      const url = new URL(request.url)
      if (url.pathname !== "/one/" && url.pathname !== "/two/") {
        return json(404, { detail: "No encontrado." })
      }
      const text = await request.text()
      const at = Date.now()
      let parsed: unknown = text
      let isJson = false
      try {
        parsed = JSON.parse(text)
        isJson = true
      } catch {
        // kept as text
      }
      const headers: Record<string, string> = {}
      request.headers.forEach((value, name) => {
        headers[name.toLowerCase()] = value
      })
      const { auth, redacted } = checkAuth(request.headers.get("authorization"), fake.tokens)
      if (redacted !== undefined) headers["authorization"] = redacted
      const path = url.pathname as TraPath
      const routed = request.method === "POST"
      const fault = routed
        ? fake.faults.shift() ?? fake.faultFor?.({ path, body: parsed, auth })
        : undefined
      const record: TraRequest = {
        method: request.method,
        path,
        headers,
        auth,
        body: parsed,
        at,
        ...(fault === undefined ? {} : { fault })
      }
      requests.push(record)
      for (const listener of [...listeners]) listener()
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      try {
        const response = routed
          ? await handle(request, record, parsed, isJson)
          : json(405, { detail: `Método "${request.method}" no permitido.` }, { allow: "POST, OPTIONS" })
        if (!request.signal.aborted) record.status = response.status
        return response
      } finally {
        inFlight--
      }
    }
  })

  const matching = (predicate?: (r: TraRequest) => boolean) =>
    predicate === undefined ? [...requests] : requests.filter(predicate)

  const fake: FakeTra = {
    url: `http://127.0.0.1:${server.port}`,
    tokens: new Set(options.tokens ?? [DEFAULT_TOKEN]),
    guests: new Map(),
    delayMs: options.delayMs ?? 0,
    companionReply: options.companionReply ?? "code",
    duplicates: options.duplicates ?? "accept",
    faults: [],
    faultFor: undefined,
    requests,
    mains: () => requests.filter((r) => r.path === "/one/"),
    companions: () => requests.filter((r) => r.path === "/two/"),
    registered,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    waitForCount: (count, predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = matching(predicate)
          if (found.length < count) return
          cleanup()
          resolve(found)
        }
        const timer = setTimeout(() => {
          cleanup()
          const lines = requests.map((r) => `  ${r.method} ${r.path} auth=${r.auth} status=${r.status ?? "-"}`)
          reject(new Error(`fake TRA: expected ${count} matching request(s) within ${timeoutMs} ms, got ${
            matching(predicate).length
          }:\n${lines.join("\n") || "  (nothing)"}`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          listeners.delete(check)
        }
        listeners.add(check)
        check()
      }),
    clear: () => {
      requests.splice(0, requests.length)
      maxInFlight = inFlight
    },
    reset: () => {
      fake.clear()
      fake.faults.splice(0, fake.faults.length)
      fake.faultFor = undefined
      registered.clear()
      fake.guests.clear()
      nextCode = firstCode
      fake.tokens.clear()
      for (const token of options.tokens ?? [DEFAULT_TOKEN]) fake.tokens.add(token)
      fake.delayMs = options.delayMs ?? 0
      fake.companionReply = options.companionReply ?? "code"
      fake.duplicates = options.duplicates ?? "accept"
    },
    stop: () => {
      server.stop(true)
      for (const release of [...hanging]) release()
    }
  }
  return fake
}
