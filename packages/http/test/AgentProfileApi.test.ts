/**
 * An agent's name and profile (description, vibe, emoji: Pinata's agent fields) through the real routes: given at
 * creation, changed with PATCH (absent unchanged, null or empty cleared), checked, recorded only when something
 * differs, and shown by get and list alike.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

const { request, workspace, key, dispose } = TestRuntime.makeTestApi()
const { expectError } = ApiKit
const kit = ApiKit.make(request)

let owner: string
let agentId: string

beforeAll(async () => {
  owner = (await key(await workspace(5))).token
  const created = await kit.createAgent(owner, { name: "Scout", description: "Finds things", vibe: "curious", emoji: "🦊" })
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  agentId = created.body!["agent"].agentId
}, 60_000)

afterAll(dispose)

const shown = async () => {
  const detail = (await request("GET", `/v0/agents/${agentId}`, owner)).body!["agent"] as Record<string, unknown>
  const listed = ((await request("GET", "/v0/agents", owner)).body!["agents"] as Array<Record<string, unknown>>).find((a) => a["agentId"] === agentId)!
  assert.deepStrictEqual(
    [listed["name"], listed["description"], listed["vibe"], listed["emoji"]],
    [detail["name"], detail["description"], detail["vibe"], detail["emoji"]],
    "the list shows what the agent shows"
  )
  return { name: detail["name"], description: detail["description"], vibe: detail["vibe"], emoji: detail["emoji"] }
}
const profileEvents = async () =>
  ((await request("GET", `/v0/agents/${agentId}/events`, owner)).body!["events"] as Array<{ type: string; actor: string; data: Record<string, unknown> }>)
    .filter((event) => event.type === "AgentProfileChanged")

describe("an agent's profile", () => {
  it("is what creation gave it, and a PATCH changes what it names, clears null or empty fields, and keeps the rest", async () => {
    assert.deepStrictEqual(await shown(), { name: "Scout", description: "Finds things", vibe: "curious", emoji: "🦊" })
    const changed = await request("PATCH", `/v0/agents/${agentId}`, owner, { name: "Scout II", vibe: "  calm  ", emoji: null })
    assert.strictEqual(changed.status, 200, JSON.stringify(changed.body))
    assert.deepInclude(changed.body!["agent"], { name: "Scout II", description: "Finds things", vibe: "calm", emoji: null })
    assert.deepStrictEqual(await shown(), { name: "Scout II", description: "Finds things", vibe: "calm", emoji: null })
    await request("PATCH", `/v0/agents/${agentId}`, owner, { description: "" })
    assert.strictEqual((await shown()).description, null)

    const events = await profileEvents()
    assert.deepStrictEqual(events.map(({ data: { _tag, ...data } }) => data), [
      { agentId, name: "Scout II", vibe: "calm", emoji: null, at: events[0]!.data["at"] },
      { agentId, description: null, at: events[1]!.data["at"] }
    ])
    // Nothing that differs, nothing recorded.
    assert.strictEqual((await request("PATCH", `/v0/agents/${agentId}`, owner, { name: "Scout II", vibe: "calm" })).status, 200)
    assert.strictEqual((await request("PATCH", `/v0/agents/${agentId}`, owner, {})).status, 200)
    assert.strictEqual((await profileEvents()).length, 2)
  })

  it("refuses what is not a profile, and agents the caller cannot see", async () => {
    const patch = (body: unknown) => request("PATCH", `/v0/agents/${agentId}`, owner, body as object)
    expectError(await patch({ description: "x".repeat(501) }), 400, "Validation failed: description must be at most 500 characters")
    expectError(await patch({ vibe: 42 }), 400, "Validation failed: vibe must be a string or null")
    expectError(await patch({ emoji: "🦊".repeat(17) }), 400, "Validation failed: emoji must be at most 16 characters")
    expectError(await patch({ vibe: "bell\u0007" }), 400, "Validation failed: vibe contains a control character")
    expectError(await patch({ name: "" }), 400, "Validation failed: name is required")
    expectError(await patch({ name: "<b>" }), 400, /^Validation failed: name contains a banned character/)
    expectError(await kit.createAgent(owner, { name: "ok", description: { no: 1 } }), 400, "Validation failed: description must be a string or null")
    const stranger = (await key(await workspace(1))).token
    expectError(await request("PATCH", `/v0/agents/${agentId}`, stranger, { name: "mine now" }), 404, "Agent not found")
    expectError(await request("PATCH", "/v0/agents/no-such-agent", owner, { name: "x" }), 404, "Agent not found")
    assert.strictEqual((await shown()).name, "Scout II")
  })
})
