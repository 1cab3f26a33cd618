import { describe, expect, test } from "bun:test"
import { escapeHtml, type MailLanguage, MailTemplate, render } from "../../src/mail/Messages.ts"

/** Words of the "tú" voice; the panel and its e-mails say "usted". */
const TU_VOICE = /\b(tú|tu|tus|pediste|fuiste|escribe|ignora|reconoces|compartas|revisa|corrige|pídenos|reenvía|revócala)\b/i

/** Every template with sample data, and what each rendering must show, in both languages. */
const cases: ReadonlyArray<{
  readonly template: MailTemplate
  readonly shows: ReadonlyArray<string>
  readonly subject: Record<MailLanguage, RegExp>
  readonly says: Record<MailLanguage, RegExp>
}> = [
  {
    template: MailTemplate.signin_code({ code: "123456", minutes: 10 }),
    shows: ["123456", "10"],
    subject: { es: /código de acceso: 123456/, en: /sign-in code: 123456/ },
    says: { es: /Si usted no lo pidió, ignore este correo/, en: /If you did not ask for it, ignore this e-mail/ }
  },
  {
    template: MailTemplate.signup_code({ code: "654321", name: "Hotelera Andiña", minutes: 10 }),
    shows: ["654321", "Hotelera Andiña", "10"],
    subject: { es: /crear la cuenta: 654321/, en: /create the account: 654321/ },
    says: { es: /terminar de crear la cuenta/, en: /finish creating the account/ }
  },
  {
    template: MailTemplate.signup_existing({ code: "111222", minutes: 10 }),
    shows: ["111222", "10"],
    subject: { es: /código de acceso: 111222/, en: /sign-in code: 111222/ },
    says: { es: /ya tiene una/, en: /already has one/ }
  },
  {
    template: MailTemplate.live_key_code({ code: "333444", minutes: 10, requested_by: "maria@hotel.co" }),
    shows: ["333444", "10", "maria@hotel.co"],
    subject: { es: /clave de producción: 333444/, en: /live API key: 333444/ },
    says: { es: /pidió crear una clave de API de producción/, en: /asked to create a live \(production\) API key/ }
  },
  {
    template: MailTemplate.live_key_notice({
      prefix: "pk_live_ab12",
      created_at: "2026-03-05T14:03:12.000Z",
      created_by: "maria@hotel.co"
    }),
    // 14:03 UTC is 09:03 in Bogotá (UTC−5).
    shows: ["pk_live_ab12", "2026-03-05 09:03", "maria@hotel.co"],
    subject: {
      es: /Se creó una clave de producción \(pk_live_ab12…\)/,
      en: /A live API key was created \(pk_live_ab12…\)/
    },
    says: { es: /Si no fue usted, revóquela en el panel/, en: /If this was not you, revoke the key in the panel/ }
  }
]

describe("alerts in the panel's voice (issue 26)", () => {
  for (const kind of ["report_error", "report_blocked", "exit_error", "webhook_failing"] as const) {
    test(`${kind}: Spanish in "usted", English too`, () => {
      const template = MailTemplate.alert({
        kind,
        authority: kind === "webhook_failing" ? null : kind === "exit_error" ? "sire" : "tra",
        subject_of: kind === "webhook_failing" ? "https://pms.example.co/hooks" : "PMS-2026-0042",
        property: kind === "webhook_failing" ? null : "Hotel Andino Centro",
        message: "documento inválido",
        since: kind === "webhook_failing" ? "2026-03-05T14:03:12.000Z" : null,
        panel_url: "https://registro.example.co/panel"
      })
      const es = render(template, "es")
      expect(es.text).not.toMatch(TU_VOICE)
      expect(es.text).toContain("https://registro.example.co/panel")
      expect(render(template, "en").text).toContain("https://registro.example.co/panel")
    })
  }
})

describe("mail templates (design §8)", () => {
  for (const { template, shows, subject, says } of cases) {
    for (const language of ["es", "en"] as const) {
      test(`${template._tag} in ${language}: subject, text and HTML carry the data`, () => {
        const mail = render(template, language)
        expect(mail.subject).toMatch(subject[language])
        expect(mail.text).toMatch(says[language])
        // The panel's voice (issue 26): "usted", never "tú", in every Spanish message.
        if (language === "es") expect(mail.text).not.toMatch(TU_VOICE)
        expect(mail.html).toContain(escapeHtml(mail.subject))
        expect(mail.html).toContain(`<html lang="${language}">`)
        for (const value of shows) {
          expect(mail.text).toContain(value)
          expect(mail.html).toContain(escapeHtml(value))
        }
        // Short: a code or a notice, not a newsletter.
        expect(mail.text.length).toBeLessThan(600)
      })
    }
  }

  test("Spanish is the default language", () => {
    const template = MailTemplate.signin_code({ code: "123456", minutes: 10 })
    expect(render(template)).toEqual(render(template, "es"))
    expect(render(template, "en").subject).not.toEqual(render(template, "es").subject)
  })

  test("the code stands on a line of its own in the text and in large type in the HTML", () => {
    const mail = render(MailTemplate.signin_code({ code: "123456", minutes: 10 }), "es")
    expect(mail.text).toMatch(/^\s*123456$/m)
    expect(mail.html).toMatch(/font-size:28px[^>]*>123456</)
  })

  test("every interpolated value is escaped in the HTML", () => {
    const hostile = "<script>alert('x')</script> & \"quoted\""
    const rendered = [
      render(MailTemplate.signup_code({ code: "123456", name: hostile, minutes: 10 }), "es"),
      render(MailTemplate.signup_code({ code: "123456", name: hostile, minutes: 10 }), "en"),
      render(MailTemplate.live_key_code({ code: "123456", minutes: 10, requested_by: hostile }), "es"),
      render(MailTemplate.live_key_notice({ prefix: hostile, created_at: hostile, created_by: hostile }), "en")
    ]
    for (const mail of rendered) {
      expect(mail.html).not.toContain("<script>")
      expect(mail.html).toContain("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;")
      // The plain text is not HTML: it keeps the value as it is.
      expect(mail.text).toContain(hostile)
    }
  })

  test("a created_at that is not an instant is shown as given", () => {
    const template = MailTemplate.live_key_notice({ prefix: "pk_x", created_at: "yesterday", created_by: "a@b.co" })
    const mail = render(template, "en")
    expect(mail.text).toContain("yesterday")
  })
})
