/**
 * The checkout's root directory, for the files read at run time (the pages' HTML, scripts and styles; the
 * embedded database's template). Found from this module's own URL, which is either this file (`bun src/main.ts`,
 * the tests) or the production bundle `dist/main.js` that inlines it (`npm run build`, scripts/build.ts): the
 * bundle always sits one level below the root, so both resolve to the same directory.
 */
export const PROJECT_ROOT: URL = import.meta.url.endsWith("/src/shared/ProjectRoot.ts")
  ? new URL("../../", import.meta.url)
  : new URL("../", import.meta.url)

/** A file or folder (with a trailing `/`) of the checkout, by its path from the root (`src/panel/page/`). */
export const projectFile = (path: string): URL => new URL(path, PROJECT_ROOT)
