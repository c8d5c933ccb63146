/**
 * Agents that sleep when idle and wake when something is addressed to them (decision 0055), through the real routes
 * on the simulated engine. Each round of the idle watch is run by the test (`AgentSleep.round`), so nothing waits
 * for a background loop: the first round starts an agent's idle time, the next one (past the 300 ms idle time) puts
 * it to sleep.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { fakeChannelTokens } from "@cairn/agent-engine/testing"
import { AgentSleep } from "@cairn/application"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { PrometheusMetrics } from "effect/observability"

const idleAfterMs = 300
const wakeLeadMs = 500
const { request, workspace, key, control, dispose, runtime } = TestRuntime.makeTestApi({ sleep: { idleAfterMs, wakeLeadMs } })
afterAll(dispose)
const { newAgent, waitForStatus } = ApiKit.make(request)

type Json = Record<string, any>

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const round = () => runtime.runPromise(AgentSleep.use((sleep) => sleep.round))
/** Two rounds of the idle watch, the agent's idle time apart: an agent nothing was addressed to in between sleeps. */
const idleRounds = async () => {
  await round()
  await pause(idleAfterMs + 10)
  await round()
}
const events = async (token: string, agentId: string) =>
  ((await request("GET", `/v0/agents/${agentId}/events`, token)).body!["events"] as Array<Json>).filter((e) => e["stream"] === `agent-${agentId}`)
const detail = async (token: string, agentId: string) => (await request("GET", `/v0/agents/${agentId}`, token)).body!
const starts = (agentId: string) => control((c) => c.startCount(agentId))

const owner = async () => (await key(await workspace(10))).token

/** A running agent put to sleep by two idle rounds; asserts it sleeps. */
const asleep = async (token: string, name = "sleeper") => {
  const agentId = await newAgent(token, name)
  await idleRounds()
  const body = await detail(token, agentId)
  assert.strictEqual(body["agent"].status, "sleeping", JSON.stringify(body))
  return agentId
}

describe("an idle agent", () => {
  it("sleeps: recorded with its snapshot, shown, its gateway stopped; its workspace and snapshots stay", async () => {
    const token = await owner()
    const agentId = await newAgent(token)
    await idleRounds()

    const body = await detail(token, agentId)
    assert.strictEqual(body["agent"].status, "sleeping")
    assert.strictEqual(body["processStatus"], "sleeping")
    assert.isString(body["asleep"].since)
    assert.isNull(body["asleep"].wakeAt, "no task: it wakes only on demand")
    const fell = (await events(token, agentId)).filter((e) => e["type"] === "AgentFellAsleep")
    assert.lengthOf(fell, 1)
    assert.strictEqual(fell[0]!["actor"], "supervisor")
    assert.isAtLeast(fell[0]!["data"].idleMs, idleAfterMs)
    // Its workspace as the gateway left it, in a snapshot taken as it fell asleep: what a wake elsewhere restores.
    const snapshots = (await request("GET", `/v0/agents/${agentId}/snapshots`, token)).body!["snapshots"] as Array<Json>
    const taken = snapshots.find((s) => s["trigger"] === "sleep")
    assert.isDefined(taken, JSON.stringify(snapshots))
    assert.strictEqual(fell[0]!["data"].snapshotCid, taken!["snapshotCid"])
    assert.strictEqual(body["agent"].snapshotCid, taken!["snapshotCid"])
    const engine = await runtime.runPromise(AgentEngine.use((e) => e.status(agentId)))
    assert.strictEqual(engine.state, "stopped")
    // Further rounds leave it asleep, recording nothing more.
    await idleRounds()
    assert.lengthOf((await events(token, agentId)).filter((e) => e["type"] === "AgentFellAsleep"), 1)
  })

  it("stays awake while requests keep coming, with a messaging channel, or with an app's domain", async () => {
    const token = await owner()
    const busy = await newAgent(token, "busy")
    await round()
    for (let i = 0; i < 3; i++) {
      await pause(idleAfterMs / 3)
      assert.strictEqual((await request("GET", `/v0/agents/${busy}/tasks`, token)).status, 200)
    }
    await round()
    assert.strictEqual((await detail(token, busy))["agent"].status, "running", "a request within its idle time keeps it awake")

    const chatty = await newAgent(token, "chatty")
    const configured = await request("POST", `/v0/agents/${chatty}/channels/telegram`, token, { botToken: fakeChannelTokens.telegram })
    assert.strictEqual(configured.status, 200, JSON.stringify(configured.body))
    await waitForStatus(token, chatty, "running")
    const hosting = await newAgent(token, "hosting")
    assert.strictEqual((await request("POST", `/v0/agents/${hosting}/domains`, token, { subdomain: `app-${hosting}`, targetPort: 3000 })).status, 201)
    await idleRounds()
    assert.strictEqual((await detail(token, chatty))["agent"].status, "running", "a polling channel cannot wake it: it stays awake")
    assert.strictEqual((await detail(token, hosting))["agent"].status, "running", "its app would not come back on a wake: it stays awake")
    // The busy one, left alone now, sleeps.
    await idleRounds()
    assert.strictEqual((await detail(token, busy))["agent"].status, "sleeping")
  })
})

describe("a sleeping agent", () => {
  it("wakes once for many requests at a time, each answered as if it had been awake", async () => {
    const token = await owner()
    const agentId = await asleep(token)
    const before = await starts(agentId)
    const answers = await Promise.all([
      request("GET", `/v0/agents/${agentId}/tasks`, token),
      request("GET", `/v0/agents/${agentId}/devices`, token),
      request("GET", `/v0/agents/${agentId}/config`, token),
      request("GET", `/v0/agents/${agentId}/tasks`, token),
      request("POST", `/v0/agents/${agentId}/console/exec`, token, { command: "echo awake" })
    ])
    assert.deepStrictEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200], JSON.stringify(answers.map((a) => a.body)))
    assert.strictEqual(answers[4]!.body!["stdout"].trim(), "awake")
    assert.strictEqual(await starts(agentId), before + 1, "one start for all of them")
    const types = (await events(token, agentId)).map((e) => e["type"])
    const woken = (await events(token, agentId)).filter((e) => e["type"] === "AgentWoken")
    assert.lengthOf(woken, 1)
    assert.strictEqual(woken[0]!["data"].reason, "request")
    assert.deepStrictEqual(types.slice(types.lastIndexOf("AgentFellAsleep")), ["AgentFellAsleep", "AgentWoken", "AgentStarted"])
    assert.strictEqual((await detail(token, agentId))["agent"].status, "running")
    assert.notProperty(await detail(token, agentId), "asleep")
    // Counted on /metrics: the sleeps, and the wake's latency by what woke it and how it ended.
    const metrics = await runtime.runPromise(PrometheusMetrics.format())
    assert.match(metrics, /^cairn_agent_sleeps_total [1-9]\d*$/m, metrics)
    assert.match(metrics, /^cairn_agent_wake_duration_seconds_count\{[^}]*reason="request"[^}]*\} [1-9]\d*$/m)
  })

  it("wakes for a chat, which is answered", async () => {
    const token = await owner()
    const agentId = await asleep(token)
    const chat = await request("POST", `/v0/agents/${agentId}/chat`, token, { message: "are you there?" })
    assert.strictEqual(chat.status, 200, JSON.stringify(chat.body))
    assert.isString(chat.body!["reply"])
    assert.deepStrictEqual((await events(token, agentId)).filter((e) => e["type"] === "AgentWoken").map((e) => e["data"].reason), ["request"])
  })

  it("wakes when a messaging channel is configured, and stays awake with it", async () => {
    const token = await owner()
    const agentId = await asleep(token)
    const configured = await request("POST", `/v0/agents/${agentId}/channels/telegram`, token, { botToken: fakeChannelTokens.telegram })
    assert.strictEqual(configured.status, 200, JSON.stringify(configured.body))
    await waitForStatus(token, agentId, "running")
    const env = await control((c) => c.environmentOf(agentId))
    assert.strictEqual(env?.["CHANNEL_TELEGRAM_BOT_TOKEN"], fakeChannelTokens.telegram, "its gateway started with the channel's token")
    await idleRounds()
    assert.strictEqual((await detail(token, agentId))["agent"].status, "running")
  })

  it("wakes for a restart, which runs as any restart", async () => {
    const token = await owner()
    const agentId = await asleep(token)
    const restarted = await request("POST", `/v0/agents/${agentId}/restart`, token)
    assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
    assert.strictEqual(restarted.body!["agent"].status, "running")
  })

  it("wakes by itself in time for a scheduled task", async () => {
    const token = await owner()
    const agentId = await newAgent(token, "scheduled")
    // A one-shot task 4 s ahead: far enough for the agent to sleep (twice the wake lead), near enough to wait for.
    const at = new Date(Date.now() + 4000).toISOString()
    const created = await request("POST", `/v0/agents/${agentId}/tasks`, token, {
      name: "soon",
      schedule: { kind: "at", at },
      payload: { kind: "agentTurn", text: "Say hello." }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    await idleRounds()
    const body = await detail(token, agentId)
    assert.strictEqual(body["agent"].status, "sleeping", JSON.stringify(body))
    assert.strictEqual(Date.parse(body["asleep"].wakeAt), Date.parse(at) - wakeLeadMs, "woken one wake lead before the task")

    // Rounds until the wake time has come: the round wakes it, and it runs before the task falls due.
    const deadline = Date.parse(at)
    while ((await detail(token, agentId))["agent"].status === "sleeping") {
      assert.isBelow(Date.now(), deadline, "not woken before its task fell due")
      await round()
      await pause(20)
    }
    await waitForStatus(token, agentId, "running")
    assert.isBelow(Date.now(), deadline, "running before its task fell due")
    const woken = (await events(token, agentId)).filter((e) => e["type"] === "AgentWoken")
    assert.deepStrictEqual(woken.map((e) => e["data"].reason), ["task"])
  })

  it("whose wake fails is not_running with the reason, and a restart brings it back", async () => {
    const token = await owner()
    const agentId = await asleep(token)
    await control((c) => c.failNextStart(agentId, "Error: config invalid: agents.defaults.model"))
    await request("GET", `/v0/agents/${agentId}/tasks`, token)
    const body = await waitForStatus(token, agentId, "not_running")
    assert.include(body["startFailure"].reason, "config invalid")
    assert.isString(body["startFailure"].at)
    const restarted = await request("POST", `/v0/agents/${agentId}/restart`, token)
    assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
    assert.notProperty(await detail(token, agentId), "startFailure")
  })

  it("shows as it was at a point of its history (?at=)", async () => {
    const token = await owner()
    const agentId = await asleep(token)
    const fell = (await events(token, agentId)).find((e) => e["type"] === "AgentFellAsleep")!
    await request("GET", `/v0/agents/${agentId}/tasks`, token)
    await waitForStatus(token, agentId, "running")
    const then = await request("GET", `/v0/agents/${agentId}?at=${encodeURIComponent(fell["position"])}`, token)
    assert.strictEqual(then.status, 200, JSON.stringify(then.body))
    assert.strictEqual(then.body!["agent"].status, "sleeping")
  })
})
