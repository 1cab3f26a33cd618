import { Either, Schema } from "effect"

/**
 * Outbound-URL safety (SSRF) for partner-supplied URLs: webhook endpoints and document photo URLs (design §7).
 * Pure and table-driven: a URL is judged on its scheme, its credentials and its host; an IP address is judged
 * on its numeric value against a table of special-purpose ranges (IANA IPv4/IPv6 special-purpose registries),
 * never on how it was written. Host names are judged after resolution (`SafeHttp`), except `localhost`.
 *
 * Every literal spelling of an IPv4 address (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`, `１２７.０.０.１`,
 * `%31%32%37.0.0.1`, …) is normalised to dotted decimal by the WHATWG URL parser for http(s) URLs, and IPv6
 * literals to their compressed hex form (`[::ffff:127.0.0.1]` → `[::ffff:7f00:1]`); this module then parses
 * that text into a number, so there is no string matching on addresses anywhere.
 */

/** What a deployment allows. `allowPrivate` is `WEBHOOK_ALLOW_PRIVATE_URLS`: development and tests only. */
export interface UrlPolicy {
  /** true: http:// and https:// to any address (private, loopback, …). false: https:// to public addresses only. */
  readonly allowPrivate: boolean
}

/** A refused URL. `url` never carries credentials; `reason` is a sentence ("the address 10.0.0.1 is private …"). */
export class UnsafeUrl extends Schema.TaggedError<UnsafeUrl>()("UnsafeUrl", {
  url: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `the URL ${this.url} is not allowed: ${this.reason}`
  }
}

/** A URL that passed `checkUrl`. */
export interface Target {
  readonly url: URL
  /** The host without IPv6 brackets (a name keeps a trailing dot if it was written with one). */
  readonly hostname: string
  /** The explicit port, else 443 for https and 80 for http. */
  readonly port: number
  /** The canonical IP (no brackets) when the host is an IP literal; undefined for a host name. */
  readonly literal: string | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// IP addresses as numbers
// ---------------------------------------------------------------------------------------------------------------

interface Ip {
  readonly version: 4 | 6
  /** 32 bits for IPv4, 128 bits for IPv6. */
  readonly value: bigint
}

const DOTTED = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/

/** Strict dotted decimal (no leading zeros, each part ≤ 255); anything else is not parsed here. */
const parseDotted = (text: string): bigint | undefined => {
  const m = DOTTED.exec(text)
  if (m === null) return undefined
  let value = 0n
  for (let i = 1; i <= 4; i++) {
    const part = Number(m[i])
    if (part > 255) return undefined
    value = (value << 8n) | BigInt(part)
  }
  return value
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/i

/** RFC 4291 text forms, including `::` and a trailing dotted IPv4 (`::ffff:1.2.3.4`). No zone ids. */
const parseIpv6 = (text: string): bigint | undefined => {
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groups = (half: string): Array<number> | undefined => {
    if (half === "") return []
    const out: Array<number> = []
    const parts = half.split(":")
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (i === parts.length - 1 && part.includes(".")) {
        const v4 = parseDotted(part)
        if (v4 === undefined) return undefined
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn))
      } else if (HEX_GROUP.test(part)) {
        out.push(parseInt(part, 16))
      } else {
        return undefined
      }
    }
    return out
  }
  const head = groups(halves[0]!)
  const tail = halves.length === 2 ? groups(halves[1]!) : []
  if (head === undefined || tail === undefined) return undefined
  // A dotted IPv4 may only end the address, never sit before "::".
  if (halves.length === 2 && halves[0]!.includes(".")) return undefined
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  let value = 0n
  for (const group of [...head, ...Array<number>(missing).fill(0), ...tail]) value = (value << 16n) | BigInt(group)
  return value
}

/**
 * Parses an address as the resolver or a URL gives it: dotted IPv4, IPv6 (optionally in brackets), or any
 * other IPv4 spelling the WHATWG URL parser accepts in a host (`0x7f.1`, `2130706433`, `0177.0.0.1`).
 */
const parseIp = (raw: string): Ip | undefined => {
  const text = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw
  const v4 = parseDotted(text)
  if (v4 !== undefined) return { version: 4, value: v4 }
  if (text.includes(":")) {
    const v6 = parseIpv6(text)
    return v6 === undefined ? undefined : { version: 6, value: v6 }
  }
  // Other IPv4 spellings: let the URL parser normalise them, but only for text made of number characters, so
  // that something like "127.0.0.1@8.8.8.8" is not mistaken for an address.
  if (/^[0-9a-fx.]+$/i.test(text)) {
    try {
      const normalised = parseDotted(new URL(`http://${text}/`).hostname)
      if (normalised !== undefined) return { version: 4, value: normalised }
    } catch {
      return undefined
    }
  }
  return undefined
}

const formatV4 = (value: bigint): string =>
  [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".")

/** RFC 5952: lower case, no leading zeros, the first longest run (≥ 2) of zero groups as `::`. */
const formatV6 = (value: bigint): string => {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn))
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLength) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  const hex = (from: number, to: number) => groups.slice(from, to).map((g) => g.toString(16)).join(":")
  return bestStart === -1 ? hex(0, 8) : `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`
}

const format = (ip: Ip): string => ip.version === 4 ? formatV4(ip.value) : formatV6(ip.value)

/** The canonical text of an IP address (dotted IPv4, RFC 5952 IPv6, no brackets), or undefined if it is none. */
export const canonicalIp = (text: string): string | undefined => {
  const ip = parseIp(text)
  return ip === undefined ? undefined : format(ip)
}

// ---------------------------------------------------------------------------------------------------------------
// The table of refused ranges
// ---------------------------------------------------------------------------------------------------------------

interface Range {
  readonly version: 4 | 6
  readonly base: bigint
  readonly bits: number
  /** Completes "the address X is …". */
  readonly what: string
}

const range = (cidr: string, what: string): Range => {
  const slash = cidr.indexOf("/")
  const ip = slash === -1 ? undefined : parseIp(cidr.slice(0, slash))
  if (ip === undefined) throw new Error(`bad CIDR in the URL-safety table: ${cidr}`)
  return { version: ip.version, base: ip.value, bits: Number(cidr.slice(slash + 1)), what }
}

/**
 * Special-purpose ranges that an outbound call must never reach, each with the reason shown to the partner.
 * Overlaps are deliberate: the longest matching prefix gives the reason (169.254.169.254 is "the cloud metadata
 * endpoint" rather than just link-local). IPv6 outside 2000::/3 is refused further down even when not listed.
 * The IPv6 ranges that embed an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16)
 * are not here: they are judged by their embedded address in `addressProblem`.
 */
const RANGES: ReadonlyArray<Range> = [
  range("0.0.0.0/8", `in the "this network" block (0.0.0.0/8)`),
  range("0.0.0.0/32", "the unspecified address"),
  range("10.0.0.0/8", "private (10.0.0.0/8)"),
  range("100.64.0.0/10", "carrier-grade NAT shared space (100.64.0.0/10)"),
  range("100.100.100.200/32", "a cloud metadata endpoint (Alibaba Cloud)"),
  range("127.0.0.0/8", "loopback (127.0.0.0/8)"),
  range("169.254.0.0/16", "link-local (169.254.0.0/16)"),
  range("169.254.169.254/32", "the cloud metadata endpoint (169.254.169.254)"),
  range("169.254.170.2/32", "a cloud metadata endpoint (AWS ECS task metadata)"),
  // Azure's platform endpoint (wireserver): a public-looking address that only answers from inside Azure.
  range("168.63.129.16/32", "a cloud platform endpoint (Azure 168.63.129.16)"),
  range("172.16.0.0/12", "private (172.16.0.0/12)"),
  range("192.0.0.0/24", "reserved for IETF protocol assignments (192.0.0.0/24)"),
  range("192.0.2.0/24", "reserved for documentation (192.0.2.0/24)"),
  range("192.88.99.0/24", "a deprecated 6to4 relay anycast address (192.88.99.0/24)"),
  range("192.168.0.0/16", "private (192.168.0.0/16)"),
  range("198.18.0.0/15", "reserved for benchmarking (198.18.0.0/15)"),
  range("198.51.100.0/24", "reserved for documentation (198.51.100.0/24)"),
  range("203.0.113.0/24", "reserved for documentation (203.0.113.0/24)"),
  range("224.0.0.0/4", "multicast (224.0.0.0/4)"),
  range("240.0.0.0/4", "reserved (240.0.0.0/4)"),
  range("255.255.255.255/32", "the broadcast address"),

  range("::/8", "reserved (::/8)"),
  range("::/128", "the unspecified address"),
  range("::1/128", "loopback (::1)"),
  range("64:ff9b:1::/48", "local-use NAT64 (64:ff9b:1::/48)"),
  range("100::/64", "discard-only (100::/64)"),
  range("2001::/23", "reserved for IETF protocol assignments (2001::/23)"),
  range("2001::/32", "a Teredo tunnel address (2001::/32)"),
  range("2001:db8::/32", "reserved for documentation (2001:db8::/32)"),
  range("3fff::/20", "reserved for documentation (3fff::/20)"),
  range("5f00::/16", "an SRv6 segment identifier (5f00::/16)"),
  range("fc00::/7", "unique local (fc00::/7)"),
  range("fd00:ec2::254/128", "the AWS metadata endpoint (fd00:ec2::254)"),
  range("fd20:ce::254/128", "the Google Cloud metadata endpoint (fd20:ce::254)"),
  range("fe80::/10", "link-local (fe80::/10)"),
  range("fec0::/10", "deprecated site-local (fec0::/10)"),
  range("ff00::/8", "multicast (ff00::/8)")
]

const contains = (r: Range, ip: Ip): boolean => {
  if (r.version !== ip.version) return false
  const shift = BigInt((ip.version === 4 ? 32 : 128) - r.bits)
  return (ip.value >> shift) === (r.base >> shift)
}

/** The reason of the longest matching range, or undefined. */
const lookupRange = (ip: Ip): string | undefined => {
  let best: Range | undefined
  for (const r of RANGES) if (contains(r, ip) && (best === undefined || r.bits > best.bits)) best = r
  return best?.what
}

const v6 = (cidr: string) => range(cidr, "")
const MAPPED = v6("::ffff:0:0/96")
const COMPATIBLE = v6("::/96")
const NAT64 = v6("64:ff9b::/96")
const SIX_TO_FOUR = v6("2002::/16")
const GLOBAL_UNICAST = v6("2000::/3")

const v4 = (value: bigint): Ip => ({ version: 4, value: value & 0xffffffffn })

/** "an IPv4-mapped address of 127.0.0.1, which is loopback (127.0.0.0/8)". */
const embedded = (kind: string, inner: Ip, problem: string | undefined) => {
  const address = formatV4(inner.value)
  return problem === undefined
    ? `${kind} of ${address} (write ${address} itself)`
    : `${kind} of ${address}, which is ${problem}`
}

const ipProblem = (ip: Ip): string | undefined => {
  if (ip.version === 4) return lookupRange(ip)
  // ::ffff:a.b.c.d and ::a.b.c.d only exist inside socket APIs; on the wire they are always a trick, so they are
  // refused even when the embedded IPv4 is public (the reason still says what it embeds).
  if (contains(MAPPED, ip) || contains(COMPATIBLE, ip) && ip.value > 1n) {
    const inner = v4(ip.value)
    const kind = contains(MAPPED, ip) ? "an IPv4-mapped address" : "a deprecated IPv4-compatible address"
    return embedded(kind, inner, lookupRange(inner))
  }
  // NAT64 and 6to4 are real, routable translations: judged by the IPv4 address they lead to.
  if (contains(NAT64, ip)) {
    const inner = v4(ip.value)
    const problem = lookupRange(inner)
    return problem === undefined ? undefined : embedded("a NAT64 address", inner, problem)
  }
  if (contains(SIX_TO_FOUR, ip)) {
    const inner = v4(ip.value >> 80n)
    const problem = lookupRange(inner)
    return problem === undefined ? undefined : embedded("a 6to4 address", inner, problem)
  }
  if (!contains(GLOBAL_UNICAST, ip)) return lookupRange(ip) ?? "not a global unicast address (outside 2000::/3)"
  return lookupRange(ip)
}

/**
 * Why an outbound call must not connect to `ip`, as a sentence ("the address 10.0.0.1 is private (10.0.0.0/8)"),
 * or undefined for a public unicast address. IPv6 forms embedding an IPv4 address (mapped, compatible, NAT64,
 * 6to4) are judged by the embedded address. Text that is not an IP address is a problem too (fail closed).
 */
export const addressProblem = (ip: string): string | undefined => {
  const parsed = parseIp(ip)
  if (parsed === undefined) return `${JSON.stringify(ip)} is not a valid IP address`
  const problem = ipProblem(parsed)
  return problem === undefined ? undefined : `the address ${format(parsed)} is ${problem}`
}

// ---------------------------------------------------------------------------------------------------------------
// URLs
// ---------------------------------------------------------------------------------------------------------------

/** The URL as shown in errors and logs: without `user:password@`, even when it does not parse. */
const redact = (raw: string, url?: URL): string => {
  if (url !== undefined) {
    const copy = new URL(url.href)
    copy.username = ""
    copy.password = ""
    return copy.href
  }
  // Unparseable: everything up to the last "@" may be credentials (a password may hold "/", "?" or "#").
  const text = raw.trim()
  const at = text.lastIndexOf("@")
  const scheme = /^[a-z][a-z0-9+.-]*:[/\\]*/i.exec(text)?.[0] ?? ""
  return (at === -1 ? text : `${scheme}***${text.slice(at)}`).slice(0, 500)
}

const isLocalhostName = (hostname: string) => {
  const name = hostname.replace(/\.+$/, "")
  return name === "localhost" || name.endsWith(".localhost")
}

/**
 * Checks a partner-supplied URL without any I/O. With `allowPrivate: false`: https only, no credentials, not
 * `localhost`/`*.localhost`, and an IP-literal host must be public. With `allowPrivate: true`: http or https,
 * no credentials, any host. Host names still have to be resolved and their addresses checked (`SafeHttp`).
 */
export const checkUrl = (raw: string, policy: UrlPolicy): Either.Either<Target, UnsafeUrl> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(new UnsafeUrl({ url: redact(raw), reason: "it is not a valid absolute URL" }))
  }
  const refuse = (reason: string) => Either.left(new UnsafeUrl({ url: redact(raw, url), reason }))

  const https = url.protocol === "https:"
  if (!https && !(policy.allowPrivate && url.protocol === "http:")) {
    return refuse(policy.allowPrivate ? "only http and https URLs are accepted" : "only https URLs are accepted")
  }
  if (url.username !== "" || url.password !== "") {
    return refuse("URLs with credentials (user:password@) are not accepted")
  }

  const bracketed = url.hostname.startsWith("[")
  const hostname = bracketed ? url.hostname.slice(1, -1) : url.hostname
  if (hostname === "") return refuse("the URL has no host")

  // For http(s) the URL parser leaves a host that is a dotted IPv4 (whatever spelling was written), a bracketed
  // IPv6 or a domain name (a name whose last label is a number is an invalid URL). A number-like last label that
  // is not a plain IPv4 would mean a parser that behaves otherwise: refuse rather than guess.
  let literal: string | undefined
  if (bracketed || parseDotted(hostname) !== undefined) {
    const ip = parseIp(hostname)
    if (ip === undefined) return refuse(`the host ${hostname} is not a valid address`)
    literal = format(ip)
  } else if (/(^|\.)(\d+|0x[0-9a-f]*)\.?$/i.test(hostname)) {
    return refuse(`the host ${hostname} is not a valid address`)
  }

  if (!policy.allowPrivate) {
    if (literal !== undefined) {
      const problem = addressProblem(literal)
      if (problem !== undefined) return refuse(problem)
    } else if (isLocalhostName(hostname)) {
      return refuse(`the host name ${hostname} is loopback`)
    }
  }

  const port = url.port !== "" ? Number(url.port) : https ? 443 : 80
  return Either.right({ url, hostname, port, literal })
}
