/** The simulated gateway's DM pairing (simulated/Channels.ts), kept as OpenClaw keeps it. */
import { assert, describe, it } from "@effect/vitest"
import * as ChannelStore from "../../src/simulated/Channels.ts"

const hour = 3_600_000

describe("the simulated channels' DM pairing", () => {
  it("gives each new sender the next code, and a sender asking again the same one", () => {
    const store = ChannelStore.empty()
    let n = 0
    const next = () => ChannelStore.pairingCode(n++)
    const first = ChannelStore.requestPairing(store, "telegram", "1", 0, next)
    assert.strictEqual(ChannelStore.requestPairing(store, "telegram", "1", 10, next), first)
    const second = ChannelStore.requestPairing(store, "telegram", "2", 20, next)
    assert.deepStrictEqual([first, second], [ChannelStore.pairingCode(0), ChannelStore.pairingCode(1)])
    assert.match(first, /^[A-HJ-NP-Z2-9]{8}$/)
    assert.deepStrictEqual(ChannelStore.pendingPairing(store, "telegram", 30).map((r) => [r.code, r.senderId, r.createdAt, r.expiresAt]), [
      [first, "1", new Date(0).toISOString(), new Date(hour).toISOString()],
      [second, "2", new Date(20).toISOString(), new Date(20 + hour).toISOString()]
    ])
    assert.deepStrictEqual(ChannelStore.pendingPairing(store, "slack", 30), [])
  })

  it("approves by code in any case: the sender is allowed, the code spent", () => {
    const store = ChannelStore.empty()
    const code = ChannelStore.requestPairing(store, "telegram", "1", 0, () => "ABCD2345")
    assert.strictEqual(ChannelStore.approvePairing(store, "telegram", code.toLowerCase(), 1), "1")
    assert.isUndefined(ChannelStore.approvePairing(store, "telegram", code, 2))
    assert.deepStrictEqual(ChannelStore.approvedSenders(store, "telegram"), ["1"])
    assert.deepStrictEqual(ChannelStore.pendingPairing(store, "telegram", 3), [])
  })

  it("forgets a request an hour after it was made", () => {
    const store = ChannelStore.empty()
    const code = ChannelStore.requestPairing(store, "telegram", "1", 0, () => "ABCD2345")
    assert.strictEqual(ChannelStore.pendingPairing(store, "telegram", hour).length, 1)
    assert.deepStrictEqual(ChannelStore.pendingPairing(store, "telegram", hour + 1), [])
    assert.isUndefined(ChannelStore.approvePairing(store, "telegram", code, hour + 1))
    assert.deepStrictEqual(ChannelStore.approvedSenders(store, "telegram"), [])
  })
})
