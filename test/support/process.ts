import type { Subprocess } from "bun"
import { expect } from "bun:test"

/** The repository root: every child process runs from here, as an operator would. */
export const ROOT = new URL("../../", import.meta.url).pathname

const BUN = `${ROOT}node_modules/.bin/bun`

/** Only what a child needs from our environment: no DATABASE_URL/ADMIN_TOKEN leaks in by accident. */
const baseEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  TMPDIR: process.env.TMPDIR ?? "/tmp"
})

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  /** stdout parsed as JSON (undefined if it is not JSON). */
  readonly json: any
  /** stderr parsed as JSON (undefined if it is not JSON). */
  readonly error: any
}

const parse = (text: string) => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The piped output streams of a child process and its exit. */
export interface PipedChild {
  readonly stdout: ReadableStream<Uint8Array>
  readonly stderr: ReadableStream<Uint8Array>
  readonly exited: Promise<number>
}

/** Waits for a child to end: its exit code and everything it wrote to stdout and stderr. */
export const outputOf = async (child: PipedChild) => {
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited
  ])
  return { code, stdout, stderr }
}

export interface FollowedOutput {
  /** Everything written so far, stdout and stderr interleaved by arrival. */
  readonly text: () => string
  /** Called after each chunk that arrives (a listener may remove itself). */
  readonly listeners: Set<() => void>
  /** Resolves once both streams have ended. */
  readonly ended: Promise<void>
}

/** Follows a running child's stdout and stderr as they arrive, for tests that wait for a line to be printed. */
export const followOutput = (child: PipedChild): FollowedOutput => {
  let text = ""
  const listeners = new Set<() => void>()
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      for (const listener of [...listeners]) listener()
    }
  }
  const ended = Promise.all([pump(child.stdout), pump(child.stderr)]).then(() => undefined)
  return { text: () => text, listeners, ended }
}

/** Runs `bun src/cli.ts <args>` (or another `entry`: the bundle `dist/cli.js`) as a real process and collects its exit code and output. */
export const runCli = async (
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  entry = "src/cli.ts"
): Promise<CliResult> => {
  const child = Bun.spawn([BUN, entry, ...args], {
    cwd: ROOT,
    env: { ...baseEnv(), ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe"
  })
  const { code, stdout, stderr } = await outputOf(child)
  return { code, stdout, stderr, json: parse(stdout), error: parse(stderr) }
}

/** A command that succeeded: exit 0, nothing on stderr (the arguments named, should it fail); answers its JSON. */
export const expectCliSuccess = (args: ReadonlyArray<string>, result: CliResult) => {
  expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" })
  return result.json
}

/** A command that failed: exit `exit`, nothing on stdout, `{error, code}` on stderr; answers the message. */
export const expectCliFailure = (result: CliResult, code: string, exit: 1 | 2) => {
  expect({ exit: result.code, stdout: result.stdout, code: result.error?.code }).toEqual({ exit, stdout: "", code })
  return result.error.error as string
}

export interface TerminalResult {
  readonly code: number
  /** Everything the process wrote to its terminal (stdout and stderr together, `\r\n` line ends). */
  readonly output: string
}

/** Runs `bun src/cli.ts <args>` on a pseudo-terminal, as a person at a terminal would (isTTY is true). */
export const runCliInTerminal = async (
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
): Promise<TerminalResult> => {
  const chunks: Array<Uint8Array> = []
  let closed!: () => void
  const eof = new Promise<void>((resolve) => (closed = resolve))
  const child = Bun.spawn([BUN, "src/cli.ts", ...args], {
    cwd: ROOT,
    env: { ...baseEnv(), TERM: "xterm-256color", ...env },
    terminal: { cols: 120, rows: 40, data: (_terminal, data) => void chunks.push(data.slice()), exit: () => closed() }
  })
  const code = await child.exited
  // The terminal reports its end once the output the child left in it has been read.
  await Promise.race([eof, new Promise((resolve) => setTimeout(resolve, 2_000))])
  child.terminal?.close()
  return { code, output: new TextDecoder().decode(Buffer.concat(chunks)) }
}

export interface ServiceProcess {
  readonly child: Subprocess<"ignore", "pipe", "pipe">
  /** Everything the process wrote so far (stdout and stderr interleaved by arrival). */
  readonly output: () => string
  /** Resolves with the base URL once the process logs its listening address; rejects if it exits first. */
  readonly ready: (timeoutMs?: number) => Promise<string>
  /** SIGTERM (if still running) and wait for the exit code. */
  readonly stop: () => Promise<number>
}

/**
 * Starts `bun src/main.ts` as a real process with exactly `env` (plus PATH/HOME); `entry` runs another entry
 * point instead (the production bundle, test/build/bundle.test.ts).
 */
export const spawnService = (env: Record<string, string>, entry = "src/main.ts"): ServiceProcess => {
  const child = Bun.spawn([BUN, entry], {
    cwd: ROOT,
    env: {
      ...baseEnv(),
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "Info",
      // Required with DATABASE_URL (design §9); a test that means to leave it out sets it to "".
      ...(env.DATABASE_URL === undefined ? {} : { SECRETS_KEY: Buffer.alloc(32, 7).toString("base64") }),
      ...env
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe"
  })
  const { text, listeners, ended: pumped } = followOutput(child)
  const address = () => /listening on (http:\/\/[0-9.]+:\d+)/i.exec(text())?.[1]

  const ready = (timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const url = address()
        if (url !== undefined) {
          listeners.delete(check)
          clearTimeout(timer)
          resolve(url)
        }
      }
      const timer = setTimeout(() => {
        listeners.delete(check)
        reject(new Error(`service did not log its address within ${timeoutMs} ms; output:\n${text()}`))
      }, timeoutMs)
      listeners.add(check)
      check()
      child.exited.then(async (code) => {
        await pumped
        check()
        if (address() === undefined) {
          clearTimeout(timer)
          reject(new Error(`service exited with ${code} before listening; output:\n${text()}`))
        }
      })
    })

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    const code = await child.exited
    await pumped
    return code
  }

  return { child, output: text, ready, stop }
}

/** Waits for `promise`, failing after `ms` with `what` in the message. */
export const within = <A>(ms: number, what: string, promise: Promise<A>): Promise<A> =>
  Promise.race([
    promise,
    new Promise<A>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))
  ])

/**
 * Waits (15 s at most, for `what`) for a service that must refuse to start, and checks that it exited non-zero;
 * answers everything it printed.
 */
export const refusedStart = async (service: ServiceProcess, what: string) => {
  const code = await within(15_000, what, service.child.exited)
  await service.stop()
  expect(code).not.toBe(0)
  return service.output()
}
