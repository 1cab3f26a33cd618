/**
 * Makes the embedded database's template (src/db/EmbeddedTemplate.ts: `initdb` and the migrations) once, so that
 * a new user's first `npm start` copies a cluster instead of creating one, and leaves it readable by every user
 * (the image builds it as root and runs as `bun`).
 * - `npm install`'s postinstall step runs it plainly: it never fails the install; without the template, the
 *   first start makes it.
 * - The Dockerfile runs it with `--strict`: a template that could not be made fails the build (an image without
 *   it would start slowly and large, issue 27).
 */
import { ensureEmbeddedTemplate } from "../src/db/Database.ts"
import { makeReadable, templatePath } from "../src/db/EmbeddedTemplate.ts"

const strict = process.argv.includes("--strict")
const started = performance.now()
try {
  await ensureEmbeddedTemplate()
  const path = await templatePath()
  // Also a template made before templates were made readable.
  await makeReadable(path)
  const ms = Math.round(performance.now() - started)
  console.log(`embedded database template ready in ${ms} ms: ${path}`)
} catch (error) {
  if (strict) {
    console.error(`embedded database template not made: ${String(error)}`)
    process.exit(1)
  }
  console.warn(`embedded database template not made (the first embedded start will make it): ${String(error)}`)
}
