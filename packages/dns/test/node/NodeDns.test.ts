/**
 * The Node adapter of the Dns port against a real DNS server on loopback (dns2 on an ephemeral UDP port): TXT
 * records (one, several, split into character-strings), a name that does not exist, a name without TXT, and a
 * server that does not answer (503-style DnsUnavailable, never an empty answer).
 */
import { Dns, DnsUnavailable } from "@cairn/dns"
import { NodeDns } from "@cairn/dns/node"
import { LoopbackDns } from "@cairn/dns/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"

let dns: LoopbackDns.LoopbackDns
beforeAll(async () => {
  dns = await LoopbackDns.start()
})
afterAll(() => dns.close())

const txt = (name: string, options: NodeDns.NodeDnsOptions = {}) =>
  Effect.runPromiseExit(Dns.use((d) => d.txt(name)).pipe(Effect.provide(NodeDns.layer({ servers: [dns.server], ...options }))))

describe("NodeDns.txt", () => {
  it("answers the TXT records published at a name, each record's character-strings joined", async () => {
    dns.setTxt("_service-verify.example.com", ["first", ["sec", "ond"]])
    const exit = await txt("_service-verify.example.com")
    assert.isTrue(Exit.isSuccess(exit))
    if (Exit.isSuccess(exit)) assert.sameMembers([...exit.value.records], ["first", "second"])
  })

  it("sees a record as soon as it is published, and its removal (nothing is cached by the adapter)", async () => {
    dns.clear("_service-verify.fresh.example")
    const before = await txt("_service-verify.fresh.example")
    assert.deepStrictEqual(Exit.isSuccess(before) ? before.value.records : "failed", [])
    dns.setTxt("_service-verify.fresh.example", ["now"])
    const after = await txt("_service-verify.fresh.example")
    assert.deepStrictEqual(Exit.isSuccess(after) ? after.value.records : "failed", ["now"])
  })

  it("answers no records (with the reason) for a name that does not exist", async () => {
    const exit = await txt("_service-verify.nowhere.example")
    assert.isTrue(Exit.isSuccess(exit))
    if (Exit.isSuccess(exit)) {
      assert.deepStrictEqual(exit.value.records, [])
      assert.strictEqual(exit.value.reason, "ENOTFOUND")
    }
  })

  it("answers no records for a name that exists without TXT records", async () => {
    dns.setTxt("empty.example", [])
    const exit = await txt("empty.example")
    assert.isTrue(Exit.isSuccess(exit))
    if (Exit.isSuccess(exit)) assert.deepStrictEqual(exit.value.records, [])
  })

  it("fails with DnsUnavailable (503, DNS lookup failed) when the server does not answer", async () => {
    dns.mute(true)
    try {
      const exit = await txt("_service-verify.example.com", { timeoutMs: 100, tries: 1 })
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = exit.cause.reasons.find((r) => r._tag === "Fail")
        assert.instanceOf((error as { error: unknown } | undefined)?.error, DnsUnavailable)
        const failure = (error as { error: DnsUnavailable }).error
        assert.strictEqual(failure.status, 503)
        assert.strictEqual(failure.message, "DNS lookup failed")
        assert.strictEqual(failure.code, "ETIMEOUT")
      }
    } finally {
      dns.mute(false)
    }
  })

  it("parses DNS_SERVERS", () => {
    assert.deepStrictEqual(NodeDns.parseServers(" 1.1.1.1, 127.0.0.1:5353 ,,[::1]:53"), ["1.1.1.1", "127.0.0.1:5353", "[::1]:53"])
  })
})
