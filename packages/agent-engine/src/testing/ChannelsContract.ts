/**
 * The AgentEngine contract for messaging channels (see ContractSection.ts): `setChannels` makes an agent's channels
 * exactly the ones given from its gateway's next start, with their tokens taken from the gateway's environment
 * (`setEnvironment`, under `EngineChannels.tokenVariable`); `channelStatus` reports them as the gateway runs them.
 * The tokens are well-formed fakes: no channel service is reachable from a test, and a gateway must start and stop
 * all the same.
 */
import { assert } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { AgentEngine } from "../AgentEngine.ts"
import { type ChannelSpec, tokenVariable } from "../Channels.ts"
import type { SectionContext } from "./ContractSection.ts"

/** Well-formed, never real: a Telegram bot token and Slack's bot and app tokens. */
export const fakeChannelTokens = {
  telegram: "123456789:AAHfakefakefakefakefakefakefake1234",
  slackBot: "xoxb-1111111111-2222222222-fakefakefakefakefake",
  slackApp: "xapp-1-A0000000000-3333333333-fakefakefakefake"
} as const

const channels: ReadonlyArray<ChannelSpec> = [
  { channel: "telegram", enabled: true, dmPolicy: "open", allowFrom: [], tokens: ["botToken"] },
  { channel: "slack", enabled: true, dmPolicy: "pairing", allowFrom: ["U0123456"], tokens: ["botToken", "appToken"] }
]

const environment = {
  [tokenVariable("telegram", "botToken")]: Redacted.make(fakeChannelTokens.telegram),
  [tokenVariable("slack", "botToken")]: Redacted.make(fakeChannelTokens.slackBot),
  [tokenVariable("slack", "appToken")]: Redacted.make(fakeChannelTokens.slackApp)
}

export const channelsContract = <R>({ it, drive, freshAgent, timeout }: SectionContext<R>): void => {
  it.effect("runs the channels it is given with the tokens of the gateway's environment, and drops those no longer listed", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* freshAgent
      assert.strictEqual(tokenVariable("telegram", "botToken"), "CHANNEL_TELEGRAM_BOT_TOKEN")
      yield* engine.setEnvironment(agentId, environment)
      yield* engine.setChannels(agentId, channels)
      yield* engine.setChannels(agentId, channels)
      yield* drive(engine.start(agentId))
      assert.strictEqual((yield* engine.status(agentId)).state, "running", "a gateway whose channels cannot reach their services runs")
      const running = yield* engine.channelStatus(agentId)
      for (const channel of ["telegram", "slack"] as const) {
        const status = running.find((s) => s.channel === channel)
        assert.isDefined(status, `${channel} is reported`)
        assert.isTrue(status!.configured, `${channel} is configured`)
        assert.strictEqual(status!.tokenStatus, "available", `${channel} found its tokens`)
      }
      for (const status of running) {
        if (status.channel === "discord" || status.channel === "whatsapp") assert.isFalse(status.configured, `${status.channel} is not configured`)
      }
      // Slack is in pairing mode: nobody has asked yet, so there is nothing to list and no code to approve.
      assert.deepStrictEqual(yield* engine.listChannelPairing(agentId, "slack"), [])
      assert.deepInclude(yield* Effect.flip(engine.approveChannelPairing(agentId, "slack", "ABCD2345")), { _tag: "UnknownPairingCode" })

      yield* engine.setChannels(agentId, [])
      yield* drive(engine.restart(agentId))
      assert.strictEqual((yield* engine.status(agentId)).state, "running")
      const after = yield* engine.channelStatus(agentId)
      assert.isTrue(after.every((status) => !status.configured), JSON.stringify(after))
      yield* engine.stop(agentId)
      assert.strictEqual((yield* engine.status(agentId)).state, "stopped")
    }), timeout)

  it.effect("refuses the channels of an agent it does not hold", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const missing = `no-such-agent-${Date.now()}`
      assert.deepInclude(yield* Effect.flip(engine.setChannels(missing, channels)), { _tag: "AgentNotProvisioned" })
      assert.deepInclude(yield* Effect.flip(engine.channelStatus(missing)), { _tag: "AgentNotProvisioned" })
      assert.deepInclude(yield* Effect.flip(engine.listChannelPairing(missing, "slack")), { _tag: "AgentNotProvisioned" })
      assert.deepInclude(yield* Effect.flip(engine.approveChannelPairing(missing, "slack", "ABCD2345")), { _tag: "AgentNotProvisioned" })
    }), timeout)
}
