// The account panel (design §8): plain browser JavaScript, no framework, no build step. It talks only to the
// session-authenticated JSON API under /api/panel/ and shows one screen at a time: sign-in (e-mailed code),
// then overview, API keys, properties, webhooks, reservations, members and the audit log, chosen by the URL's
// hash (#/keys…) so the browser's back button and bookmarks work.
//
// Every node is built with DOM calls and textContent, never innerHTML, so nothing the server returns can inject
// markup; the Content-Security-Policy allows no inline script or style (visibility goes through `hidden` and
// classes). Every state-changing request carries the session's X-Panel-CSRF; an `unauthorized` answer
// anywhere ends the session on the page and returns to sign-in.
"use strict"
;(() => {
  const TEXTS = window.PanelI18n
  /** What the server tells the page (src/panel/Page.ts): sign-up open, code length, field limits, enums. */
  const RULES = JSON.parse(document.querySelector("meta[name=\"panel-rules\"]").getAttribute("content"))
  const LIMITS = RULES.limits
  // The WHATWG `input type=email` grammar with a dot required in the domain, as the server checks it.
  const EMAIL =
    /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/
  const CODE = new RegExp(`^\\d{${RULES.codeLength}}$`)
  const SCREENS = ["overview", "keys", "properties", "webhooks", "reservations", "members", "audit"]
  const LANG_STORAGE = "panel-lang"
  /** Instants are shown as a Colombian hotel reads them, whatever the computer's own zone. */
  const TIME_ZONE = "America/Bogota"

  const state = {
    lang: pickLanguage(),
    /** The session's X-Panel-CSRF, as the server last answered it. */
    csrf: null,
    /** GET /api/panel/account while signed in; null on the sign-in screens. */
    account: null,
    /** The environment shown by the webhooks and reservations screens. */
    env: "live",
    /** Bumped on every screen change: an answer that arrives for an older screen is dropped. */
    generation: 0,
    /** The key of the current screen's title, for the document title. */
    titleKey: "brand",
    /** Properties by id, for the reservations list (names rather than ids). */
    propertyNames: new Map()
  }

  const byId = (id) => document.getElementById(id)
  const ui = {
    screen: byId("screen"),
    status: byId("status"),
    nav: byId("nav"),
    menu: byId("menu-toggle"),
    who: byId("who"),
    lang: byId("lang-toggle"),
    envBanner: byId("env-banner"),
    signOut: byId("nav-signout")
  }
  let uid = 0
  const nextId = (prefix) => `${prefix}-${++uid}`

  // ------------------------------------------------------------------------------------------------------------
  // Language and formats

  function pickLanguage() {
    const fromUrl = new URLSearchParams(location.search).get("lang")
    if (fromUrl === "es" || fromUrl === "en") return fromUrl
    try {
      const kept = localStorage.getItem(LANG_STORAGE)
      if (kept === "es" || kept === "en") return kept
    } catch {
      // no storage (private mode, policy): Spanish
    }
    return "es"
  }

  const locale = () => state.lang === "en" ? "en" : "es-CO"

  /** The environment the URL names (`?env=test`), so a reload or a shared link shows the same data. */
  const envFromUrl = () => {
    const value = new URLSearchParams(location.search).get("env")
    return value === "live" || value === "test" ? value : null
  }

  const formatInstant = (iso, dateStyle = "medium") => {
    const date = new Date(iso)
    if (Number.isNaN(date.getTime())) return String(iso)
    const format = { dateStyle, timeStyle: "short", timeZone: TIME_ZONE }
    return new Intl.DateTimeFormat(locale(), format).format(date)
  }

  /** A calendar date (YYYY-MM-DD): the same day everywhere. */
  const formatDay = (iso) => {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(iso))
    if (match === null) return String(iso)
    const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
    return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeZone: "UTC" }).format(date)
  }

  /**
   * A text argument: plain, `{at}` an instant (`{atShort}` with a short date, for a table's narrow column),
   * `{day}` a date, `{key}` another text, `{keys}` several, comma-separated, `{n}` a number.
   */
  const argText = (value) => {
    if (value === null || value === undefined) return ""
    if (typeof value !== "object") return String(value)
    if ("at" in value) return formatInstant(value.at)
    if ("atShort" in value) return formatInstant(value.atShort, "short")
    if ("day" in value) return formatDay(value.day)
    if ("key" in value) return t(value.key, value.args)
    if ("keys" in value) return value.keys.map((key) => t(key)).join(", ")
    if ("n" in value) return new Intl.NumberFormat(locale()).format(value.n)
    return ""
  }

  function t(key, args) {
    const text = TEXTS[state.lang][key] ?? TEXTS.es[key] ?? key
    return args === undefined ? text : text.replace(/\{(\w+)\}/g, (_, name) => argText(args[name]))
  }

  /**
   * Sets a translated text and keeps `[key, args]` on the element (`data-t`, JSON), so that switching language
   * redoes it in place; `data-t-attrs` does the same for attributes (`{"aria-label": [key, args]}`).
   */
  const translate = (el, key, args) => {
    el.dataset.t = JSON.stringify(args === undefined ? [key] : [key, args])
    el.textContent = t(key, args)
    return el
  }

  const untranslate = (el) => {
    delete el.dataset.t
    el.textContent = ""
  }

  const translateAttribute = (el, attribute, key, args) => {
    el.dataset.tAttrs = JSON.stringify({ ...JSON.parse(el.dataset.tAttrs ?? "{}"), [attribute]: [key, args] })
    el.setAttribute(attribute, t(key, args))
  }

  const retranslate = () => {
    document.documentElement.lang = state.lang
    document.title = state.titleKey === "brand" ? t("brand") : `${t(state.titleKey)} · ${t("brand")}`
    for (const el of document.querySelectorAll("[data-t]")) el.textContent = t(...JSON.parse(el.dataset.t))
    for (const el of document.querySelectorAll("[data-t-attrs]")) {
      for (const [attribute, text] of Object.entries(JSON.parse(el.dataset.tAttrs))) {
        el.setAttribute(attribute, t(...text))
      }
    }
    ui.lang.textContent = t("langToggle")
    // The button names the other language, in that language.
    ui.lang.lang = state.lang === "es" ? "en" : "es"
  }

  const toggleLanguage = () => {
    state.lang = state.lang === "es" ? "en" : "es"
    try {
      localStorage.setItem(LANG_STORAGE, state.lang)
    } catch {
      // the URL below still carries it
    }
    const url = new URL(location.href)
    if (state.lang === "en") url.searchParams.set("lang", "en")
    else url.searchParams.delete("lang")
    history.replaceState(null, "", url)
    retranslate()
  }

  // ------------------------------------------------------------------------------------------------------------
  // Building the page

  /**
   * `h(tag, props, ...children)`. Props: `text` is a text key or `[key, args]`; a `{t: key, args}` value is a
   * translated attribute; `on…` functions are listeners; `true` is an empty attribute; `null`, `undefined` and
   * `false` are left out. Children are nodes or strings (always inserted as text).
   */
  function h(tag, props = {}, ...children) {
    const el = document.createElement(tag)
    for (const [name, value] of Object.entries(props)) {
      if (value === null || value === undefined || value === false) continue
      if (name === "text") {
        if (Array.isArray(value)) translate(el, value[0], value[1])
        else translate(el, value)
      } else if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value)
      else if (typeof value === "object" && "t" in value) translateAttribute(el, name, value.t, value.args)
      else if (name === "class") el.className = value
      else el.setAttribute(name, value === true ? "" : String(value))
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) el.append(child)
    }
    return el
  }

  /** Tells screen readers what happened without moving focus; the same message twice is announced twice. */
  const announce = (key, args) => {
    untranslate(ui.status)
    requestAnimationFrame(() => translate(ui.status, key, args))
  }

  /** A `<time>` showing an instant in the page's language and Bogotá time. */
  const instant = (iso) => iso === null || iso === undefined
    ? nothing()
    : h("time", { datetime: iso, text: ["asIs", { value: { at: iso } }] })

  const day = (iso) => h("time", { class: "day", datetime: iso, text: ["asIs", { value: { day: iso } }] })

  const badge = (kind, key, args) => h("span", { class: `badge badge-${kind}`, text: [key, args] })

  /** The badge colour of a status: deliveries, reports and reservations. */
  const BADGE = {
    delivered: "ok",
    success: "ok",
    compliant: "ok",
    failed: "error",
    error: "error",
    partial: "warning",
    pending: "pending",
    not_applicable: "neutral",
    cancelled: "neutral"
  }

  const nothing = () => h("span", { class: "muted", text: "none" })

  const envBadge = (environment) => badge(environment === "live" ? "live" : "test", `env_${environment}`)

  /**
   * A description list of `[labelKey, value]`: a value is a node, a string, or `{key, args}` to translate.
   * `compact`: label above value, several per line where there is room.
   */
  const details = (items, compact = false) =>
    h(
      "dl",
      { class: compact ? "details details-compact" : "details" },
      items.filter((item) => item !== null).map(([label, value]) =>
        h(
          "div",
          { class: "details-row" },
          h("dt", { text: label }),
          h("dd", {}, value instanceof Node ? value : typeof value === "object" && value !== null
            ? h("span", { text: [value.key, value.args] })
            : value ?? nothing())
        )
      )
    )

  /**
   * A table that becomes one card per row on a phone: each cell carries its column's name (`data-label`, shown
   * by the style sheet there). `columns` is `[{label, cell: (row) => node | string, className?}]`.
   */
  const table = (captionKey, columns, rows, captionArgs) =>
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "data-table" },
        h("caption", { class: "sr-only", text: [captionKey, captionArgs] }),
        h("thead", {}, h("tr", {}, columns.map((column) => h("th", { scope: "col", text: column.label })))),
        h(
          "tbody",
          {},
          rows.map((row) =>
            h(
              "tr",
              {},
              columns.map((column) =>
                h("td", { class: column.className, "data-label": { t: column.label } }, column.cell(row))
              )
            )
          )
        )
      )
    )

  /** The muted line that stands for an empty list. */
  const none = (key) => h("p", { class: "muted", text: key })

  /** `rows` as a table, or the muted line `emptyKey` when there are none. */
  const tableOrNone = (emptyKey, captionKey, columns, rows) =>
    rows.length === 0 ? none(emptyKey) : table(captionKey, columns, rows)

  const intro = (key, args) => h("p", { class: "intro", text: [key, args] })

  /** A status or error line of a form or a section; empty and hidden until used. */
  const messageLine = () => h("div", { class: "message", role: "alert", hidden: true })

  /** An error is an alert (read at once); other messages are shown, and told through the status region. */
  const showMessage = (line, kind, key, args) => {
    line.className = `message message-${kind}`
    if (kind === "error") line.setAttribute("role", "alert")
    else line.removeAttribute("role")
    line.replaceChildren(h("p", { text: [key, args] }))
    line.hidden = false
    if (kind !== "error") announce(key, args)
  }

  const hideMessage = (line) => {
    line.hidden = true
    line.replaceChildren()
  }

  // ------------------------------------------------------------------------------------------------------------
  // Forms

  /** A labelled control with an optional hint and an error slot (empty until needed). `id` is page-unique. */
  const field = (id, name, control, { label, hint, hintArgs, required = false, extra } = {}) => {
    control.id = id
    control.name = name
    control.required = required
    const hintEl = hint === undefined ? null : h("p", { class: "hint", id: `${id}-hint`, text: [hint, hintArgs] })
    if (hintEl !== null) control.setAttribute("aria-describedby", hintEl.id)
    return h(
      "div",
      { class: "field", "data-field": name },
      h(
        "label",
        { for: id },
        h("span", { text: label ?? `field_${name}` }),
        required ? h("span", { class: "required", "aria-hidden": "true" }, " *") : null
      ),
      hintEl,
      extra ?? null,
      h("p", { class: "field-error", id: `${id}-error`, hidden: true }),
      control
    )
  }

  const input = (props = {}) => h("input", { type: "text", ...props })

  const emailInput = () =>
    input({
      type: "email",
      autocomplete: "email",
      inputmode: "email",
      spellcheck: "false",
      maxlength: RULES.emailMaxLength
    })

  const codeInput = () =>
    input({
      inputmode: "numeric",
      autocomplete: "one-time-code",
      pattern: "[0-9]*",
      maxlength: RULES.codeLength,
      spellcheck: "false",
      class: "code-input"
    })

  /** `<option>`s of `[value, textKey]`, after an "all" option (value "") when `allKey` is given. */
  const options = (pairs, allKey) => [
    allKey === undefined ? null : h("option", { value: "", text: allKey }),
    ...pairs.map(([value, key]) => h("option", { value, text: key }))
  ]

  /** Shows or clears the error of one control (`[key, args]` or undefined), and ties it to the control. */
  const setFieldError = (control, error) => {
    const slot = byId(`${control.id}-error`)
    if (slot === null) return
    const described = (control.getAttribute("aria-describedby") ?? "")
      .split(" ")
      .filter((id) => id !== "" && id !== slot.id)
    if (error === undefined) {
      slot.hidden = true
      untranslate(slot)
      control.removeAttribute("aria-invalid")
    } else {
      translate(slot, error[0], error[1])
      slot.hidden = false
      control.setAttribute("aria-invalid", "true")
      described.push(slot.id)
    }
    slot.closest(".field")?.classList.toggle("has-error", error !== undefined)
    if (described.length > 0) control.setAttribute("aria-describedby", described.join(" "))
    else control.removeAttribute("aria-describedby")
  }

  const controlsOf = (form) => [...form.elements].filter((el) => el.name !== "" && el.id !== "")

  const clearErrors = (form, line) => {
    for (const control of controlsOf(form)) setFieldError(control, undefined)
    if (line !== undefined) hideMessage(line)
  }

  /** `{name: [key, args]}` next to their fields; the first invalid control gets the focus. */
  const showFieldErrors = (form, errors) => {
    let first = null
    for (const control of controlsOf(form)) {
      const error = errors[control.name]
      setFieldError(control, error)
      if (error !== undefined && first === null) first = control
    }
    first?.focus()
    return first !== null
  }

  /** The wait of a 429, in whole minutes (`details.retry_after` or `Retry-After`, in seconds). */
  const waitMinutes = (res) => {
    const seconds = Number(res.body?.details?.retry_after) || res.retryAfter || 60
    return Math.max(1, Math.ceil(seconds / 60))
  }

  /**
   * What a failed answer means for a form: `invalid_request` fields next to the controls of that name, in the
   * page's words for that field (issue 26: the server's English text is never shown); a field the form does not
   * have is named in the form's message line; anything else there too.
   */
  const showFailure = (form, line, res) => {
    if (res.code === "invalid_request" && Array.isArray(res.body?.details?.fields)) {
      const names = new Set(controlsOf(form).map((control) => control.name))
      const errors = {}
      const others = []
      for (const problem of res.body.details.fields) {
        const name = String(problem.field).split(/[.[]/)[0]
        if (names.has(name)) errors[name] ??= [`err_field_${name}` in TEXTS.es ? `err_field_${name}` : "err_field"]
        else if (!others.includes(name)) others.push(name)
      }
      if (others.length > 0) {
        const labels = others.map((name) => `field_${name}` in TEXTS.es ? `field_${name}` : name)
        showMessage(line, "error", "err_otherFields", { fields: { keys: labels } })
      }
      if (showFieldErrors(form, errors)) return
      if (others.length > 0) return
    }
    if (res.status === 0) return showMessage(line, "error", "err_network")
    if (res.code === "rate_limited") return showMessage(line, "error", "err_rateLimited", { minutes: waitMinutes(res) })
    showMessage(line, "error", "err_unexpected", { code: res.code ?? res.status })
  }

  /** Runs `work` on submit with the form's buttons disabled, so a double click sends once. */
  const onSubmit = (form, work) => {
    form.addEventListener("submit", async (event) => {
      event.preventDefault()
      if (form.dataset.busy === "true") return
      form.dataset.busy = "true"
      form.setAttribute("aria-busy", "true")
      const buttons = [...form.querySelectorAll("button")]
      for (const button of buttons) button.disabled = true
      try {
        await work()
      } finally {
        delete form.dataset.busy
        form.removeAttribute("aria-busy")
        for (const button of buttons) button.disabled = false
      }
    })
  }

  /**
   * A button whose click runs `work` once at a time. Disabling a button drops its focus: when nothing else holds
   * it afterwards (a closed dialog could not give it back to a disabled button), the button gets it back. A
   * removed element may still be the active one until the browser's next rendering update, hence `isConnected`.
   */
  const actionButton = (props, work) => {
    const button = h("button", { type: "button", ...props })
    button.addEventListener("click", async () => {
      if (button.disabled) return
      button.disabled = true
      try {
        await work(button)
      } finally {
        button.disabled = false
        const active = document.activeElement
        const lost = active === null || active === document.body || !active.isConnected
        if (lost && button.isConnected) button.focus()
      }
    })
    return button
  }

  /**
   * Shows `dialog` as a modal. When it closes (its buttons, Escape, or navigation: `closeDialogs`) it leaves the
   * page, the focus goes back to what opened it (unless `refocus()` says not to) and `onClose` runs.
   */
  const showModal = (dialog, onClose, { refocus = () => true } = {}) => {
    const opener = document.activeElement
    dialog.addEventListener("close", () => {
      dialog.remove()
      if (refocus() && opener instanceof HTMLElement && opener.isConnected) opener.focus()
      onClose()
    })
    document.body.append(dialog)
    dialog.showModal()
  }

  /** A modal confirmation (`<dialog>`): resolves true when confirmed; focus goes back where it was. */
  const confirmDialog = ({ title, text, confirm }) =>
    new Promise((resolve) => {
      const titleId = nextId("dialog-title")
      const textId = nextId("dialog-text")
      const dialog = h(
        "dialog",
        { class: "dialog", "aria-labelledby": titleId, "aria-describedby": textId },
        h(
          "form",
          { method: "dialog" },
          h("h2", { id: titleId, text: title }),
          h("p", { id: textId, text }),
          h(
            "div",
            { class: "actions" },
            h("button", { value: "cancel", class: "secondary", text: "cancel" }),
            h("button", { value: "confirm", class: "danger", text: confirm })
          )
        )
      )
      showModal(dialog, () => resolve(dialog.returnValue === "confirm"))
    })

  /**
   * A secret shown once (a new API key): a warning, the value in a read-only field and a copy button. Its
   * heading takes the focus, so a screen reader reads the warning first.
   */
  const secretBox = (value, titleKey, note, { labelKey = "apiKeyLabel", warningKey = "shownOnce" } = {}) => {
    const id = nextId("secret")
    // A text area, so the whole key is seen, wrapped, on a phone's screen.
    const field = h("textarea", {
      id,
      class: "secret-value",
      readonly: true,
      rows: 2,
      spellcheck: "false",
      autocomplete: "off",
      "aria-describedby": `${id}-warning`
    }, value)
    const copied = h("p", { class: "copy-status", role: "status" })
    const copy = actionButton({ class: "secondary copy-button", text: "copy" }, async () => {
      try {
        await navigator.clipboard.writeText(value)
        translate(copied, "copied")
      } catch {
        // No clipboard access (permissions, an old browser): select it for Ctrl+C.
        field.focus()
        field.select()
        translate(copied, document.execCommand("copy") ? "copied" : "copyManually")
      }
    })
    field.addEventListener("focus", () => field.select())
    return h(
      "section",
      { class: "secret-box", "aria-labelledby": `${id}-title` },
      h("h3", { id: `${id}-title`, tabindex: "-1", text: titleKey }),
      h("p", { class: "warning", id: `${id}-warning`, text: warningKey }),
      h("label", { for: id, text: labelKey }),
      h("div", { class: "secret-row" }, field, copy),
      copied,
      note ?? null
    )
  }

  const focusHeadingOf = (el) => el.querySelector("h1, h2, h3")?.focus()

  // ------------------------------------------------------------------------------------------------------------
  // The JSON API

  /** `{status, body, code, retryAfter}`; status 0 when the network failed. Never throws. */
  const api = async (method, path, body) => {
    const headers = { accept: "application/json" }
    const init = { method, headers, credentials: "same-origin", cache: "no-store" }
    if (method !== "GET" && state.csrf !== null) headers["x-panel-csrf"] = state.csrf
    if (body !== undefined) {
      headers["content-type"] = "application/json"
      init.body = JSON.stringify(body)
    }
    let response
    try {
      response = await fetch(`/api/panel${path}`, init)
    } catch {
      return { status: 0, body: null, code: null, retryAfter: null }
    }
    const token = response.headers.get("x-panel-csrf")
    if (token !== null && token !== "") state.csrf = token
    let json = null
    try {
      json = await response.json()
    } catch {
      // not JSON (a proxy's error page…): the status tells
    }
    const res = {
      status: response.status,
      body: json,
      code: typeof json?.code === "string" ? json.code : null,
      retryAfter: Number(response.headers.get("retry-after")) || null
    }
    // The session is gone (signed out elsewhere, idle, removed member): back to sign-in, wherever this was.
    if (res.status === 401 && res.code === "unauthorized" && state.account !== null) {
      showSignIn({ notice: "sessionEnded" })
    }
    return res
  }

  const query = (params) => {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined && value !== null && value !== "") search.set(name, value)
    }
    const text = search.toString()
    return text === "" ? "" : `?${text}`
  }

  /**
   * A list's filter form: its title for screen readers (a `heading` element with `id`), the fields, and the
   * submit button labelled `submit`.
   */
  const filterForm = ({ id, heading, submit }, fields) =>
    h(
      "form",
      { novalidate: true, class: "filters", "aria-labelledby": id },
      h(heading, { id, class: "sr-only", text: "filtersTitle" }),
      ...fields,
      h("div", { class: "filter-actions" }, h("button", { type: "submit", class: "primary", text: submit }))
    )

  /** A section that could not load: why, and a retry. */
  const loadFailed = (container, res, retry) => {
    const key = res.status === 0 ? "err_network" : "err_load"
    container.replaceChildren(
      h(
        "div",
        { class: "message message-error", role: "alert" },
        h("p", { text: [key, { code: res.code ?? res.status }] }),
        h("button", { type: "button", class: "secondary", text: "retry", onclick: retry })
      )
    )
  }

  /**
   * A screen's first load: a loading body (after the screen's intro, if it has one), then the body of `path`'s
   * answer. Null when the visitor left the screen meanwhile, or when the load failed, which the body then shows
   * with a retry.
   */
  const loadScreen = async (section, live, { screen, path, intro: introKey }) => {
    const body = h("div", { class: "stack" }, loading())
    if (introKey === undefined) section.append(body)
    else section.append(intro(introKey), body)
    const res = await api("GET", path)
    if (!live()) return null
    if (res.status !== 200) {
      loadFailed(body, res, () => showScreen(screen, true))
      return null
    }
    return { body, data: res.body }
  }

  // ------------------------------------------------------------------------------------------------------------
  // Sign-in: e-mail → code → signed in; sign-up (when open) → the same code step

  const setSignedIn = (signedIn) => {
    document.body.classList.toggle("signed-in", signedIn)
    ui.nav.hidden = !signedIn
    ui.menu.hidden = !signedIn
    ui.who.hidden = !signedIn
    ui.envBanner.hidden = !signedIn || state.env !== "test"
    setMenu(false)
  }

  const showSignIn = ({ notice, email } = {}) => {
    state.account = null
    state.csrf = null
    state.propertyNames.clear()
    state.generation++
    setSignedIn(false)
    emailStep({ notice, email })
  }

  /** Replaces the screen with a sign-in step; its first field (or its heading) takes the focus. */
  const showStep = (titleKey, children, focus) => {
    state.generation++
    state.titleKey = titleKey
    const section = h(
      "section",
      { class: "signin card", "aria-labelledby": "screen-title" },
      h("h1", { id: "screen-title", tabindex: "-1", text: titleKey }),
      children
    )
    ui.screen.replaceChildren(section)
    retranslate()
    ;(focus ?? section.querySelector("h1")).focus()
  }

  const tooManyCodes = (res) => ["err_tooManyCodes", { minutes: waitMinutes(res) }]

  const validEmail = (value) => value !== "" && value.length <= RULES.emailMaxLength && EMAIL.test(value)

  const emailStep = ({ notice, email } = {}) => {
    const line = messageLine()
    const control = emailInput()
    if (email !== undefined) control.value = email
    const form = h(
      "form",
      { novalidate: true, class: "stack" },
      field("signin-email", "email", control, { label: "field_email", hint: "emailHint", required: true }),
      line,
      h("button", { type: "submit", class: "primary", text: "sendCode" })
    )
    onSubmit(form, async () => {
      clearErrors(form, line)
      const value = control.value.trim()
      if (!validEmail(value)) return showFieldErrors(form, { email: [value === "" ? "err_required" : "err_email"] })
      const res = await api("POST", "/session/code", { email: value })
      if (res.status === 202) return codeStep({ email: value, purpose: "signin" })
      if (res.code === "rate_limited") return showFieldErrors(form, { email: tooManyCodes(res) })
      showFailure(form, line, res)
    })
    const signup = RULES.signupOpen
      ? h(
        "p",
        { class: "switch-step" },
        h("span", { text: "noAccount" }),
        " ",
        h("button", {
          type: "button",
          class: "link",
          text: "createAccount",
          onclick: () => signupStep({ email: control.value.trim() })
        })
      )
      : null
    showStep("signInTitle", [
      notice === undefined ? null : h("p", { class: "message message-info", role: "status", text: notice }),
      intro("signInIntro"),
      form,
      signup
    ], notice === undefined ? control : undefined)
  }

  const signupStep = ({ email } = {}) => {
    const line = messageLine()
    const name = input({ autocomplete: "organization", maxlength: LIMITS.name })
    const control = emailInput()
    if (email) control.value = email
    const form = h(
      "form",
      { novalidate: true, class: "stack" },
      field("signup-name", "name", name, { label: "field_accountName", hint: "accountNameHint", required: true }),
      field("signup-email", "email", control, { label: "field_email", required: true }),
      line,
      h("button", { type: "submit", class: "primary", text: "sendCode" })
    )
    onSubmit(form, async () => {
      clearErrors(form, line)
      const values = { name: name.value.trim(), email: control.value.trim() }
      const errors = {}
      if (values.name === "") errors.name = ["err_required"]
      else if (values.name.length > LIMITS.name) errors.name = ["err_tooLong", { max: LIMITS.name }]
      if (!validEmail(values.email)) errors.email = [values.email === "" ? "err_required" : "err_email"]
      if (showFieldErrors(form, errors)) return
      const res = await api("POST", "/signup", values)
      if (res.status === 202) return codeStep({ email: values.email, purpose: "signup", name: values.name })
      if (res.code === "rate_limited") return showFieldErrors(form, { email: tooManyCodes(res) })
      if (res.status === 404) return showMessage(line, "error", "err_signupClosed")
      showFailure(form, line, res)
    })
    showStep("signUpTitle", [
      intro("signUpIntro"),
      form,
      h(
        "p",
        { class: "switch-step" },
        h("span", { text: "haveAccount" }),
        " ",
        h("button", {
          type: "button",
          class: "link",
          text: "signInInstead",
          onclick: () => emailStep({ email: control.value.trim() })
        })
      )
    ], name)
  }

  const codeStep = ({ email, purpose, name }) => {
    const line = messageLine()
    const control = codeInput()
    const form = h(
      "form",
      { novalidate: true, class: "stack" },
      field("signin-code", "code", control, {
        label: "field_code",
        hint: purpose === "signup" ? "codeSentSignup" : "codeSent",
        hintArgs: { email, minutes: RULES.codeMinutes, digits: RULES.codeLength },
        required: true
      }),
      line,
      h("button", { type: "submit", class: "primary", text: purpose === "signup" ? "createAndSignIn" : "signIn" })
    )
    onSubmit(form, async () => {
      clearErrors(form, line)
      const code = control.value.replace(/\s+/g, "")
      if (!CODE.test(code)) return showFieldErrors(form, { code: ["err_codeFormat", { digits: RULES.codeLength }] })
      const res = await api("POST", "/session", { email, code })
      if (res.status === 200) return enter()
      if (res.code === "invalid_code") return showFieldErrors(form, { code: ["err_invalidCode"] })
      showFailure(form, line, res)
    })
    const resend = actionButton({ class: "link", text: "resendCode" }, async () => {
      hideMessage(line)
      const res = purpose === "signup"
        ? await api("POST", "/signup", { name, email })
        : await api("POST", "/session/code", { email })
      if (res.status === 202) {
        // A new code replaces the old one: the old code and its error go (issue 26), the field waits for the new.
        clearErrors(form)
        control.value = ""
        control.focus()
        showMessage(line, "info", "codeResent", { email })
        return
      }
      if (res.code === "rate_limited") return showMessage(line, "error", ...tooManyCodes(res))
      showFailure(form, line, res)
    })
    showStep("codeTitle", [
      form,
      h(
        "p",
        { class: "switch-step" },
        resend,
        " · ",
        h("button", { type: "button", class: "link", text: "otherEmail", onclick: () => emailStep({ email }) })
      )
    ], control)
  }

  /** Signed in (or found signed in): the account, then the screen the URL names. */
  const enter = async () => {
    const res = await api("GET", "/account")
    if (res.status !== 200) return res.status === 401 ? showSignIn() : bootFailed(res)
    startSession(res.body, true)
  }

  /** `focus`: the visitor acted (signed in), so the screen's title takes the focus; not on a plain page load. */
  const startSession = (account, focus) => {
    const first = state.account === null
    state.account = account
    // The URL's environment, else live for an account that has it and test for one that has only test.
    if (first) setEnv(envFromUrl() ?? (account.live_enabled ? "live" : "test"))
    ui.who.replaceChildren(
      h("span", { class: "who-account" }, account.name),
      " ",
      h("span", { class: "who-email" }, account.signed_in_as)
    )
    setSignedIn(true)
    showScreen(currentScreen(), focus)
  }

  const signOut = async () => {
    await api("DELETE", "/session")
    showSignIn({ notice: "signedOut" })
  }

  const bootFailed = (res) => {
    state.generation++
    state.titleKey = "brand"
    const section = h(
      "section",
      { class: "card", "aria-labelledby": "screen-title" },
      h("h1", { id: "screen-title", tabindex: "-1", text: "errorTitle" })
    )
    ui.screen.replaceChildren(section)
    loadFailed(section.appendChild(h("div")), res, () => enter())
    retranslate()
  }

  // ------------------------------------------------------------------------------------------------------------
  // Signed in: navigation between screens

  const currentScreen = () => {
    const match = /^#\/([a-z]+)/.exec(location.hash)
    return match !== null && SCREENS.includes(match[1]) ? match[1] : "overview"
  }

  function setMenu(open) {
    ui.menu.setAttribute("aria-expanded", String(open))
    ui.nav.classList.toggle("is-open", open)
  }

  /** Shows a screen: its title (focused when the visitor moved here), then what it loads. */
  const showScreen = (name, focus) => {
    const generation = ++state.generation
    state.titleKey = `screen_${name}`
    setMenu(false)
    // A dialog belongs to the screen that opened it: leaving the screen (a link, Back) closes it unanswered.
    for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close("navigated")
    for (const link of ui.nav.querySelectorAll("a[data-screen]")) {
      if (link.dataset.screen === name) link.setAttribute("aria-current", "page")
      else link.removeAttribute("aria-current")
    }
    const title = h("h1", { id: "screen-title", tabindex: "-1", text: `screen_${name}` })
    const section = h("section", { class: `screen screen-${name}`, "aria-labelledby": "screen-title" }, title)
    ui.screen.replaceChildren(section)
    const live = () => generation === state.generation
    RENDER[name](section, live)
    retranslate()
    if (focus) title.focus()
  }

  /** Appends `children` once the section is still the one on screen, and redoes the texts. */
  const fill = (container, ...children) => {
    container.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined))
    retranslate()
  }

  const loading = () => h("p", { class: "loading", text: "loading" })

  /**
   * One environment for the whole panel (issue 26): kept in the URL (`?env=`, beside `?lang=`; the screen is the
   * hash), so every screen, a reload and a bookmark show the same one; a banner says so while it is test.
   */
  const setEnv = (environment) => {
    state.env = environment
    const url = new URL(location.href)
    url.searchParams.set("env", environment)
    history.replaceState(null, "", url)
    ui.envBanner.hidden = state.account === null || environment !== "test"
  }

  /** The test/live switch of the webhooks and reservations screens (radio buttons: arrows move between them). */
  const environmentSwitch = (onChange) => {
    const id = nextId("env")
    return h(
      "fieldset",
      { class: "env-switch" },
      h("legend", { text: "environment" }),
      ["live", "test"].map((environment) =>
        h(
          "label",
          { class: "env-option", for: `${id}-${environment}` },
          h("input", {
            type: "radio",
            name: id,
            id: `${id}-${environment}`,
            value: environment,
            checked: state.env === environment,
            onchange: () => {
              setEnv(environment)
              onChange()
            }
          }),
          h("span", { text: `env_${environment}` })
        )
      )
    )
  }

  // ------------------------------------------------------------------------------------------------------------
  // Overview: the account, the test environment, sign-out

  const overviewScreen = async (section, live) => {
    const loaded = await loadScreen(section, live, { screen: "overview", path: "/account" })
    if (loaded === null) return
    const { body, data: account } = loaded
    state.account = account
    fill(
      body,
      h(
        "section",
        { class: "card", "aria-labelledby": "account-title" },
        h("h2", { id: "account-title", text: "accountTitle" }),
        details([
          ["acc_name", account.name],
          ["acc_email", account.email],
          ["acc_signedInAs", account.signed_in_as],
          ["acc_role", { key: account.is_holder ? "role_holder" : "role_member" }],
          ["acc_live", { key: account.live_enabled ? "liveEnabled" : "liveDisabled" }]
        ])
      ),
      sandboxCard(account),
      getStartedCard(),
      alertsCard(),
      h(
        "section",
        { class: "card", "aria-labelledby": "signout-title" },
        h("h2", { id: "signout-title", text: "signOutTitle" }),
        h("p", { text: "signOutText" }),
        h("button", { type: "button", class: "secondary", text: "signOut", onclick: signOut })
      )
    )
  }

  /** design §9: the alerts the holder was e-mailed, newest first; loaded on its own so the account shows at once. */
  const alertsCard = () => {
    const body = h("div", {}, loading())
    const card = h(
      "section",
      { class: "card", "aria-labelledby": "alerts-title" },
      h("h2", { id: "alerts-title", text: "alertsTitle" }),
      h("p", { class: "intro", text: "alertsIntro" }),
      body
    )
    api("GET", "/alerts").then((res) => {
      if (res.status !== 200) return loadFailed(body, res, () => showScreen("overview", true))
      const alerts = res.body.alerts
      fill(
        body,
        tableOrNone("noAlerts", "alertsCaption", [
          { label: "col_time", cell: (alert) => instant(alert.created_at) },
          {
            label: "col_alert",
            cell: (alert) => h("span", { text: [`alert_${alert.kind}`, { authority: (alert.authority ?? "").toUpperCase() }] })
          },
          { label: "col_about", cell: (alert) => alert.external_id ?? alert.endpoint_url ?? nothing() },
          { label: "col_detail", cell: (alert) => alert.message },
          {
            label: "col_state",
            cell: (alert) => alert.resolved_at === null ? badge("error", "alertOpen") : badge("ok", "alertResolved")
          }
        ], alerts)
      )
    })
    return card
  }

  const keyLimit = (environment) => ["err_keyLimit", { env: { key: `env_${environment}` } }]

  /** A command to copy: shown whole (it wraps on a phone), with a copy button. */
  const commandBlock = (text, labelKey) => {
    const id = nextId("command")
    const copied = h("p", { class: "copy-status", role: "status" })
    const copy = actionButton({ class: "secondary small", text: "copy", "aria-describedby": id }, async () => {
      try {
        await navigator.clipboard.writeText(text)
        translate(copied, "copied")
      } catch {
        translate(copied, "copyManually")
      }
    })
    return h(
      "div",
      { class: "command" },
      h("p", { class: "command-label", id, text: labelKey }),
      h("pre", { class: "command-text", tabindex: "0", "aria-labelledby": id }, h("code", {}, text)),
      copy,
      copied
    )
  }

  /**
   * "Get started" (issue 26): the first call an integrator makes, as a command to copy — with the test key just
   * created when there is one (it is shown only then), else with a placeholder for it — and where to read on.
   */
  const getStartedCard = (apiKey) => {
    const command = `curl ${location.origin}/api/partners/properties \\\n  -H "Authorization: Bearer ${apiKey ?? "$API_KEY"}"`
    return h(
      "section",
      { class: "card get-started", "aria-labelledby": "get-started-title" },
      h("h2", { id: "get-started-title", text: "getStartedTitle" }),
      h("p", { text: apiKey === undefined ? "getStartedIntro" : "getStartedWithKey" }),
      commandBlock(command, "getStartedCommand"),
      h("p", { text: "getStartedNext" }),
      h(
        "p",
        { class: "links" },
        h("a", { href: "/docs", text: "goDocs" }),
        h("a", { href: "#/webhooks", text: "goWebhooks" }),
        h("a", { href: "#/keys", text: "goKeys" })
      )
    )
  }

  const sandboxCard = (account) => {
    const card = h("section", { class: "card", "aria-labelledby": "sandbox-title" })
    const title = h("h2", { id: "sandbox-title", text: "sandboxTitle" })
    const line = messageLine()
    const links = h(
      "p",
      { class: "links" },
      h("a", { href: "#/keys", text: "goKeys" }),
      h("a", { href: "#/properties", text: "goProperties" })
    )
    if (account.sandbox) {
      card.append(title, h("p", { text: "sandboxReady" }), links)
      return card
    }
    const create = actionButton({ class: "primary", text: "createSandbox" }, async () => {
      hideMessage(line)
      const res = await api("POST", "/sandbox")
      if (res.status === 201) {
        state.account = { ...state.account, sandbox: true }
        const box = secretBox(res.body.api_key, "sandboxKeyTitle")
        // The first call, with the key just shown (the overview's own card keeps the placeholder).
        byId("get-started-title")?.closest("section")?.replaceWith(getStartedCard(res.body.api_key))
        fill(
          card,
          title,
          h("p", { text: "sandboxCreated" }),
          box,
          h("h3", { text: "sandboxPropertiesTitle" }),
          h(
            "ul",
            { class: "plain-list" },
            res.body.properties.map((property) =>
              h(
                "li",
                {},
                h("strong", {}, property.name),
                " ",
                h("span", { class: "muted" }, property.property_id),
                h(
                  "span",
                  { class: "property-needs" },
                  property.requires_contract_signature ? badge("info", "needsContract") : null,
                  property.requires_document_photos ? badge("info", "needsPhotos") : null
                )
              )
            )
          ),
          links
        )
        focusHeadingOf(box)
        announce("sandboxCreated")
        return
      }
      if (res.code === "sandbox_exists") return showScreen("overview", true)
      if (res.code === "key_limit_reached") return showMessage(line, "error", ...keyLimit("test"))
      showMessage(line, "error", res.status === 0 ? "err_network" : "err_unexpected", { code: res.code ?? res.status })
    })
    card.append(title, h("p", { text: "sandboxIntro" }), line, create)
    return card
  }

  // ------------------------------------------------------------------------------------------------------------
  // API keys: list, create (test at once, live after an e-mailed code), revoke

  const keysScreen = (section, live) => {
    const line = messageLine()
    const area = h("div", { class: "new-key-area" })
    const list = h("div", {}, loading())

    const reload = async () => {
      const res = await api("GET", "/keys")
      if (!live()) return
      if (res.status !== 200) return loadFailed(list, res, reload)
      const keys = res.body.keys
      if (keys.length === 0) return fill(list, none("noKeys"))
      fill(
        list,
        table("keysTableCaption", [
          { label: "col_keyName", cell: (key) => key.name === null ? h("span", { class: "muted", text: "keyUnnamed" }) : key.name },
          { label: "col_environment", cell: (key) => envBadge(key.environment) },
          { label: "col_prefix", cell: (key) => h("code", {}, `${key.prefix}…`) },
          { label: "col_created", cell: (key) => instant(key.created_at) },
          {
            label: "col_lastUsed",
            cell: (key) => key.last_used_at === null ? h("span", { class: "muted", text: "keyNeverUsed" }) : instant(key.last_used_at)
          },
          {
            label: "col_state",
            cell: (key) => key.revoked_at === null
              ? badge("ok", "keyActive")
              : h("span", { text: ["keyRevokedAt", { at: { at: key.revoked_at } }] })
          },
          {
            label: "col_actions",
            className: "cell-actions",
            cell: (key) => key.revoked_at === null
              ? actionButton({
                class: "danger small",
                text: "revoke",
                "aria-label": { t: "revokeKeyLabel", args: { prefix: key.prefix } }
              }, () => revoke(key))
              : null
          }
        ], keys)
      )
    }

    const failed = (res) => {
      if (res.code === "key_limit_reached") return showMessage(line, "error", ...keyLimit(res.env))
      if (res.code === "live_not_enabled") return showMessage(line, "error", "err_liveNotEnabled")
      showMessage(line, "error", res.status === 0 ? "err_network" : "err_unexpected", { code: res.code ?? res.status })
    }

    // The new key's name (optional): sent with either button; a live key gets it once its code is confirmed.
    const nameControl = input({ maxlength: LIMITS.keyName, autocomplete: "off" })
    const nameField = h(
      "form",
      { novalidate: true, class: "stack", "aria-label": { t: "newKeyFormLabel" } },
      field("key-name", "name", nameControl, { label: "field_keyName", hint: "hint_keyName" })
    )
    // Enter in the name field chooses neither environment: the buttons do.
    nameField.addEventListener("submit", (event) => event.preventDefault())
    const newKeyForm = h(
      "div",
      { class: "stack" },
      nameField,
      h(
        "div",
        { class: "actions" },
        actionButton({ class: "primary", text: "createTestKey" }, () => createTest()),
        actionButton({ class: "secondary", text: "createLiveKey" }, () => requestLive())
      )
    )
    const named = (body) => {
      const name = nameControl.value.trim()
      return name === "" ? body : { ...body, name }
    }
    const nameRefused = (res) => {
      const fields = res.code === "invalid_request" && Array.isArray(res.body?.details?.fields) ? res.body.details.fields : []
      if (!fields.some((problem) => String(problem.field) === "name")) return false
      showFieldErrors(nameField, { name: ["err_field_keyName", { max: LIMITS.keyName }] })
      return true
    }

    const showNewKey = (key, note) => {
      nameControl.value = ""
      const box = secretBox(key.api_key, key.environment === "live" ? "newLiveKeyTitle" : "newTestKeyTitle", note)
      fill(area, box)
      focusHeadingOf(box)
      announce("keyCreated")
      return reload()
    }

    const createTest = async () => {
      hideMessage(line)
      clearErrors(nameField, line)
      const res = await api("POST", "/keys", named({ environment: "test" }))
      if (!live()) return
      if (res.status === 201) return showNewKey(res.body)
      if (nameRefused(res)) return
      failed({ ...res, env: "test" })
    }

    const requestLive = async () => {
      hideMessage(line)
      clearErrors(nameField, line)
      const res = await api("POST", "/keys", named({ environment: "live" }))
      if (!live()) return
      if (res.status === 202) return confirmLive(res.body.confirmation_id)
      if (nameRefused(res)) return
      failed({ ...res, env: "live" })
    }

    /** The live key's second step: the code e-mailed to the account's own e-mail. */
    const confirmLive = (confirmationId) => {
      const formLine = messageLine()
      const control = codeInput()
      const email = state.account.email
      const form = h(
        "form",
        { novalidate: true, class: "card stack", "aria-labelledby": "live-title" },
        h("h2", { id: "live-title", tabindex: "-1", text: "liveConfirmTitle" }),
        field("live-code", "code", control, {
          label: "field_code",
          hint: "liveCodeSent",
          hintArgs: { email, minutes: RULES.codeMinutes },
          required: true
        }),
        formLine,
        h(
          "div",
          { class: "actions" },
          h("button", { type: "submit", class: "primary", text: "confirmLiveKey" }),
          h("button", { type: "button", class: "secondary", text: "cancel", onclick: () => fill(area) })
        )
      )
      onSubmit(form, async () => {
        clearErrors(form, formLine)
        const code = control.value.replace(/\s+/g, "")
        if (!CODE.test(code)) return showFieldErrors(form, { code: ["err_codeFormat", { digits: RULES.codeLength }] })
        const res = await api("POST", "/keys/confirm", { confirmation_id: confirmationId, code })
        if (!live()) return
        const notice = () => h("p", { class: "hint", text: ["liveNoticeSent", { email }] })
        if (res.status === 201) return showNewKey(res.body, notice())
        if (res.code === "invalid_code") return showFieldErrors(form, { code: ["err_invalidLiveCode"] })
        if (res.code === "key_limit_reached") return showMessage(formLine, "error", ...keyLimit("live"))
        if (res.code === "live_not_enabled") return showMessage(formLine, "error", "err_liveNotEnabled")
        showFailure(form, formLine, res)
      })
      fill(area, form)
      control.focus()
      announce("liveCodeSentShort", { email })
    }

    const revoke = async (key) => {
      const confirmed = await confirmDialog({
        title: ["revokeTitle", { prefix: key.prefix }],
        text: ["revokeText", { env: { key: `env_${key.environment}` } }],
        confirm: "revoke"
      })
      if (!confirmed || !live()) return
      const res = await api("DELETE", `/keys/${encodeURIComponent(key.key_id)}`)
      if (!live()) return
      if (res.status === 200 || res.code === "key_not_found") {
        await reload()
        byId("keys-list-title")?.focus()
        announce("keyRevoked", { prefix: key.prefix })
        return
      }
      failed(res)
    }

    section.append(
      ...[
        intro("keysIntro"),
        state.account.live_enabled ? null : h("p", { class: "message message-info", text: "liveNotEnabledNote" })
      ].filter((child) => child !== null),
      newKeyForm,
      line,
      area,
      h("h2", { id: "keys-list-title", tabindex: "-1", text: "keysListTitle" }),
      list
    )
    reload()
  }

  // ------------------------------------------------------------------------------------------------------------
  // Properties: both environments, each with its reporting settings (the TRA token is write-only)

  const SETTINGS = [
    { name: "establishment_name", max: LIMITS.establishmentName, autocomplete: "organization" },
    { name: "tipo_acomodacion", max: LIMITS.tipoAcomodacion, hint: "hint_tipo_acomodacion" },
    { name: "default_room", max: LIMITS.defaultRoom, hint: "hint_default_room" },
    { name: "sire_hotel_code", max: LIMITS.sireCodeDigits, numeric: true },
    { name: "sire_city_code", max: LIMITS.sireCodeDigits, numeric: true, hint: "hint_sire_city_code" }
  ]

  const propertiesScreen = async (section, live) => {
    const loaded = await loadScreen(section, live, {
      screen: "properties",
      path: "/properties",
      intro: "propertiesIntro"
    })
    if (loaded === null) return
    const { body, data: { properties } } = loaded
    for (const property of properties) state.propertyNames.set(property.property_id, property.name)
    fill(
      body,
      ["live", "test"].map((environment) => {
        const mine = properties.filter((property) => property.environment === environment)
        return h(
          "section",
          { class: "stack", "aria-labelledby": `properties-${environment}` },
          h("h2", { id: `properties-${environment}`, text: `propertiesOf_${environment}` }),
          mine.length === 0
            ? none(`noProperties_${environment}`)
            : mine.map((property) => propertyCard(property, live))
        )
      })
    )
  }

  const yesNo = (value) => ({ key: value ? "yes" : "no" })

  const propertyCard = (property, live) => {
    const card = h("article", { class: "card property" })
    const render = (current) => {
      const prefix = `p-${current.property_id}`
      const settings = current.settings
      const line = messageLine()
      const token = input({ type: "password", autocomplete: "off", maxlength: LIMITS.traToken, spellcheck: "false" })
      const tokenState = h("p", {
        class: `token-state ${settings.tra_token_set ? "is-set" : "is-unset"}`,
        id: `${prefix}-tra_token-state`,
        text: settings.tra_token_set ? "traTokenSet" : "traTokenNotSet"
      })
      const remove = settings.tra_token_set
        ? actionButton({ class: "secondary small", text: "removeTraToken" }, async () => {
          const res = await api("PATCH", `/properties/${encodeURIComponent(current.property_id)}`, { tra_token: null })
          if (!live()) return
          if (res.status === 200) return done(res.body, "traTokenRemoved")
          showFailure(form, line, res)
        })
        : null
      const controls = {}
      const settingFields = SETTINGS.map((setting) => {
        const control = input({
          maxlength: setting.max,
          autocomplete: setting.autocomplete ?? "off",
          inputmode: setting.numeric ? "numeric" : null,
          spellcheck: "false"
        })
        control.value = settings[setting.name] ?? ""
        controls[setting.name] = control
        return field(`${prefix}-${setting.name}`, setting.name, control, { hint: setting.hint })
      })
      const form = h(
        "form",
        { novalidate: true, class: "stack settings-form", "aria-labelledby": `${prefix}-settings` },
        h("h4", { id: `${prefix}-settings`, text: "settingsTitle" }),
        field(`${prefix}-tra_token`, "tra_token", token, {
          hint: "hint_tra_token",
          extra: h("div", { class: "token-row" }, tokenState, remove)
        }),
        h("div", { class: "settings-fields" }, settingFields),
        line,
        h("button", { type: "submit", class: "primary", text: "saveSettings" })
      )
      // The token's state is part of its description: "set" or "not set", then the hint.
      token.setAttribute("aria-describedby", `${tokenState.id} ${prefix}-tra_token-hint`)

      const done = (updated, message) => {
        render(updated)
        retranslate()
        card.querySelector("h3").focus()
        showMessage(card.querySelector(".message"), "ok", message)
      }

      onSubmit(form, async () => {
        clearErrors(form, line)
        const change = {}
        const typed = token.value.trim()
        if (typed !== "") change.tra_token = typed
        // The server's rules, checked here first (issue 26: a letter in a SIRE code used to reach the server).
        const errors = {}
        for (const setting of SETTINGS) {
          const value = controls[setting.name].value.trim()
          if (value === "") continue
          if (setting.numeric && !new RegExp(`^\\d{1,${setting.max}}$`).test(value)) {
            errors[setting.name] = ["err_digits", { max: setting.max }]
          } else if (value.length > setting.max) errors[setting.name] = ["err_tooLong", { max: setting.max }]
        }
        if (showFieldErrors(form, errors)) return
        for (const setting of SETTINGS) {
          const value = controls[setting.name].value.trim()
          const before = settings[setting.name]
          // An emptied field clears the setting; an untouched one is not sent.
          if (value === "" && before !== null) change[setting.name] = null
          else if (value !== "" && value !== before) change[setting.name] = value
        }
        if (Object.keys(change).length === 0) return showMessage(line, "info", "nothingToSave")
        const res = await api("PATCH", `/properties/${encodeURIComponent(current.property_id)}`, change)
        if (!live()) return
        if (res.status === 200) return done(res.body, "settingsSaved")
        if (res.code === "property_not_found") return showMessage(line, "error", "err_propertyGone")
        showFailure(form, line, res)
      })

      card.replaceChildren(
        h(
          "header",
          { class: "card-header" },
          h("h3", { tabindex: "-1" }, current.name),
          envBadge(current.environment)
        ),
        details([
          ["col_propertyId", h("code", {}, current.property_id)],
          current.external_id === null ? null : ["col_externalId", h("code", {}, current.external_id)],
          current.rnt_id === null ? null : ["col_rnt", current.rnt_id],
          ["reportsTra", yesNo(current.compliance.tra)],
          ["reportsSire", yesNo(current.compliance.sire)],
          ["needsContract", yesNo(current.requires_contract_signature)],
          ["needsPhotos", yesNo(current.requires_document_photos)]
        ], true),
        form
      )
    }
    render(property)
    return card
  }

  // ------------------------------------------------------------------------------------------------------------
  // Webhooks: endpoints managed here (add, change, test, rotate the secret, recover, deactivate) and the delivery
  // log: one row per delivery, filters, pages, and one delivery's payload and attempts in a dialog

  /** Event types an endpoint subscribes to (`ping` goes to every endpoint whatever it subscribes to). */
  const SUBSCRIBABLE = RULES.events.filter((name) => name !== "ping")

  /** An event's name as the API writes it, never broken mid-word, with its words as the title. */
  const eventName = (name) => h("code", { class: "event-name", title: { t: `event_${name}` } }, name)

  /** A long URL in a narrow column: host and the start of the path, the whole URL as the title. */
  const shortUrl = (url) => {
    let text = url
    try {
      const parsed = new URL(url)
      text = `${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`
    } catch {
      // shown as it is
    }
    return h("span", { class: "short-url", title: url }, text.length > 26 ? `${text.slice(0, 25)}…` : text)
  }

  /** The delivery log's table: one compact row per delivery, three short lines on a phone (panel.css). */
  const deliveryTable = (columns, rows) => {
    const wrap = table("deliveriesCaption", columns, rows)
    wrap.querySelector("table").classList.add("deliveries-table")
    return wrap
  }

  /** The panel statuses of a delivery: pending splits into waiting for its first attempt and retrying. */
  const DELIVERY_BADGE = { pending: "pending", retrying: "warning", delivered: "ok", failed: "error" }
  const deliveryBadge = (status) => badge(DELIVERY_BADGE[status] ?? "neutral", `delivery_${status}`)

  /** "Delivered 3 · Retrying 1 · Failed 0 · Waiting 0", each count with its status's colour. */
  const countsLine = (counts) =>
    h(
      "p",
      { class: "delivery-counts" },
      ["delivered", "retrying", "failed", "pending"].flatMap((status, i) => [
        i === 0 ? null : h("span", { class: "muted", "aria-hidden": "true" }, " · "),
        h("span", { class: `count count-${status}`, text: [`count_${status}`, { n: { n: counts[status] } }] })
      ])
    )

  /** What an answer that refused an endpoint's form means, in the page's words, next to the field it names. */
  const endpointFailure = (form, line, res) => {
    if (res.code === "invalid_request" && Array.isArray(res.body?.details?.fields)) {
      const errors = {}
      for (const problem of res.body.details.fields) {
        const name = String(problem.field).split(/[.[]/)[0]
        errors[name] ??= [name === "events" ? "err_events" : name === "url" ? "err_webhookUrl" : "err_field"]
      }
      if (showFieldErrors(form, errors)) return
    }
    // The server's reason is an English sentence: the page says what the rule is, in its own words.
    if (res.code === "invalid_webhook_url") return showFieldErrors(form, { url: ["err_webhookUrlUnsafe"] })
    if (res.code === "webhook_limit_reached") return showMessage(line, "error", "err_webhookLimit", { n: RULES.activeEndpoints })
    if (res.code === "live_not_enabled") return showMessage(line, "error", "err_liveWebhook")
    if (res.code === "webhook_not_found") return showMessage(line, "error", "err_webhookGone")
    if (res.status === 0) return showMessage(line, "error", "err_network")
    showMessage(line, "error", "err_unexpected", { code: res.code ?? res.status })
  }

  /**
   * The form of a new endpoint or of a change to `endpoint`: its URL, its events (all, or the ones ticked) and
   * whether its deliveries carry the guests. Resolves through `onSaved(answer)`; `onCancel` closes it.
   */
  const endpointForm = ({ endpoint, onSaved, onCancel }) => {
    const line = messageLine()
    const id = nextId("endpoint-form")
    const url = input({
      type: "url",
      inputmode: "url",
      maxlength: RULES.webhookUrlMax,
      spellcheck: "false",
      autocomplete: "off",
      placeholder: "https://pms.example.com/webhooks",
      value: endpoint?.url ?? ""
    })
    const everything = endpoint === undefined || endpoint.events.includes("*")
    const mode = (value, key) => {
      const radio = h("input", { type: "radio", name: `${id}-mode`, id: `${id}-mode-${value}`, value, checked: (value === "all") === everything })
      return h("label", { class: "choice", for: radio.id }, radio, h("span", { text: key }))
    }
    const all = mode("all", "eventsAll")
    const some = mode("some", "eventsSome")
    const boxes = SUBSCRIBABLE.map((name) =>
      h("input", {
        type: "checkbox",
        id: `${id}-event-${name.replace(".", "-")}`,
        value: name,
        checked: !everything && endpoint.events.includes(name)
      })
    )
    const choices = h(
      "div",
      { class: "event-choices", hidden: everything },
      boxes.map((box) =>
        h("label", { class: "choice", for: box.id }, box, h("span", { text: `event_${box.value}` }), " ", eventName(box.value))
      )
    )
    const someRadio = some.querySelector("input")
    for (const radio of [all.querySelector("input"), someRadio]) {
      radio.addEventListener("change", () => {
        choices.hidden = !someRadio.checked
      })
    }
    // The events' fieldset is the control the "events" error belongs to (`setFieldError` by its id and name).
    const events = h(
      "fieldset",
      { class: "field events-field", id: `${id}-events`, name: "events", tabindex: "-1", "aria-describedby": `${id}-events-hint` },
      h("legend", { text: "col_events" }),
      h("p", { class: "hint", id: `${id}-events-hint`, text: "hint_events" }),
      h("p", { class: "field-error", id: `${id}-events-error`, hidden: true }),
      h("div", { class: "choices-row" }, all, some),
      choices
    )
    const guests = h("input", { type: "checkbox", id: `${id}-guests`, checked: endpoint?.include_guests === true })
    const form = h(
      "form",
      { class: "endpoint-form", novalidate: true, "aria-labelledby": `${id}-title` },
      h("h3", { id: `${id}-title`, tabindex: "-1", text: endpoint === undefined ? "addEndpointTitle" : "editEndpointTitle" }),
      field(`${id}-url`, "url", url, { label: "field_webhookUrl", hint: "hint_webhookUrl", required: true }),
      events,
      h(
        "div",
        { class: "field" },
        h("label", { class: "choice", for: guests.id }, guests, h("span", { text: "field_includeGuests" })),
        h("p", { class: "hint", id: `${guests.id}-hint`, text: "hint_includeGuests" })
      ),
      line,
      h(
        "div",
        { class: "actions" },
        h("button", { type: "submit", class: "primary", text: endpoint === undefined ? "addEndpoint" : "saveEndpoint" }),
        h("button", { type: "button", class: "secondary", text: "cancel", onclick: onCancel })
      )
    )
    guests.setAttribute("aria-describedby", `${guests.id}-hint`)
    onSubmit(form, async () => {
      clearErrors(form, line)
      const chosen = boxes.filter((box) => box.checked).map((box) => box.value)
      const value = url.value.trim()
      const errors = {}
      if (value === "") errors.url = ["err_required"]
      else if (!URL.canParse(value)) errors.url = ["err_webhookUrl"]
      if (someRadio.checked && chosen.length === 0) errors.events = ["err_events"]
      if (showFieldErrors(form, errors)) return
      const body = { url: value, events: someRadio.checked ? chosen : ["*"], include_guests: guests.checked }
      const res = endpoint === undefined
        ? await api("POST", "/webhooks", { environment: state.env, ...body })
        : await api("PATCH", `/webhooks/${encodeURIComponent(endpoint.id)}`, body)
      if (res.status === 200 || res.status === 201) return onSaved(res.body)
      endpointFailure(form, line, res)
    })
    return form
  }

  /** A delivery's dialog: the event, where it went, every attempt with the receiver's answer, the payload. */
  const deliveryDialog = (deliveryId, { onRedelivered }) =>
    new Promise((resolve) => {
      const titleId = nextId("dialog-title")
      const body = h("div", { class: "stack" }, loading())
      const line = messageLine()
      const dialog = h(
        "dialog",
        { class: "dialog dialog-wide", "aria-labelledby": titleId },
        h(
          "div",
          { class: "dialog-header" },
          h("h2", { id: titleId, text: "deliveryTitle" }),
          h("button", { type: "button", class: "secondary small", text: "close", onclick: () => dialog.close() })
        ),
        line,
        body
      )
      showModal(dialog, resolve)
      const show = async () => {
        const res = await api("GET", `/deliveries/${encodeURIComponent(deliveryId)}`)
        if (!dialog.open) return
        if (res.status !== 200) return loadFailed(body, res, show)
        const delivery = res.body
        const redeliver = actionButton({ class: "primary small", text: "redeliver" }, async () => {
          const sent = await api("POST", `/deliveries/${encodeURIComponent(delivery.id)}/redeliver`)
          if (!dialog.open) return
          if (sent.status !== 200) {
            const key = sent.code === "delivery_not_found" ? "err_deliveryGone" : sent.code === "webhook_not_found" ? "err_webhookGone" : "err_unexpected"
            return showMessage(line, "error", key, { code: sent.code ?? sent.status })
          }
          showMessage(line, "ok", "redeliverQueued")
          onRedelivered(delivery.id)
          await show()
        })
        fill(
          body,
          h("div", { class: "card-header" }, h("p", { class: "delivery-event" }, eventName(delivery.event), " ", h("span", { text: `event_${delivery.event}` })), deliveryBadge(delivery.panel_status)),
          details([
            ["col_endpoint", h("span", { class: "break" }, delivery.endpoint_url)],
            ["col_reservation", delivery.external_id === null ? { key: "testPing" } : h("code", {}, delivery.external_id)],
            ["col_created", instant(delivery.created_at)],
            ["col_attempts", String(delivery.attempts)],
            delivery.next_attempt_at === null ? null : ["col_nextAttempt", instant(delivery.next_attempt_at)],
            delivery.delivered_at === null ? null : ["col_deliveredAt", instant(delivery.delivered_at)],
            ["col_eventId", h("code", { class: "break" }, delivery.event_id)]
          ], true),
          h("div", { class: "actions" }, redeliver),
          h("h3", { text: "attemptsCaption" }),
          tableOrNone("noAttempts", "attemptsCaption", [
            { label: "col_time", cell: (attempt) => instant(attempt.at) },
            { label: "col_httpStatus", cell: (attempt) => attempt.status_code === null ? nothing() : `${attempt.status_code}` },
            { label: "col_duration", cell: (attempt) => h("span", { text: ["milliseconds", { ms: { n: attempt.duration_ms } }] }) },
            { label: "col_result", cell: (attempt) => attemptResult(attempt) },
            {
              label: "col_answer",
              className: "answer-cell",
              cell: (attempt) => attempt.response_excerpt === null ? nothing() : h("pre", { class: "excerpt" }, attempt.response_excerpt)
            }
          ], [...delivery.attempt_details].reverse()),
          h("h3", { text: "payloadTitle" }),
          h("p", { class: "hint", text: delivery.payload?.data?.guests === undefined ? "payloadNoGuests" : "payloadWithGuests" }),
          h("pre", { class: "payload", tabindex: "0", "aria-label": { t: "payloadTitle" } }, JSON.stringify(delivery.payload, null, 2))
        )
      }
      show()
    })

  /** What one attempt came to, in words: delivered, the receiver's refusal, or why nothing came back. */
  const attemptResult = (attempt) => {
    if (attempt.error === null) return h("span", { text: "attemptDelivered" })
    if (attempt.status_code !== null) return h("span", { text: ["attemptRefused", { status: attempt.status_code }] })
    if (attempt.error === "the webhook endpoint was deactivated") return h("span", { text: "attemptInactive" })
    // A failure without an answer: the client's own words (timeout, refused connection, unsafe address…).
    return h("span", { class: "muted" }, h("span", { text: "attemptNoAnswer" }), " ", h("code", { class: "break" }, attempt.error))
  }

  const webhooksScreen = (section, live) => {
    const endpoints = h("div", { class: "stack" }, loading())
    const adding = h("div", { class: "stack" })
    const deliveries = h("div", { class: "stack" }, loading())
    const line = messageLine()
    const endpointLine = messageLine()
    const endpointFilter = h("select", {}, options([], "allEndpoints"))
    const status = h("select", {}, options(RULES.deliveryStatuses.map((value) => [value, `delivery_${value}`]), "all"))
    const event = h("select", {}, options(RULES.events.map((value) => [value, `event_${value}`]), "allEvents"))
    const externalId = input({ maxlength: LIMITS.search, spellcheck: "false", autocomplete: "off" })
    const filters = filterForm({ id: "deliveries-filter-title", heading: "h3", submit: "filter" }, [
      field("d-endpoint", "endpoint_id", endpointFilter, { label: "col_endpoint" }),
      field("d-status", "status", status, { label: "col_status" }),
      field("d-event", "event", event, { label: "col_event" }),
      field("d-external_id", "external_id", externalId, { label: "col_externalId" })
    ])
    let known = []
    let cursor = null
    let rows = []
    let polls = 0

    const addButton = actionButton({ class: "primary", text: "addEndpoint" }, () => {
      addButton.hidden = true
      const form = endpointForm({
        onSaved: (created) => {
          fill(
            adding,
            secretBox(created.secret, "newSecretTitle", h("p", { class: "hint", text: "secretNote" }), {
              labelKey: "secretLabel",
              warningKey: "secretShownOnce"
            }),
            h("button", { type: "button", class: "secondary", text: "done", onclick: closeAdding })
          )
          focusHeadingOf(adding)
          loadEndpoints()
        },
        onCancel: () => closeAdding()
      })
      fill(adding, form)
      form.querySelector("input")?.focus()
    })
    const closeAdding = () => {
      fill(adding)
      addButton.hidden = false
      addButton.focus()
    }

    const loadEndpoints = async () => {
      const res = await api("GET", `/webhooks${query({ environment: state.env })}`)
      if (!live()) return
      if (res.status !== 200) return loadFailed(endpoints, res, loadEndpoints)
      known = res.body.endpoints
      const chosen = endpointFilter.value
      endpointFilter.replaceChildren(
        ...options([], "allEndpoints"),
        ...known.map((endpoint) => h("option", { value: endpoint.id }, endpoint.url))
      )
      endpointFilter.value = known.some((endpoint) => endpoint.id === chosen) ? chosen : ""
      addButton.disabled = known.length >= RULES.activeEndpoints
      fill(
        endpoints,
        known.length === 0 ? none("noEndpoints") : known.map(endpointCard),
        known.length >= RULES.activeEndpoints ? h("p", { class: "hint", text: ["endpointLimit", { n: RULES.activeEndpoints }] }) : null
      )
    }

    const endpointCard = (endpoint) => {
      const result = h("div", { class: "ping-result", role: "status" })
      const card = h("article", { class: "card endpoint", "data-endpoint": endpoint.id })
      const failed = (res) =>
        fill(result, h("p", { class: "message-error", text: [res.code === "webhook_not_found" ? "err_webhookGone" : "err_unexpected", { code: res.code ?? res.status }] }))
      const test = actionButton({ class: "secondary small", text: "sendTest" }, async () => {
        fill(result, h("p", { class: "muted", text: "sending" }))
        const res = await api("POST", `/webhooks/${encodeURIComponent(endpoint.id)}/test`)
        if (!live()) return
        if (res.status !== 200) return failed(res)
        const ping = res.body
        fill(
          result,
          h(
            "p",
            { class: ping.delivered ? "ping-ok" : "ping-failed" },
            h("span", { text: ping.delivered ? "pingDelivered" : "pingFailed" }),
            " ",
            h("span", { text: ["pingDetail", { status: ping.http_status ?? "—", ms: { n: ping.duration_ms } }] })
          )
        )
        loadDeliveries()
      })
      // Design §6.14 Recover: the endpoint's failed deliveries of the last 7 days (less a minute, so that the
      // window is still inside the bound when the server reads it) queued again.
      const recover = actionButton({ class: "secondary small", text: "recoverFailed" }, async () => {
        const since = new Date(Date.now() - 7 * 86_400_000 + 60_000).toISOString()
        const res = await api("POST", `/webhooks/${encodeURIComponent(endpoint.id)}/recover`, { since })
        if (!live()) return
        if (res.status !== 202) return failed(res)
        fill(result, h("p", { class: "ping-ok", text: ["recovered", { n: { n: res.body.recovered } }] }))
        if (res.body.recovered > 0) loadDeliveries()
      })
      const edit = actionButton({ class: "secondary small", text: "edit" }, () => {
        const form = endpointForm({
          endpoint,
          onSaved: () => {
            showMessage(endpointLine, "ok", "endpointSaved")
            loadEndpoints()
          },
          onCancel: () => {
            fill(card, ...view())
            edit.focus()
          }
        })
        fill(card, form)
        form.querySelector("input")?.focus()
      })
      const rotate = actionButton({ class: "secondary small", text: "rotateSecret" }, async () => {
        const confirmed = await confirmDialog({ title: "rotateTitle", text: ["rotateText", { url: endpoint.url }], confirm: "rotateSecret" })
        if (!confirmed || !live()) return
        const res = await api("POST", `/webhooks/${encodeURIComponent(endpoint.id)}/rotate-secret`)
        if (!live()) return
        if (res.status !== 200) return failed(res)
        fill(result, secretBox(res.body.secret, "rotatedSecretTitle", h("p", { class: "hint", text: "secretNote" }), {
          labelKey: "secretLabel",
          warningKey: "secretShownOnce"
        }))
        focusHeadingOf(result)
      })
      const deactivate = actionButton({ class: "danger small", text: "deactivate" }, async () => {
        const confirmed = await confirmDialog({ title: "deactivateTitle", text: ["deactivateText", { url: endpoint.url }], confirm: "deactivate" })
        if (!confirmed || !live()) return
        const res = await api("DELETE", `/webhooks/${encodeURIComponent(endpoint.id)}`)
        if (!live()) return
        if (res.status !== 200) return failed(res)
        showMessage(endpointLine, "ok", "endpointDeactivated", { url: endpoint.url })
        await loadEndpoints()
        loadDeliveries()
      })
      const showDeliveries = actionButton({ class: "link small", text: "showDeliveries" }, async () => {
        endpointFilter.value = endpoint.id
        await loadDeliveries()
        byId("deliveries-title")?.focus()
      })
      const counts = endpoint.last_7_days
      const view = () => [
        h("h3", { class: "endpoint-url break" }, endpoint.url),
        details([
          [
            "col_events",
            h("span", {}, endpoint.events.flatMap((name, i) => [
              i === 0 ? null : ", ",
              name === "*" ? h("span", { text: "allEventsShort" }) : eventName(name)
            ]))
          ],
          ["includeGuests", yesNo(endpoint.include_guests)],
          ["col_created", instant(endpoint.created_at)],
          endpoint.secret_rotated_at === null ? null : ["col_secretRotated", instant(endpoint.secret_rotated_at)]
        ], true),
        h("div", { class: "endpoint-counts" }, h("span", { class: "counts-label", text: "last7Days" }), countsLine(counts), showDeliveries),
        h("div", { class: "actions" }, edit, test, recover, rotate, deactivate),
        result
      ]
      card.append(...view())
      return card
    }

    const loadDeliveries = async (append = false) => {
      const params = {
        environment: state.env,
        endpoint_id: endpointFilter.value,
        status: status.value,
        event: event.value,
        external_id: externalId.value.trim(),
        limit: RULES.deliveriesPageSize,
        cursor: append ? cursor : null
      }
      const res = await api("GET", `/deliveries${query(params)}`)
      if (!live()) return null
      if (res.status === 400) {
        showMessage(line, "error", res.body?.details?.fields?.some((f) => f.field === "cursor") ? "err_load" : "err_filters", { code: res.code })
        return null
      }
      if (res.status !== 200) {
        loadFailed(deliveries, res, () => loadDeliveries())
        return null
      }
      rows = append ? [...rows, ...res.body.deliveries] : res.body.deliveries
      cursor = res.body.next_cursor
      const more = cursor === null ? null : actionButton({ class: "secondary", text: "loadMore" }, () => loadDeliveries(true))
      fill(
        deliveries,
        countsLine(res.body.counts),
        rows.length === 0 ? none("noDeliveries") : deliveryTable([
          {
            label: "col_time",
            className: "c-time",
            cell: (delivery) => h("time", { datetime: delivery.created_at, text: ["asIs", { value: { atShort: delivery.created_at } }] })
          },
          {
            label: "col_event",
            className: "c-event",
            // The event opens the delivery's dialog, as a row of Svix's log does.
            cell: (delivery) =>
              h(
                "button",
                {
                  type: "button",
                  class: "link event-link",
                  "data-delivery": delivery.id,
                  "aria-label": { t: "viewDeliveryOf", args: { event: delivery.event, at: { at: delivery.created_at } } },
                  onclick: () =>
                    deliveryDialog(delivery.id, {
                      onRedelivered: (id) => {
                        // Its status changes now: a status filter would hide the delivery being followed.
                        status.value = ""
                        follow(id)
                      }
                    })
                },
                eventName(delivery.event)
              )
          },
          { label: "col_endpoint", className: "c-endpoint", cell: (delivery) => shortUrl(delivery.endpoint_url) },
          {
            label: "col_reservation",
            className: "c-reservation",
            cell: (delivery) => delivery.external_id === null ? h("span", { class: "muted", text: "testPing" }) : h("code", {}, delivery.external_id)
          },
          { label: "col_status", className: "c-status", cell: (delivery) => deliveryBadge(delivery.panel_status) },
          { label: "col_attempts", className: "c-attempts", cell: (delivery) => String(delivery.attempts) },
        ], rows),
        more
      )
      return rows
    }

    /** After a redelivery, the log is read again until that delivery is no longer pending (a few seconds). */
    const follow = async (id) => {
      const mine = ++polls
      for (let i = 0; i < 15; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1000))
        if (!live() || mine !== polls) return
        const list = await loadDeliveries()
        const delivery = list?.find((item) => item.id === id)
        if (delivery === undefined || delivery.status !== "pending") {
          if (delivery !== undefined) announce("deliveryNow", { status: { key: `delivery_${delivery.panel_status}` } })
          return
        }
      }
    }

    onSubmit(filters, async () => {
      clearErrors(filters, line)
      await loadDeliveries()
    })

    const reloadAll = () => {
      fill(endpoints, loading())
      fill(deliveries, loading())
      fill(adding)
      addButton.hidden = false
      endpointFilter.value = ""
      loadEndpoints()
      loadDeliveries()
    }

    section.append(
      environmentSwitch(reloadAll),
      h(
        "section",
        { class: "stack", "aria-labelledby": "endpoints-title" },
        h("div", { class: "section-header" }, h("h2", { id: "endpoints-title", text: "endpointsTitle" }), addButton),
        intro("endpointsIntro"),
        endpointLine,
        adding,
        endpoints
      ),
      h(
        "section",
        { class: "stack", "aria-labelledby": "deliveries-title" },
        h(
          "div",
          { class: "section-header" },
          h("h2", { id: "deliveries-title", tabindex: "-1", text: "deliveriesTitle" }),
          actionButton({ class: "secondary small", text: "refresh" }, () => loadDeliveries())
        ),
        h("p", { class: "hint", text: ["deliveriesKept", { days: RULES.eventRetentionDays }] }),
        filters,
        line,
        deliveries
      )
    )
    loadEndpoints()
    loadDeliveries()
  }

  // ------------------------------------------------------------------------------------------------------------
  // Reservations: what was reported, what failed and why; filters and "load more"

  /**
   * A report's warning in the page's words when it is one of the service's own (a simulated rejection, a missing
   * setting…); otherwise the authority's or the check's own words, said to be theirs.
   */
  const reportWarning = (warning) => {
    const known = RULES.warnings[warning]
    return known !== undefined
      ? h("p", { class: "report-warning", text: `warning_${known}` })
      : h("p", { class: "report-warning" }, h("span", { text: "warningQuoted" }), " ", h("q", {}, warning))
  }

  const reportCell = (report) =>
    h(
      "div",
      { class: "report" },
      badge(BADGE[report.status] ?? "neutral", `report_${report.status}`),
      report.simulated ? h("span", { class: "muted small-text", text: "simulated" }) : null,
      report.warning === undefined ? null : reportWarning(report.warning)
    )

  /** Today's date in Bogotá (YYYY-MM-DD): the latest departure the server accepts. */
  const todayInBogota = () =>
    new Intl.DateTimeFormat("en-CA", { timeZone: TIME_ZONE, year: "numeric", month: "2-digit", day: "2-digit" })
      .format(new Date())

  /**
   * "Record departure" (design §6.8): a modal form with the day the guests left, within the stay and not after
   * today in Bogotá. Resolves the reservation as the server answers it, or null when closed without saving.
   */
  const departureDialog = (row) =>
    new Promise((resolve) => {
      const titleId = nextId("dialog-title")
      const textId = nextId("dialog-text")
      const today = todayInBogota()
      const latest = row.check_out < today ? row.check_out : today
      const date = input({ type: "date", min: row.check_in, max: latest, value: row.departed_on ?? latest })
      const line = messageLine()
      let saved = null
      const dialog = h("dialog", { class: "dialog", "aria-labelledby": titleId, "aria-describedby": textId })
      const form = h(
        "form",
        { novalidate: true },
        h("h2", { id: titleId, text: "departureTitle" }),
        h("p", {
          id: textId,
          text: ["departureText", { external_id: row.external_id, from: { day: row.check_in }, to: { day: row.check_out } }]
        }),
        field(nextId("departed-on"), "departed_on", date, { label: "field_departedOn", required: true }),
        line,
        h(
          "div",
          { class: "actions" },
          h("button", { type: "button", class: "secondary", text: "cancel", onclick: () => dialog.close() }),
          h("button", { type: "submit", class: "primary", text: "departureSave" })
        )
      )
      dialog.append(form)
      onSubmit(form, async () => {
        clearErrors(form, line)
        if (date.value === "") return showFieldErrors(form, { departed_on: ["err_required"] })
        const res = await api("POST", `/reservations/${encodeURIComponent(row.reservation_id)}/departure`, {
          departed_on: date.value
        })
        if (res.status === 200) {
          saved = res.body
          return dialog.close()
        }
        if (res.code === "already_reported") return showMessage(line, "error", "err_departureReported")
        if (res.code === "reservation_cancelled") return showMessage(line, "error", "err_departureCancelled")
        showFailure(form, line, res)
      })
      // Saved, the row is drawn again and its screen takes the focus: only a cancel returns it to the button.
      showModal(dialog, () => resolve(saved), { refocus: () => saved === null })
      date.focus()
    })

  const reservationsScreen = (section, live) => {
    const results = h("div", { class: "stack" }, loading())
    const line = messageLine()
    const status = h("select", {}, options(RULES.reservationStatuses.map((value) => [value, `status_${value}`]), "all"))
    const from = input({ type: "date" })
    const to = input({ type: "date" })
    const search = input({ type: "search", maxlength: LIMITS.search, spellcheck: "false", autocomplete: "off" })
    const filters = filterForm({ id: "reservations-filter-title", heading: "h2", submit: "search" }, [
      field("r-status", "status", status, { label: "col_status" }),
      field("r-from", "from", from, { label: "field_from" }),
      field("r-to", "to", to, { label: "field_to" }),
      field("r-q", "q", search, { label: "field_search" })
    ])
    let shown = []
    let cursor = null

    const ensurePropertyNames = async () => {
      if (state.propertyNames.size > 0) return
      const res = await api("GET", "/properties")
      if (res.status !== 200) return
      for (const property of res.body.properties) state.propertyNames.set(property.property_id, property.name)
    }

    const render = () => {
      if (shown.length === 0) return fill(results, none("noReservations"))
      const more = cursor === null ? null : actionButton({ class: "secondary", text: "loadMore" }, () => load(true))
      fill(
        results,
        h("p", { class: "count", text: ["showingCount", { n: { n: shown.length } }] }),
        table("reservationsCaption", [
          {
            label: "col_externalId",
            cell: (row) =>
              h(
                "div",
                {},
                h("code", {}, row.external_id),
                h("span", { class: "muted block" }, state.propertyNames.get(row.property_id) ?? row.property_id)
              )
          },
          {
            label: "col_status",
            cell: (row) =>
              h(
                "div",
                {},
                badge(BADGE[row.status] ?? "pending", `status_${row.status}`),
                // A cancelled stay whose reports still go on keeps its compliance status: say it is cancelled.
                row.reservation_status === "cancelled" && row.status !== "cancelled"
                  ? badge("neutral", "status_cancelled")
                  : null,
                h("span", {
                  class: "muted block small-text",
                  text: ["guestsRegistered", { n: { n: row.guests_registered } }]
                })
              )
          },
          { label: "col_stay", cell: (row) => h("span", {}, day(row.check_in), " – ", day(row.check_out)) },
          { label: "col_tra", cell: (row) => reportCell(row.tra) },
          { label: "col_sire", cell: (row) => reportCell(row.sire) },
          { label: "col_updated", cell: (row) => instant(row.updated_at) },
          {
            label: "col_departure",
            cell: (row) =>
              h(
                "div",
                { class: "departure" },
                row.departed_on === null ? nothing() : day(row.departed_on),
                row.reservation_status === "cancelled" ? null : actionButton({
                  class: "secondary block",
                  text: "recordDeparture",
                  "aria-label": { t: "recordDepartureFor", args: { external_id: row.external_id } },
                  "data-reservation": row.reservation_id
                }, () => recordDeparture(row))
              )
          }
        ], shown),
        more
      )
    }

    /** The row as the server answers it after the dialog; the focus returns to its button. */
    const recordDeparture = async (row) => {
      const saved = await departureDialog(row)
      if (saved === null || !live()) return
      shown = shown.map((candidate) => candidate.reservation_id === saved.reservation_id ? saved : candidate)
      render()
      results.querySelector(`[data-reservation="${CSS.escape(saved.reservation_id)}"]`)?.focus()
      announce("departureRecorded", { day: { day: saved.departed_on } })
    }

    const load = async (append) => {
      const params = {
        environment: state.env,
        status: status.value,
        from: from.value,
        to: to.value,
        q: search.value.trim(),
        limit: RULES.reservationsPageSize,
        cursor: append ? cursor : null
      }
      if (!append) fill(results, loading())
      const [res] = await Promise.all([api("GET", `/reservations${query(params)}`), ensurePropertyNames()])
      if (!live()) return
      if (res.status === 400) {
        fill(results)
        return showFailure(filters, line, res)
      }
      if (res.status !== 200) return loadFailed(results, res, () => load(append))
      const before = shown.length
      shown = append ? [...shown, ...res.body.reservations] : res.body.reservations
      cursor = res.body.next_cursor
      render()
      if (append) {
        // Focus goes to the first new row, so keyboard users continue where the list grew.
        const rows = results.querySelectorAll("tbody tr")
        const first = rows[before]
        if (first !== undefined) {
          first.tabIndex = -1
          first.focus()
        }
        announce("loadedMore", { n: { n: res.body.reservations.length } })
      }
    }

    onSubmit(filters, async () => {
      clearErrors(filters, line)
      if (from.value !== "" && to.value !== "" && from.value > to.value) {
        return showFieldErrors(filters, { to: ["err_toBeforeFrom"] })
      }
      await load(false)
    })

    section.append(environmentSwitch(() => load(false)), intro("reservationsIntro"), filters, line, results)
    load(false)
  }


  // ------------------------------------------------------------------------------------------------------------
  // Members: the holder may add and remove; members see the list

  const membersScreen = (section, live) => {
    const body = h("div", { class: "stack" }, loading())
    const line = messageLine()
    section.append(intro("membersIntro"), line, body)

    const render = (list) => {
      const holder = state.account.is_holder
      // A member's page offers no changes; a stale one (the holder changed) still explains the refusal.
      const ownerRequired = ["err_ownerRequired", { holder: list.holder }]
      const control = emailInput()
      const formLine = messageLine()
      const form = holder
        ? h(
          "form",
          { novalidate: true, class: "card stack", "aria-labelledby": "add-member-title" },
          h("h2", { id: "add-member-title", text: "addMemberTitle" }),
          field("member-email", "email", control, {
            label: "field_memberEmail",
            hint: "memberEmailHint",
            required: true
          }),
          formLine,
          h("button", { type: "submit", class: "primary", text: "addMember" })
        )
        : h("p", { class: "message message-info", text: ["membersReadOnly", { holder: list.holder }] })
      if (holder) {
        onSubmit(form, async () => {
          clearErrors(form, formLine)
          const email = control.value.trim()
          if (!validEmail(email)) return showFieldErrors(form, { email: [email === "" ? "err_required" : "err_email"] })
          const res = await api("POST", "/members", { email })
          if (!live()) return
          if (res.status === 201) {
            render(res.body)
            byId("member-email")?.focus()
            announce("memberAdded", { email })
            return
          }
          if (res.code === "owner_required") return showMessage(formLine, "error", ...ownerRequired)
          showFailure(form, formLine, res)
        })
      }
      const remove = async (member) => {
        const confirmed = await confirmDialog({
          title: ["removeMemberTitle", { email: member.email }],
          text: "removeMemberText",
          confirm: "removeMember"
        })
        if (!confirmed || !live()) return
        const res = await api("DELETE", `/members/${encodeURIComponent(member.email)}`)
        if (!live()) return
        if (res.status === 200) {
          render(res.body)
          byId("members-title")?.focus()
          announce("memberRemoved", { email: member.email })
          return
        }
        if (res.code === "owner_required") return showMessage(line, "error", ...ownerRequired)
        if (res.code === "member_not_found") return load()
        showMessage(line, "error", "err_unexpected", { code: res.code ?? res.status })
      }
      fill(
        body,
        details([["holderLabel", list.holder]]),
        form,
        h("h2", { id: "members-title", tabindex: "-1", text: "membersListTitle" }),
        tableOrNone("noMembers", "membersCaption", [
          { label: "col_email", cell: (member) => member.email },
          { label: "col_addedBy", cell: (member) => member.added_by },
          { label: "col_addedAt", cell: (member) => instant(member.added_at) },
          ...(holder
            ? [{
              label: "col_actions",
              className: "cell-actions",
              cell: (member) =>
                actionButton({
                  class: "danger small",
                  text: "removeMember",
                  "aria-label": { t: "removeMemberLabel", args: { email: member.email } }
                }, () => remove(member))
            }]
            : [])
        ], list.members)
      )
    }

    const load = async () => {
      const res = await api("GET", "/members")
      if (!live()) return
      if (res.status !== 200) return loadFailed(body, res, load)
      render(res.body)
    }
    load()
  }

  // ------------------------------------------------------------------------------------------------------------
  // Audit log: newest first

  /** The details each audit sentence names; an entry without them (written before issue 26) is shown as stored. */
  const AUDIT_NEEDS = {
    "key.created": ["prefix", "environment"],
    "key.revoked": ["prefix", "environment"],
    "property.settings_changed": ["property", "settings"],
    "member.added": ["email"],
    "member.removed": ["email"],
    "reservation.departure_recorded": ["external_id", "departed_on"],
    "webhook.created": ["url", "environment"],
    "webhook.updated": ["url", "fields"],
    "webhook.deactivated": ["url"],
    "webhook.secret_rotated": ["url"]
  }

  /** Who did what to which named thing, in the page's words (issue 26): "Created the key svc_test_7Hq2… (test)". */
  const auditWords = (entry) => {
    const sentence = `auditText_${entry.action}`
    const details = entry.details ?? {}
    const needs = AUDIT_NEEDS[entry.action] ?? []
    const complete = entry.details !== null && needs.every((name) => details[name] !== undefined)
    if (!(sentence in TEXTS.es) || (needs.length > 0 && !complete)) {
      // An action this page does not know, or an older entry: its name in words when known, and the stored target.
      const label = `audit_${entry.action}`
      return h(
        "span",
        {},
        label in TEXTS.es ? h("span", { text: label }) : entry.action,
        entry.target === null ? null : h("span", { class: "muted break" }, ` · ${entry.target}`)
      )
    }
    const args = {
      prefix: details.prefix,
      environment: details.environment === undefined ? undefined : { key: `auditEnv_${details.environment}` },
      property: details.property,
      settings: Array.isArray(details.settings) ? { keys: details.settings.map((name) => `field_${name}`) } : undefined,
      email: details.email,
      external_id: details.external_id,
      departed_on: details.departed_on === undefined ? undefined : { day: details.departed_on },
      url: details.url,
      fields: Array.isArray(details.fields) ? { keys: details.fields.map((name) => `auditField_${name}`) } : undefined
    }
    return h("span", { class: "break", text: [sentence, args] })
  }

  const auditScreen = async (section, live) => {
    const loaded = await loadScreen(section, live, { screen: "audit", path: "/audit?limit=100", intro: "auditIntro" })
    if (loaded === null) return
    const { body, data: { entries } } = loaded
    fill(
      body,
      tableOrNone("noAudit", "auditCaption", [
        { label: "col_time", cell: (entry) => instant(entry.at) },
        { label: "col_who", cell: (entry) => entry.actor_email },
        { label: "col_action", cell: auditWords },
        { label: "col_ip", cell: (entry) => entry.ip ?? nothing() }
      ], entries)
    )
  }

  const RENDER = {
    overview: overviewScreen,
    keys: keysScreen,
    properties: propertiesScreen,
    webhooks: webhooksScreen,
    reservations: reservationsScreen,
    members: membersScreen,
    audit: auditScreen
  }

  // ------------------------------------------------------------------------------------------------------------
  // Start

  // The skip link must not go through the URL's hash: that is the screen's address here.
  byId("skip-link").addEventListener("click", (event) => {
    event.preventDefault()
    byId("main").focus()
  })
  ui.lang.addEventListener("click", toggleLanguage)
  ui.signOut.addEventListener("click", signOut)
  ui.menu.addEventListener("click", () => setMenu(ui.menu.getAttribute("aria-expanded") !== "true"))
  ui.nav.addEventListener("click", (event) => {
    if (event.target.closest("a")) setMenu(false)
  })
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && ui.menu.getAttribute("aria-expanded") === "true") {
      setMenu(false)
      ui.menu.focus()
    }
  })
  window.addEventListener("hashchange", () => {
    if (state.account !== null) showScreen(currentScreen(), true)
  })
  retranslate()
  api("GET", "/account").then((res) => {
    if (res.status === 200) return startSession(res.body, false)
    if (res.status === 401) return showSignIn()
    bootFailed(res)
  })
})()
