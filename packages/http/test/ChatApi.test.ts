/**
 * Talking to an agent through the real routes, on the simulated engine (issue 34): a chat answered as JSON and as
 * server-sent events, a session continued, listed and read back, the models offered; each answered turn recorded in
 * the agent's events without its text; an agent that is not running 409, a turn that does not end in time 504, a
 * failed turn 502, bad input 400, unknown sessions and other workspaces 404; the agent's platform token accepted.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

// Simulated turns answer at once; only a turn the control holds meets this timeout.
const { request, web, workspace, key, control, dispose } = TestRuntime.makeTestApi({ chatTimeout: "300 millis" })
const { expectError } = ApiKit
const kit = ApiKit.make(request)

let owner: string
let agentId: string

beforeAll(async () => {
  owner = (await key(await workspace(5))).token
  agentId = (await kit.createAgent(owner, { name: "talker" })).body!["agent"].agentId
  await kit.waitForStatus(owner, agentId, "running")
}, 60_000)

afterAll(dispose)

const chat = (body: Record<string, unknown>, token = owner, id = agentId) => request("POST", `/v0/agents/${id}/chat`, token, body)

/** A streamed chat: the response's content type and its events, parsed. */
const streamed = async (body: Record<string, unknown>) => {
  const response = await web.handler(new Request(`http://cairn/v0/agents/${agentId}/chat`, {
    method: "POST",
    headers: { authorization: `Bearer ${owner}` },
    body: JSON.stringify({ ...body, stream: true })
  }))
  const text = await response.text()
  const events = text.split("\n\n").filter((block) => block.trim() !== "").map((block) => {
    const lines = block.split("\n")
    return {
      event: lines.find((line) => line.startsWith("event: "))?.slice(7),
      data: JSON.parse(lines.find((line) => line.startsWith("data: "))!.slice(6)) as Record<string, any>
    }
  })
  return { status: response.status, contentType: response.headers.get("content-type"), events }
}

const trail = async () =>
  ((await request("GET", `/v0/agents/${agentId}/events`, owner)).body!["events"] as Array<{ stream: string; type: string; actor: string; data: Record<string, unknown> }>)

describe("chatting with an agent", () => {
  it("answers a message with the reply, a new session and the default model", async () => {
    const answered = await chat({ message: "hello there" })
    assert.strictEqual(answered.status, 200, JSON.stringify(answered.body))
    assert.strictEqual(answered.body!["reply"], "Echo: hello there")
    assert.strictEqual(answered.body!["model"], "simulated/echo-1")
    assert.match(answered.body!["sessionKey"], /^cairn-\d+$/)
    assert.deepStrictEqual(answered.body!["usage"], { inputTokens: 2, outputTokens: 3, totalTokens: 5 })
  })

  it("streams the reply as delta events, then done", async () => {
    const { status, contentType, events } = await streamed({ message: "one two three" })
    assert.strictEqual(status, 200)
    assert.match(contentType ?? "", /^text\/event-stream/)
    const deltas = events.filter((e) => e.event === "delta").map((e) => e.data["text"])
    assert.deepStrictEqual(deltas, ["Echo: ", "one ", "two ", "three"])
    const done = events[events.length - 1]!
    assert.strictEqual(done.event, "done")
    assert.strictEqual(done.data["reply"], deltas.join(""))
    assert.strictEqual(done.data["model"], "simulated/echo-1")
    assert.isString(done.data["sessionKey"])
  })

  it("continues a session, takes a model for it, lists the sessions and gives the history", async () => {
    const first = (await chat({ message: "first", model: "openai/gpt-5" })).body!
    assert.strictEqual(first["model"], "openai/gpt-5")
    const second = (await chat({ message: "second", sessionKey: first["sessionKey"] })).body!
    assert.strictEqual(second["sessionKey"], first["sessionKey"])
    assert.strictEqual(second["model"], "openai/gpt-5", "the session keeps its model")

    const sessions = await request("GET", `/v0/agents/${agentId}/chat/sessions`, owner)
    assert.strictEqual(sessions.status, 200, JSON.stringify(sessions.body))
    const listed = sessions.body!["sessions"] as Array<{ sessionKey: string; model: string; updatedAt: string }>
    assert.strictEqual(listed[0]!.sessionKey, first["sessionKey"], "most recently changed first")
    assert.strictEqual(listed[0]!.model, "openai/gpt-5")
    assert.isAtLeast(listed.length, 3)

    const history = await request("GET", `/v0/agents/${agentId}/chat/sessions/${first["sessionKey"]}`, owner)
    assert.strictEqual(history.status, 200, JSON.stringify(history.body))
    assert.strictEqual(history.body!["sessionKey"], first["sessionKey"])
    assert.deepStrictEqual(
      (history.body!["messages"] as Array<{ role: string; text: string; at: string }>).map((m) => [m.role, m.text]),
      [["user", "first"], ["assistant", "Echo: first"], ["user", "second"], ["assistant", "Echo: second"]]
    )
    const newest = await request("GET", `/v0/agents/${agentId}/chat/sessions/${first["sessionKey"]}?limit=1`, owner)
    assert.deepStrictEqual((newest.body!["messages"] as Array<{ text: string }>).map((m) => m.text), ["Echo: second"])
    // A key with a slash, URL-encoded in the path.
    assert.strictEqual((await chat({ message: "hi", sessionKey: "web/tab-1" })).body!["sessionKey"], "web/tab-1")
    const slashed = await request("GET", `/v0/agents/${agentId}/chat/sessions/${encodeURIComponent("web/tab-1")}`, owner)
    assert.strictEqual(slashed.status, 200, JSON.stringify(slashed.body))
    assert.strictEqual(slashed.body!["sessionKey"], "web/tab-1")
  })

  it("answers 404 for an unknown session, a malformed key, and another workspace's agent", async () => {
    expectError(await request("GET", `/v0/agents/${agentId}/chat/sessions/nobody-here`, owner), 404, "Chat session not found")
    expectError(await request("GET", `/v0/agents/${agentId}/chat/sessions/${encodeURIComponent("bad key!")}`, owner), 404, "Chat session not found")
    const stranger = (await key(await workspace(1))).token
    expectError(await chat({ message: "hi" }, stranger), 404, "Agent not found")
    expectError(await request("GET", `/v0/agents/${agentId}/chat/sessions`, stranger), 404, "Agent not found")
    expectError(await request("GET", `/v0/agents/${agentId}/models`, stranger), 404, "Agent not found")
    expectError(await chat({ message: "hi" }, owner, "noagent1"), 404, "Agent not found")
  })

  it("refuses bad input with 400", async () => {
    expectError(await chat({}), 400, "Validation failed: message must be a non-empty string")
    expectError(await chat({ message: "   " }), 400, "Validation failed: message must be a non-empty string")
    expectError(await chat({ message: 42 }), 400, "Validation failed: message must be a non-empty string")
    expectError(await chat({ message: "x".repeat(100_001) }), 400, "Validation failed: message must be at most 100000 characters")
    assert.strictEqual((await chat({ message: "x".repeat(100_000) })).status, 200)
    expectError(await chat({ message: "hi", sessionKey: "has space" }), 400, /^Validation failed: sessionKey must be/)
    expectError(await chat({ message: "hi", sessionKey: 7 }), 400, /^Validation failed: sessionKey must be/)
    expectError(await chat({ message: "hi", model: "no-slash" }), 400, "Validation failed: model must be provider/model (e.g. openai/gpt-5)")
    expectError(await chat({ message: "hi", stream: "yes" }), 400, /^Validation failed/)
    expectError(await request("GET", `/v0/agents/${agentId}/chat/sessions/x?limit=0`, owner), 400, "Validation failed: limit must be a whole number from 1 to 1000")
    expectError(await request("GET", `/v0/agents/${agentId}/chat/sessions/x?limit=1001`, owner), 400, "Validation failed: limit must be a whole number from 1 to 1000")
  })

  it("records each answered turn in the agent's events, with who and how long, never the text", async () => {
    const secretWords = "the launch code is swordfish-7731"
    const answered = (await chat({ message: secretWords })).body!
    const events = await trail()
    const chats = events.filter((event) => event.stream === `chats-${agentId}`)
    assert.isTrue(chats.every((event) => event.type === "ChatAnswered" && event.actor === chats[0]!.actor && event.actor !== ""))
    const last = chats[chats.length - 1]!
    assert.deepInclude(last.data, {
      agentId,
      sessionKey: answered["sessionKey"],
      model: "simulated/echo-1",
      messageLength: secretWords.length,
      replyLength: `Echo: ${secretWords}`.length
    })
    assert.notInclude(JSON.stringify(events), "swordfish")
    // Nor in the agent's own stream: its turns are kept out of it.
    assert.isFalse(events.some((event) => event.stream === `agent-${agentId}` && event.type === "ChatAnswered"))
  })

  it("lists the models the agent offers and its default", async () => {
    const models = await request("GET", `/v0/agents/${agentId}/models`, owner)
    assert.strictEqual(models.status, 200, JSON.stringify(models.body))
    assert.strictEqual(models.body!["defaultModel"], "simulated/echo-1")
    const list = models.body!["models"] as Array<Record<string, unknown>>
    assert.deepInclude(list, { id: "simulated/echo-1", name: "Echo 1", provider: "simulated", available: true })
    assert.deepInclude(list, { id: "openai/gpt-5", name: "GPT-5", provider: "openai", available: false, unavailableReason: "missing-auth" })
  })

  it("takes the agent's platform token, as its other routes do", async () => {
    const { token } = (await request("POST", `/v0/agents/${agentId}/platform/token`, owner)).body as { token: string }
    const answered = await chat({ message: "from inside" }, token)
    assert.strictEqual(answered.status, 200, JSON.stringify(answered.body))
    assert.strictEqual((await request("GET", `/v0/agents/${agentId}/models`, token)).status, 200)
  })

  it("answers 502 with the reason for a failed turn, 504 for one not answered in time, and error events once streaming", async () => {
    await control((c) => c.failNextChat(agentId, "the model refused"))
    expectError(await chat({ message: "hi" }), 502, "Chat failed", { reason: "the model refused" })
    await control((c) => c.hangNextChat(agentId))
    expectError(await chat({ message: "hi" }), 504, "Agent did not answer in time")
    await control((c) => c.failNextChat(agentId, "aborted"))
    const { status, events } = await streamed({ message: "hi" })
    assert.strictEqual(status, 200)
    assert.deepStrictEqual(events, [{ event: "error", data: { error: "Chat failed", reason: "aborted" } }])
    assert.strictEqual((await chat({ message: "after" })).body!["reply"], "Echo: after")
  })

  it("answers 409 while the agent is not running", async () => {
    const other = (await kit.createAgent(owner, { name: "sleeper" })).body!["agent"].agentId as string
    await kit.waitForStatus(owner, other, "running")
    await control((c) => c.crash(other))
    expectError(await chat({ message: "hi" }, owner, other), 409, "Agent is not running")
    expectError(await request("GET", `/v0/agents/${other}/chat/sessions`, owner), 409, "Agent is not running")
    expectError(await request("GET", `/v0/agents/${other}/models`, owner), 409, "Agent is not running")
  })
})

describe("an agent's model", () => {
  const primary = async (id: string) => {
    const config = (await request("GET", `/v0/agents/${id}/config`, owner)).body!["config"] as { agents?: { defaults?: { model?: { primary?: string } } } }
    return config.agents?.defaults?.model?.primary
  }
  const shown = async (id: string) => (await request("GET", `/v0/agents/${id}`, owner)).body!["agent"]["model"] as string | null

  it("is set at creation: shown with the agent, recorded, in the runtime config before the first start, and answering", async () => {
    const created = await kit.createAgent(owner, { name: "modelled", model: "fakellm/fake-1" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const id = created.body!["agent"].agentId as string
    assert.strictEqual(created.body!["agent"]["model"], "fakellm/fake-1")
    await kit.waitForStatus(owner, id, "running")
    assert.strictEqual(await shown(id), "fakellm/fake-1")
    assert.strictEqual(await primary(id), "fakellm/fake-1")
    const listed = ((await request("GET", "/v0/agents", owner)).body!["agents"] as Array<{ agentId: string; model: string | null }>).find((a) => a.agentId === id)
    assert.strictEqual(listed?.model, "fakellm/fake-1")
    const events = (await request("GET", `/v0/agents/${id}/events`, owner)).body!["events"] as Array<{ type: string; data: Record<string, unknown> }>
    assert.strictEqual(events.find((e) => e.type === "AgentCreated")?.data["model"], "fakellm/fake-1")
    assert.strictEqual((await request("POST", `/v0/agents/${id}/chat`, owner, { message: "hi" })).body!["model"], "fakellm/fake-1")
    assert.strictEqual((await request("GET", `/v0/agents/${id}/models`, owner)).body!["defaultModel"], "fakellm/fake-1")
    // An agent made without one has none.
    assert.isNull(await shown(agentId))
  })

  it("is changed by PATCH, applied to the running gateway's config at once with its credentials kept, and cleared by null", async () => {
    const read = (await request("GET", `/v0/agents/${agentId}/config`, owner)).body!
    const written = await request("PUT", `/v0/agents/${agentId}/config`, owner, {
      config: { ...read["config"], models: { providers: { openai: { apiKey: "sk-kept-secret" } } } },
      baseHash: read["hash"]
    })
    assert.strictEqual(written.status, 200, JSON.stringify(written.body))

    const patched = await request("PATCH", `/v0/agents/${agentId}`, owner, { model: "openai/gpt-5" })
    assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
    assert.strictEqual(patched.body!["agent"]["model"], "openai/gpt-5")
    assert.strictEqual(await shown(agentId), "openai/gpt-5")
    assert.strictEqual(await primary(agentId), "openai/gpt-5")
    const stored = await control((c) => c.storedConfig(agentId)) as { models: { providers: { openai: { apiKey: string } } } }
    assert.strictEqual(stored.models.providers.openai.apiKey, "sk-kept-secret", "the credential survives the write")
    const models = (await request("GET", `/v0/agents/${agentId}/models`, owner)).body!
    assert.strictEqual(models["defaultModel"], "openai/gpt-5")
    assert.deepInclude(models["models"], { id: "openai/gpt-5", name: "GPT-5", provider: "openai", available: true })
    assert.strictEqual((await chat({ message: "new session" })).body!["model"], "openai/gpt-5")
    const changes = ((await trail()).filter((e) => e.type === "AgentProfileChanged")).map((e) => e.data["model"])
    assert.deepStrictEqual(changes, ["openai/gpt-5"])

    expectError(await request("PATCH", `/v0/agents/${agentId}`, owner, { model: "gpt-5" }), 400, "Validation failed: model must be provider/model (e.g. openai/gpt-5)")
    expectError(await request("PATCH", `/v0/agents/${agentId}`, owner, { model: 5 }), 400, "Validation failed: model must be provider/model (e.g. openai/gpt-5)")
    expectError(await kit.createAgent(owner, { name: "bad", model: "nope" }), 400, "Validation failed: model must be provider/model (e.g. openai/gpt-5)")

    const cleared = await request("PATCH", `/v0/agents/${agentId}`, owner, { model: null })
    assert.isNull(cleared.body!["agent"]["model"])
    assert.isUndefined(await primary(agentId))
    assert.strictEqual((await request("GET", `/v0/agents/${agentId}/models`, owner)).body!["defaultModel"], "simulated/echo-1")
  })

  it("is applied to a stopped gateway's config too", async () => {
    const id = (await kit.createAgent(owner, { name: "stopped-model" })).body!["agent"].agentId as string
    await kit.waitForStatus(owner, id, "running")
    await control((c) => c.crash(id))
    assert.strictEqual((await request("PATCH", `/v0/agents/${id}`, owner, { model: "anthropic/claude-sonnet-4-5" })).status, 200)
    const stored = await control((c) => c.storedConfig(id)) as { agents: { defaults: { model: { primary: string } } } }
    assert.strictEqual(stored.agents.defaults.model.primary, "anthropic/claude-sonnet-4-5")
  })
})
