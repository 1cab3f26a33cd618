import type { Subprocess } from "bun"
import * as NodeNet from "node:net"

/** A TCP port nobody listens on right now (the kernel's pick, released at once). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = NodeNet.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as NodeNet.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

export interface TestRedis {
  readonly port: number
  /** `redis://127.0.0.1:PORT` */
  readonly url: string
  /** SIGKILLs the server, as a crash would (no goodbye to clients); resolves once it is gone. */
  readonly kill: () => Promise<void>
  /** Starts it again on the same port (empty: it never saves). */
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
}

const answers = async (port: number) => {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data: () => {} } })
    socket.end()
    return true
  } catch {
    return false
  }
}

/**
 * A private `redis-server` (Debian's; `.ci/run` installs it) on a free port, so a test may kill it without
 * touching the shared one on 6379.
 */
export const startRedis = async (): Promise<TestRedis> => {
  const port = await freePort()
  let child: Subprocess | undefined
  const start = async () => {
    child = Bun.spawn(
      ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdout: "ignore", stderr: "ignore", stdin: "ignore" }
    )
    for (let i = 0; i < 100; i++) {
      if (await answers(port)) return
      await Bun.sleep(50)
    }
    throw new Error(`redis-server did not start on port ${port}`)
  }
  const kill = async () => {
    const running = child
    child = undefined
    if (running === undefined) return
    running.kill("SIGKILL")
    await running.exited
  }
  await start()
  return { port, url: `redis://127.0.0.1:${port}`, kill, start, stop: kill }
}
