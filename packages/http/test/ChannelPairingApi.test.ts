/**
 * DM pairing on an agent's channels through the real routes, on the simulated engine: senders that wrote to a
 * channel in pairing mode are listed with their codes, the owner approves one by its code (any case), the sender joins
 * the channel's allow store and the approval is on the agent's trail (channel, sender, who; nothing they wrote); every
 * documented refusal: 400 `Unsupported channel` and a malformed code, 404 for another workspace and an unknown code,
 * 409 for a channel not configured, disabled or open, 409 for a stopped gateway, 500 `CLI error`, and 503 with
 * `Retry-After` while the gateway starts. Runs on PGlite, and on Postgres with DATABASE_URL.
 */
import { fakeChannelTokens } from "@cairn/agent-engine/testing"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

const { web, request, workspace, key, control, dispose } = TestRuntime.makeTestApi({ readyWait: "1 second" })
const { expectError } = ApiKit
const { newAgent, waitForStatus } = ApiKit.make(request)

let owner: string
let agentId: string

const configure = async (channel: string, body: unknown) => {
  const response = await request("POST", `/v0/agents/${agentId}/channels/${channel}`, owner, body)
  assert.strictEqual(response.status, 200, JSON.stringify(response.body))
}
const pairing = (channel: string, token = owner) => request("GET", `/v0/agents/${agentId}/channels/${channel}/pairing`, token)
const approve = (channel: string, code: string, token = owner) =>
  request("POST", `/v0/agents/${agentId}/channels/${channel}/pairing/${encodeURIComponent(code)}/approve`, token)
const writes = (channel: "telegram" | "slack", senderId: string) => control((c) => c.requestChannelPairing(agentId, channel, senderId))

beforeAll(async () => {
  owner = (await key(await workspace(5))).token
  agentId = await newAgent(owner, "paired")
  await configure("telegram", { botToken: fakeChannelTokens.telegram, dmPolicy: "pairing", allowFrom: ["42"] })
  await configure("slack", { botToken: fakeChannelTokens.slackBot, appToken: fakeChannelTokens.slackApp })
  await configure("whatsapp", { dmPolicy: "pairing", enabled: false })
  await waitForStatus(owner, agentId, "running")
}, 120_000)

afterAll(dispose)

describe("channel DM pairing", () => {
  it("lists the senders waiting with their codes, approves one by its code, and records who approved whom", async () => {
    assert.deepStrictEqual((await pairing("telegram")).body, { channel: "telegram", requests: [] })
    const code = await writes("telegram", "1001")
    assert.strictEqual(await writes("telegram", "1001"), code, "a sender asking again keeps their code")
    const other = await writes("telegram", "1002")
    assert.match(code, /^[A-Z2-9]{8}$/)

    const listed = await pairing("telegram")
    assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
    const requests = listed.body!["requests"] as Array<{ code: string; senderId: string; createdAt: string; expiresAt: string }>
    assert.deepStrictEqual(requests.map((r) => [r.code, r.senderId]), [[code, "1001"], [other, "1002"]])
    for (const r of requests) assert.strictEqual(Date.parse(r.expiresAt) - Date.parse(r.createdAt), 3_600_000)

    assert.deepStrictEqual((await approve("telegram", code.toLowerCase())).body, { success: true, message: "Telegram sender 1001 approved" })
    assert.deepStrictEqual(await control((c) => c.approvedChannelSenders(agentId, "telegram")), ["1001"])
    assert.deepStrictEqual(((await pairing("telegram")).body!["requests"] as Array<{ senderId: string }>).map((r) => r.senderId), ["1002"])
    // Approved once: the code names no request any more.
    expectError(await approve("telegram", code), 404, "Pairing request not found")
    expectError(await approve("telegram", "ZZZZ2222"), 404, "Pairing request not found")

    const trail = (await request("GET", `/v0/agents/${agentId}/events`, owner)).body as {
      events: Array<{ type: string; actor: string; stream: string; data: Record<string, unknown> }>
    }
    const recorded = trail.events.filter((event) => event.stream === `pairings-${agentId}`)
    assert.deepStrictEqual(recorded.map((event) => [event.type, event.data["channel"], event.data["senderId"]]), [["ChannelPairingApproved", "telegram", "1001"]])
    assert.strictEqual(recorded[0]!.actor, "ada")
    assert.notInclude(JSON.stringify(recorded), code, "the code is not kept")
  })

  it("refuses what is not a pairing channel, a malformed code, and another workspace", async () => {
    expectError(await pairing("signal"), 400, "Unsupported channel")
    expectError(await approve("Telegram", "ABCD2345"), 400, "Unsupported channel")
    expectError(await pairing("discord"), 409, "Channel is not configured")
    expectError(await approve("discord", "ABCD2345"), 409, "Channel is not configured")
    expectError(await pairing("whatsapp"), 409, "Channel is disabled")
    expectError(await pairing("slack"), 409, "Channel does not use pairing (its dmPolicy is open)")
    expectError(await approve("slack", "ABCD2345"), 409, "Channel does not use pairing (its dmPolicy is open)")
    const malformed = "Validation failed: code must be the pairing code the channel sent (4 to 16 letters or digits)"
    for (const code of ["ab", "ABCD 2345", "ABCD;rm -rf", "$(id)", "A".repeat(17), "ABCD-2345"]) {
      expectError(await approve("telegram", code), 400, malformed)
    }
    const stranger = (await key(await workspace(1))).token
    expectError(await pairing("telegram", stranger), 404, "Agent not found")
    expectError(await approve("telegram", "ABCD2345", stranger), 404, "Agent not found")
    expectError(await request("GET", "/v0/agents/nosuchagent/channels/telegram/pairing", owner), 404, "Agent not found")
  })

  it("is 500 `CLI error` when the gateway cannot answer, 409 when it is stopped, 503 with Retry-After while it starts", async () => {
    const code = await writes("telegram", "1003")
    await control((c) => c.failCli(agentId, "gateway unreachable"))
    expectError(await pairing("telegram"), 500, "CLI error")
    expectError(await approve("telegram", code), 500, "CLI error")
    await control((c) => c.clearFailures(agentId))

    await control((c) => c.holdStarts)
    const restart = request("POST", `/v0/agents/${agentId}/restart`, owner)
    await waitForStatus(owner, agentId, "starting")
    const late = await web.handler(new Request(`http://cairn/v0/agents/${agentId}/channels/telegram/pairing`, { headers: { authorization: `Bearer ${owner}` } }))
    assert.strictEqual(late.headers.get("retry-after"), "5")
    expectError(await TestRuntime.replyOf(late), 503, "Agent is starting, try again shortly")
    expectError(await approve("telegram", code), 503, "Agent is starting, try again shortly")
    await control((c) => c.releaseStarts)
    assert.strictEqual((await restart).status, 200)

    await control((c) => c.crash(agentId))
    expectError(await approve("telegram", code), 409, "Agent is not running")
    assert.strictEqual((await request("POST", `/v0/agents/${agentId}/restart`, owner)).status, 200)
    assert.deepStrictEqual((await approve("telegram", code)).body, { success: true, message: "Telegram sender 1003 approved" })
  })
})
