// The guest check-in page behind `checkin_url` (design §5, issue 6). Plain browser JavaScript: no framework,
// no build step. It talks only to the token-scoped JSON API (/api/checkin/{token}/…) and shows one step at a
// time: a guest's details, that guest's document photo (where the property requires photos), the contract
// (where required), then the end state. The progress list shows names and registered/missing only: a guest
// never sees another guest's data.
//
// Everything is built with DOM calls and textContent, never innerHTML, so nothing the server returns can
// inject markup; the Content-Security-Policy allows no inline script or style (no `style` attributes either:
// visibility goes through the `hidden` attribute and classes).
"use strict"
;(() => {
  const TEXTS = window.CheckinI18n
  /** Validation rules sent by the server with the page (src/checkin/Page.ts), so both sides agree. */
  const RULES = JSON.parse(document.querySelector("meta[name=\"checkin-rules\"]").getAttribute("content"))
  const DOCUMENT_PATTERN = new RegExp(RULES.documentPattern)
  /** Dots, spaces and dashes of a number copied as printed ("1.020.345.678"): removed, as the server does. */
  const DOCUMENT_SEPARATORS = new RegExp(RULES.documentSeparators, "g")
  const cleanDocumentNumber = (value) => value.replace(DOCUMENT_SEPARATORS, "")
  /** The country lists' first choice, and the first guest's default where a default is sensible. */
  const HOME_COUNTRY = "CO"
  /** The country fields a new guest's form fills in from the previous guest (or Colombia). */
  const DEFAULTED_COUNTRIES = ["nacionalidad", "pais_procedencia", "pais_residencia"]
  // The WHATWG `input type=email` grammar with a dot required in the domain, as the server checks it.
  const EMAIL =
    /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/
  /** A photo re-encoded in the browser (other format, or too large) is scaled to at most this many pixels a side. */
  const MAX_PHOTO_SIDE = 3000

  const token = (() => {
    try {
      return decodeURIComponent(location.pathname.split("/")[2] ?? "") // the path is /checkin/{token}
    } catch {
      return ""
    }
  })()

  const state = {
    lang: initialLanguage(),
    /** The last answer of GET /api/checkin/{token}. */
    view: null,
    /** Guests whose photo step was put off ("register another guest first"), for this visit only. */
    deferred: new Set(),
    /**
     * Countries chosen for the guests saved on this visit, in the order first chosen, offered after Colombia in
     * every country list; and the last saved guest's, the next guest's defaults. In memory only: a reload or
     * another phone starts again from Colombia.
     */
    countriesChosen: [],
    lastCountries: null
  }

  const $ = (id) => document.getElementById(id)
  const ui = {
    brand: $("property-name"),
    stay: $("stay"),
    status: $("status"),
    progress: $("progress"),
    summary: $("progress-summary"),
    list: $("progress-list"),
    step: $("step"),
    toggle: $("lang-toggle")
  }

  // ------------------------------------------------------------------------------------------------------
  // Language

  function initialLanguage() {
    const asked = new URLSearchParams(location.search).get("lang")
    if (asked === "es" || asked === "en") return asked
    try {
      const stored = localStorage.getItem("checkin-lang")
      if (stored === "es" || stored === "en") return stored
    } catch {
      // storage may be disabled: Spanish by default
    }
    return "es"
  }

  const formatDate = (iso) => {
    const [year, month, day] = String(iso).split("-").map(Number)
    if (!year || !month || !day) return String(iso)
    return new Intl.DateTimeFormat(state.lang === "en" ? "en-US" : "es-CO", { dateStyle: "long", timeZone: "UTC" })
      .format(new Date(Date.UTC(year, month - 1, day)))
  }

  /** An argument of a text: a plain value, `{date}` (formatted in the language) or `{key}` (translated). */
  const resolveArg = (value) => {
    if (value === null || value === undefined) return ""
    if (Array.isArray(value)) return value.map(resolveArg).join(", ")
    if (typeof value === "object") return "date" in value ? formatDate(value.date) : t(value.key)
    return String(value)
  }

  const pluralCategory = (count) => {
    try {
      return new Intl.PluralRules(state.lang).select(count)
    } catch {
      return count === 1 ? "one" : "other"
    }
  }

  /**
   * A text; with a `count` argument, its plural form first (`key_one`, `key_other`… by Intl.PluralRules in the
   * page's language), so "1 of 1 guests" is never said.
   */
  const t = (key, args) => {
    const keys = args?.count === undefined ? [key] : [`${key}_${pluralCategory(Number(args.count))}`, `${key}_other`, key]
    const text = keys.map((k) => TEXTS[state.lang][k] ?? TEXTS.es[k]).find((found) => found !== undefined) ?? key
    return args === undefined ? text : text.replace(/\{(\w+)\}/g, (_, name) => resolveArg(args[name]))
  }

  /** Sets a translated text and remembers its key, so a language switch can redo it in place. */
  const setText = (el, key, args) => {
    el.dataset.i18n = key
    if (args === undefined) delete el.dataset.i18nArgs
    else el.dataset.i18nArgs = JSON.stringify(args)
    el.textContent = t(key, args)
    return el
  }

  const countryName = (() => {
    const cache = {}
    return (code) => {
      try {
        cache[state.lang] ??= new Intl.DisplayNames([state.lang], { type: "region" })
        return cache[state.lang].of(code) ?? code
      } catch {
        return code
      }
    }
  })()

  /**
   * (Re)fills a country picker, keeping its value: Colombia, then the countries chosen for the guests saved on
   * this visit, then every other country sorted by the names of the current language.
   */
  const fillCountries = (select) => {
    const value = select.value
    const collator = new Intl.Collator(state.lang)
    const suggested = [HOME_COUNTRY, ...state.countriesChosen].filter((code, i, all) =>
      RULES.countries.includes(code) && all.indexOf(code) === i
    )
    const option = (code) => h("option", { value: code }, countryName(code))
    const others = RULES.countries
      .filter((code) => !suggested.includes(code))
      .map((code) => ({ code, name: countryName(code) }))
      .sort((a, b) => collator.compare(a.name, b.name))
      .map(({ code }) => option(code))
    select.replaceChildren(
      h("option", { value: "", text: "choose" }),
      h("optgroup", { label: t("countriesSuggested") }, ...suggested.map(option)),
      h("optgroup", { label: t("countriesAll") }, ...others)
    )
    select.value = value
  }

  /** Switches every text on the page, forms included, without losing what the guest typed. */
  const applyLanguage = () => {
    document.documentElement.lang = state.lang
    document.title = state.view === null ? t("title") : `${t("title")} · ${state.view.property.name}`
    for (const el of document.querySelectorAll("[data-i18n]")) {
      el.textContent = t(el.dataset.i18n, el.dataset.i18nArgs === undefined ? undefined : JSON.parse(el.dataset.i18nArgs))
    }
    for (const select of document.querySelectorAll("select[data-countries]")) fillCountries(select)
    ui.toggle.textContent = t("langToggle")
    // The button names the other language in that language.
    ui.toggle.lang = state.lang === "es" ? "en" : "es"
  }

  const switchLanguage = () => {
    state.lang = state.lang === "es" ? "en" : "es"
    try {
      localStorage.setItem("checkin-lang", state.lang)
    } catch {
      // not kept across visits; the URL still says it
    }
    const url = new URL(location.href)
    if (state.lang === "en") url.searchParams.set("lang", "en")
    else url.searchParams.delete("lang")
    history.replaceState(null, "", url)
    applyLanguage()
  }

  // ------------------------------------------------------------------------------------------------------
  // DOM helpers

  /**
   * `h("p", {class: "x", text: "key"}, child…)`: `text` is a translation key (or `[key, args]`); `on…` are
   * listeners; `true` sets a boolean attribute; `null`, `undefined` and `false` are skipped. Children may be
   * nodes or strings (inserted as text, never parsed).
   */
  function h(tag, props = {}, ...children) {
    const el = document.createElement(tag)
    for (const [name, value] of Object.entries(props)) {
      if (value === null || value === undefined || value === false) continue
      if (name === "text") Array.isArray(value) ? setText(el, value[0], value[1]) : setText(el, value)
      else if (name === "class") el.className = value
      else if (name.startsWith("on")) el.addEventListener(name.slice(2), value)
      else el.setAttribute(name, value === true ? "" : String(value))
    }
    el.append(...children.filter((child) => child !== null && child !== undefined && child !== false))
    return el
  }

  /** Tells screen readers what just happened, without moving focus. */
  const announce = (key) => {
    ui.status.textContent = ""
    // a fresh text node in the next frame, so the same message twice is still announced
    requestAnimationFrame(() => setText(ui.status, key))
  }

  const focusHeading = () => ui.step.querySelector("h2")?.focus()

  // ------------------------------------------------------------------------------------------------------
  // The JSON API

  /** `{status, body}`; status 0 when the network failed. Never throws. */
  const call = async (method, path, body) => {
    const init = { method, headers: { accept: "application/json" }, cache: "no-store", credentials: "same-origin" }
    if (body instanceof FormData) init.body = body
    else if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers["content-type"] = "application/json"
    }
    let response
    try {
      response = await fetch(`/api/checkin/${encodeURIComponent(token)}${path}`, init)
    } catch {
      return { status: 0, body: null }
    }
    let json = null
    try {
      json = await response.json()
    } catch {
      // not JSON (a proxy's error page…): handled by status
    }
    return { status: response.status, body: json }
  }

  /** Reads the stay again; on failure shows the end state for that failure. */
  const load = async () => {
    const res = await call("GET", "")
    if (res.status === 200 && res.body !== null) {
      state.view = res.body
      return true
    }
    showFatal(res)
    return false
  }

  const reloadAndRender = async (announcement) => {
    if (await load()) {
      render()
      focusHeading()
      if (announcement !== undefined) announce(announcement)
    }
  }

  // ------------------------------------------------------------------------------------------------------
  // Which step comes next

  const nextStep = (view) => {
    // Where photos are required, a guest whose details are in stays unregistered until its front photo is.
    const waiting = view.property.requires_document_photos ? view.guests.filter((guest) => !guest.registered) : []
    const missing = view.guests_count - view.guests.length
    const photo = waiting.find((guest) => !state.deferred.has(guest.guest_id)) ?? (missing > 0 ? undefined : waiting[0])
    if (photo !== undefined) return { kind: "photo", guest: photo, canDefer: missing > 0 }
    if (missing > 0) return { kind: "guest", number: view.guests.length + 1, first: view.guests.length === 0 }
    if (view.property.requires_contract_signature && !view.contract_signed) return { kind: "contract" }
    return { kind: "done" }
  }

  const render = () => {
    const view = state.view
    ui.brand.removeAttribute("data-i18n")
    ui.brand.textContent = view.property.name
    setText(ui.stay, "stay", { property: view.property.name, check_in: { date: view.check_in }, check_out: { date: view.check_out } })
    renderProgress(view)
    const step = nextStep(view)
    const content = step.kind === "photo"
      ? photoStep(step)
      : step.kind === "guest"
      ? guestStep(step)
      : step.kind === "contract"
      ? contractStep()
      : doneStep()
    ui.step.replaceChildren(content)
    applyLanguage()
  }

  /** Names and registered/missing only (issue 6: nothing else of one guest is shown to another). */
  const renderProgress = (view) => {
    ui.progress.hidden = false
    const [done, total] = [view.guests_registered, view.guests_count]
    // "Huésped registrado" / "2 de 3 huéspedes registrados": never "1 de 1 huéspedes".
    setText(ui.summary, total === 1 && done === 0 ? "progressWaitingOne" : "progressSummary", { done, total, count: total })
    const items = []
    for (let i = 0; i < view.guests_count; i++) {
      const guest = view.guests[i]
      const done = guest !== undefined && guest.registered
      const status = guest === undefined ? "statusMissing" : done ? "statusRegistered" : "statusPhotoMissing"
      items.push(h(
        "li",
        { class: `progress-item ${done ? "is-done" : "is-open"}` },
        h(
          "span",
          { class: "progress-name" },
          guest === undefined ? h("span", { text: ["guestSlot", { n: i + 1, count: view.guests_count }] }) : `${guest.nombre} ${guest.apellido}`,
          guest?.is_primary ? h("span", { class: "tag", text: "primaryGuest" }) : null
        ),
        h("span", { class: "progress-status", text: status })
      ))
    }
    if (view.property.requires_contract_signature) {
      items.push(h(
        "li",
        { class: `progress-item ${view.contract_signed ? "is-done" : "is-open"}` },
        h("span", { class: "progress-name", text: "contractLine" }),
        h("span", { class: "progress-status", text: view.contract_signed ? "statusSigned" : "statusUnsigned" })
      ))
    }
    ui.list.replaceChildren(...items)
  }

  // ------------------------------------------------------------------------------------------------------
  // Forms: fields, errors, submission

  /**
   * A labelled field: label, optional hint, error slot (empty until needed), then the control. The control is
   * described by its hint, and by its error while it has one.
   */
  const field = (name, control, { required = false, hint = false } = {}) => {
    control.id = `f-${name}`
    control.name = name
    control.required = required
    if (hint) control.setAttribute("aria-describedby", `f-${name}-hint`)
    const marker = h("span", { class: "required-marker", "aria-hidden": "true", hidden: !required }, " *")
    return h(
      "div",
      { class: "field", "data-field": name },
      h("label", { for: control.id }, h("span", { text: `field_${name}` }), marker),
      hint ? h("p", { class: "hint", id: `f-${name}-hint`, text: `hint_${name}` }) : null,
      h("p", { class: "field-error", id: `f-${name}-error`, hidden: true }),
      control
    )
  }

  /** A checkbox: the control before its label. */
  const checkboxField = (name, { required = false } = {}) => {
    const control = h("input", { type: "checkbox", id: `f-${name}`, name, value: "true", required })
    return h(
      "div",
      { class: "field field-checkbox", "data-field": name },
      h("p", { class: "field-error", id: `f-${name}-error`, hidden: true }),
      h("div", { class: "checkbox-row" }, control, h("label", { for: control.id, text: `field_${name}` }))
    )
  }

  const select = (options, extra = {}) =>
    h("select", extra, h("option", { value: "", text: "choose" }), ...options.map(([value, key]) => h("option", { value, text: key })))

  const countrySelect = (autocomplete) => {
    const el = h("select", { "data-countries": "", autocomplete: autocomplete ?? "off" })
    fillCountries(el)
    return el
  }

  const textInput = (props = {}) => h("input", { type: "text", ...props })

  /** The form's error summary (announced) and a place for errors that belong to no field. */
  const formErrors = () =>
    h(
      "div",
      { class: "form-errors", role: "alert", hidden: true },
      h("p", { class: "form-errors-title", text: "errorSummary" }),
      h("ul", { class: "form-errors-list" })
    )

  const setDescribedBy = (control, errorId, on) => {
    const ids = (control.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id !== "" && id !== errorId)
    if (on) ids.push(errorId)
    if (ids.length > 0) control.setAttribute("aria-describedby", ids.join(" "))
    else control.removeAttribute("aria-describedby")
  }

  const setFieldError = (form, name, error) => {
    const control = form.elements.namedItem(name)
    const slot = form.querySelector(`#f-${CSS.escape(name)}-error`)
    if (control === null || slot === null) return false
    const wrapper = slot.closest(".field")
    if (error === undefined) {
      slot.hidden = true
      slot.textContent = ""
      delete slot.dataset.i18n
      control.removeAttribute("aria-invalid")
      wrapper.classList.remove("has-error")
    } else {
      setText(slot, error[0], error[1])
      slot.hidden = false
      control.setAttribute("aria-invalid", "true")
      wrapper.classList.add("has-error")
    }
    setDescribedBy(control, slot.id, error !== undefined)
    return true
  }

  const clearErrors = (form) => {
    for (const slot of form.querySelectorAll(".field-error")) setFieldError(form, slot.id.slice(2, -6), undefined)
    const box = form.querySelector(".form-errors")
    box.hidden = true
    box.querySelector("ul").replaceChildren()
  }

  /**
   * Shows `errors` ({field: [key, args]}) next to their fields, and `general` ([key, args] pairs) in the
   * form's summary; moves focus to the first field in error (or the summary).
   */
  const showErrors = (form, errors, general = []) => {
    clearErrors(form)
    const box = form.querySelector(".form-errors")
    const list = box.querySelector("ul")
    for (const [name, error] of Object.entries(errors)) {
      if (!setFieldError(form, name, error)) general.push(error)
    }
    for (const [key, args] of general) list.append(h("li", { text: [key, args] }))
    box.hidden = false
    const first = form.querySelector("[aria-invalid=\"true\"]")
    if (first !== null) first.focus()
    else box.focus()
  }

  /**
   * After a first failed attempt, a field is checked again as the guest corrects it, so its error goes away
   * as soon as it is fixed.
   */
  const revalidateOnEdit = (form, validate) => {
    const recheck = (event) => {
      const name = event.target.name
      if (!name || event.target.getAttribute("aria-invalid") !== "true") return
      setFieldError(form, name, validate()[name])
      // The summary goes with the last error it summed up.
      const box = form.querySelector(".form-errors")
      if (form.querySelector("[aria-invalid=\"true\"]") === null && box.querySelector("li") === null) box.hidden = true
    }
    form.addEventListener("change", recheck)
    form.addEventListener("input", recheck)
  }

  /** Disables the submit button while `action` runs (no double submissions). */
  const busy = async (form, action) => {
    if (form.dataset.busy === "true") return
    form.dataset.busy = "true"
    const button = form.querySelector("button[type=submit]")
    const label = button.dataset.i18n
    button.disabled = true
    setText(button, "sending")
    try {
      await action()
    } finally {
      form.dataset.busy = "false"
      button.disabled = false
      setText(button, label)
    }
  }

  /**
   * Checks a form the way the server will before sending it: what is wrong shows next to each field, and the
   * form is sent once (`busy`) only when nothing is.
   */
  const submitWhenValid = (form, localErrors, send) => {
    revalidateOnEdit(form, localErrors)
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      const errors = localErrors()
      if (Object.keys(errors).length > 0) return showErrors(form, errors)
      return busy(form, send)
    })
  }

  /**
   * A field the server refused though the page's own rules passed it: the page's words for that field
   * (`err_field_<name>`), else a general one. The server's English `message` is never shown (issue 26 item 3).
   */
  const refusedField = (name) => [`err_field_${name}` in TEXTS.es ? `err_field_${name}` : "err_fieldRefused"]

  /**
   * The server's answer to a failed write, shown where it belongs: `invalid_request` fields next to their
   * inputs (in the page's own words: the client's rule that explains the field, else the field's own refusal),
   * fields the form does not hold named in the summary, a duplicate document next to its number, an expired or
   * cancelled stay as the end state.
   */
  const showFailure = (form, res, localErrors) => {
    const code = res.body?.code
    if (code === "reservation_cancelled") return showFatal(res)
    if (res.status === 0) return showErrors(form, {}, [["err_network"]])
    if (res.status === 429) return showErrors(form, {}, [["err_rateLimited"]])
    if (code === "invalid_request") {
      const local = localErrors()
      const errors = {}
      const general = []
      const others = []
      for (const { field } of res.body.details?.fields ?? []) {
        const name = String(field).split(/[.[]/)[0]
        if (errors[name] !== undefined || others.includes(name)) continue
        if (form.elements.namedItem(name) !== null) errors[name] = local[name] ?? refusedField(name)
        else others.push(name)
      }
      if (others.length > 0) {
        general.push(["err_otherFields", { fields: others.map((name) => `field_${name}` in TEXTS.es ? { key: `field_${name}` } : name) }])
      }
      return showErrors(form, errors, general)
    }
    if (code === "duplicate_document") {
      return showErrors(form, { [res.body.details?.field ?? "numero_documento"]: ["err_duplicate"] })
    }
    if (code === "registration_open") return showErrors(form, {}, [["err_registrationOpen"]])
    if (code === "registration_rejected" || code === "registration_not_found") {
      // The stay moved on meanwhile (another phone entered the last guest), or the link expired: reading the
      // stay again shows the right step, or the expired-link message.
      return reloadAndRender()
    }
    return showErrors(form, {}, [["err_unexpected"]])
  }

  // ------------------------------------------------------------------------------------------------------
  // Step: a guest's details (GuestInput, plus motivo from the first guest)

  const todayIso = () => {
    const now = new Date()
    return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`
  }

  const isCalendarDate = (value) => {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
    if (match === null) return false
    const [year, month, day] = match.slice(1).map(Number)
    const date = new Date(Date.UTC(year, month - 1, day))
    return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  }

  const formValues = (form) => {
    const values = {}
    for (const [name, value] of new FormData(form)) values[name] = typeof value === "string" ? value.trim() : value
    if (typeof values.numero_documento === "string") values.numero_documento = cleanDocumentNumber(values.numero_documento)
    return values
  }

  /** The server's rules for CheckinGuestInput (src/reservations/Reservation.ts), as {field: [key, args]}. */
  const validateGuest = (values, first) => {
    const errors = {}
    const { documentTypes, foreignDocumentTypes, colombianDocumentTypes, countries, motivos } = RULES
    const tipo = values.tipo_documento ?? ""
    if (tipo === "") errors.tipo_documento = ["err_required"]
    else if (!documentTypes.includes(tipo)) errors.tipo_documento = ["err_choice"]
    if (!values.numero_documento) errors.numero_documento = ["err_required"]
    else if (!DOCUMENT_PATTERN.test(values.numero_documento)) errors.numero_documento = ["err_docPattern"]
    for (const name of ["nombre", "apellido", "ciudad_procedencia", "ciudad_residencia"]) {
      if (!values[name]) errors[name] = ["err_required"]
    }
    for (const name of ["nacionalidad", "pais_procedencia", "pais_residencia"]) {
      if (!countries.includes(values[name] ?? "")) errors[name] = ["err_country"]
    }
    const birth = values.fecha_nacimiento ?? ""
    if (birth === "") {
      if (foreignDocumentTypes.includes(tipo)) errors.fecha_nacimiento = ["err_birthRequired", { tipo: { key: `docType_${tipo}` } }]
    } else if (!isCalendarDate(birth)) errors.fecha_nacimiento = ["err_date"]
    else if (birth > todayIso()) errors.fecha_nacimiento = ["err_dateFuture"]
    if (
      colombianDocumentTypes.includes(tipo) && countries.includes(values.nacionalidad ?? "") && values.nacionalidad !== "CO"
    ) {
      errors.tipo_documento = ["err_colombianDoc", { tipo: { key: `docType_${tipo}` } }]
    }
    if (values.email && (values.email.length > RULES.emailMaxLength || !EMAIL.test(values.email))) errors.email = ["err_email"]
    if (first && !values.motivo) errors.motivo = ["err_required"]
    else if (values.motivo && !motivos.includes(values.motivo)) errors.motivo = ["err_choice"]
    return errors
  }

  /** The request body: required fields as typed (trimmed), optional ones only when filled in. */
  const guestBody = (values) => {
    const body = {}
    for (const [name, value] of Object.entries(values)) if (value !== "") body[name] = value
    return body
  }

  /** Where photos are required, what the guest needs before starting, rather than after filling everything in. */
  const photoNotice = () =>
    h(
      "div",
      { class: "notice notice-info", id: "photo-notice" },
      h("p", { class: "notice-title", text: "photoNoticeTitle" }),
      h("p", { text: "photoNoticeText" })
    )

  const guestStep = ({ number, first }) => {
    const view = state.view
    const birth = textInput({ type: "date", max: todayIso(), autocomplete: "bday" })
    const tipo = select(RULES.documentTypes.map((type) => [type, `docType_${type}`]))
    const numero = textInput({ autocomplete: "off", autocapitalize: "characters", spellcheck: "false" })
    // What will be sent is shown once the guest leaves the field: "1.020.345.678" becomes "1020345678".
    numero.addEventListener("change", () => {
      numero.value = cleanDocumentNumber(numero.value)
    })
    const form = h(
      "form",
      { class: "card", novalidate: true, "aria-labelledby": "step-title" },
      h("h2", { id: "step-title", tabindex: "-1", text: ["guestTitle", { n: number, total: view.guests_count, count: view.guests_count }] }),
      view.property.requires_document_photos ? photoNotice() : null,
      h("p", { class: "intro", text: "guestIntro" }),
      formErrors(),
      first
        ? h(
          "fieldset",
          {},
          h("legend", { text: "legendTrip" }),
          field("motivo", select(RULES.motivos.map((motivo) => [motivo, `motivo_${motivo}`])), { required: true, hint: true })
        )
        : null,
      h(
        "fieldset",
        {},
        h("legend", { text: "legendDocument" }),
        field("tipo_documento", tipo, { required: true }),
        field("numero_documento", numero, { required: true, hint: true }),
        field("nombre", textInput({ autocomplete: "given-name" }), { required: true }),
        field("apellido", textInput({ autocomplete: "family-name" }), { required: true }),
        field("nacionalidad", countrySelect(), { required: true }),
        field("fecha_nacimiento", birth, { hint: true })
      ),
      h(
        "fieldset",
        {},
        h("legend", { text: "legendOrigin" }),
        field("pais_procedencia", countrySelect(), { required: true }),
        field("ciudad_procedencia", textInput({ autocomplete: "off" }), { required: true }),
        field("pais_residencia", countrySelect("country"), { required: true }),
        field("ciudad_residencia", textInput({ autocomplete: "address-level2" }), { required: true })
      ),
      h(
        "fieldset",
        {},
        h("legend", { text: "legendContact" }),
        field("email", h("input", { type: "email", autocomplete: "email", inputmode: "email", spellcheck: "false" })),
        field("phone", h("input", { type: "tel", autocomplete: "tel" })),
        field("address", textInput({ autocomplete: "street-address" }))
      ),
      h("button", { type: "submit", class: "primary", text: "saveGuest" })
    )

    // Nationality, origin and residence start as the previous guest's (Colombia for the first): a group mostly
    // shares them. A default stays marked until the guest picks a country.
    for (const name of DEFAULTED_COUNTRIES) {
      const control = form.elements.namedItem(name)
      control.value = state.lastCountries?.[name] ?? HOME_COUNTRY
      control.dataset.defaulted = "true"
      control.addEventListener("change", () => delete control.dataset.defaulted)
    }
    const nationality = form.elements.namedItem("nacionalidad")

    // The birth date becomes required (and marked so) with the document types that need it.
    const birthMarker = form.querySelector("[data-field=fecha_nacimiento] .required-marker")
    tipo.addEventListener("change", () => {
      const required = RULES.foreignDocumentTypes.includes(tipo.value)
      birth.required = required
      birthMarker.hidden = !required
      // A nationality nobody chose must not make a foreigner Colombian (no SIRE report would be due): with a
      // foreign document an untouched Colombia is cleared, to be chosen; a Colombian document means Colombia.
      if (nationality.dataset.defaulted === "true") {
        if (RULES.colombianDocumentTypes.includes(tipo.value)) nationality.value = HOME_COUNTRY
        else if (required && nationality.value === HOME_COUNTRY) nationality.value = ""
      }
    })

    const localErrors = () => validateGuest(formValues(form), first)
    submitWhenValid(form, localErrors, async () => {
      const values = formValues(form)
      const res = await call("POST", "/guests", guestBody(values))
      if (res.status === 201) {
        state.lastCountries = Object.fromEntries(DEFAULTED_COUNTRIES.map((name) => [name, values[name]]))
        for (const name of DEFAULTED_COUNTRIES) {
          if (!state.countriesChosen.includes(values[name])) state.countriesChosen.push(values[name])
        }
        return reloadAndRender("saved")
      }
      return showFailure(form, res, localErrors)
    })
    return form
  }

  // ------------------------------------------------------------------------------------------------------
  // Step: a guest's document photo (where the property requires photos)

  const sniff = async (file) => {
    const bytes = new Uint8Array(await file.slice(0, 8).arrayBuffer())
    const starts = (...magic) => magic.every((byte, i) => bytes[i] === byte)
    if (starts(0xff, 0xd8, 0xff)) return "image/jpeg"
    if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png"
    if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) return "application/pdf"
    return undefined
  }

  /** Re-encodes a photo as a JPEG, scaled down to MAX_PHOTO_SIDE; rejects if the browser cannot decode it. */
  const toJpeg = async (file) => {
    const bitmap = await createImageBitmap(file)
    const scale = Math.min(1, MAX_PHOTO_SIDE / Math.max(bitmap.width, bitmap.height))
    const canvas = h("canvas", {})
    canvas.width = Math.max(1, Math.round(bitmap.width * scale))
    canvas.height = Math.max(1, Math.round(bitmap.height * scale))
    canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height)
    bitmap.close()
    const blob = await new Promise((resolve, reject) =>
      canvas.toBlob((out) => out === null ? reject(new Error("encoding failed")) : resolve(out), "image/jpeg", 0.85)
    )
    return new File([blob], `${file.name.replace(/\.[^.]*$/, "") || "document"}.jpg`, { type: "image/jpeg" })
  }

  /**
   * What the server accepts (JPEG, PNG or PDF by content, at most 10 MB), as `{file}` or `{error}`. A photo in
   * another format the browser can read (HEIC, WebP…) or over the size is converted to a JPEG here, so a
   * phone's camera never produces a file the server refuses.
   */
  const acceptedFile = async (file) => {
    const kind = await sniff(file)
    if (kind !== undefined && file.size <= RULES.maxDocumentBytes) return { file }
    const failure = { error: [kind === undefined ? "err_fileType" : "err_fileSize"] }
    if (kind === "application/pdf" || !file.type.startsWith("image/")) return failure
    try {
      const jpeg = await toJpeg(file)
      return jpeg.size <= RULES.maxDocumentBytes ? { file: jpeg } : failure
    } catch {
      return failure
    }
  }

  /** Shows a thumbnail of a chosen photo (a blob: URL, which the CSP allows for images). */
  const withPreview = (input) => {
    const preview = h("img", { class: "preview", alt: "", hidden: true })
    input.addEventListener("change", () => {
      if (preview.src) URL.revokeObjectURL(preview.src)
      preview.removeAttribute("src")
      preview.hidden = true
      const file = input.files?.[0]
      if (file !== undefined && file.type.startsWith("image/")) {
        preview.src = URL.createObjectURL(file)
        preview.hidden = false
      }
    })
    preview.addEventListener("error", () => {
      preview.hidden = true
    })
    return preview
  }

  /**
   * A photo field: its title, hint and error, then a label styled as a button in the page's own words (the
   * browser's "Choose File" is in the browser's language and unstyled), the chosen file's name and a preview.
   * The native input stays in the page, visually hidden but focusable and named by the title and the button;
   * `capture` opens the camera on phones.
   */
  const photoField = (name, { required = false, hint = false } = {}) => {
    const id = `f-${name}`
    const input = h("input", {
      type: "file",
      id,
      name,
      class: "sr-only file-input",
      accept: "image/*",
      capture: "environment",
      required,
      "aria-labelledby": `${id}-title ${id}-button`
    })
    const chosen = h("p", { class: "file-name", id: `${id}-chosen`, text: "noFileChosen" })
    setDescribedBy(input, `${id}-chosen`, true)
    if (hint) setDescribedBy(input, `${id}-hint`, true)
    input.addEventListener("change", () => {
      const file = input.files?.[0]
      if (file === undefined) setText(chosen, "noFileChosen")
      else {
        delete chosen.dataset.i18n
        chosen.textContent = file.name
      }
    })
    return h(
      "div",
      { class: "field field-file", "data-field": name },
      h(
        "p",
        { class: "field-title", id: `${id}-title` },
        h("span", { text: `field_${name}` }),
        h("span", { class: "required-marker", "aria-hidden": "true", hidden: !required }, " *")
      ),
      hint ? h("p", { class: "hint", id: `${id}-hint`, text: `hint_${name}` }) : null,
      h("p", { class: "field-error", id: `${id}-error`, hidden: true }),
      input,
      h("label", { for: id, class: "file-button", id: `${id}-button` }, h("span", { text: "choosePhoto" })),
      chosen,
      withPreview(input)
    )
  }

  const photoStep = ({ guest, canDefer }) => {
    const frontField = photoField("front", { required: true, hint: true })
    const backField = photoField("back")
    const front = frontField.querySelector("input")
    const back = backField.querySelector("input")
    const form = h(
      "form",
      { class: "card", novalidate: true, "aria-labelledby": "step-title" },
      h("h2", { id: "step-title", tabindex: "-1", text: ["photoTitle", { name: `${guest.nombre} ${guest.apellido}` }] }),
      h("p", { class: "intro", text: "photoIntro" }),
      formErrors(),
      frontField,
      backField,
      h("button", { type: "submit", class: "primary", text: "uploadPhoto" }),
      canDefer
        ? h("button", {
          type: "button",
          class: "secondary",
          text: "photoLater",
          onclick: () => {
            state.deferred.add(guest.guest_id)
            render()
            focusHeading()
          }
        })
        : null
    )

    const localErrors = () => (front.files?.length ?? 0) === 0 ? { front: ["err_fileRequired"] } : {}
    revalidateOnEdit(form, localErrors)
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      return busy(form, async () => {
        const errors = localErrors()
        const chosen = { front: front.files?.[0], back: back.files?.[0] }
        const data = new FormData()
        for (const [side, file] of Object.entries(chosen)) {
          if (file === undefined) continue
          const result = await acceptedFile(file)
          if (result.error !== undefined) errors[side] = result.error
          else data.append(side, result.file, result.file.name)
        }
        if (Object.keys(errors).length > 0) return showErrors(form, errors)
        const res = await call("PUT", `/guests/${encodeURIComponent(guest.guest_id)}/document`, data)
        if (res.status === 200) return reloadAndRender("photoSaved")
        return showFailure(form, res, localErrors)
      })
    })
    return form
  }

  // ------------------------------------------------------------------------------------------------------
  // Step: the contract (where the property requires one), once every guest is registered

  const contractStep = () => {
    const view = state.view
    // Pre-filled with the main guest's name as the page knows it (the first guest registered); it stays editable
    // for someone else of the group to sign.
    const primary = view.guests.find((guest) => guest.is_primary) ?? view.guests[0]
    const signer = textInput({ autocomplete: "name", maxlength: String(RULES.signerNameMaxLength) })
    if (primary !== undefined) signer.value = `${primary.nombre} ${primary.apellido}`.slice(0, RULES.signerNameMaxLength)
    const args = { property: view.property.name, check_in: { date: view.check_in }, check_out: { date: view.check_out } }
    const form = h(
      "form",
      { class: "card", novalidate: true, "aria-labelledby": "step-title" },
      h("h2", { id: "step-title", tabindex: "-1", text: "contractTitle" }),
      h("p", { class: "intro", text: ["contractIntro", args] }),
      h(
        "div",
        { class: "contract-text" },
        h("p", { text: ["contractText1", args] }),
        h("p", { text: "contractText2" }),
        h("p", { text: "contractText3" })
      ),
      formErrors(),
      field("signer_name", signer, { required: true, hint: true }),
      checkboxField("accepted", { required: true }),
      h("button", { type: "submit", class: "primary", text: "signContract" })
    )
    const localErrors = () => {
      const errors = {}
      const name = form.elements.namedItem("signer_name").value
      if (!/\S/.test(name)) errors.signer_name = ["err_signerName"]
      else if (name.length > RULES.signerNameMaxLength) errors.signer_name = ["err_tooLong", { max: RULES.signerNameMaxLength }]
      if (!form.elements.namedItem("accepted").checked) errors.accepted = ["err_accept"]
      return errors
    }
    submitWhenValid(form, localErrors, async () => {
      const signer_name = form.elements.namedItem("signer_name").value.trim()
      const res = await call("POST", "/contract", { signer_name, accepted: true })
      if (res.status === 200) return reloadAndRender("contractSigned")
      return showFailure(form, res, localErrors)
    })
    return form
  }

  // ------------------------------------------------------------------------------------------------------
  // End states

  const doneStep = () =>
    h(
      "div",
      { class: "card card-done" },
      h("span", { class: "done-mark", "aria-hidden": "true" }, "✓"),
      h("h2", { id: "step-title", tabindex: "-1", text: "doneTitle" }),
      h("p", { text: ["doneText", { count: state.view.guests_count }] }),
      state.view.property.requires_contract_signature && state.view.contract_signed ? h("p", { text: "doneSigned" }) : null
    )

  /** An unknown or expired link, a cancelled stay, or an answer the page cannot use. */
  const showFatal = (res) => {
    const code = res.body?.code
    const [title, text] = code === "registration_not_found"
      ? ["notFoundTitle", "notFoundText"]
      : code === "reservation_cancelled"
      ? ["cancelledTitle", "cancelledText"]
      : ["errorTitle", res.status === 0 ? "err_network" : res.status === 429 ? "err_rateLimited" : "err_unexpected"]
    const retryable = title === "errorTitle"
    ui.progress.hidden = true
    ui.step.replaceChildren(h(
      "div",
      { class: "card card-fatal" },
      h("h2", { id: "step-title", tabindex: "-1", text: title }),
      h("p", { text }),
      retryable ? h("button", { type: "button", class: "primary", text: "retry", onclick: () => reloadAndRender() }) : null
    ))
    applyLanguage()
    focusHeading()
  }

  // ------------------------------------------------------------------------------------------------------

  ui.toggle.addEventListener("click", switchLanguage)
  applyLanguage()
  load().then((ok) => {
    if (ok) render()
  })
})()
