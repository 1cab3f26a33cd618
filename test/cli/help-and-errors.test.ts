import type { Server } from "bun"
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { type CliResult, runCli, runCliInTerminal } from "../support/process.ts"

/**
 * The ops CLI as a person meets it (issue 14, item 7), run as a real process: its help, its colours, its
 * answers to a mistyped command line, and to a service it cannot reach. None of this needs the service: a
 * value the API would refuse is refused before any call, which a server counting requests proves.
 */

const ESC = "\u001b"

/** Every command, as typed after `cli`. */
const COMMANDS = [
  "migrate",
  "accounts create",
  "accounts limits",
  "accounts enable-live",
  "sandbox create",
  "keys create",
  "keys revoke",
  "keys list",
  "properties create",
  "properties update",
  "reports run",
  "reports list",
  "reports retry",
  "sire files",
  "sire confirm",
  "reference list",
  "reference set",
  "reference unset",
  "secrets rotate"
]

/** An HTTP server that counts the requests it gets: the CLI must send none when it refuses a value. */
let counter: Server<undefined>
let requests = 0
const token = "not-needed"

beforeAll(() => {
  counter = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => {
      requests++
      return new Response("counted", { status: 500 })
    }
  })
})

afterAll(() => counter?.stop(true))

const viaCounter = (...args: Array<string>) =>
  runCli(["--url", `http://127.0.0.1:${counter.port}`, "--token", token, ...args])

/** A port nothing listens on: bound by us, then released. */
const closedPort = () => {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() })
  const port = server.port
  server.stop(true)
  return port
}

/** A refused command line: exit 2, nothing on stdout, one line on stderr, the `{error, code}` document. */
const refused = (result: CliResult, code: string) => {
  expect({ exit: result.code, stdout: result.stdout }).toEqual({ exit: 2, stdout: "" })
  expect(result.stderr.endsWith("\n")).toBe(true)
  expect(result.stderr.trimEnd().split("\n")).toHaveLength(1)
  expect(result.error).toEqual({ error: expect.any(String), code })
  expect(result.stderr).not.toContain(ESC)
  return result.error.error as string
}

/** The help blocks of the options: `--name VALUE` followed by its indented lines. */
const optionBlocks = (help: string) => {
  const section = help.slice(help.indexOf("\nOPTIONS\n"), help.search(/\n(COMMANDS|OUTPUT)\n/))
  return section.split(/\n(?=--)/).slice(1).map((block) => ({ heading: block.split("\n")[0]!, text: block }))
}

describe("help", () => {
  test("cli --help: each command with its summary, the global options with default and example, no ANSI", async () => {
    const result = await runCli(["--help"])
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
    const help = result.stdout
    expect(help).not.toContain(ESC)
    expect(help).toContain("$ cli [--url URL] [--token TOKEN]")
    expect(help).toMatch(/- accounts create +Create a partner account\./)
    expect(help).toMatch(/- reports run +Run now every live TRA and SIRE report that is due/)
    for (const command of COMMANDS) expect(help).toMatch(new RegExp(`- ${command} +[A-Z]`))
    expect(help).toContain("Default: $ADMIN_URL, else http://127.0.0.1:$PORT")
    expect(help).toContain("Example: --url http://")
    // @effect/cli's placeholder and its padding of the command list to 400 columns are gone.
    expect(help).not.toContain("A user-defined piece of text.")
    for (const line of help.split("\n")) expect(line).toBe(line.trimEnd())
  })

  test("cli keys create --help: what it does and prints, an example, each option's default and example", async () => {
    const result = await runCli(["keys", "create", "--help"])
    expect(result.code).toBe(0)
    const help = result.stdout
    expect(help).not.toContain(ESC)
    expect(help).toContain("$ cli keys create --account ACCOUNT_ID --env test|live")
    expect(help).toContain("Create an API key; at most 3 active keys per environment.")
    expect(help).toContain("Prints {key_id, api_key, environment}")
    expect(help).toMatch(/Example: cli keys create --account \S+ --env live/)
    const env = optionBlocks(help).find((o) => o.heading === "--env test|live")!
    expect(env.text).toContain("test: a sandbox key")
    expect(env.text).toContain("Required.")
    expect(env.text).toContain("Example: --env test")
  })

  test("a group's help lists its commands; reports run --help gives --date's format and default", async () => {
    const [keys, reports] = await Promise.all([runCli(["keys", "--help"]), runCli(["reports", "run", "--help"])])
    expect(keys.stdout).toMatch(/- keys revoke +Revoke an API key/)
    const date = optionBlocks(reports.stdout).find((o) => o.heading === "--date YYYY-MM-DD")!
    expect(date.text).toContain("Default: today in Bogotá")
    expect(date.text).toContain("Example: --date 2026-03-05")
  })

  test("every command: a description and an example; every option a default (or Required.), an example", async () => {
    const helps = await Promise.all(COMMANDS.map((command) => runCli([...command.split(" "), "--help"])))
    helps.forEach((result, i) => {
      const command = COMMANDS[i]!
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(`$ cli ${command}`)
      expect(result.stdout).toContain("DESCRIPTION")
      expect(result.stdout).toMatch(new RegExp(`Example: (\\S+=\\S+ )?cli ${command}`))
      expect(result.stdout).not.toContain("A user-defined piece of text.")
      for (const option of optionBlocks(result.stdout)) {
        expect({ command, option: option.heading, described: /\n {2}(Default: |Required\.)/.test(option.text) })
          .toEqual({ command, option: option.heading, described: true })
        expect({ command, option: option.heading, example: option.text.includes("\n  Example: --") })
          .toEqual({ command, option: option.heading, example: true })
      }
    })
  }, 180_000) // one CLI process per command (about 50 s on an idle 2-core machine): above the suite's 60 s default

  test("reports list, reports retry and reference set --help: what they print, filters, and the values' rules", async () => {
    const [list, retry, set] = await Promise.all([
      runCli(["reports", "list", "--help"]),
      runCli(["reports", "retry", "--help"]),
      runCli(["reference", "set", "--help"])
    ])
    expect(list.stdout).toContain("$ cli reports list [--status pending|error] [--overdue] [--property PROPERTY_ID]")
    expect(list.stdout).toContain("overdue}], next_cursor}")
    const status = optionBlocks(list.stdout).find((o) => o.heading === "--status pending|error")!
    expect(status.text).toContain("Default: both")
    expect(retry.stdout).toContain("$ cli reports retry --reservation RESERVATION_ID")
    expect(retry.stdout).toContain("nothing_to_retry")
    expect(set.stdout).toContain("$ cli reference set --table TABLE --key KEY [--value VALUE] [--unmapped] [--note TEXT]")
    const table = optionBlocks(set.stdout).find((o) => o.heading === "--table TABLE")!
    for (const name of ["sire-countries", "sire-documents", "tra-documents", "tra-motivos"]) expect(table.text).toContain(name)
    const value = optionBlocks(set.stdout).find((o) => o.heading === "--value VALUE")!
    expect(value.text).toContain("1 to 3 digits without leading zeros")
  })

  test("on a terminal the help is in colour; with NO_COLOR set (any value) it is not, in a pipe neither", async () => {
    const [coloured, noColor, noColorWord, piped] = await Promise.all([
      runCliInTerminal(["keys", "create", "--help"]),
      runCliInTerminal(["keys", "create", "--help"], { NO_COLOR: "1" }),
      runCliInTerminal(["keys", "create", "--help"], { NO_COLOR: "yes" }),
      runCli(["keys", "create", "--help"], { NO_COLOR: "1" })
    ])
    expect(coloured.code).toBe(0)
    expect(coloured.output).toContain(`${ESC}[`)
    for (const plain of [noColor.output, noColorWord.output, piped.stdout]) {
      expect(plain).toContain("$ cli keys create --account ACCOUNT_ID --env test|live")
      expect(plain).not.toContain(ESC)
    }
  })
})

describe("a mistyped command line: one line saying what was expected, exit 2", () => {
  test("an unknown command names the commands there are", async () => {
    const message = refused(await runCli(["frob"]), "invalid_arguments")
    expect(message).toBe(
      "unknown command \"frob\" for cli; expected one of: migrate, accounts, sandbox, keys, properties, reports, "
        + "sire, reference, secrets; see cli --help"
    )
  })

  test("an unknown subcommand names its group's commands and the nearest one", async () => {
    const message = refused(await runCli(["keys", "lst", "--account", "x"]), "invalid_arguments")
    expect(message).toBe(
      "unknown command \"lst\" for cli keys; expected one of: create, revoke, list (did you mean \"list\"?); "
        + "see cli keys --help"
    )
  })

  test("a missing required option and an unknown flag are named", async () => {
    const [missing, unknown] = await Promise.all([
      runCli(["keys", "create", "--env", "test"]),
      runCli(["keys", "list", "--acount", "x"])
    ])
    expect(refused(missing, "invalid_arguments")).toContain("'--account'")
    expect(refused(unknown, "invalid_arguments")).toContain("Did you mean '--account'?")
  })

  test("a bad date names the option, the format and the value, and nothing is sent", async () => {
    requests = 0
    const message = refused(await viaCounter("reports", "run", "--date", "2026-13-40"), "invalid_request")
    expect(message).toBe(
      "--date must be a real calendar date written YYYY-MM-DD (got \"2026-13-40\"); see cli reports run --help"
    )
    expect(refused(await viaCounter("reports", "run", "--date", "05/03/2026"), "invalid_request")).toContain(
      "YYYY-MM-DD (got \"05/03/2026\")"
    )
    expect(requests).toBe(0)
  })

  test("accounts create --email not-an-email is refused before any call, with the API's e-mail rule", async () => {
    requests = 0
    const message = refused(
      await viaCounter("accounts", "create", "--name", "Hotelera Caribe", "--email", "not-an-email"),
      "invalid_request"
    )
    expect(message).toBe("--email must be an e-mail address (got \"not-an-email\"); see cli accounts create --help")
    // The API's rule, not a looser one: no domain with a dot is no address (Reservation.ts Email).
    refused(await viaCounter("accounts", "create", "--name", "H", "--email", "ops@localhost"), "invalid_request")
    expect(requests).toBe(0)
  })

  test("environments and limits are held to the admin RPC's schemas before any call", async () => {
    requests = 0
    const [env, zero, word, huge] = await Promise.all([
      viaCounter("keys", "create", "--account", "x", "--env", "prod"),
      viaCounter("accounts", "limits", "--account", "x", "--reads", "0"),
      viaCounter("accounts", "limits", "--account", "x", "--writes", "many"),
      viaCounter("accounts", "limits", "--account", "x", "--tests", "1000001")
    ])
    expect(refused(env, "invalid_request")).toBe(
      "--env must be test or live (got \"prod\"); see cli keys create --help"
    )
    expect(refused(zero, "invalid_request")).toStartWith(
      "--reads must be a whole number from 1 to 1000000 (got \"0\")"
    )
    expect(refused(word, "invalid_request")).toStartWith("--writes must be a whole number from 1 to 1000000")
    expect(refused(huge, "invalid_request")).toStartWith("--tests must be a whole number from 1 to 1000000")
    expect(requests).toBe(0)
  })

  test("reports and reference values are held to the service's schemas before any call", async () => {
    requests = 0
    const [status, table, key, code, unmapped, note, both, keyAlone] = await Promise.all([
      viaCounter("reports", "list", "--status", "failed"),
      viaCounter("reference", "list", "--table", "countries"),
      viaCounter("reference", "unset", "--table", "sire-countries", "--key", "Russia"),
      viaCounter("reference", "set", "--table", "sire-documents", "--key", "PPT", "--value", "048"),
      viaCounter("reference", "set", "--table", "tra-documents", "--key", "PPT", "--unmapped"),
      viaCounter("reference", "set", "--table", "tra-motivos", "--key", "Compras", "--value", "Compras", "--note", " "),
      viaCounter("reference", "set", "--table", "sire-countries", "--key", "RU", "--value", "673", "--unmapped"),
      viaCounter("reference", "list", "--key", "RU")
    ])
    expect(refused(status, "invalid_request")).toBe(
      "--status must be pending or error (got \"failed\"); see cli reports list --help"
    )
    expect(refused(table, "invalid_request")).toBe(
      "--table must be one of: sire-countries, sire-documents, tra-documents, tra-motivos (got \"countries\"); "
        + "see cli reference list --help"
    )
    expect(refused(key, "invalid_request")).toBe(
      "--key for sire-countries must be an assigned ISO 3166-1 alpha-2 country code in capitals, such as RU "
        + "(got \"Russia\"); see cli reference unset --help"
    )
    expect(refused(code, "invalid_request")).toBe(
      "--value for sire-documents must be 1 to 3 digits without leading zeros (got \"048\"); see cli reference set --help"
    )
    expect(refused(unmapped, "invalid_request")).toStartWith("--unmapped: tra-documents needs a value for every key")
    expect(refused(note, "invalid_request")).toStartWith("--note must be 1 to 500 characters")
    expect(refused(both, "invalid_arguments")).toBe("--value / --unmapped: pass one of the two; see cli reference set --help")
    expect(refused(keyAlone, "invalid_arguments")).toStartWith("--key needs --table")
    expect(requests).toBe(0)
  })

  test("--url that is not an http(s) URL is refused", async () => {
    const result = await runCli(["--url", "localhost:3000", "keys", "list", "--account", "x"])
    const message = refused(result, "invalid_arguments")
    expect(message).toStartWith("--url must be an http:// or https:// URL (got \"localhost:3000\")")
  })

  test("on a terminal: `error: …` in one line, no JSON, no colour", async () => {
    const result = await runCliInTerminal(["kees", "list"])
    expect(result.code).toBe(2)
    expect(result.output).toBe(
      "error: unknown command \"kees\" for cli; expected one of: migrate, accounts, sandbox, keys, properties, "
        + "reports, sire, reference, secrets (did you mean \"keys\"?); see cli --help [invalid_arguments]\r\n"
    )
  })
})

describe("a service the CLI cannot reach: admin_unreachable names the URL tried and how to change it", () => {
  const unreachable = (result: CliResult) => {
    expect({ exit: result.code, stdout: result.stdout }).toEqual({ exit: 1, stdout: "" })
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(result.error).toEqual({ error: expect.any(String), code: "admin_unreachable" })
    return result.error.error as string
  }

  test("the default URL: says it comes from PORT and names --url, ADMIN_URL and PORT", async () => {
    const port = closedPort()
    const result = await runCli(["--token", token, "keys", "list", "--account", "x"], { PORT: String(port) })
    const message = unreachable(result)
    expect(message).toBe(
      `cannot call the admin RPC at http://127.0.0.1:${port}/rpc/admin: connection refused (nothing listens there); `
        + `no --url or ADMIN_URL was given, so the URL is http://127.0.0.1:$PORT (PORT=${port}): pass --url, set `
        + "ADMIN_URL, or set PORT to the service's port on this host"
    )
  })

  test("ADMIN_URL and --url: each named as where the URL came from", async () => {
    const port = closedPort()
    const [fromEnv, fromFlag] = await Promise.all([
      runCli(["--token", token, "keys", "list", "--account", "x"], { ADMIN_URL: `http://127.0.0.1:${port}` }),
      runCli(["--url", `http://127.0.0.1:${port}/`, "--token", token, "keys", "list", "--account", "x"], {
        ADMIN_URL: "http://127.0.0.1:9"
      })
    ])
    expect(unreachable(fromEnv)).toBe(
      `cannot call the admin RPC at http://127.0.0.1:${port}/rpc/admin: connection refused (nothing listens there); `
        + "the URL comes from ADMIN_URL: change it or pass --url"
    )
    expect(unreachable(fromFlag)).toBe(
      `cannot call the admin RPC at http://127.0.0.1:${port}/rpc/admin: connection refused (nothing listens there); `
        + "the URL comes from --url (ADMIN_URL is not used when --url is given)"
    )
  })

  test("a server that is not the service: its HTTP status, and the same advice", async () => {
    const message = unreachable(await viaCounter("keys", "list", "--account", "x"))
    expect(message).toStartWith(
      `cannot call the admin RPC at http://127.0.0.1:${counter.port}/rpc/admin: `
        + "it answered HTTP 500, not as the admin RPC"
    )
    expect(message).toContain("the URL comes from --url")
  })
})
