import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { deflateSync } from "node:zlib"
import type { Browser, BrowserContextOptions, Page } from "playwright-core"
import { CONTENT_SECURITY_POLICY } from "../../src/checkin/Page.ts"
import { admin, call } from "../support/app.ts"
import { launchBrowser, saveScreenshot, seriousViolations } from "../support/browser.ts"
import { appFixture } from "../support/fixture.ts"
import { JOHN_SMITH, reservationBody } from "../support/guests.ts"

/**
 * The guest check-in page (design §5; issue 6, items 2, 4 and 5) in real headless Chromium at a phone's size,
 * against the real app: filled in end to end, validation errors shown next to their fields, axe-core run on
 * every step, the page working under its own CSP, and its security headers.
 */
const f = appFixture()
let browser: Browser
/** The English run's browser, started in English as an English-speaking guest's would be. */
let englishBrowser: Browser

beforeAll(async () => {
  browser = await launchBrowser({ lang: "es-CO" })
  englishBrowser = await launchBrowser({ lang: "en-US" })
})
afterAll(async () => {
  await browser?.close()
  await englishBrowser?.close()
})
/** A phone's screen; the browser's locale (date inputs, Accept-Language) follows the page's language. */
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, locale: "es-CO" }
const PHONE_EN: BrowserContextOptions = { ...PHONE, locale: "en-US" }

// -------------------------------------------------------------------------------------------------------------
// Helpers

/** A reservation on `propertyId` made by the partner API with the test key; its check-in path and ids. */
const createStay = async (propertyId: string, guests_count = 2) => {
  const res = await call(f.app, "POST", "/api/partners/reservations", {
    key: f.account.testKey,
    json: reservationBody(propertyId, { guests_count, guest_name: "Ana Pérez Gómez" })
  })
  expect(res.status).toBe(201)
  const url = new URL(res.body.checkin_url as string)
  return { path: url.pathname, token: url.pathname.split("/")[2]!, externalId: res.body.external_id as string }
}

const registration = async (externalId: string) =>
  (await call(f.app, "GET", `/api/partners/registrations?external_id=${externalId}&include=guests`, { key: f.account.testKey }))
    .body

/** A property of the test environment that requires document photos and a signed contract. */
let strictProperty: string
const photosAndContract = async () => {
  strictProperty ??= (await admin(f.app, (c) =>
    c.CreateProperty({
      account_id: f.account.accountId,
      name: "Hotel Casa Colonial",
      environment: "test",
      requires_contract_signature: true,
      requires_document_photos: true
    }))).property_id
  return strictProperty
}

/**
 * A context for axe: its script is injected into the page, which the page's own CSP (no foreign script) would
 * refuse, so CSP is bypassed here only. The page under its real CSP is checked in a context without bypass.
 */
const axeContext = () => browser.newContext({ ...PHONE, bypassCSP: true })

/** docs/screenshots/checkin-<name>.png, written only with UPDATE_SCREENSHOTS=1. */
const screenshot = (page: Page, name: string, fullPage = true) => saveScreenshot(page, `checkin-${name}`, { fullPage })

const heading = (page: Page, name: string) => page.getByRole("heading", { level: 2, name, exact: true }).waitFor({ timeout: 15_000 })

/** The text of a field's error slot, or null while it shows none. */
const fieldError = (page: Page, field: string) =>
  page.evaluate((name) => {
    const slot = document.getElementById(`f-${name}-error`)
    return slot === null || slot.hidden ? null : slot.textContent
  }, field)

/** How a field exposes its error to assistive technology. */
const fieldState = (page: Page, field: string) =>
  page.evaluate((name) => {
    const control = document.getElementById(`f-${name}`)!
    return {
      invalid: control.getAttribute("aria-invalid"),
      describedBy: (control.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id !== ""),
      focused: document.activeElement === control
    }
  }, field)

interface GuestFill {
  readonly motivo?: string
  readonly tipo_documento: string
  readonly numero_documento: string
  readonly nombre: string
  readonly apellido: string
  readonly nacionalidad: string
  readonly fecha_nacimiento?: string
  readonly procedencia: readonly [string, string]
  readonly residencia: readonly [string, string]
  readonly email?: string
}

const ANA: GuestFill = {
  motivo: "Trabajo",
  tipo_documento: "C.C",
  numero_documento: "1020304050",
  nombre: "Ana",
  apellido: "Pérez Gómez",
  nacionalidad: "CO",
  procedencia: ["CO", "Medellín"],
  residencia: ["CO", "Medellín"],
  email: "ana@example.co"
}

const JOHN: GuestFill = {
  ...JOHN_SMITH,
  procedencia: ["US", "Miami"],
  residencia: ["US", "Miami"]
}

const fillGuest = async (page: Page, guest: GuestFill) => {
  if (guest.motivo !== undefined) await page.selectOption("#f-motivo", guest.motivo)
  await page.selectOption("#f-tipo_documento", guest.tipo_documento)
  await page.fill("#f-numero_documento", guest.numero_documento)
  await page.fill("#f-nombre", guest.nombre)
  await page.fill("#f-apellido", guest.apellido)
  await page.selectOption("#f-nacionalidad", guest.nacionalidad)
  await page.fill("#f-fecha_nacimiento", guest.fecha_nacimiento ?? "")
  await page.selectOption("#f-pais_procedencia", guest.procedencia[0])
  await page.fill("#f-ciudad_procedencia", guest.procedencia[1])
  await page.selectOption("#f-pais_residencia", guest.residencia[0])
  await page.fill("#f-ciudad_residencia", guest.residencia[1])
  await page.fill("#f-email", guest.email ?? "")
}

const submit = (page: Page) => page.click("form button[type=submit]")

/** A country list's option values, in order (the empty "Seleccione…" first). */
const countryOptions = (page: Page, field: string) =>
  page.$$eval(`#f-${field} option`, (options) => options.map((option) => (option as HTMLOptionElement).value))

/** The values of the three country lists a guest's form fills in by default. */
const countryValues = async (page: Page) => ({
  nacionalidad: await page.inputValue("#f-nacionalidad"),
  pais_procedencia: await page.inputValue("#f-pais_procedencia"),
  pais_residencia: await page.inputValue("#f-pais_residencia")
})

// A real PNG (not just its magic number): an identity card drawn in flat colours, for the photo steps.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (bytes: Uint8Array) => {
  let c = 0xffffffff
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const pngChunk = (type: string, data: Uint8Array) => {
  const body = Buffer.concat([Buffer.from(type, "ascii"), data])
  const out = Buffer.alloc(body.length + 8)
  out.writeUInt32BE(data.length, 0)
  body.copy(out, 4)
  out.writeUInt32BE(crc32(body), body.length + 4)
  return out
}
const documentPng = (accent: readonly [number, number, number]): Buffer => {
  const [width, height] = [320, 200]
  const raw = Buffer.alloc((width * 3 + 1) * height)
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0 // filter: none
    for (let x = 0; x < width; x++) {
      const header = y < 36
      const photo = x >= 20 && x < 110 && y >= 56 && y < 176
      const line = x >= 130 && x < 300 && [70, 100, 130, 160].some((top) => y >= top && y < top + 8)
      const rgb = header ? accent : photo ? [150, 160, 175] : line ? [90, 98, 110] : [236, 240, 246]
      raw.set(rgb, y * (width * 3 + 1) + 1 + x * 3)
    }
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8) // 8-bit RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(raw)),
    pngChunk("IEND", new Uint8Array())
  ])
}

// -------------------------------------------------------------------------------------------------------------

describe("guest check-in page (design §5, issue 6)", () => {
  test("a two-guest stay, one foreign, photos and contract required, filled in end to end on a phone: compliant", async () => {
    const stay = await createStay(await photosAndContract())
    const context = await axeContext()
    const page = await context.newPage()
    const pageErrors: Array<string> = []
    page.on("pageerror", (error) => pageErrors.push(error.message))
    const axeByStep: Record<string, Array<string>> = {}
    const check = async (step: string) => {
      axeByStep[step] = await seriousViolations(page)
    }

    // 1. The link as the partner sent it: Spanish, progress, the first guest's form with the trip's motivo.
    await page.goto(`${f.app.baseUrl}${stay.path}`)
    await heading(page, "Huésped 1 de 2")
    expect(await page.getAttribute("html", "lang")).toBe("es")
    expect(await page.textContent("#progress-summary")).toBe("0 de 2 huéspedes registrados")
    expect(await page.locator("#progress-list li").allTextContents()).toEqual([
      "Huésped 1Pendiente",
      "Huésped 2Pendiente",
      "Contrato de hospedajeSin firmar"
    ])
    expect(await page.isVisible("#f-motivo")).toBe(true)
    // Mobile first: nothing wider than the phone's screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await check("start")
    await screenshot(page, "1-start", false)

    // 2. Guest 1, Colombian with a cédula typed as printed, with dots (issue 26 item 5): cleaned, not refused.
    await fillGuest(page, { ...ANA, numero_documento: "1.020.304.050" })
    expect(await page.inputValue("#f-numero_documento")).toBe("1020304050")
    await check("guest")
    await screenshot(page, "2-guest")
    const sent = page.waitForRequest((request) => request.method() === "POST" && request.url().endsWith("/guests"))
    await submit(page)
    expect(JSON.parse((await sent).postData()!).numero_documento).toBe("1020304050")

    // 4. Photos are required: the front of Ana's cédula, as the phone's camera would give it, through the
    //    page's own button (issue 26 item 5).
    await heading(page, "Foto del documento de Ana Pérez Gómez")
    const front = page.locator("#f-front")
    expect(await front.getAttribute("accept")).toBe("image/*")
    expect(await front.getAttribute("capture")).toBe("environment")
    const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.click("label[for=f-front]")])
    await chooser.setFiles({ name: "cedula.png", mimeType: "image/png", buffer: documentPng([11, 83, 148]) })
    await page.locator("img.preview").first().waitFor({ state: "visible" })
    expect(await page.textContent("#f-front-chosen")).toBe("cedula.png")
    await check("photo")
    await screenshot(page, "4-photo")
    await submit(page)

    // 3. Guest 2, foreign: a passport without birth date and a document number with a dash is refused
    //    before it is sent, each error next to its field.
    await heading(page, "Huésped 2 de 2")
    expect(await page.locator("#progress-list li").allTextContents()).toEqual([
      "Ana Pérez GómeztitularRegistrado",
      "Huésped 2Pendiente",
      "Contrato de hospedajeSin firmar"
    ])
    expect(await page.isVisible("#f-motivo")).toBe(false)
    // Guest 1's personal data is not on guest 2's page: names and progress only.
    const html = await page.content()
    for (const secret of ["1020304050", "Medellín", "ana@example.co"]) expect(html).not.toContain(secret)
    await fillGuest(page, { ...JOHN, numero_documento: "AB_123", fecha_nacimiento: "" })
    await submit(page)
    await page.locator(".form-errors").waitFor({ state: "visible" })
    expect(await fieldError(page, "numero_documento")).toBe("Use solo letras y números.")
    expect(await fieldError(page, "fecha_nacimiento")).toBe("Es obligatoria con Pasaporte.")
    expect(await fieldState(page, "numero_documento")).toEqual({
      invalid: "true",
      describedBy: ["f-numero_documento-hint", "f-numero_documento-error"],
      focused: true
    })
    expect(await fieldState(page, "fecha_nacimiento")).toMatchObject({ invalid: "true", describedBy: expect.arrayContaining(["f-fecha_nacimiento-error"]) })
    expect(await fieldError(page, "nombre")).toBeNull()
    await check("errors")
    await screenshot(page, "3-errors")
    // Fixed, the errors go away as the guest types.
    await page.fill("#f-numero_documento", JOHN.numero_documento)
    expect(await fieldError(page, "numero_documento")).toBeNull()
    await page.fill("#f-fecha_nacimiento", JOHN.fecha_nacimiento!)
    await submit(page)

    await heading(page, "Foto del documento de John Smith")
    await page.setInputFiles("#f-front", { name: "passport.png", mimeType: "image/png", buffer: documentPng([120, 30, 40]) })
    await submit(page)

    // 5. Every guest is in: the contract, with a typed name and an explicit acceptance.
    await heading(page, "Contrato de hospedaje")
    expect(await page.textContent("#progress-summary")).toBe("2 de 2 huéspedes registrados")
    expect(await page.textContent(".contract-text")).toContain("Hotel Casa Colonial")
    // The signer's name comes filled in with the main guest's (issue 26 item 5).
    expect(await page.inputValue("#f-signer_name")).toBe("Ana Pérez Gómez")
    await submit(page)
    expect(await fieldError(page, "accepted")).toBe("Marque la casilla para aceptar el contrato.")
    await page.check("#f-accepted")
    expect(await fieldError(page, "accepted")).toBeNull()
    expect(await page.isVisible(".form-errors")).toBe(false)
    await check("contract")
    await screenshot(page, "5-contract")
    await submit(page)

    // 6. The end state.
    await heading(page, "Registro completo")
    expect(await page.textContent("#step")).toContain("El contrato de hospedaje quedó firmado.")
    expect(await page.locator("#progress-list li").allTextContents()).toEqual([
      "Ana Pérez GómeztitularRegistrado",
      "John SmithRegistrado",
      "Contrato de hospedajeFirmado"
    ])
    await check("done")
    await screenshot(page, "6-done")

    expect(axeByStep).toEqual({ start: [], guest: [], photo: [], errors: [], contract: [], done: [] })
    expect(pageErrors).toEqual([])
    await context.close()

    // The partner sees the stay registered, signed and (test key) reported at once.
    const detail = await registration(stay.externalId)
    expect(detail).toMatchObject({ status: "compliant", checkin_status: "completed", guests_registered: 2 })
    expect(detail.guests.map((g: Record<string, unknown>) => [g.nombre, g.nacionalidad, g.fecha_nacimiento, g.is_primary, g.document_uploaded]))
      .toEqual([
        ["Ana", "CO", null, true, true],
        ["John", "US", "1985-04-12", false, true]
      ])
    const [row] = await f.db.query<{ motivo: string; contract_signer: string }>(
      "SELECT motivo, contract_signer FROM reservations WHERE external_id = $1",
      [stay.externalId]
    )
    expect(row).toEqual({ motivo: "Trabajo", contract_signer: "Ana Pérez Gómez" })
  }, 90_000)

  test("under its own CSP (no bypass), in English, with a language switch that keeps what was typed: works, no violation", async () => {
    const stay = await createStay(await photosAndContract())
    const context = await englishBrowser.newContext(PHONE_EN)
    // Recorded from the first script on, before the page's own.
    await context.addInitScript(() => {
      const seen: Array<string> = ((window as any).__cspViolations = [])
      document.addEventListener("securitypolicyviolation", (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`))
    })
    const page = await context.newPage()
    const consoleErrors: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") consoleErrors.push(message.text())
    })
    const pageErrors: Array<string> = []
    page.on("pageerror", (error) => pageErrors.push(error.message))

    await page.goto(`${f.app.baseUrl}${stay.path}?lang=en`)
    await heading(page, "Guest 1 of 2")
    expect(await page.getAttribute("html", "lang")).toBe("en")
    expect(await page.textContent("label[for=f-motivo]")).toBe("Reason for the trip *")
    expect(await page.locator("#f-motivo option[value=Trabajo]").textContent()).toBe("Work")

    // Switching language in the middle of the form keeps what was typed and translates every label.
    await page.fill("#f-nombre", "John")
    await page.click("#lang-toggle")
    expect(await page.getAttribute("html", "lang")).toBe("es")
    expect(await page.textContent("label[for=f-nombre]")).toBe("Nombres *")
    expect(await page.locator("#f-nacionalidad option[value=US]").textContent()).toBe("Estados Unidos")
    expect(await page.inputValue("#f-nombre")).toBe("John")
    await page.click("#lang-toggle")
    expect(await page.textContent("label[for=f-nombre]")).toBe("Given names *")

    await fillGuest(page, { ...JOHN, motivo: "Vacaciones, recreo y ocio" })
    await submit(page)
    await heading(page, "Document photo for John Smith")
    // A photo in a format the server does not take (WebP here; HEIC on some phones) is turned into a JPEG by the page.
    const webp = await page.evaluate(async () => {
      const canvas = document.createElement("canvas")
      canvas.width = 160
      canvas.height = 100
      const context2d = canvas.getContext("2d")!
      context2d.fillStyle = "#336699"
      context2d.fillRect(0, 0, 160, 100)
      const blob = await new Promise<Blob>((resolve) => canvas.toBlob((out) => resolve(out!), "image/webp"))
      return Array.from(new Uint8Array(await blob.arrayBuffer()))
    })
    await page.setInputFiles("#f-front", { name: "passport.webp", mimeType: "image/webp", buffer: Buffer.from(webp) })
    await page.locator("img.preview").first().waitFor({ state: "visible" })
    await submit(page)

    await heading(page, "Guest 2 of 2")
    const { motivo: _, ...anaWithoutMotivo } = ANA
    await fillGuest(page, anaWithoutMotivo)
    await submit(page)
    await heading(page, "Document photo for Ana Pérez Gómez")
    await page.setInputFiles("#f-front", { name: "cedula.png", mimeType: "image/png", buffer: documentPng([11, 83, 148]) })
    await page.setInputFiles("#f-back", { name: "cedula-back.png", mimeType: "image/png", buffer: documentPng([60, 60, 60]) })
    await submit(page)

    await heading(page, "Accommodation contract")
    expect(await page.inputValue("#f-signer_name")).toBe("John Smith")
    await page.fill("#f-signer_name", "John Smith")
    await page.check("#f-accepted")
    await submit(page)
    await heading(page, "Check-in complete")
    expect(await page.title()).toBe("Guest check-in · Hotel Casa Colonial")

    expect(await page.evaluate(() => (window as any).__cspViolations)).toEqual([])
    expect(consoleErrors).toEqual([])
    expect(pageErrors).toEqual([])
    await context.close()

    const detail = await registration(stay.externalId)
    expect(detail).toMatchObject({ status: "compliant", guests_registered: 2 })
    const documents = await f.db.query<{ nombre: string; side: string; content_type: string }>(
      `SELECT g.nombre, d.side, d.content_type FROM guest_documents d JOIN guests g ON g.id = d.guest_id
       JOIN reservations r ON r.id = g.reservation_id WHERE r.external_id = $1 ORDER BY g.position, d.side DESC`,
      [stay.externalId]
    )
    expect(documents).toEqual([
      { nombre: "John", side: "front", content_type: "image/jpeg" },
      { nombre: "Ana", side: "front", content_type: "image/png" },
      { nombre: "Ana", side: "back", content_type: "image/png" }
    ])
  }, 90_000)

  test("server errors are shown next to their field: invalid_request fields and a duplicate document", async () => {
    const stay = await createStay(f.account.testProperties[0]!.property_id)
    const context = await axeContext()
    const page = await context.newPage()
    await page.goto(`${f.app.baseUrl}${stay.path}`)
    await heading(page, "Huésped 1 de 2")
    await fillGuest(page, { ...JOHN, motivo: "Tránsito" })

    // The page's own checks pass; what reaches the server is then altered on the way, so the server's
    // invalid_request (details.fields) is what the page has to show.
    // No photos at this property: no notice about them.
    expect(await page.locator("#photo-notice").count()).toBe(0)
    await page.route("**/api/checkin/*/guests", async (route) => {
      const body = JSON.parse(route.request().postData()!)
      delete body.fecha_nacimiento
      body.numero_documento = "AB_12"
      await route.continue({ postData: JSON.stringify(body) })
    }, { times: 1 })
    await submit(page)
    await page.locator(".form-errors").waitFor({ state: "visible" })
    // What the form holds is valid, so its own rules cannot explain these: each field's own words, never the
    // server's English.
    expect(await fieldError(page, "numero_documento")).toBe("Revise el número: solo letras y números, tal como aparece en el documento.")
    expect(await fieldError(page, "fecha_nacimiento")).toBe(
      "Revise la fecha de nacimiento: es obligatoria con un documento extranjero y no puede ser posterior a hoy."
    )
    expect(await fieldState(page, "numero_documento")).toMatchObject({ invalid: "true", focused: true })
    expect(await fieldState(page, "fecha_nacimiento")).toMatchObject({ invalid: "true" })
    expect(await seriousViolations(page)).toEqual([])

    // Sent again unaltered, guest 1 is in (no photos here); guest 2 with the same number gets 409 duplicate_document.
    await submit(page)
    await heading(page, "Huésped 2 de 2")
    await fillGuest(page, { ...JOHN, nombre: "Jane" })
    await submit(page)
    await page.locator(".form-errors").waitFor({ state: "visible" })
    expect(await fieldError(page, "numero_documento")).toBe("Ya hay un huésped de esta estadía con este número de documento.")
    expect(await fieldState(page, "numero_documento")).toMatchObject({ invalid: "true", focused: true })
    expect(await seriousViolations(page)).toEqual([])

    // A rule only the server knows still shows next to its field, in the page's words; a field the form does not
    // hold is named in the summary by its label.
    await page.route("**/api/checkin/*/guests", (route) =>
      route.fulfill({
        status: 400,
        contentType: "application/json",
        body: JSON.stringify({
          error: "invalid request: ciudad_residencia",
          code: "invalid_request",
          details: {
            fields: [
              { field: "ciudad_residencia", message: "must not contain the NUL character (U+0000)" },
              { field: "signer_name", message: "must be at most 200 characters" },
              { field: "unknown_thing", message: "is not allowed" }
            ]
          }
        })
      }), { times: 1 })
    await page.fill("#f-numero_documento", "CD987654")
    await submit(page)
    await page.waitForFunction(() => !document.getElementById("f-ciudad_residencia-error")!.hidden)
    expect(await fieldError(page, "ciudad_residencia")).toBe(
      "Este dato no fue aceptado: revíselo (sin símbolos especiales ni saltos de línea) e inténtelo de nuevo."
    )
    expect(await fieldError(page, "numero_documento")).toBeNull()
    expect(await page.locator(".form-errors li").allTextContents()).toContain(
      "No se aceptaron estos datos: Nombre completo de quien firma, unknown_thing. Recargue la página e inténtelo de nuevo."
    )
    expect(await page.locator(".form-errors").textContent()).not.toContain("must")

    await submit(page)
    await heading(page, "Registro completo")
    expect((await registration(stay.externalId)).status).toBe("compliant")
    await context.close()
  }, 90_000)

  test("on a phone: photos announced before starting, the page's own photo button, country lists led by Colombia and the previous guest's (issue 26 item 5)", async () => {
    const stay = await createStay(await photosAndContract(), 3)
    const context = await axeContext()
    const page = await context.newPage()
    const pageErrors: Array<string> = []
    page.on("pageerror", (error) => pageErrors.push(error.message))
    await page.goto(`${f.app.baseUrl}${stay.path}`)
    await heading(page, "Huésped 1 de 3")

    // What is needed is said at the top of the form, before the first field.
    const notice = page.locator("#photo-notice")
    expect(await notice.textContent()).toBe(
      "Antes de empezarTenga a mano el documento de identidad de cada huésped: después de sus datos, el establecimiento pide una foto del frente (el reverso es opcional). Puede tomarla con la cámara del teléfono."
    )
    expect((await notice.boundingBox())!.y).toBeLessThan((await page.locator("#f-motivo").boundingBox())!.y)
    expect((await notice.boundingBox())!.y).toBeLessThan(844)

    // Colombia first, then every other country; the first guest's lists start at Colombia.
    expect((await countryOptions(page, "nacionalidad")).slice(0, 3)).toEqual(["", "CO", "AF"])
    expect(await page.$$eval("#f-pais_residencia optgroup", (groups) => groups.map((g) => (g as HTMLOptGroupElement).label)))
      .toEqual(["Sugeridos", "Todos los países"])
    expect(await countryValues(page)).toEqual({ nacionalidad: "CO", pais_procedencia: "CO", pais_residencia: "CO" })
    // A nationality nobody chose does not stay Colombia with a foreign document; a cédula brings it back.
    await page.selectOption("#f-tipo_documento", "Pasaporte")
    expect(await page.inputValue("#f-nacionalidad")).toBe("")
    await page.selectOption("#f-tipo_documento", "C.C")
    expect(await page.inputValue("#f-nacionalidad")).toBe("CO")
    // A country the guest chose is never changed by the page.
    await page.selectOption("#f-nacionalidad", "US")
    await page.selectOption("#f-tipo_documento", "Pasaporte")
    expect(await page.inputValue("#f-nacionalidad")).toBe("US")

    // A passport number typed with a dash and spaces is cleaned, shown and sent clean.
    await fillGuest(page, { ...JOHN, motivo: "Trabajo", numero_documento: "ab-123 456", procedencia: ["PE", "Lima"] })
    expect(await page.inputValue("#f-numero_documento")).toBe("ab123456")
    expect(await fieldError(page, "numero_documento")).toBeNull()
    expect(await seriousViolations(page)).toEqual([])
    await submit(page)

    // The photo step: the page's own button (a label), the native input visually hidden but named.
    await heading(page, "Foto del documento de John Smith")
    const button = page.locator("label.file-button[for=f-front]")
    expect(await button.textContent()).toBe("Tomar o elegir una foto")
    const box = (await button.boundingBox())!
    expect(box.height).toBeGreaterThanOrEqual(44)
    expect(box.width).toBeGreaterThan(300) // the whole width on a phone
    const input = page.locator("#f-front")
    const inputBox = (await input.boundingBox())!
    expect(inputBox.width * inputBox.height).toBeLessThanOrEqual(1)
    expect(await input.evaluate((el) => (el as HTMLInputElement).labels!.length)).toBe(1)
    expect(await page.getByRole("button", { name: "Frente del documento Tomar o elegir una foto" }).count()).toBe(1)
    expect(await page.textContent("#f-front-chosen")).toBe("Aún no ha elegido una foto.")
    // Sent without a photo: the error is next to the field, the focus on the input, the button marked.
    await submit(page)
    expect(await fieldError(page, "front")).toBe("Tome o elija la foto del frente del documento.")
    expect(await fieldState(page, "front")).toMatchObject({ invalid: "true", focused: true })
    expect(await button.evaluate((el) => getComputedStyle(el).outlineStyle)).toBe("solid")
    expect(await seriousViolations(page)).toEqual([])
    const [chooser] = await Promise.all([page.waitForEvent("filechooser"), button.click()])
    expect(chooser.isMultiple()).toBe(false)
    await chooser.setFiles({ name: "pasaporte.png", mimeType: "image/png", buffer: documentPng([120, 30, 40]) })
    expect(await page.textContent("#f-front-chosen")).toBe("pasaporte.png")
    expect(await seriousViolations(page)).toEqual([])
    await submit(page)

    // Guest 2: the lists start at guest 1's countries, which follow Colombia in every list.
    await heading(page, "Huésped 2 de 3")
    expect(await countryValues(page)).toEqual({ nacionalidad: "US", pais_procedencia: "PE", pais_residencia: "US" })
    for (const field of ["nacionalidad", "pais_procedencia", "pais_residencia"]) {
      expect((await countryOptions(page, field)).slice(0, 5)).toEqual(["", "CO", "US", "PE", "AF"])
    }
    // In English too, the same order.
    await page.click("#lang-toggle")
    expect(await page.locator("#f-nacionalidad option").nth(2).textContent()).toBe("United States")
    await page.click("#lang-toggle")
    const { motivo: _, ...anaWithoutMotivo } = ANA
    await fillGuest(page, { ...anaWithoutMotivo, numero_documento: "52.345.678", procedencia: ["EC", "Quito"] })
    await submit(page)
    await heading(page, "Foto del documento de Ana Pérez Gómez")
    await page.locator("#f-front").setInputFiles({ name: "cedula.png", mimeType: "image/png", buffer: documentPng([11, 83, 148]) })
    await submit(page)

    // Guest 3: Ana's choices now; Ecuador joins the suggestions.
    await heading(page, "Huésped 3 de 3")
    expect(await countryValues(page)).toEqual({ nacionalidad: "CO", pais_procedencia: "EC", pais_residencia: "CO" })
    expect((await countryOptions(page, "pais_procedencia")).slice(0, 5)).toEqual(["", "CO", "US", "PE", "EC"])
    expect(pageErrors).toEqual([])
    await context.close()

    const guests = await f.db.query<{ numero_documento: string; nacionalidad: string; pais_procedencia: string; pais_residencia: string }>(
      `SELECT g.numero_documento, g.nacionalidad, g.pais_procedencia, g.pais_residencia FROM guests g
       JOIN reservations r ON r.id = g.reservation_id WHERE r.external_id = $1 ORDER BY g.position`,
      [stay.externalId]
    )
    expect(guests.map((g) => [g.numero_documento, g.nacionalidad, g.pais_procedencia, g.pais_residencia])).toEqual([
      ["ab123456", "US", "PE", "US"],
      ["52345678", "CO", "EC", "CO"]
    ])
  }, 90_000)

  test("a one-guest stay on a desktop: natural singular wording in both languages, the signer's name filled in (issue 26 item 5)", async () => {
    const stay = await createStay(await photosAndContract(), 1)
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "es-CO", bypassCSP: true })
    const page = await context.newPage()
    await page.goto(`${f.app.baseUrl}${stay.path}`)
    await heading(page, "Datos del huésped")
    expect(await page.textContent("#progress-summary")).toBe("Falta registrar al huésped")
    expect(await page.locator("#progress-list li").allTextContents()).toEqual(["HuéspedPendiente", "Contrato de hospedajeSin firmar"])
    expect(await page.isVisible("#photo-notice")).toBe(true)
    await page.click("#lang-toggle")
    await heading(page, "Guest details")
    expect(await page.textContent("#progress-summary")).toBe("The guest is not registered yet")
    expect(await page.locator("#progress-list li").first().textContent()).toBe("GuestMissing")
    expect(await page.textContent("#photo-notice .notice-title")).toBe("Before you start")
    await page.click("#lang-toggle")

    await fillGuest(page, { ...ANA, numero_documento: "1 020 304 051" })
    await submit(page)
    await heading(page, "Foto del documento de Ana Pérez Gómez")
    // On a desktop the photo button is a button, not a full-width bar.
    const button = page.locator("label.file-button[for=f-front]")
    expect((await button.boundingBox())!.width).toBeLessThan(400)
    expect(await seriousViolations(page)).toEqual([])
    await page.locator("#f-front").setInputFiles({ name: "cedula.png", mimeType: "image/png", buffer: documentPng([11, 83, 148]) })
    await submit(page)

    await heading(page, "Contrato de hospedaje")
    expect(await page.textContent("#progress-summary")).toBe("Huésped registrado")
    expect(await page.inputValue("#f-signer_name")).toBe("Ana Pérez Gómez")
    await page.click("#lang-toggle")
    expect(await page.textContent("#progress-summary")).toBe("The guest is registered")
    expect(await page.inputValue("#f-signer_name")).toBe("Ana Pérez Gómez")
    await page.check("#f-accepted")
    expect(await seriousViolations(page)).toEqual([])
    await submit(page)
    await heading(page, "Check-in complete")
    expect(await page.textContent("#step")).toContain("Thank you. The guest is registered. You may close this page.")
    await page.click("#lang-toggle")
    expect(await page.textContent("#step")).toContain("Gracias. El huésped está registrado. Puede cerrar esta página.")
    expect(await page.textContent("#progress-summary")).toBe("Huésped registrado")
    await context.close()

    const [row] = await f.db.query<{ contract_signer: string }>("SELECT contract_signer FROM reservations WHERE external_id = $1", [
      stay.externalId
    ])
    expect(row!.contract_signer).toBe("Ana Pérez Gómez")
    expect((await registration(stay.externalId)).guests[0].numero_documento).toBe("1020304051")
  }, 90_000)

  test("an unknown link and a cancelled stay end in a clear message", async () => {
    const context = await axeContext()
    const page = await context.newPage()
    await page.goto(`${f.app.baseUrl}/checkin/${"x".repeat(43)}`)
    await heading(page, "Enlace no válido")
    expect(await page.isVisible("#progress")).toBe(false)
    expect(await seriousViolations(page)).toEqual([])

    const stay = await createStay(f.account.testProperties[0]!.property_id)
    await call(f.app, "POST", "/api/partners/reservations/cancel", { key: f.account.testKey, json: { external_id: stay.externalId } })
    await page.goto(`${f.app.baseUrl}${stay.path}?lang=en`)
    await heading(page, "Stay cancelled")
    await context.close()
  }, 60_000)

  test("security headers on the page, its assets and the check-in API; assets whitelisted; not in the OpenAPI", async () => {
    const stay = await createStay(f.account.testProperties[0]!.property_id)
    const expectSecurityHeaders = (headers: Headers) => {
      expect(headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY)
      expect(headers.get("x-content-type-options")).toBe("nosniff")
      expect(headers.get("referrer-policy")).toBe("no-referrer")
    }
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )

    const page = await fetch(`${f.app.baseUrl}${stay.path}`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.headers.get("cache-control")).toBe("no-store")
    expectSecurityHeaders(page.headers)
    const html = await page.text()
    // No inline script or style: every script has a src, no style element or attribute.
    expect(html.match(/<script\b[^>]*>/g)!.every((tag) => / src="\/checkin\/assets\/[\w.]+"/.test(tag))).toBe(true)
    expect(html).not.toMatch(/<style|\sstyle=|\son\w+=/i)
    // The server's rules reach the page intact (a `$&` in them once broke a string replacement).
    const rules = JSON.parse(/name="checkin-rules" content="([^"]*)"/.exec(html)![1]!.replaceAll("&quot;", "\"").replaceAll("&amp;", "&"))
    expect(rules).toMatchObject({ documentPattern: "^[a-zA-Z0-9]+$", foreignDocumentTypes: ["Pasaporte", "C.E", "D.E", "C.D", "PPT"] })
    expect(rules.countries).toHaveLength(249)
    expect(rules.motivos).toHaveLength(9)

    for (const [file, type] of [["checkin.js", "text/javascript"], ["i18n.js", "text/javascript"], ["checkin.css", "text/css"]]) {
      const asset = await fetch(`${f.app.baseUrl}/checkin/assets/${file}`)
      expect(asset.status).toBe(200)
      expect(asset.headers.get("content-type")).toBe(`${type}; charset=utf-8`)
      expectSecurityHeaders(asset.headers)
      const etag = asset.headers.get("etag")!
      const again = await fetch(`${f.app.baseUrl}/checkin/assets/${file}`, { headers: { "if-none-match": etag } })
      expect(again.status).toBe(304)
    }
    for (const file of ["index.html", "Page.ts", "..%2FPage.ts", "checkin.JS"]) {
      const refused = await fetch(`${f.app.baseUrl}/checkin/assets/${file}`)
      expect(refused.status).toBe(404)
      expect((await refused.json()).code).toBe("not_found")
      expectSecurityHeaders(refused.headers)
    }

    // The JSON API, its errors included, carries the same headers; the partner API does not need them.
    const view = await fetch(`${f.app.baseUrl}/api/checkin/${stay.token}`)
    expect(view.status).toBe(200)
    expectSecurityHeaders(view.headers)
    const unknown = await fetch(`${f.app.baseUrl}/api/checkin/${"x".repeat(43)}`)
    expect(unknown.status).toBe(404)
    expectSecurityHeaders(unknown.headers)
    const invalid = await call(f.app, "POST", `/api/checkin/${stay.token}/guests`, { json: {} })
    expect(invalid.status).toBe(400)
    expectSecurityHeaders(invalid.headers)
    const partner = await call(f.app, "GET", "/api/partners/properties", { key: f.account.testKey })
    expect(partner.headers.get("content-security-policy")).toBeNull()

    // Another method on the page is 405 in the API's error shape; the page is not in the partner OpenAPI.
    const post = await call(f.app, "POST", stay.path, { json: {} })
    expect(post.status).toBe(405)
    expect(post.body.code).toBe("method_not_allowed")
    const openapi = await call(f.app, "GET", "/openapi.json")
    expect(Object.keys(openapi.body.paths).some((path) => path.includes("checkin"))).toBe(false)
  })
})

