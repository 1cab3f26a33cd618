import { Effect } from "effect"
import { MAX_DOCUMENT_BYTES } from "../documents/DocumentKind.ts"
import * as StaticPage from "../http/StaticPage.ts"
import { COUNTRY_CODES } from "../reservations/countries.ts"
import {
  COLOMBIAN_DOCUMENT_TYPES,
  DOCUMENT_NUMBER,
  DOCUMENT_SEPARATORS,
  DocumentType,
  FOREIGN_DOCUMENT_TYPES,
  Limits,
  Motivo
} from "../reservations/Reservation.ts"
import { SIGNER_NAME_MAX } from "./Checkin.ts"
import { projectFile } from "../shared/ProjectRoot.ts"

/**
 * The guest check-in page (design §5, issue 6): `GET /checkin/{token}` answers one static HTML page whose
 * script (src/checkin/page/) drives the token-scoped JSON API. Served by the same process, outside the partner
 * OpenAPI document. The page does not look at the token: an unknown or expired link is told by the API, so the
 * HTML is the same for everyone and leaks nothing.
 */

/** No inline script or style anywhere on the page; photo previews are `blob:` URLs. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self'",
  "script-src 'self'",
  ...StaticPage.CSP_TAIL
].join("; ")

/** The security headers, on every response of the page, its assets and its JSON API. */
export const SECURITY_HEADERS = StaticPage.securityHeaders(CONTENT_SECURITY_POLICY)

/**
 * The server's own GuestInput rules, handed to the page in a `<meta>` (no inline script) so the client-side
 * validation cannot drift from src/reservations/Reservation.ts.
 */
const clientRules = () => ({
  documentTypes: DocumentType.literals,
  foreignDocumentTypes: FOREIGN_DOCUMENT_TYPES,
  colombianDocumentTypes: COLOMBIAN_DOCUMENT_TYPES,
  motivos: Motivo.literals,
  countries: COUNTRY_CODES,
  documentPattern: DOCUMENT_NUMBER.source,
  documentSeparators: DOCUMENT_SEPARATORS.source,
  emailMaxLength: Limits.email,
  signerNameMaxLength: SIGNER_NAME_MAX,
  maxDocumentBytes: MAX_DOCUMENT_BYTES
})

const page = StaticPage.make({
  dir: projectFile("src/checkin/page/"),
  pagePaths: ["/checkin/:token"],
  assetsPath: "/checkin/assets",
  assets: {
    "checkin.js": StaticPage.JAVASCRIPT,
    "i18n.js": StaticPage.JAVASCRIPT,
    "base.css": StaticPage.BASE_CSS,
    "checkin.css": StaticPage.CSS
  },
  contentSecurityPolicy: CONTENT_SECURITY_POLICY,
  placeholder: "__CHECKIN_RULES__",
  rules: Effect.sync(clientRules),
  covers: (url) => url.startsWith("/checkin/") || url.startsWith("/api/checkin/")
})

/** The check-in page and its assets. */
export const layer = page.layer

/** The security headers of every answer under `/checkin` and `/api/checkin` (for `ErrorMiddleware.layer`). */
export const coveredHeaders = page.coveredHeaders

/** For `ErrorMiddleware.routesOf`: 405 rather than 404 for another method on these paths. */
export const routes = page.routes
