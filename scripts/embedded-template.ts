/**
 * `npm install`'s postinstall step: makes the embedded database's `initdb` template (src/db/EmbeddedTemplate.ts)
 * once, so that a new user's first `npm start` copies a cluster instead of creating one. Never fails the
 * install: without the template, the first start makes it.
 */
import { ensureTemplate, templatePath } from "../src/db/EmbeddedTemplate.ts"

const started = performance.now()
try {
  await ensureTemplate()
  console.log(`embedded database template ready in ${Math.round(performance.now() - started)} ms: ${await templatePath()}`)
} catch (error) {
  console.warn(`embedded database template not made (the first embedded start will make it): ${String(error)}`)
}
