import { describe, expect, test } from "bun:test"
import { type ReportsOf, reportAlerts, webhookAlert } from "../../src/alerts/Alert.ts"
import { render } from "../../src/mail/Messages.ts"
import { MailTemplate } from "../../src/mail/Messages.ts"
import { requeuedWarning } from "../../src/reservations/machine/Reports.ts"
import { NO_EXIT } from "../../src/reservations/machine/State.ts"

/** The alert rules of design §9, one row per situation. */
const ID = "5f0c7c1e-3b2a-4d9e-8f61-2a7b9c0d1e23"
const NOTICE = "numero_habitacion was sent blank"
const row = (overrides: Partial<ReportsOf> = {}): ReportsOf => ({
  id: ID,
  check_in: "2026-12-10",
  reservation_status: "confirmed",
  tra: { status: "success", reported_at: "2026-12-10T05:00:00.000Z", sends_on: "2026-12-10", mincit_code: 7 },
  sire: { status: "not_applicable", reported_at: null, foreign_guests: 0, exit: NO_EXIT },
  ...overrides
})
const kinds = (input: ReportsOf, today = "2026-12-10") =>
  reportAlerts(input, today, { notices: [NOTICE] }).map((alert) => [alert.kind, alert.authority, alert.cause, alert.message])

describe("reportAlerts", () => {
  const table: ReadonlyArray<readonly [string, ReportsOf, string, Array<Array<string | null>>]> = [
    ["all accepted: nothing", row(), "2026-12-10", []],
    [
      "TRA in error: report_error with the reason",
      row({ tra: { status: "error", reported_at: "x", sends_on: "2026-12-10", mincit_code: null, warning: "guests[0] was rejected: bad" } }),
      "2026-12-10",
      [["report_error", "tra", `report_error:tra:${ID}`, "guests[0] was rejected: bad"]]
    ],
    [
      "TRA pending with a configuration warning on its due date: report_blocked",
      row({ tra: { status: "pending", reported_at: null, sends_on: "2026-12-10", mincit_code: null, warning: "no TRA token" } }),
      "2026-12-10",
      [["report_blocked", "tra", `report_blocked:tra:${ID}`, "no TRA token"]]
    ],
    [
      "…but not the day before it is due",
      row({ tra: { status: "pending", reported_at: null, sends_on: "2026-12-10", mincit_code: null, warning: "no TRA token" } }),
      "2026-12-09",
      []
    ],
    [
      "pending without a warning (a transient wait): nothing",
      row({ tra: { status: "pending", reported_at: null, sends_on: "2026-12-10", mincit_code: null } }),
      "2026-12-12",
      []
    ],
    [
      "pending with only a notice (the room number sent blank): nothing",
      row({ tra: { status: "pending", reported_at: null, sends_on: "2026-12-10", mincit_code: null, warning: NOTICE } }),
      "2026-12-12",
      []
    ],
    [
      "re-queued by an operator (cli reports retry): waiting for the next run, not blocked",
      row({
        tra: {
          status: "pending",
          reported_at: null,
          sends_on: "2026-12-10",
          mincit_code: 7,
          warning: requeuedWarning("guests[1] was rejected: bad")
        }
      }),
      "2026-12-12",
      []
    ],
    [
      "cancelled while blocked: nothing more to send, nothing to alert",
      row({
        reservation_status: "cancelled",
        sire: { status: "pending", reported_at: null, foreign_guests: 1, warning: "no SIRE code for RU", exit: NO_EXIT }
      }),
      "2026-12-10",
      []
    ],
    [
      "SIRE entry blocked and exit failed: both",
      row({
        sire: {
          status: "pending",
          reported_at: null,
          foreign_guests: 1,
          warning: "no SIRE hotel code",
          exit: { status: "error", sends_on: "2026-12-12", reported_at: "x", warning: "Fecha inválida" }
        }
      }),
      "2026-12-10",
      [
        ["report_blocked", "sire", `report_blocked:sire:${ID}`, "no SIRE hotel code"],
        ["exit_error", "sire", `exit_error:${ID}`, "Fecha inválida"]
      ]
    ]
  ]
  for (const [name, input, today, expected] of table) {
    test(name, () => expect(kinds(input, today)).toEqual(expected))
  }
})

describe("webhookAlert", () => {
  test("the cause names the endpoint and when it started failing: a later episode is another cause", () => {
    const first = webhookAlert({ id: "e1", failingSince: new Date("2026-12-01T10:00:00Z"), lastError: "HTTP 500" })
    const later = webhookAlert({ id: "e1", failingSince: new Date("2026-12-05T10:00:00Z"), lastError: null })
    expect(first).toMatchObject({ kind: "webhook_failing", endpointId: "e1", message: "HTTP 500" })
    expect(first.cause).not.toBe(later.cause)
    expect(later.message).toBe("every delivery failed")
  })
})

describe("the alert e-mail", () => {
  const alert = (language: "es" | "en", kind: "report_error" | "report_blocked" | "exit_error" | "webhook_failing") =>
    render(
      MailTemplate.alert({
        kind,
        authority: kind === "webhook_failing" ? null : kind === "report_error" ? "tra" : "sire",
        subject_of: kind === "webhook_failing" ? "https://pms.example.co/hooks" : "PMS-42",
        property: kind === "webhook_failing" ? null : "Hotel Andino",
        message: "the reason <b>",
        since: kind === "webhook_failing" ? "2026-12-01T15:00:00.000Z" : null,
        panel_url: "https://registro.example.co/panel"
      }),
      language
    )
  test("in Spanish by default and in English; the reason, the property and the panel in both bodies", () => {
    for (const kind of ["report_error", "report_blocked", "exit_error", "webhook_failing"] as const) {
      const es = alert("es", kind)
      const en = alert("en", kind)
      expect(es.subject).not.toBe(en.subject)
      for (const mail of [es, en]) {
        expect(mail.text).toContain("the reason <b>")
        expect(mail.html).toContain("the reason &lt;b&gt;")
        expect(mail.text).toContain("https://registro.example.co/panel")
      }
    }
    expect(alert("es", "report_blocked").subject).toBe("Reporte SIRE detenido por configuración: PMS-42")
    expect(alert("en", "report_error").subject).toBe("TRA report failed: PMS-42")
    expect(alert("es", "webhook_failing").text).toContain("2026-12-01 10:00 (hora de Colombia)")
    expect(alert("en", "exit_error").text).toContain("Hotel Andino")
  })
})
