/**
 * Reading OpenClaw's channel pairing answers (ChannelPairing.ts): the CLI's list (its store's entries, with their
 * codes) and finding the same request among the gateway's, which name it by an opaque id.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ChannelPairing from "../src/ChannelPairing.ts"

// As `openclaw pairing list telegram --json` prints it (2026.9.6), after a notice.
const cliOutput = `[plugins] loaded 1 channel plugin
{
  "channel": "telegram",
  "requests": [
    { "id": "555000111", "code": "K7QW2MXP", "createdAt": "2026-11-28T17:40:00.000Z", "lastSeenAt": "2026-11-28T17:41:00.000Z", "meta": { "username": "ada_l", "accountId": "default" } },
    { "id": "u-2", "code": "abcd2345", "createdAt": "2026-11-28T17:42:00.000Z", "lastSeenAt": "2026-11-28T17:42:00.000Z", "meta": { "senderId": "777", "accountId": "Work" } }
  ]
}
`

describe("OpenClaw's channel pairing answers", () => {
  it.effect("reads the CLI's list: codes in upper case, the sender, when it expires, and the account", () =>
    Effect.gen(function*() {
      const requests = yield* ChannelPairing.parseCliList(cliOutput)
      assert.deepStrictEqual(requests, [
        { code: "K7QW2MXP", senderId: "555000111", createdAt: "2026-11-28T17:40:00.000Z", expiresAt: "2026-11-28T18:40:00.000Z", accountId: "default" },
        { code: "ABCD2345", senderId: "777", createdAt: "2026-11-28T17:42:00.000Z", expiresAt: "2026-11-28T18:42:00.000Z", accountId: "work" }
      ])
    }))

  it.effect("fails with a description on output it does not know", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ChannelPairing.parseCliList("Error: Channel \"telegram\" does not support pairing."))
      assert.include(error, "unexpected output of pairing list")
    }))

  it.effect("finds the gateway's id of a request by its sender, time and account, and nothing for another", () =>
    Effect.gen(function*() {
      const [request] = yield* ChannelPairing.parseCliList(cliOutput)
      const answer = {
        accounts: [],
        requests: [
          { requestId: "other", accountId: "default", senderId: "555000111", createdAt: "2026-11-28T17:00:00.000Z" },
          { requestId: "the-one", accountId: "default", senderId: "555000111", createdAt: "2026-11-28T17:40:00.000Z", channel: "telegram" }
        ]
      }
      assert.strictEqual(yield* ChannelPairing.gatewayRequestId(answer, request!), "the-one")
      assert.isUndefined(yield* ChannelPairing.gatewayRequestId({ requests: [] }, request!))
      assert.isTrue(ChannelPairing.isGone("pending DM access request no longer exists"))
    }))
})
