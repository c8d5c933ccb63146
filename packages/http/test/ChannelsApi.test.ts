/**
 * Messaging channels through the real routes on the simulated engine: the state of every channel, configure
 * (first setup, reconfigure of a disabled channel, disable of an enabled one, WhatsApp without a token), remove,
 * every documented refusal (400 `Unsupported channel` and `Validation failed: …`, 500 `Configuration failed` and
 * `Removal failed`, 403 on the free plan, 404), the gateway restarted with the tokens in its environment only, and
 * tokens in no response and no event. Runs on PGlite, and on Postgres with DATABASE_URL.
 */
import { fakeChannelTokens } from "@cairn/agent-engine/testing"
import { NoMasterKeys } from "@cairn/auth/node"
import { Channel } from "@cairn/domain"
import { EventStore } from "@cairn/event-store"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

const { request, workspace, key, control, dispose, runtime } = TestRuntime.makeTestApi()

const { expectError } = ApiKit
const { waitForStatus, newAgent } = ApiKit.make(request)

const discordToken = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB"
const allTokens = [fakeChannelTokens.telegram, fakeChannelTokens.slackBot, fakeChannelTokens.slackApp, discordToken]

let owner: string
let agentId: string
const configure = (channel: string, body: unknown, token = owner, id = agentId) => request("POST", `/v0/agents/${id}/channels/${channel}`, token, body)
const remove = (channel: string, token = owner, id = agentId) => request("DELETE", `/v0/agents/${id}/channels/${channel}`, token)
const channels = async (token = owner, id = agentId) => {
  const response = await request("GET", `/v0/agents/${id}/channels`, token)
  assert.strictEqual(response.status, 200, JSON.stringify(response.body))
  return response.body!
}
const startCount = (id = agentId) => control((c) => c.startCount(id))
const environment = (id = agentId) => control((c) => c.environmentOf(id))

beforeAll(async () => {
  owner = (await key(await workspace(10))).token
  agentId = await newAgent(owner, "channels")
}, 120_000)

afterAll(dispose)

describe("GET /v0/agents/:agentId/channels", () => {
  it("lists every channel, none configured on a new agent", async () => {
    const id = await newAgent(owner, "fresh")
    assert.deepStrictEqual(await channels(owner, id), {
      telegram: { configured: false, enabled: false, dmPolicy: null, allowFrom: [], botTokenSet: false, botTokenHint: null },
      slack: { configured: false, enabled: false, dmPolicy: null, allowFrom: [], botTokenSet: false, botTokenHint: null, appTokenSet: false, appTokenHint: null },
      discord: { configured: false, enabled: false, dmPolicy: null, allowFrom: [], botTokenSet: false, botTokenHint: null },
      whatsapp: { configured: false, enabled: false, dmPolicy: null, allowFrom: [], linked: false }
    })
  })

  it("is 404 for an agent that is not the caller's", async () => {
    const stranger = (await key(await workspace(1))).token
    expectError(await request("GET", `/v0/agents/${agentId}/channels`, stranger), 404, "Agent not found")
    expectError(await configure("telegram", { botToken: fakeChannelTokens.telegram }, stranger), 404, "Agent not found")
    expectError(await remove("telegram", stranger), 404, "Agent not found")
    expectError(await request("GET", "/v0/agents/nosuchagent/channels", owner), 404, "Agent not found")
  })
})

describe("POST /v0/agents/:agentId/channels/:channel", () => {
  it("configures Telegram: the gateway restarts with the token in its environment, and only a hint is shown", async () => {
    const before = await startCount()
    const response = await configure("telegram", { botToken: fakeChannelTokens.telegram, allowFrom: ["123456"] })
    assert.strictEqual(response.status, 200, JSON.stringify(response.body))
    assert.deepStrictEqual(response.body, { success: true, message: "Telegram configured" })
    assert.strictEqual(await startCount(), before + 1, "the gateway restarted")
    assert.strictEqual((await environment())?.["CHANNEL_TELEGRAM_BOT_TOKEN"], fakeChannelTokens.telegram)
    const status = await channels()
    assert.deepStrictEqual(status["telegram"], {
      configured: true,
      enabled: true,
      dmPolicy: "open",
      allowFrom: ["123456"],
      botTokenSet: true,
      botTokenHint: fakeChannelTokens.telegram.slice(-4)
    })
    const engine = await control((c) => c.environmentOf(agentId))
    assert.isDefined(engine)
    await waitForStatus(owner, agentId, "running")
  })

  it("refuses another configuration of an enabled channel (500 Configuration failed), but takes one that disables it", async () => {
    const alreadyEnabled = { reason: "telegram is already enabled: disable it (enabled:false) or remove it first" }
    expectError(await configure("telegram", { dmPolicy: "pairing" }), 500, "Configuration failed", alreadyEnabled)
    expectError(await configure("telegram", { botToken: fakeChannelTokens.telegram }), 500, "Configuration failed", alreadyEnabled)
    const disabled = await configure("telegram", { enabled: false, dmPolicy: "pairing" })
    assert.strictEqual(disabled.status, 200, JSON.stringify(disabled.body))
    assert.deepInclude((await channels())["telegram"], { configured: true, enabled: false, dmPolicy: "pairing", botTokenSet: true })
    // A disabled channel is reconfigured freely; a blank token keeps the one there is, and `enabled` defaults to true.
    const again = await configure("telegram", { botToken: "", allowFrom: [] })
    assert.strictEqual(again.status, 200, JSON.stringify(again.body))
    assert.deepStrictEqual((await channels())["telegram"], {
      configured: true,
      enabled: true,
      dmPolicy: "pairing",
      allowFrom: [],
      botTokenSet: true,
      botTokenHint: fakeChannelTokens.telegram.slice(-4)
    })
    assert.strictEqual((await environment())?.["CHANNEL_TELEGRAM_BOT_TOKEN"], fakeChannelTokens.telegram)
  })

  it("configures Slack with both tokens, and Discord", async () => {
    const slack = await configure("slack", { botToken: fakeChannelTokens.slackBot, appToken: fakeChannelTokens.slackApp, dmPolicy: "pairing" })
    assert.strictEqual(slack.status, 200, JSON.stringify(slack.body))
    const discord = await configure("discord", { botToken: discordToken })
    assert.strictEqual(discord.status, 200, JSON.stringify(discord.body))
    const status = await channels()
    assert.deepInclude(status["slack"], {
      configured: true,
      enabled: true,
      botTokenSet: true,
      botTokenHint: fakeChannelTokens.slackBot.slice(-4),
      appTokenSet: true,
      appTokenHint: fakeChannelTokens.slackApp.slice(-4)
    })
    assert.deepInclude(status["discord"], { configured: true, enabled: true, botTokenSet: true, botTokenHint: discordToken.slice(-4) })
    const env = await environment()
    assert.strictEqual(env?.["CHANNEL_SLACK_BOT_TOKEN"], fakeChannelTokens.slackBot)
    assert.strictEqual(env?.["CHANNEL_SLACK_APP_TOKEN"], fakeChannelTokens.slackApp)
    assert.strictEqual(env?.["CHANNEL_DISCORD_BOT_TOKEN"], discordToken)
  })

  it("configures WhatsApp without a token: linked stays false until it is linked inside the agent", async () => {
    const response = await configure("whatsapp", { dmPolicy: "pairing", allowFrom: ["+15551234567"] })
    assert.strictEqual(response.status, 200, JSON.stringify(response.body))
    assert.deepStrictEqual((await channels())["whatsapp"], {
      configured: true,
      enabled: true,
      dmPolicy: "pairing",
      allowFrom: ["+15551234567"],
      linked: false
    })
    const id = await newAgent(owner, "whatsapp-token")
    expectError(await configure("whatsapp", { botToken: fakeChannelTokens.telegram }, owner, id), 400,
      "Validation failed: whatsapp takes no token: it is linked inside the agent")
  })

  it("refuses an unsupported channel (400), whatever the body", async () => {
    expectError(await configure("signal", { botToken: "x" }), 400, "Unsupported channel")
    expectError(await request("POST", `/v0/agents/${agentId}/channels/TELEGRAM`, owner, "not json"), 400, "Unsupported channel")
    expectError(await remove("signal"), 400, "Unsupported channel")
    expectError(await remove("Telegram"), 400, "Unsupported channel")
  })

  it("requires the tokens on initial setup (400), Slack's app token included", async () => {
    const id = await newAgent(owner, "initial")
    expectError(await configure("telegram", {}, owner, id), 400, "Validation failed: botToken is required on initial setup of telegram")
    expectError(await configure("telegram", { botToken: "   " }, owner, id), 400, "Validation failed: botToken is required on initial setup of telegram")
    expectError(await configure("discord", { dmPolicy: "open" }, owner, id), 400, "Validation failed: botToken is required on initial setup of discord")
    expectError(await configure("slack", { botToken: fakeChannelTokens.slackBot }, owner, id), 400, "Validation failed: appToken is required for slack")
    expectError(await configure("slack", { appToken: fakeChannelTokens.slackApp }, owner, id), 400, "Validation failed: botToken is required on initial setup of slack")
    const response = await request("POST", `/v0/agents/${id}/channels/telegram`, owner)
    expectError(response, 400, "Validation failed: botToken is required on initial setup of telegram")
    assert.isFalse((await channels(owner, id))["telegram"].configured)
  })

  it("refuses malformed tokens with 500 Configuration failed, quoting none of them", async () => {
    const id = await newAgent(owner, "malformed")
    const cases: ReadonlyArray<[string, Record<string, unknown>]> = [
      ["telegram", { botToken: "not-a-telegram-token" }],
      ["telegram", { botToken: "123456789:tooshort" }],
      ["telegram", { botToken: `${fakeChannelTokens.telegram} ` }],
      ["slack", { botToken: "xoxp-1234-5678", appToken: fakeChannelTokens.slackApp }],
      ["slack", { botToken: fakeChannelTokens.slackBot, appToken: "xoxb-1234-5678" }],
      ["discord", { botToken: "only.two" }],
      ["discord", { botToken: "a.b.c!" }]
    ]
    for (const [channel, body] of cases) {
      const response = await configure(channel, body, owner, id)
      expectError(response, 500, "Configuration failed", { reason: new RegExp(`^${channel} (botToken|appToken) is malformed: expected `) })
      for (const token of Object.values(body)) assert.notInclude(JSON.stringify(response.body), token as string)
    }
    assert.isFalse((await channels(owner, id))["slack"].configured)
  })

  it("refuses bodies of the wrong shape with 400 Validation failed", async () => {
    const id = await newAgent(owner, "shapes")
    const telegram = fakeChannelTokens.telegram
    expectError(await configure("telegram", { botToken: telegram, dmPolicy: "closed" }, owner, id), 400, `Validation failed: dmPolicy must be "open" or "pairing"`)
    expectError(await configure("telegram", { botToken: telegram, allowFrom: "123" }, owner, id), 400, "Validation failed: allowFrom must be an array of strings")
    expectError(await configure("telegram", { botToken: telegram, allowFrom: [1] }, owner, id), 400,
      "Validation failed: allowFrom entries must be non-empty strings of at most 256 characters")
    expectError(await configure("telegram", { botToken: telegram, enabled: "yes" }, owner, id), 400, "Validation failed: enabled must be true or false")
    expectError(await configure("telegram", { botToken: 123 }, owner, id), 400, "Validation failed: botToken must be a string")
    expectError(await configure("telegram", { botToken: telegram, appToken: fakeChannelTokens.slackApp }, owner, id), 400,
      "Validation failed: appToken is only taken by slack")
    expectError(await configure("telegram", [telegram], owner, id), 400, "Validation failed: the body must be a JSON object")
    expectError(await request("POST", `/v0/agents/${id}/channels/telegram`, owner, "{not json"), 400, "Validation failed: the body must be a JSON object")
  })

  it("is a paid feature: 403 on the free plan", async () => {
    const free = (await key(await workspace(1, { plan: "free" }))).token
    const id = await newAgent(free, "free")
    const response = await configure("telegram", { botToken: fakeChannelTokens.telegram }, free, id)
    expectError(response, 403, "Channels are not available on the free plan")
    assert.isFalse((await channels(free, id))["telegram"].configured)
  })

  it("answers 503 Secrets not configured without a master key to seal the token with, and records nothing", async () => {
    const bare = TestRuntime.makeTestApi({ masterKeys: NoMasterKeys.layer })
    try {
      const token = (await bare.key(await bare.workspace(1))).token
      const created = await bare.request("POST", "/v0/agents", token, { name: "no-key" })
      const id = created.body!["agent"].agentId as string
      expectError(await bare.request("POST", `/v0/agents/${id}/channels/telegram`, token, { botToken: fakeChannelTokens.telegram }), 503, "Secrets not configured")
      assert.isFalse((await bare.request("GET", `/v0/agents/${id}/channels`, token)).body!["telegram"].configured)
    } finally {
      await bare.dispose()
    }
  })

  it("answers 500 Configuration failed when the engine refuses, and leaves the channel as it was", async () => {
    const id = await newAgent(owner, "engine-refuses")
    await control((c) => c.failChannels(id, "the config cannot be written"))
    expectError(await configure("telegram", { botToken: fakeChannelTokens.telegram }, owner, id), 500, "Configuration failed", { reason: "the engine did not take the configuration" })
    await control((c) => c.clearFailures(id))
    assert.isFalse((await channels(owner, id))["telegram"].configured, "reverted")
    const retried = await configure("telegram", { botToken: fakeChannelTokens.telegram }, owner, id)
    assert.strictEqual(retried.status, 200, JSON.stringify(retried.body))
  })
})

describe("DELETE /v0/agents/:agentId/channels/:channel", () => {
  it("removes the channel and its token: the restarted gateway no longer has it; removing it again is harmless", async () => {
    const id = await newAgent(owner, "removal")
    assert.strictEqual((await configure("telegram", { botToken: fakeChannelTokens.telegram }, owner, id)).status, 200)
    assert.strictEqual((await environment(id))?.["CHANNEL_TELEGRAM_BOT_TOKEN"], fakeChannelTokens.telegram)
    const removed = await remove("telegram", owner, id)
    assert.deepStrictEqual(removed.body, { success: true, message: "Telegram removed" })
    assert.isFalse((await channels(owner, id))["telegram"].configured)
    assert.isUndefined((await environment(id))?.["CHANNEL_TELEGRAM_BOT_TOKEN"])
    assert.deepStrictEqual((await remove("telegram", owner, id)).body, { success: true, message: "Telegram was not configured" })
    // Configured again from scratch: a token is required again.
    expectError(await configure("telegram", {}, owner, id), 400, "Validation failed: botToken is required on initial setup of telegram")
  })

  it("answers 500 Removal failed when the engine cannot drop it", async () => {
    const id = await newAgent(owner, "removal-fails")
    assert.strictEqual((await configure("slack", { botToken: fakeChannelTokens.slackBot, appToken: fakeChannelTokens.slackApp }, owner, id)).status, 200)
    await control((c) => c.failChannels(id, "the config cannot be written"))
    expectError(await remove("slack", owner, id), 500, "Removal failed")
    await control((c) => c.clearFailures(id))
  })
})

describe("tokens", () => {
  it("appear in no response and no event of the agent's history, which records the channel changes", async () => {
    const history = await request("GET", `/v0/agents/${agentId}/events`, owner)
    assert.strictEqual(history.status, 200)
    const text = JSON.stringify(history.body)
    for (const token of allTokens) {
      assert.notInclude(text, token)
      assert.notInclude(text, token.slice(0, -4))
    }
    const types = (history.body!["events"] as ReadonlyArray<{ type: string }>).map((e) => e.type)
    assert.include(types, "ChannelConfigured")
    assert.notInclude(JSON.stringify(await channels()), fakeChannelTokens.telegram)
  })

  it("go with the agent: a deleted agent's channels are gone", async () => {
    const id = await newAgent(owner, "deleted")
    assert.strictEqual((await configure("telegram", { botToken: fakeChannelTokens.telegram }, owner, id)).status, 200)
    assert.strictEqual((await request("DELETE", `/v0/agents/${id}`, owner)).status, 200)
    expectError(await request("GET", `/v0/agents/${id}/channels`, owner), 404, "Agent not found")
    // Recorded in the same append as the deletion, so the sealed token is delivered to nothing afterwards.
    const history = await runtime.runPromise(EventStore.use((store) => store.readStream(Channel.stream(id))))
    assert.deepStrictEqual(history.map((e) => [e.type, (e.data as { reason?: string }).reason]).at(-1), ["ChannelRemoved", "agent-deleted"])
  })
})
