import { mkdirSync } from "node:fs"
import * as NodePath from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"

/** Debian's Chromium (never a downloaded browser), with the flags this closed network needs. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/**
 * Starts Chromium in the language of the page under test (`es-CO` for the Spanish pages, `en-US` for the English
 * runs), so what the browser itself renders follows the visitor's language; contexts still set their `locale`
 * (navigator.language, Intl, Accept-Language). Debian's plain `chromium` package carries only the en-US UI
 * strings (`chromium-l10n` adds the others), so date inputs stay en-US there.
 */
export const launchBrowser = ({ lang = "es-CO" }: { readonly lang?: string } = {}): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      `--lang=${lang}`,
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

const AXE = require.resolve("axe-core/axe.min.js")

/**
 * axe-core's serious and critical violations on the page as it is now, one line each. axe's script is injected
 * into the page, which a page's own CSP refuses: run it in a context with `bypassCSP`, and check the page under
 * its real CSP in another.
 */
export const seriousViolations = async (page: Page): Promise<Array<string>> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: AXE })
  const results = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ["violations"] }))
  return (results.violations as Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }>)
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.impact} ${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`)
}

const SCREENSHOTS = NodePath.join(import.meta.dir, "../../docs/screenshots")

/** Whether this run rewrites docs/screenshots (`UPDATE_SCREENSHOTS=1`); a normal run leaves the tree clean. */
export const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === "1"

/** Saves `docs/screenshots/<name>.png`, only when `UPDATE_SCREENSHOTS=1`. */
export const saveScreenshot = async (page: Page, name: string, { fullPage = true } = {}) => {
  if (!UPDATE_SCREENSHOTS) return
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: NodePath.join(SCREENSHOTS, `${name}.png`), fullPage })
}
