import { afterAll, beforeAll, expect, test } from "bun:test"
import type { Browser } from "playwright-core"
import { type RunningApp, startApp } from "../support/app.ts"
import { launchBrowser } from "../support/browser.ts"
import { freshDatabase, type TestDatabase } from "../support/database.ts"

let db: TestDatabase
let app: RunningApp
let browser: Browser

beforeAll(async () => {
  db = await freshDatabase()
  app = await startApp({ DATABASE_URL: db.url })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await app?.stop()
  await db?.drop()
})

test("/docs renders the API reference in a real browser, offline, from the generated document", async () => {
  const page = await browser.newPage()
  const external: Array<string> = []
  page.on("request", (request) => {
    const url = new URL(request.url())
    if (url.protocol.startsWith("http") && url.hostname !== "127.0.0.1") external.push(request.url())
  })
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  const response = await page.goto(`${app.baseUrl}/docs`, { waitUntil: "load" })
  expect(response?.status()).toBe(200)
  await page.getByText("Map properties to PMS property ids").first().waitFor({ timeout: 15_000 })
  await page.getByText("List the properties of the key's account and environment").first().waitFor({ timeout: 15_000 })
  expect(await page.title()).toBe("Partner Reservation Registration Service")
  expect(errors).toEqual([])
  // the page must not depend on a CDN: everything it needs is served by us
  expect(external.filter((url) => /\.(js|css)(\?|$)/.test(url))).toEqual([])
  await page.close()
}, 60_000)
