/** Today's date in Bogotá (UTC−5, no daylight saving), as the service computes it. */
export const bogotaToday = () => new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10)

/**
 * A local stand-in for datos.gov.co: one TRM row (4000.50) valid today in Bogotá, or HTTP 500 while `failing`.
 * It records every query string it receives.
 */
export const startFakeTrm = () => {
  const state = { failing: false, requests: [] as Array<string> }
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request) => {
      state.requests.push(new URL(request.url).search)
      if (state.failing) return new Response("upstream down", { status: 500 })
      const day = `${bogotaToday()}T00:00:00.000`
      return Response.json([{ valor: "4000.50", unidad: "COP", vigenciadesde: day, vigenciahasta: day }])
    }
  })
  return {
    state,
    url: `http://127.0.0.1:${server.port}/resource/trm.json`,
    stop: () => server.stop(true)
  }
}
