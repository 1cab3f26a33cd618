import { describe, expect, test } from "bun:test"
import { Either } from "effect"
import { addressProblem, canonicalIp, checkUrl, type UrlPolicy } from "../../src/net/UrlSafety.ts"

const strict: UrlPolicy = { allowPrivate: false }
const dev: UrlPolicy = { allowPrivate: true }

/** "ok", or a fragment the refusal's reason must contain. */
type Verdict = "ok" | string

/** [url, verdict with allowPrivate=false, verdict with allowPrivate=true] */
const TABLE: ReadonlyArray<readonly [string, Verdict, Verdict]> = [
  // Loopback in every IPv4 spelling: the URL parser normalises them all to 127.0.0.1 before we classify.
  ["https://127.0.0.1/", "127.0.0.1 is loopback", "ok"],
  ["https://2130706433/", "127.0.0.1 is loopback", "ok"],
  ["https://0177.0.0.1/", "127.0.0.1 is loopback", "ok"],
  ["https://0x7f000001/", "127.0.0.1 is loopback", "ok"],
  ["https://127.1/", "127.0.0.1 is loopback", "ok"],
  ["https://0x7f.0.0.1/", "127.0.0.1 is loopback", "ok"],
  ["https://0x7f.1/", "127.0.0.1 is loopback", "ok"],
  ["https://0x7F.000.0.01/", "127.0.0.1 is loopback", "ok"],
  ["https://127.255.255.254:8443/", "127.255.255.254 is loopback", "ok"],
  ["https://%31%32%37.0.0.1/", "127.0.0.1 is loopback", "ok"],
  ["https://１２７.０.０.１/", "127.0.0.1 is loopback", "ok"],
  ["https://127。0。0。1/", "127.0.0.1 is loopback", "ok"],
  ["https://127.0.0.1./", "127.0.0.1 is loopback", "ok"],
  // IPv6 loopback and the IPv6 forms that embed an IPv4 address.
  ["https://[::1]/", "::1 is loopback", "ok"],
  ["https://[0:0:0:0:0:0:0:1]:443/", "::1 is loopback", "ok"],
  ["https://[::ffff:127.0.0.1]/", "IPv4-mapped address of 127.0.0.1, which is loopback", "ok"],
  ["https://[::ffff:7f00:1]/", "IPv4-mapped address of 127.0.0.1, which is loopback", "ok"],
  ["https://[0:0:0:0:0:ffff:127.0.0.1]/", "IPv4-mapped address of 127.0.0.1", "ok"],
  ["https://[::ffff:93.184.216.34]/", "IPv4-mapped address of 93.184.216.34", "ok"],
  ["https://[::127.0.0.1]/", "IPv4-compatible address of 127.0.0.1, which is loopback", "ok"],
  ["https://[::a00:1]/", "IPv4-compatible address of 10.0.0.1, which is private", "ok"],
  ["https://[64:ff9b::a00:1]/", "NAT64 address of 10.0.0.1, which is private", "ok"],
  ["https://[64:ff9b::10.0.0.1]/", "NAT64 address of 10.0.0.1, which is private", "ok"],
  ["https://[64:ff9b::7f00:1]/", "NAT64 address of 127.0.0.1, which is loopback", "ok"],
  ["https://[64:ff9b:1::a00:1]/", "local-use NAT64", "ok"],
  ["https://[2002:a00:1::]/", "6to4 address of 10.0.0.1, which is private", "ok"],
  ["https://[2002:7f00:1::1]/", "6to4 address of 127.0.0.1, which is loopback", "ok"],
  ["https://[2002:a9fe:a9fe::]/", "6to4 address of 169.254.169.254, which is the cloud metadata endpoint", "ok"],
  // Cloud metadata, whatever the spelling.
  ["https://169.254.169.254/latest/meta-data/", "cloud metadata endpoint", "ok"],
  ["https://0xa9fea9fe/", "169.254.169.254 is the cloud metadata endpoint", "ok"],
  ["https://2852039166/", "169.254.169.254 is the cloud metadata endpoint", "ok"],
  ["https://0251.0376.0251.0376/", "169.254.169.254 is the cloud metadata endpoint", "ok"],
  ["https://[::ffff:169.254.169.254]/", "IPv4-mapped address of 169.254.169.254, which is the cloud metadata", "ok"],
  ["https://[fd00:ec2::254]/", "AWS metadata endpoint", "ok"],
  ["https://100.100.100.200/", "cloud metadata endpoint", "ok"],
  ["https://169.254.170.2/v2/credentials", "cloud metadata endpoint", "ok"],
  ["https://168.63.129.16/", "cloud platform endpoint", "ok"],
  // Private, CGNAT and the edges of each block.
  ["https://10.0.0.1/", "10.0.0.1 is private (10.0.0.0/8)", "ok"],
  ["https://012.0.0.1/", "10.0.0.1 is private", "ok"],
  ["https://167772161/", "10.0.0.1 is private", "ok"],
  ["https://10.255.255.255/", "private", "ok"],
  ["https://9.255.255.255/", "ok", "ok"],
  ["https://11.0.0.0/", "ok", "ok"],
  ["https://172.16.0.0/", "172.16.0.0 is private (172.16.0.0/12)", "ok"],
  ["https://172.31.255.255/", "private (172.16.0.0/12)", "ok"],
  ["https://172.15.255.255/", "ok", "ok"],
  ["https://172.32.0.0/", "ok", "ok"],
  ["https://192.168.1.1/", "192.168.1.1 is private (192.168.0.0/16)", "ok"],
  ["https://0300.0250.0.1/", "192.168.0.1 is private", "ok"],
  ["https://192.167.255.255/", "ok", "ok"],
  ["https://192.169.0.0/", "ok", "ok"],
  ["https://100.64.0.0/", "carrier-grade NAT", "ok"],
  ["https://100.127.255.255/", "carrier-grade NAT", "ok"],
  ["https://100.63.255.255/", "ok", "ok"],
  ["https://100.128.0.0/", "ok", "ok"],
  // Unspecified, "this network", multicast, reserved, broadcast, benchmarking, documentation, link-local.
  ["https://0.0.0.0/", "0.0.0.0 is the unspecified address", "ok"],
  ["https://0/", "0.0.0.0 is the unspecified address", "ok"],
  ["https://0.1.2.3/", "this network", "ok"],
  ["https://224.0.0.1/", "multicast", "ok"],
  ["https://239.255.255.250/", "multicast", "ok"],
  ["https://240.0.0.1/", "reserved (240.0.0.0/4)", "ok"],
  ["https://255.255.255.255/", "broadcast", "ok"],
  ["https://198.18.0.1/", "benchmarking", "ok"],
  ["https://198.19.255.255/", "benchmarking", "ok"],
  ["https://198.17.255.255/", "ok", "ok"],
  ["https://192.0.0.8/", "IETF protocol assignments", "ok"],
  ["https://192.0.2.1/", "documentation (192.0.2.0/24)", "ok"],
  ["https://198.51.100.7/", "documentation (198.51.100.0/24)", "ok"],
  ["https://203.0.113.9/", "documentation (203.0.113.0/24)", "ok"],
  ["https://192.88.99.1/", "6to4 relay", "ok"],
  ["https://169.254.1.1/", "link-local (169.254.0.0/16)", "ok"],
  // IPv6 special ranges.
  ["https://[::]/", ":: is the unspecified address", "ok"],
  ["https://[fe80::1]/", "link-local (fe80::/10)", "ok"],
  ["https://[febf:ffff::1]/", "link-local", "ok"],
  ["https://[fec0::1]/", "site-local", "ok"],
  ["https://[fc00::1]/", "unique local (fc00::/7)", "ok"],
  ["https://[fd12:3456:789a::1]/", "unique local", "ok"],
  ["https://[ff02::1]/", "multicast", "ok"],
  ["https://[2001:db8::1]/", "documentation (2001:db8::/32)", "ok"],
  ["https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo", "ok"],
  ["https://[2001:2::1]/", "IETF protocol assignments", "ok"],
  ["https://[100::1]/", "discard-only", "ok"],
  ["https://[3fff::1]/", "documentation (3fff::/20)", "ok"],
  ["https://[4000::1]/", "not a global unicast address", "ok"],
  ["https://[1::1]/", "reserved (::/8)", "ok"],
  // Schemes, credentials, names and malformed input.
  ["http://example.com/hook", "only https URLs are accepted", "ok"],
  ["http://93.184.216.34/", "only https URLs are accepted", "ok"],
  ["http://127.0.0.1:3000/hook", "only https URLs are accepted", "ok"],
  ["ftp://example.com/file", "only https URLs are accepted", "only http and https URLs are accepted"],
  ["file:///etc/passwd", "only https URLs are accepted", "only http and https URLs are accepted"],
  ["gopher://127.0.0.1:6379/_INFO", "only https URLs are accepted", "only http and https URLs are accepted"],
  ["ws://example.com/socket", "only https URLs are accepted", "only http and https URLs are accepted"],
  ["javascript:alert(1)", "only https URLs are accepted", "only http and https URLs are accepted"],
  ["data:text/plain,hello", "only https URLs are accepted", "only http and https URLs are accepted"],
  ["https://user:pass@example.com/", "credentials", "credentials"],
  ["https://user@example.com/", "credentials", "credentials"],
  ["https://:pass@example.com/", "credentials", "credentials"],
  ["https://example.com@127.0.0.1/", "credentials", "credentials"],
  ["https://localhost/", "localhost is loopback", "ok"],
  ["https://LOCALHOST:8443/", "localhost is loopback", "ok"],
  ["https://localhost./", "localhost. is loopback", "ok"],
  ["https://api.localhost/", "api.localhost is loopback", "ok"],
  ["https://foo.localhost./", "foo.localhost. is loopback", "ok"],
  ["example.com/hook", "not a valid absolute URL", "not a valid absolute URL"],
  ["/relative/path", "not a valid absolute URL", "not a valid absolute URL"],
  ["", "not a valid absolute URL", "not a valid absolute URL"],
  ["https://exa mple.com/", "not a valid absolute URL", "not a valid absolute URL"],
  ["https://[::1/", "not a valid absolute URL", "not a valid absolute URL"],
  ["https://[fe80::1%25eth0]/", "not a valid absolute URL", "not a valid absolute URL"],
  ["https://256.0.0.1/", "not a valid absolute URL", "not a valid absolute URL"],
  ["https://0x100000000/", "not a valid absolute URL", "not a valid absolute URL"],
  ["https://foo.123/", "not a valid absolute URL", "not a valid absolute URL"],
  // Accepted: public addresses, and host names (judged after resolution, except localhost).
  ["https://93.184.216.34/", "ok", "ok"],
  ["https://8.8.8.8:8443/hook?x=1", "ok", "ok"],
  ["https://[2606:4700::1111]/", "ok", "ok"],
  ["https://[2606:4700:4700:0:0:0:0:1111]/", "ok", "ok"],
  ["https://[64:ff9b::5db8:d822]/", "ok", "ok"], // NAT64 of a public address
  ["https://[2002:5db8:d822::1]/", "ok", "ok"], // 6to4 of a public address
  ["https://example.com/hook", "ok", "ok"],
  ["https://EXAMPLE.com./hook", "ok", "ok"],
  ["https://hooks.partner.co:8443/webhooks/pms?tenant=7#frag", "ok", "ok"],
  ["https://localhost.example.com/", "ok", "ok"],
  ["https://metadata.google.internal/computeMetadata/v1/", "ok", "ok"],
  ["https://ß.example/", "ok", "ok"]
]

describe("checkUrl: the crafted-URL table", () => {
  const policies = [["allowPrivate=false", strict, 1], ["allowPrivate=true", dev, 2]] as const
  for (const [policyName, policy, column] of policies) {
    describe(policyName, () => {
      test.each(TABLE.map((row) => [row[0], row[column]] as const))("%p → %p", (url, verdict) => {
        const result = checkUrl(url, policy)
        if (verdict === "ok") {
          expect(Either.isRight(result) ? "ok" : result.left.reason).toBe("ok")
        } else {
          expect(Either.isLeft(result) ? result.left.reason : "accepted").toContain(verdict)
        }
      })
    })
  }

  test("the table is large enough and unique", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40)
    expect(new Set(TABLE.map((row) => row[0])).size).toBe(TABLE.length)
  })
})

describe("checkUrl: the Target", () => {
  test("an IPv6 literal: hostname without brackets, canonical literal, explicit port", () => {
    const target = Either.getOrThrow(checkUrl("https://[2606:4700:0:0::1111]:8443/x?y=1", strict))
    expect(target.hostname).toBe("2606:4700::1111")
    expect(target.literal).toBe("2606:4700::1111")
    expect(target.port).toBe(8443)
    expect(target.url.href).toBe("https://[2606:4700::1111]:8443/x?y=1")
  })

  test("an IPv4 literal in another spelling: the literal is the dotted address", () => {
    const target = Either.getOrThrow(checkUrl("http://0x7f.1:8080/", dev))
    expect(target).toMatchObject({ hostname: "127.0.0.1", literal: "127.0.0.1", port: 8080 })
  })

  test("a host name: lower case, no literal, default ports", () => {
    expect(Either.getOrThrow(checkUrl("https://Hooks.Example.COM/h", strict))).toMatchObject({
      hostname: "hooks.example.com",
      literal: undefined,
      port: 443
    })
    expect(Either.getOrThrow(checkUrl("http://hooks.example.com/h", dev)).port).toBe(80)
  })
})

describe("UnsafeUrl never carries credentials", () => {
  test.each([
    "https://alice:s3cret@example.com/",
    "https://alice:s3cret@10.0.0.1/",
    "http://alice:s3cret@example.com/",
    "ftp://alice:s3cret@example.com/",
    "https://alice:s3cret@exa mple.com/",
    "https://alice:s3cret@[::1/",
    "https://alice:s3/cret@exa mple.com/",
    "https://alice:s3cret@exa mple.com/?next=a@b"
  ])("%p", (url) => {
    for (const policy of [strict, dev]) {
      const error = Either.flip(checkUrl(url, policy)).pipe(Either.getOrThrow)
      expect(error._tag).toBe("UnsafeUrl")
      for (const text of [error.message, error.url, error.reason, JSON.stringify(error)]) {
        expect(text).not.toContain("s3cret")
        expect(text).not.toContain("alice")
      }
    }
  })

  test("the message is a readable sentence naming the URL and the reason", () => {
    const error = Either.flip(checkUrl("https://10.0.0.1/hook", strict)).pipe(Either.getOrThrow)
    expect(error.message).toBe(
      "the URL https://10.0.0.1/hook is not allowed: the address 10.0.0.1 is private (10.0.0.0/8)"
    )
  })
})

describe("addressProblem: resolver answers", () => {
  test.each([
    ["93.184.216.34", undefined],
    ["8.8.8.8", undefined],
    ["2606:4700:4700::1111", undefined],
    ["2a00:1450:4001:830::200e", undefined],
    ["64:ff9b::8.8.8.8", undefined],
    ["2002:808:808::1", undefined],
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["::1", "loopback"],
    ["::ffff:10.0.0.1", "IPv4-mapped address of 10.0.0.1, which is private"],
    ["::ffff:a00:1", "IPv4-mapped address of 10.0.0.1, which is private"],
    ["0:0:0:0:0:ffff:a9fe:a9fe", "cloud metadata"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "not a valid IP address"],
    ["FD00:EC2::254", "AWS metadata endpoint"],
    ["[::1]", "loopback"],
    ["0x7f.1", "loopback"],
    ["2130706433", "loopback"],
    ["127.0.0.1@8.8.8.8", "not a valid IP address"],
    ["example.com", "not a valid IP address"],
    ["1.2.3.4::", "not a valid IP address"],
    ["1:2:3:4:5:6:7:8:9", "not a valid IP address"],
    ["", "not a valid IP address"]
  ])("%p → %p", (ip, expected) => {
    const problem = addressProblem(ip)
    if (expected === undefined) expect(problem).toBeUndefined()
    else expect(problem ?? "public").toContain(expected)
  })

  test.each([
    ["2606:4700:4700:0:0:0:0:1111", "2606:4700:4700::1111"],
    ["0:0:0:0:0:ffff:7f00:1", "::ffff:7f00:1"],
    ["::ffff:127.0.0.1", "::ffff:7f00:1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"],
    ["0177.0.0.1", "127.0.0.1"],
    ["[::1]", "::1"]
  ])("canonicalIp(%p) = %p", (ip, canonical) => {
    expect(canonicalIp(ip)).toBe(canonical)
  })
})
