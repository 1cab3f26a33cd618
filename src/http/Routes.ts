/** A route as the router knows it: a method and a path template with `:param`s. */
export interface Route {
  readonly method: string
  readonly path: string
}

const matcher = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\?:[A-Za-z_]\w*/g, "[^/]+")}/?$`)

/**
 * The routes of a server, compiled once, for what happens outside the router: telling a 404 from a 405 (the
 * methods a path allows) and naming a request's route template in the access log.
 */
export const compile = (routes: ReadonlyArray<Route>) => {
  const compiled = routes.map((route) => ({ ...route, regex: matcher(route.path) }))
  return {
    /** The methods some route allows on `path`. */
    allowed: (path: string): ReadonlyArray<string> =>
      [...new Set(compiled.filter((route) => route.regex.test(path)).map((route) => route.method))],
    /** `/api/partners/webhooks/:id`, not the id: a template keeps ids and external_ids out of the log. */
    templateOf: (method: string, path: string): string =>
      compiled.find((route) => route.method === method && route.regex.test(path))?.path ??
        compiled.find((route) => route.regex.test(path))?.path ??
        "(unknown route)"
  } as const
}
export type CompiledRoutes = ReturnType<typeof compile>
