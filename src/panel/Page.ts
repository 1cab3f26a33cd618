import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import * as StaticPage from "../http/StaticPage.ts"
import { Warnings } from "../reservations/machine/Reports.ts"
import { Limits as ReservationLimits, ReportStatus, Status } from "../reservations/Reservation.ts"
import { EVENT_TYPES, Limits as WebhookLimits } from "../webhooks/Webhook.ts"
import { CODE_LENGTH, CODE_MINUTES, CODE_TRIES, Limits, PanelDeliveryStatus } from "./Panel.ts"
import { projectFile } from "../shared/ProjectRoot.ts"

/**
 * The account panel's page (design §8): `GET /panel` answers one static HTML page whose script
 * (src/panel/page/) drives the session-authenticated JSON API under `/api/panel/`. Served by the same process,
 * outside the partner OpenAPI document, with the check-in page's security headers on the page, its assets and
 * every `/api/panel/*` answer.
 */

/** No inline script or style anywhere on the page; nothing is loaded from elsewhere. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  ...StaticPage.CSP_TAIL
].join("; ")

export const SECURITY_HEADERS = StaticPage.securityHeaders(CONTENT_SECURITY_POLICY)

/** Reservations per page of the page's list ("load more" asks for the next). */
export const RESERVATIONS_PAGE_SIZE = 25
/** Deliveries per page of the page's delivery log. */
export const DELIVERIES_PAGE_SIZE = 25

/**
 * What the page needs to know of the server, handed over in a `<meta>` (no inline script): whether anyone may
 * sign up, and the request rules of src/panel/Panel.ts, so the page's own checks cannot drift from them.
 */
const clientRules = Effect.map(AppConfig, (config) => ({
  signupOpen: config.panelSignup === "open",
  codeLength: CODE_LENGTH,
  codeMinutes: CODE_MINUTES,
  codeTries: CODE_TRIES,
  emailMaxLength: ReservationLimits.email,
  limits: Limits,
  reservationStatuses: Status.literals,
  reportStatuses: ReportStatus.literals,
  deliveryStatuses: PanelDeliveryStatus.literals,
  activeEndpoints: WebhookLimits.activeEndpoints,
  webhookUrlMax: WebhookLimits.url,
  // `*` is a subscription, never the event of a delivery.
  events: EVENT_TYPES.filter((event) => event !== "*"),
  reservationsPageSize: RESERVATIONS_PAGE_SIZE,
  // The service's own report warnings, by their text: the page words them (issue 26); an authority's words stay.
  warnings: Object.fromEntries(Object.entries(Warnings).map(([name, text]) => [text, name])),
  deliveriesPageSize: DELIVERIES_PAGE_SIZE,
  eventRetentionDays: config.eventRetentionDays
}))

const isPanelPath = (url: string) =>
  url === "/panel" || url.startsWith("/panel/") || url.startsWith("/panel?") || url.startsWith("/api/panel/")

const page = StaticPage.make({
  dir: projectFile("src/panel/page/"),
  pagePaths: ["/panel"],
  assetsPath: "/panel/assets",
  assets: {
    "panel.js": StaticPage.JAVASCRIPT,
    "i18n.js": StaticPage.JAVASCRIPT,
    "base.css": StaticPage.BASE_CSS,
    "panel.css": StaticPage.CSS
  },
  contentSecurityPolicy: CONTENT_SECURITY_POLICY,
  placeholder: "__PANEL_RULES__",
  rules: clientRules,
  covers: isPanelPath
})

/** The panel page and its assets. */
export const layer = page.layer

/** The security headers of every answer under `/panel` and `/api/panel` (for `ErrorMiddleware.layer`). */
export const coveredHeaders = page.coveredHeaders

/** For `ErrorMiddleware.routesOf`: 405 rather than 404 for another method on these paths. */
export const routes = page.routes
