import * as NodeNet from "node:net"

/** What the proxy does to the traffic right now. */
export type FaultMode =
  | { readonly _tag: "Pass" }
  | { readonly _tag: "Cut" }
  | { readonly _tag: "Delay"; readonly ms: number }

export interface FaultProxy {
  /** The port to give the service instead of the real one (127.0.0.1). */
  readonly port: number
  readonly mode: () => FaultMode
  /** Closes every open connection (both ends) and refuses new ones (nothing listens: ECONNREFUSED). */
  readonly cut: () => Promise<void>
  /** Every chunk, both ways, is held `ms` before it is passed on (order kept); new connections are accepted. */
  readonly delay: (ms: number) => Promise<void>
  /** Back to passing everything at once; listening again after a cut. */
  readonly restore: () => Promise<void>
  /** Connections accepted since the start. */
  readonly accepted: () => number
  readonly stop: () => Promise<void>
}

/** One direction of one connection: chunks wait until their time, in arrival order. */
const pipe = (from: NodeNet.Socket, to: NodeNet.Socket, delayOf: () => number) => {
  const queue: Array<{ readonly chunk: Buffer; readonly at: number }> = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const pump = () => {
    timer = undefined
    const now = Date.now()
    while (queue.length > 0 && queue[0]!.at <= now) {
      if (!to.destroyed) to.write(queue.shift()!.chunk)
      else queue.shift()
    }
    if (queue.length > 0) timer = setTimeout(pump, queue[0]!.at - now)
    else if (ended && !to.destroyed) to.end()
  }
  let ended = false
  from.on("data", (chunk: Buffer) => {
    const ms = delayOf()
    if (ms <= 0 && queue.length === 0) {
      to.write(chunk)
      return
    }
    queue.push({ chunk, at: Date.now() + Math.max(0, ms) })
    if (timer === undefined) timer = setTimeout(pump, Math.max(0, queue[0]!.at - Date.now()))
  })
  from.on("end", () => {
    ended = true
    if (queue.length === 0 && !to.destroyed) to.end()
  })
  return () => {
    if (timer !== undefined) clearTimeout(timer)
    queue.length = 0
  }
}

/**
 * A TCP proxy under the test's control, between the service and one real dependency (PostgreSQL, Redis, the
 * SMTP test server, the TRA fake, a webhook receiver): the service is configured with the proxy's port and the
 * test cuts, delays and restores the dependency without touching it. `cut` stops listening on the port (kept
 * for `restore`), so a cut dependency looks like a stopped one; open connections are destroyed, as a crash or
 * a network partition ends them.
 */
export const startFaultProxy = async (
  target: { readonly host?: string; readonly port: number }
): Promise<FaultProxy> => {
  const host = target.host ?? "127.0.0.1"
  let mode: FaultMode = { _tag: "Pass" }
  let accepted = 0
  const open = new Set<NodeNet.Socket>()
  const delayOf = () => mode._tag === "Delay" ? mode.ms : 0

  const server = NodeNet.createServer((client) => {
    accepted++
    const upstream = NodeNet.connect({ host, port: target.port })
    open.add(client)
    open.add(upstream)
    const stopUp = pipe(client, upstream, delayOf)
    const stopDown = pipe(upstream, client, delayOf)
    const close = () => {
      stopUp()
      stopDown()
      client.destroy()
      upstream.destroy()
      open.delete(client)
      open.delete(upstream)
    }
    client.on("error", close)
    upstream.on("error", close)
    client.on("close", close)
    upstream.on("close", close)
  })

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject)
        resolve((server.address() as NodeNet.AddressInfo).port)
      })
    })
  const unlisten = () => new Promise<void>((resolve) => server.listening ? server.close(() => resolve()) : resolve())

  const port = await listen(0)

  const cut = async () => {
    mode = { _tag: "Cut" }
    const closed = unlisten()
    for (const socket of [...open]) socket.destroy()
    await closed
  }
  const restore = async () => {
    const wasCut = mode._tag === "Cut"
    mode = { _tag: "Pass" }
    if (wasCut || !server.listening) await listen(port)
  }
  return {
    port,
    mode: () => mode,
    cut,
    delay: async (ms) => {
      if (mode._tag === "Cut") await restore()
      mode = { _tag: "Delay", ms }
    },
    restore,
    accepted: () => accepted,
    stop: async () => {
      mode = { _tag: "Cut" }
      const closed = unlisten()
      for (const socket of [...open]) socket.destroy()
      await closed
    }
  }
}
