/** What a domain may be named, and which ports an app may listen on (Name.ts). */
import { Domain, ValidationFailed } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"

const apps = "apps.localhost"
const detail = (result: Result.Result<unknown, { readonly detail: string }>) =>
  Result.isFailure(result) ? result.failure.detail : undefined
const ok = <A>(result: Result.Result<A, unknown>) => {
  assert.isTrue(Result.isSuccess(result), JSON.stringify(result))
  return (result as Result.Success<A, unknown>).success
}

describe("parseSubdomain", () => {
  it("accepts one DNS label, lowercased; an IDN label becomes punycode", () => {
    assert.strictEqual(ok(Domain.parseSubdomain("My-App1")), "my-app1")
    assert.strictEqual(ok(Domain.parseSubdomain("bücher")), "xn--bcher-kva")
    assert.strictEqual(ok(Domain.parseSubdomain("a".repeat(63))), "a".repeat(63))
  })

  it("refuses dots, empty, over-long labels, leading or trailing hyphens, underscores and non-strings", () => {
    for (const bad of ["a.b", "", "  ", "a".repeat(64), "-app", "app-", "my_app", "app/x", "app:80", 42, null, undefined]) {
      assert.isTrue(Result.isFailure(Domain.parseSubdomain(bad)), String(bad))
    }
  })

  it("refuses the brand in any case, inside a label too, and in an IDN's Unicode form", () => {
    for (const bad of ["cairn", "MyCAIRNapp", "x-Cairn-y", "ｃａｉｒｎ", "cairnö"]) {
      assert.strictEqual(detail(Domain.parseSubdomain(bad)), `a domain name may not contain "cairn"`, bad)
    }
  })
})

describe("parseCustomDomain", () => {
  it("accepts host names: lowercased, trailing dot dropped, IDN as punycode", () => {
    assert.strictEqual(ok(Domain.parseCustomDomain("App.Example.COM", apps)), "app.example.com")
    assert.strictEqual(ok(Domain.parseCustomDomain("example.com.", apps)), "example.com")
    assert.strictEqual(ok(Domain.parseCustomDomain("bücher.de", apps)), "xn--bcher-kva.de")
    assert.strictEqual(ok(Domain.parseCustomDomain("xn--bcher-kva.de", apps)), "xn--bcher-kva.de")
  })

  it("refuses IP literals, single labels, URLs, ports, paths, bad labels and long names", () => {
    const cases: Record<string, unknown> = {
      ipv4: "192.168.1.1",
      ipv4Short: "127.1",
      ipv4Hex: "0x7f.1",
      ipv6: "[::1]",
      single: "localhost",
      url: "https://example.com",
      port: "example.com:8080",
      path: "example.com/x",
      user: "u@example.com",
      space: "exa mple.com",
      underscore: "my_app.example.com",
      hyphen: "-a.example.com",
      label64: `${"a".repeat(64)}.com`,
      total254: `${Array.from({ length: 5 }, () => "a".repeat(50)).join(".")}.com`,
      empty: "",
      number: 1
    }
    for (const [name, input] of Object.entries(cases)) {
      assert.isTrue(Result.isFailure(Domain.parseCustomDomain(input, apps)), name)
    }
    assert.strictEqual(detail(Domain.parseCustomDomain("10.0.0.1", apps)), "customDomain must be a host name, not an IP address")
    assert.strictEqual(detail(Domain.parseCustomDomain(`${"a".repeat(64)}.com`, apps)), "customDomain labels must be at most 63 characters")
  })

  it("refuses the brand anywhere, in any case and width, and inside a punycode-encoded IDN", () => {
    for (const bad of ["cairn.io", "shop.MYCAIRN.com", "ｃａｉｒｎ.com", "cäirn.com".replace("ä", "a"), "xn--cairn-jua.com", "über-cairn.de"]) {
      assert.strictEqual(detail(Domain.parseCustomDomain(bad, apps)), `a domain name may not contain "cairn"`, bad)
    }
  })

  it("refuses names under the apps domain (those are subdomains)", () => {
    assert.strictEqual(detail(Domain.parseCustomDomain("x.apps.localhost", apps)), "customDomain may not be under apps.localhost: add a subdomain instead")
    assert.isTrue(Result.isFailure(Domain.parseCustomDomain("APPS.localhost", apps)))
    assert.isTrue(Result.isSuccess(Domain.parseCustomDomain("myapps.localhost", apps)))
  })
})

describe("parseTargetPort", () => {
  it("accepts 1025–65535 except the gateway's port", () => {
    assert.strictEqual(ok(Domain.parseTargetPort(1025)), 1025)
    assert.strictEqual(ok(Domain.parseTargetPort(65535)), 65535)
    for (const bad of [1024, 65536, 0, -1, 3000.5, "3000", null, Number.NaN]) assert.isTrue(Result.isFailure(Domain.parseTargetPort(bad)), String(bad))
    assert.strictEqual(detail(Domain.parseTargetPort(18789)), "targetPort 18789 is the agent gateway's port")
  })
})

describe("requestHost", () => {
  it("normalizes a Host header: case, port, trailing dot; refuses IP-v6 literals and junk", () => {
    assert.strictEqual(Domain.requestHost("Shop.Example.com:443"), "shop.example.com")
    assert.strictEqual(Domain.requestHost("shop.example.com."), "shop.example.com")
    assert.strictEqual(Domain.requestHost("[::1]:80"), undefined)
    assert.strictEqual(Domain.requestHost("a b"), undefined)
    assert.strictEqual(Domain.requestHost(""), undefined)
  })
})

describe("any input", () => {
  const valid = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{1,63}$/
  it("is refused with Validation failed or accepted as a lowercase host name without the brand, never thrown", () => {
    const input = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 80 }),
      fc.array(fc.stringMatching(/^[A-Za-z0-9ü_.-]{0,12}$/), { minLength: 1, maxLength: 5 }).map((labels) => labels.join(".")),
      fc.anything()
    )
    fc.assert(fc.property(input, (value) => {
      for (const result of [Domain.parseCustomDomain(value, apps), Domain.parseSubdomain(value)]) {
        if (Result.isFailure(result)) {
          assert.instanceOf(result.failure, ValidationFailed)
          continue
        }
        const name = result.success
        assert.isFalse(name.includes("cairn"))
        assert.isAtMost(name.length, 253)
        assert.isTrue(valid.test(name) || /^[a-z0-9-]{1,63}$/.test(name), name)
      }
    }), { numRuns: 2000 })
  })
})
