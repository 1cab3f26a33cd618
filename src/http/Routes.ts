/** What a route reads from the request body: JSON, multipart/form-data, or nothing (absent). */
export type BodyKind = "json" | "multipart"

/** A route as the router knows it: a method and a path template with `:param`s, and the body it reads. */
export interface Route {
  readonly method: string
  readonly path: string
  readonly body?: BodyKind
}

// As the router (find-my-way) matches: case-insensitive, a trailing slash ignored.
const matcher = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\?:[A-Za-z_]\w*/g, "[^/]+")}/?$`, "i")

/**
 * A request path as the router sees it: repeated slashes are one (find-my-way's `ignoreDuplicateSlashes`), so
 * `/guests/x//document` is the document route here too, and the body guard reads its body as that route's.
 */
const routerPath = (path: string) => path.includes("//") ? path.replace(/\/{2,}/g, "/") : path

/**
 * The routes of a server, compiled once, for what happens outside the router: telling a 404 from a 405 (the
 * methods a path allows), naming a request's route template in the access log, and knowing which body a
 * request's route reads before the route runs (the body guard).
 */
export const compile = (routes: ReadonlyArray<Route>) => {
  const compiled = routes.map((route) => ({ ...route, regex: matcher(route.path) }))
  const byMethod = new Map<string, Array<(typeof compiled)[number]>>()
  for (const route of compiled) byMethod.set(route.method, [...(byMethod.get(route.method) ?? []), route])
  const scanTemplate = (method: string, path: string): string => {
    const normal = routerPath(path)
    return byMethod.get(method)?.find((route) => route.regex.test(normal))?.path ??
      compiled.find((route) => route.regex.test(normal))?.path ??
      "(unknown route)"
  }
  // The access log asks on every request: a path with no parameter is answered from a map of what the scan
  // answers for it (the same answer, computed once), a parameterised one by the scan of its method's routes.
  const staticTemplates = new Map(
    compiled.filter((route) => !route.path.includes(":")).map((route) => [
      `${route.method} ${route.path}`,
      scanTemplate(route.method, route.path)
    ])
  )
  const withBody = compiled.filter((route) => route.body !== undefined)
  // Most body routes have no parameter: one map lookup finds them (endpoint 3 is the hot one).
  const staticBodies = new Map(
    withBody.filter((route) => !route.path.includes(":")).map((route) => [`${route.method} ${route.path}`, route.body])
  )
  return {
    /** The methods some route allows on `path`. */
    allowed: (path: string): ReadonlyArray<string> =>
      [...new Set(compiled.filter((route) => route.regex.test(routerPath(path))).map((route) => route.method))],
    /** `/api/partners/webhooks/:id`, not the id: a template keeps ids and external_ids out of the log. */
    templateOf: (method: string, path: string): string =>
      staticTemplates.get(`${method} ${path}`) ?? scanTemplate(method, path),
    /** The body that the route of `method path` reads; undefined when it reads none or there is no route. */
    bodyOf: (method: string, path: string): BodyKind | undefined =>
      staticBodies.get(`${method} ${path}`) ??
        withBody.find((route) => route.method === method && route.regex.test(routerPath(path)))?.body
  } as const
}
export type CompiledRoutes = ReturnType<typeof compile>
