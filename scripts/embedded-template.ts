/**
 * `npm install`'s postinstall step: makes the embedded database's template (src/db/EmbeddedTemplate.ts: `initdb`
 * and the migrations) once, so that a new user's first `npm start` copies a cluster instead of creating one.
 * Never fails the install: without the template, the first start makes it.
 */
import { ensureEmbeddedTemplate } from "../src/db/Database.ts"
import { templatePath } from "../src/db/EmbeddedTemplate.ts"

const started = performance.now()
try {
  await ensureEmbeddedTemplate()
  const ms = Math.round(performance.now() - started)
  console.log(`embedded database template ready in ${ms} ms: ${await templatePath()}`)
} catch (error) {
  console.warn(`embedded database template not made (the first embedded start will make it): ${String(error)}`)
}
