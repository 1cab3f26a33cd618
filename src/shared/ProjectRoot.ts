/**
 * The checkout's root directory, for the files read at run time (the pages' HTML, scripts and styles; the
 * embedded database's template; the TRA thread's module). Found from this module's own URL. Running the sources
 * (`bun src/main.ts`, the tests) that is this file; in the production bundle (`npm run build`, scripts/build.ts)
 * Bun writes each module's `import.meta.url` into the bundle as that module's source URL at build time, so it is
 * this file's path in the checkout the bundle was built in — where it runs (`npm start`, the image's /app). The
 * second branch is for a bundler that would give the bundle's own URL (`dist/main.js`, one level below the root).
 */
export const PROJECT_ROOT: URL = import.meta.url.endsWith("/src/shared/ProjectRoot.ts")
  ? new URL("../../", import.meta.url)
  : new URL("../", import.meta.url)

/** A file or folder (with a trailing `/`) of the checkout, by its path from the root (`src/panel/page/`). */
export const projectFile = (path: string): URL => new URL(path, PROJECT_ROOT)
