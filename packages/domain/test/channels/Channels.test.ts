import { Channel, ValidationFailed } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Redacted, Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-23T10:00:00.000Z"
const sealed = (n: number, hint?: string): Channel.SealedToken => ({
  sealingId: `s${n}`,
  sealed: { keyId: "dk", nonce: `n${n}`, ciphertext: `c${n}` },
  ...(hint === undefined ? {} : { hint })
})
const configure = (channel: Channel.ChannelName, fields: Partial<Omit<Channel.ConfigureChannel, "_tag" | "agentId" | "workspaceId" | "channel" | "at">> = {}) =>
  new Channel.ConfigureChannel({ agentId: "a1", workspaceId: "w1", channel, at, ...fields })
const configured = (channel: Channel.ChannelName, settings: Channel.ChannelSettings, reason?: "revert") =>
  new Channel.ChannelConfigured({ agentId: "a1", workspaceId: "w1", channel, settings, ...(reason === undefined ? {} : { reason }), at })
const telegram = (enabled = true): Channel.ChannelSettings => ({ enabled, dmPolicy: "open", allowFrom: [], botToken: sealed(1, "wxyz") })

describe("the channels decider", () => {
  it("sets a channel up with its tokens, open DMs and enabled by default", () => {
    given(Channel.decider).when(configure("telegram", { botToken: sealed(1, "wxyz") })).then([configured("telegram", telegram())])
    given(Channel.decider).when(configure("whatsapp", { dmPolicy: "pairing", allowFrom: ["+1555"] }))
      .then([configured("whatsapp", { enabled: true, dmPolicy: "pairing", allowFrom: ["+1555"] })])
  })

  it("requires every token of the channel on first setup (400)", () => {
    given(Channel.decider).when(configure("telegram")).thenFails(new ValidationFailed({ detail: "botToken is required on initial setup of telegram" }))
    given(Channel.decider).when(configure("slack", { botToken: sealed(1) })).thenFails(new ValidationFailed({ detail: "appToken is required for slack" }))
    given(Channel.decider).when(configure("discord", { enabled: false })).thenFails(new ValidationFailed({ detail: "botToken is required on initial setup of discord" }))
  })

  it("refuses to reconfigure an enabled channel unless the request disables it; a disabled one keeps its tokens when none are given", () => {
    const history = [configured("telegram", telegram())]
    const refused = given(Channel.decider, history).when(configure("telegram", { dmPolicy: "pairing" })).decision
    assert.isTrue(Result.isFailure(refused))
    assert.strictEqual((refused as Result.Failure<unknown, Channel.ConfigurationFailed>).failure._tag, "ConfigurationFailed")
    given(Channel.decider, history).when(configure("telegram", { enabled: false, dmPolicy: "pairing" }))
      .then([configured("telegram", { ...telegram(false), dmPolicy: "pairing" })])
    given(Channel.decider, [configured("telegram", telegram(false))]).when(configure("telegram", { allowFrom: ["1"] }))
      .then([configured("telegram", { ...telegram(), allowFrom: ["1"] })])
    given(Channel.decider, [configured("telegram", telegram(false))]).when(configure("telegram", { botToken: sealed(2) }))
      .then([configured("telegram", { ...telegram(), botToken: sealed(2) })])
  })

  it("reverts to the settings before, or removes a channel that had none; removal is idempotent", () => {
    const history = [configured("telegram", telegram())]
    given(Channel.decider, history).when(new Channel.RevertChannel({ agentId: "a1", workspaceId: "w1", channel: "telegram", at }))
      .then([new Channel.ChannelRemoved({ agentId: "a1", channel: "telegram", reason: "revert", at })])
    given(Channel.decider, history).when(new Channel.RevertChannel({ agentId: "a1", workspaceId: "w1", channel: "telegram", previous: telegram(false), at }))
      .then([configured("telegram", telegram(false), "revert")])
    given(Channel.decider, history).when(new Channel.RemoveChannel({ agentId: "a1", channel: "telegram", at }))
      .then([new Channel.ChannelRemoved({ agentId: "a1", channel: "telegram", reason: "user", at })])
    given(Channel.decider).when(new Channel.RemoveChannel({ agentId: "a1", channel: "telegram", at })).then([])
    const state = given(Channel.decider, history).when(new Channel.RemoveAllChannels({ agentId: "a1", at })).state()
    assert.deepStrictEqual(Result.map(state, (s) => s.channels.size), Result.succeed(0))
  })
})

describe("channel input", () => {
  const token = (value: string) => ({ botToken: Redacted.make(value) })
  it("checks token formats: Telegram <digits>:<30 to 64>, Slack xoxb-/xapp-, Discord three base64url parts", () => {
    const ok = (channel: Channel.ChannelName, input: Channel.ConfigureInput) => assert.isTrue(Result.isSuccess(Channel.checkTokenFormats(channel, input)))
    const bad = (channel: Channel.ChannelName, input: Channel.ConfigureInput) => assert.isTrue(Result.isFailure(Channel.checkTokenFormats(channel, input)))
    ok("telegram", token(`123:${"a".repeat(35)}`))
    // The example token of Telegram's own Bot API documentation (34 characters after the colon).
    ok("telegram", token("110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"))
    bad("telegram", token(`123:${"a".repeat(29)}`))
    bad("telegram", token(`123:${"a".repeat(65)}`))
    bad("telegram", token(`abc:${"a".repeat(35)}`))
    ok("slack", { botToken: Redacted.make("xoxb-1-2"), appToken: Redacted.make("xapp-1-A-3") })
    bad("slack", { botToken: Redacted.make("xoxp-1-2") })
    bad("slack", { appToken: Redacted.make("xoxb-1-2") })
    ok("discord", token("MTIz.GhIj.abc-_"))
    bad("discord", token("MTIz.GhIj"))
    bad("discord", token("MTIz.GhIj.ab=c"))
  })

  it("shows at most the last four characters of a token, and none of a short one", () => {
    assert.strictEqual(Channel.hintOf(Redacted.make("xoxb-1234567890-abcd")), "abcd")
    assert.isUndefined(Channel.hintOf(Redacted.make("xoxb-12345")))
  })

  it("treats a blank token as none, and refuses tokens a channel does not take", () => {
    assert.deepStrictEqual(Channel.parseConfigureInput("telegram", { botToken: "  " }), Result.succeed({}))
    assert.isTrue(Result.isFailure(Channel.parseConfigureInput("whatsapp", { botToken: "x" })))
    assert.isTrue(Result.isFailure(Channel.parseConfigureInput("discord", { appToken: "xapp-1" })))
    assert.isTrue(Result.isFailure(Channel.parseConfigureInput("telegram", { allowFrom: Array.from({ length: 101 }, (_, i) => String(i)) })))
    assert.isTrue(Result.isFailure(Channel.requireChannel("signal")))
  })
})
