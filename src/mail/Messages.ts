import { Data, DateTime, Option } from "effect"
import { bogotaZone } from "../shared/Calendar.ts"

/**
 * The e-mails the service sends (design §8): typed templates rendered to a subject, a plain-text body and a
 * simple HTML body, in Spanish (the default) or English. Pure: the queue renders a message when it is enqueued
 * and stores the result, so what is sent never depends on code deployed later.
 *
 * Adding a template: one member of `MailTemplate` and one entry of `renderers` (the compiler asks for it).
 */

/** The languages a message can be written in; `es` is the default (design §8). */
export type MailLanguage = "es" | "en"

/** Every template by its tag, with the data it needs. */
export type MailTemplate = Data.TaggedEnum<{
  /** A panel sign-in code. */
  signin_code: { readonly code: string; readonly minutes: number }
  /** The code that finishes a self-service sign-up (`PANEL_SIGNUP=open`); `name` is the account's name. */
  signup_code: { readonly code: string; readonly name: string; readonly minutes: number }
  /** A sign-up with an e-mail that already has an account: a sign-in code instead (no account enumeration). */
  signup_existing: { readonly code: string; readonly minutes: number }
  /** Confirms a live API key requested in the panel; sent to the account e-mail. */
  live_key_code: { readonly code: string; readonly minutes: number; readonly requested_by: string }
  /** A live API key was created; `created_at` is an ISO instant. */
  live_key_notice: { readonly prefix: string; readonly created_at: string; readonly created_by: string }
  /**
   * An alert to the account holder (design §9). `subject_of`: the reservation's external_id, or the endpoint's
   * URL for `webhook_failing`; `since`: an ISO instant (the endpoint's first failed delivery), else null.
   */
  alert: {
    readonly kind: "report_error" | "report_blocked" | "exit_error" | "webhook_failing"
    readonly authority: "tra" | "sire" | null
    readonly subject_of: string
    readonly property: string | null
    readonly message: string
    readonly since: string | null
    readonly panel_url: string
  }
}>

/** Constructors and matchers: `MailTemplate.signin_code({ code, minutes })`. */
export const MailTemplate = Data.taggedEnum<MailTemplate>()

/** A rendered message, ready for the `Mailer`. */
export interface RenderedMail {
  readonly subject: string
  readonly text: string
  readonly html: string
}

/** Escapes a value for HTML text and attribute positions. */
export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** A block of the HTML body: a paragraph, the code in large type, or a list of label/value lines. */
type Block =
  | { readonly p: string }
  | { readonly code: string }
  | { readonly rows: ReadonlyArray<readonly [string, string]> }
  | { readonly note: string }

/**
 * Builds both bodies from the same blocks, so the plain text and the HTML always say the same thing. Every
 * string is escaped here: templates pass raw values.
 */
const CODE_STYLE = "margin:0 0 16px;font-size:28px;font-weight:bold;letter-spacing:6px;"
  + "font-family:Menlo,Consolas,monospace"
const LABEL_STYLE = "padding:2px 12px 2px 0;color:#555"

const compose = (language: MailLanguage, subject: string, blocks: ReadonlyArray<Block>): RenderedMail => {
  const text = blocks.map((block) => {
    if ("p" in block) return block.p
    if ("code" in block) return `    ${block.code}`
    if ("rows" in block) return block.rows.map(([label, value]) => `${label}: ${value}`).join("\n")
    return block.note
  }).join("\n\n") + "\n"
  const html = blocks.map((block) => {
    if ("p" in block) return `<p style="margin:0 0 16px">${escapeHtml(block.p)}</p>`
    if ("code" in block) {
      return `<p style="${CODE_STYLE}">${escapeHtml(block.code)}</p>`
    }
    if ("rows" in block) {
      return `<table role="presentation" style="margin:0 0 16px;border-collapse:collapse">${
        block.rows.map(([label, value]) =>
          `<tr><td style="${LABEL_STYLE}">${escapeHtml(label)}</td><td><strong>${escapeHtml(value)}</strong></td></tr>`
        ).join("")
      }</table>`
    }
    return `<p style="margin:0 0 16px;color:#555;font-size:13px">${escapeHtml(block.note)}</p>`
  }).join("\n")
  return {
    subject,
    text,
    html: `<!DOCTYPE html>
<html lang="${language}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:24px;font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.5;color:#1a1a1a">
${html}
</body></html>
`
  }
}

/** An ISO instant as Bogotá wall time (`2026-03-05 09:03`, UTC−5), which is how a Colombian hotel reads it. */
const bogotaTime = (iso: string): string => {
  const instant = DateTime.make(iso)
  if (Option.isNone(instant)) return iso
  const parts = DateTime.toParts(DateTime.setZone(instant.value, bogotaZone))
  const two = (n: number) => String(n).padStart(2, "0")
  return `${parts.year}-${two(parts.month)}-${two(parts.day)} ${two(parts.hours)}:${two(parts.minutes)}`
}

/** Each template by its tag. */
type TemplateOf = { readonly [Tag in MailTemplate["_tag"]]: Extract<MailTemplate, { readonly _tag: Tag }> }

type Renderer<Tag extends MailTemplate["_tag"]> = (template: TemplateOf[Tag], language: MailLanguage) => RenderedMail

/** The code in large type and how long it lasts, as every mail that sends a code shows them. */
const codeBlocks = (code: string, minutes: number, language: MailLanguage): ReadonlyArray<Block> => [
  { code },
  {
    p: language === "en"
      ? `It is valid for ${minutes} minutes and works once.`
      : `Vale ${minutes} minutos y sirve una sola vez.`
  }
]

/** The authority as a hotel knows it. */
const authorityName = (authority: "tra" | "sire" | null) =>
  authority === "tra" ? "TRA (MinCIT)" : authority === "sire" ? "SIRE (Migración Colombia)" : ""

const alertRenderer: Renderer<"alert"> = ({ authority, kind, message, panel_url, property, since, subject_of }, language) => {
  const name = authorityName(authority)
  const short = authority === null ? "" : authority.toUpperCase()
  const where: Array<readonly [string, string]> = property === null
    ? []
    : [[language === "en" ? "Property" : "Propiedad", property]]
  const en = language === "en"
  switch (kind) {
    case "report_error":
      return en
        ? compose(language, `${short} report failed: ${subject_of}`, [
          { p: `The ${name} report of reservation ${subject_of} ended in error. The authority's reason:` },
          { rows: [...where, ["Reason", message]] },
          { p: `Fix the cause (the guest's data, or the property's settings), then ask us to send it again. Details: ${panel_url}` }
        ])
        : compose(language, `Reporte ${short} con error: ${subject_of}`, [
          { p: `El reporte a ${name} de la reserva ${subject_of} terminó con error. La razón que dio la autoridad:` },
          { rows: [...where, ["Razón", message]] },
          { p: `Corrija la causa (los datos del huésped o la configuración de la propiedad) y pídanos reenviarlo. Detalle: ${panel_url}` }
        ])
    case "report_blocked":
      return en
        ? compose(language, `${short} report waiting for a setting: ${subject_of}`, [
          { p: `The ${name} report of reservation ${subject_of} is due and cannot be sent until this is fixed:` },
          { rows: [...where, ["What to fix", message]] },
          { p: `It goes out by itself at the next report run once fixed. Late reports can be fined. ${panel_url}` }
        ])
        : compose(language, `Reporte ${short} detenido por configuración: ${subject_of}`, [
          { p: `El reporte a ${name} de la reserva ${subject_of} ya debía enviarse y no puede salir hasta corregir esto:` },
          { rows: [...where, ["Qué corregir", message]] },
          { p: `Saldrá solo en el siguiente envío una vez corregido. Un reporte tardío puede ser multado. ${panel_url}` }
        ])
    case "exit_error":
      return en
        ? compose(language, `SIRE exit failed: ${subject_of}`, [
          { p: `The departure (exit movement) of the foreign guests of reservation ${subject_of} was refused by SIRE:` },
          { rows: [...where, ["Reason", message]] },
          { p: `The entry was reported; the exit must be reported too. Details: ${panel_url}` }
        ])
        : compose(language, `Salida SIRE con error: ${subject_of}`, [
          { p: `SIRE rechazó la salida de los huéspedes extranjeros de la reserva ${subject_of}:` },
          { rows: [...where, ["Razón", message]] },
          { p: `La entrada quedó reportada; la salida también debe reportarse. Detalle: ${panel_url}` }
        ])
    case "webhook_failing":
      return en
        ? compose(language, `Webhook failing for 24 hours: ${subject_of}`, [
          { p: `Every delivery to your webhook endpoint ${subject_of} has failed since ${since === null ? "over a day" : `${bogotaTime(since)} (Colombia time)`}.` },
          { rows: [["Last error", message]] },
          { p: `Events are kept: once the endpoint answers again, redeliver the failed ones from the panel. ${panel_url}` }
        ])
        : compose(language, `Webhook sin entregas desde hace 24 horas: ${subject_of}`, [
          { p: `Todas las entregas a su destino de webhooks ${subject_of} fallan desde ${since === null ? "hace más de un día" : `${bogotaTime(since)} (hora de Colombia)`}.` },
          { rows: [["Último error", message]] },
          { p: `Los eventos se conservan: cuando el destino responda, reenvíe los fallidos desde el panel. ${panel_url}` }
        ])
  }
}

const renderers: { readonly [Tag in MailTemplate["_tag"]]: Renderer<Tag> } = {
  signin_code: ({ code, minutes }, language) =>
    language === "en"
      ? compose(language, `Your sign-in code: ${code}`, [
        { p: "Your code to sign in to the panel is:" },
        ...codeBlocks(code, minutes, language),
        { note: "If you did not ask for it, ignore this e-mail: nobody can sign in without the code." }
      ])
      : compose(language, `Su código de acceso: ${code}`, [
        { p: "Su código para entrar al panel es:" },
        ...codeBlocks(code, minutes, language),
        { note: "Si usted no lo pidió, ignore este correo: nadie puede entrar sin el código." }
      ]),

  signup_code: ({ code, minutes, name }, language) =>
    language === "en"
      ? compose(language, `Your code to create the account: ${code}`, [
        { p: `To finish creating the account “${name}”, enter this code:` },
        ...codeBlocks(code, minutes, language),
        { note: "If you did not ask for an account, ignore this e-mail: none will be created." }
      ])
      : compose(language, `Su código para crear la cuenta: ${code}`, [
        { p: `Para terminar de crear la cuenta «${name}», escriba este código:` },
        ...codeBlocks(code, minutes, language),
        { note: "Si usted no pidió una cuenta, ignore este correo: no se creará ninguna." }
      ]),

  signup_existing: ({ code, minutes }, language) =>
    language === "en"
      ? compose(language, `Your sign-in code: ${code}`, [
        {
          p: "Someone asked to create an account with this e-mail, but it already has one. "
            + "To sign in to the panel, enter this code:"
        },
        ...codeBlocks(code, minutes, language),
        { note: "If it was not you, ignore this e-mail: nobody can sign in without the code." }
      ])
      : compose(language, `Su código de acceso: ${code}`, [
        {
          p: "Alguien pidió crear una cuenta con este correo, pero ya tiene una. "
            + "Para entrar al panel, escriba este código:"
        },
        ...codeBlocks(code, minutes, language),
        { note: "Si no fue usted, ignore este correo: nadie puede entrar sin el código." }
      ]),

  live_key_code: ({ code, minutes, requested_by }, language) =>
    language === "en"
      ? compose(language, `Confirm the new live API key: ${code}`, [
        {
          p: `${requested_by} asked to create a live (production) API key for your account. `
            + "To confirm it, enter this code in the panel:"
        },
        ...codeBlocks(code, minutes, language),
        { note: "If you do not recognise this request, do not share the code and review the account's members." }
      ])
      : compose(language, `Confirme la nueva clave de producción: ${code}`, [
        {
          p: `${requested_by} pidió crear una clave de API de producción (live) para su cuenta. `
            + "Para confirmarla, escriba este código en el panel:"
        },
        ...codeBlocks(code, minutes, language),
        { note: "Si no reconoce esta solicitud, no comparta el código y revise los miembros de la cuenta." }
      ]),

  live_key_notice: ({ created_at, created_by, prefix }, language) =>
    language === "en"
      ? compose(language, `A live API key was created (${prefix}…)`, [
        { p: "A live (production) API key was created for your account." },
        {
          rows: [
            ["Prefix", prefix],
            ["Created", `${bogotaTime(created_at)} (Colombia time, UTC−5)`],
            ["By", created_by]
          ]
        },
        { p: "If this was not you, revoke the key in the panel now." }
      ])
      : compose(language, `Se creó una clave de producción (${prefix}…)`, [
        { p: "Se creó una clave de API de producción (live) para su cuenta." },
        {
          rows: [
            ["Prefijo", prefix],
            ["Fecha", `${bogotaTime(created_at)} (hora de Colombia, UTC−5)`],
            ["Creada por", created_by]
          ]
        },
        { p: "Si no fue usted, revóquela en el panel de inmediato." }
      ]),

  alert: alertRenderer
}

/** The table's row for the template's own tag: indexed through `TemplateOf`, TypeScript pairs row and template. */
const renderWith = <Tag extends MailTemplate["_tag"]>(template: TemplateOf[Tag], language: MailLanguage) => {
  const renderer: Renderer<Tag> = renderers[template._tag]
  return renderer(template, language)
}

/** Renders a template in a language (Spanish unless told otherwise). */
export const render = (template: MailTemplate, language: MailLanguage = "es"): RenderedMail =>
  renderWith(template, language)
