/**
 * The warm pool (decision 0058), through the real routes on the simulated engine. Each fill of the pool is run by
 * the test (`AgentPool.round`), so nothing waits for a background loop; the engine's start counts say which
 * gateway started when.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { AgentPool, CommandHandler } from "@cairn/application"
import { AgentPool as Pool } from "@cairn/domain"
import { EventStore } from "@cairn/event-store"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { PrometheusMetrics } from "effect/observability"

const { request, workspace, key, control, dispose, runtime } = TestRuntime.makeTestApi({ pool: { size: 1 } })
afterAll(dispose)
const { createAgent, waitForStatus } = ApiKit.make(request)

type Json = Record<string, any>

const fill = () => runtime.runPromise(AgentPool.use((pool) => pool.round))
const waiting = () => runtime.runPromise(AgentPool.use((pool) => pool.waiting))
const engineState = (agentId: string) =>
  runtime.runPromise(AgentEngine.use((engine) => engine.status(agentId)).pipe(Effect.map((s) => s.state), Effect.catchTag("AgentNotProvisioned", () => Effect.succeed("gone" as const))))
const poolLog = () =>
  runtime.runPromise(EventStore.use((store) => store.readStream(Pool.stream("local")))).then((events) => events.map((e) => ({ type: e.type, data: e.data as Json })))
const owner = async (agentLimit = 10) => (await key(await workspace(agentLimit))).token
const metric = async (line: string) => (await runtime.runPromise(PrometheusMetrics.format())).split("\n").find((l) => l.startsWith(line))

/** The pool filled, its one gateway's id. */
const pooled = async () => {
  assert.isTrue(await fill())
  const ids = await waiting()
  assert.lengthOf(ids, 1)
  return ids[0]!
}

describe("the warm pool", () => {
  it("starts a gateway ahead that belongs to no one; a plain create takes it and is running at once", async () => {
    const ahead = await pooled()
    assert.strictEqual(await engineState(ahead), "running")
    assert.strictEqual(await control((c) => c.startCount(ahead)), 1)
    const workspaceId = await workspace(10)
    const token = (await key(workspaceId)).token
    // Nobody's yet: not in any workspace, not an agent at all.
    assert.deepStrictEqual((await request("GET", "/v0/agents", token)).body!["agents"], [])
    assert.strictEqual((await request("GET", `/v0/agents/${ahead}`, token)).status, 404)

    const created = await createAgent(token, { name: "from the pool" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.body!["agent"].agentId, ahead)
    // Its create's answer already says running: no start was waited for, and none was made.
    assert.strictEqual(created.body!["agent"].status, "running")
    assert.strictEqual(await control((c) => c.startCount(ahead)), 1)
    const history = (await request("GET", `/v0/agents/${ahead}/events`, token)).body!["events"] as Array<Json>
    assert.deepStrictEqual(history.filter((e) => e["stream"] === `agent-${ahead}`).map((e) => e["type"]), ["AgentCreated", "AgentStarted"])
    // Its history says where its gateway came from, and since when it was waiting.
    const reservedAt = history.find((e) => e["type"] === "AgentCreated")!["data"].fromPool.reservedAt as string
    assert.deepStrictEqual(await waiting(), [])

    // Recorded: reserved before it started, taken by that workspace's create; the next round starts another.
    const log = await poolLog()
    const mine = log.filter((e) => e.data["agentId"] === ahead)
    assert.deepStrictEqual(mine.map((e) => e.type), ["PoolGatewayReserved", "PoolGatewayTaken"])
    assert.strictEqual(mine[0]!.data["at"], reservedAt)
    assert.strictEqual(mine[1]!.data["workspaceId"], workspaceId)
    const next = await pooled()
    assert.notStrictEqual(next, ahead)
    assert.strictEqual(await metric("cairn_agent_pool_takes_total{outcome=\"hit\"}"), "cairn_agent_pool_takes_total{outcome=\"hit\"} 1")
    assert.strictEqual(await metric("cairn_agent_pool_ready "), "cairn_agent_pool_ready 1")
  })

  it("is never shared: one create takes a pooled gateway, the next one (any workspace) gets a cold start", async () => {
    const ahead = await pooled()
    const [a, b] = [await owner(), await owner()]
    const first = await createAgent(a, { name: "first" })
    const second = await createAgent(b, { name: "second" })
    assert.strictEqual(first.body!["agent"].agentId, ahead)
    const cold = second.body!["agent"].agentId as string
    assert.notStrictEqual(cold, ahead)
    const created = ((await request("GET", `/v0/agents/${cold}/events`, b)).body!["events"] as Array<Json>).find((e) => e["type"] === "AgentCreated")!
    assert.notProperty(created["data"], "fromPool")
    await waitForStatus(b, cold, "running")
    assert.strictEqual((await request("GET", `/v0/agents/${ahead}`, b)).status, 404)
    assert.strictEqual((await request("GET", `/v0/agents/${cold}`, a)).status, 404)
  })

  it("is not used by a create that gives secrets or a template: those must be there from the gateway's start", async () => {
    const ahead = await pooled()
    const token = await owner()
    const secret = (await request("POST", "/v0/secrets", token, { name: "OPENAI_API_KEY", value: "sk-pool-test-value" })).body!["secret"].id
    const withSecret = await createAgent(token, { name: "with a secret", secretIds: [secret] })
    assert.strictEqual(withSecret.status, 201, JSON.stringify(withSecret.body))
    assert.notStrictEqual(withSecret.body!["agent"].agentId, ahead)
    assert.deepStrictEqual(await waiting(), [ahead])
    await waitForStatus(token, withSecret.body!["agent"].agentId, "running")
    // Still there for the next plain create.
    assert.strictEqual((await createAgent(token, { name: "plain" })).body!["agent"].agentId, ahead)
  })

  it("gives its gateway back when the create is refused after taking it", async () => {
    const ahead = await pooled()
    const full = await owner(1)
    assert.strictEqual((await createAgent(full, { name: "the one" })).body!["agent"].agentId, ahead)
    const spare = await pooled()
    const refused = await createAgent(full, { name: "one too many" })
    assert.strictEqual(refused.status, 403, JSON.stringify(refused.body))
    assert.deepStrictEqual(await waiting(), [spare])
    assert.notInclude((await poolLog()).filter((e) => e.data["agentId"] === spare).map((e) => e.type), "PoolGatewayTaken")
  })

  it("replaces a pooled gateway that crashed, removing everything of it", async () => {
    const ahead = await pooled()
    await control((c) => c.crash(ahead))
    const replacement = await pooled()
    assert.notStrictEqual(replacement, ahead)
    assert.strictEqual(await engineState(ahead), "gone")
    const discarded = (await poolLog()).find((e) => e.type === "PoolGatewayDiscarded" && e.data["agentId"] === ahead)
    assert.deepInclude(discarded!.data, { reason: "crashed" })

    // One that crashes between two looks is not handed to a create: that create starts cold, and the crashed one goes.
    await control((c) => c.crash(replacement))
    const token = await owner()
    const created = await createAgent(token, { name: "after a crash" })
    assert.notStrictEqual(created.body!["agent"].agentId, replacement)
    await waitForStatus(token, created.body!["agent"].agentId, "running")
    assert.strictEqual(await engineState(replacement), "gone")
    assert.deepStrictEqual(await waiting(), [])
  })

  it("waits while an agent of the node is on its way up: agents' own starts come first", async () => {
    const token = await owner()
    // Whatever waits in the pool taken first, so that the next create starts cold.
    for (const _ of await waiting()) assert.strictEqual((await createAgent(token, { name: "taker" })).body!["agent"].status, "running")
    await control((c) => c.holdStarts)
    const held = (await createAgent(token, { name: "held" })).body!["agent"]
    assert.strictEqual(held.status, "starting")
    assert.isTrue(await fill())
    assert.deepStrictEqual(await waiting(), [], "no pooled gateway started beside it")
    await control((c) => c.releaseStarts)
    await waitForStatus(token, held.agentId, "running")
    await pooled()
  })

  it("clears what an earlier run reserved and no create took: its gateway and home go, recorded as left", async () => {
    // As an earlier run would have left it: reserved on the pool's stream, provisioned in the engine.
    const left = "leftover0"
    const version = await control((c) => Effect.succeed(c.defaultVersion))
    await runtime.runPromise(CommandHandler.use((commands) =>
      commands.record(Pool.decider, Pool.stream("local"), new Pool.ReservePoolGateway({ agentId: left, version, at: new Date().toISOString() }), { actor: "pool" })
    ))
    await runtime.runPromise(AgentEngine.use((engine) => engine.provision(left, { version, gatewayToken: Redacted.make("a token") })).pipe(Effect.ignore))
    await runtime.runPromise(AgentPool.use((pool) => pool.clearLeftovers))
    assert.strictEqual(await engineState(left), "gone")
    assert.deepInclude((await poolLog()).find((e) => e.type === "PoolGatewayDiscarded" && e.data["agentId"] === left)!.data, { reason: "left" })
  })
})

describe("the warm pool and engine versions", () => {
  it("installs no version itself, and replaces its gateways once a newer installed version is offered", async () => {
    const before = await pooled()
    // A newer version offered, not on disk yet: the pool's gateway of the older one cannot serve a create of it
    // (creates take the newest), and the pool does not install the new one.
    const newer = "2099.1.1"
    await control((c) => c.holdInstall(newer))
    await control((c) => c.offerVersion(newer))
    assert.isTrue(await fill())
    assert.deepStrictEqual(await waiting(), [])
    assert.deepInclude((await poolLog()).find((e) => e.type === "PoolGatewayDiscarded" && e.data["agentId"] === before)!.data, { reason: "outdated" })
    // Once it is installed (by the first create that needs it), the pool starts gateways of it.
    await control((c) => c.finishInstall(newer))
    const after = await pooled()
    assert.strictEqual(await runtime.runPromise(AgentEngine.use((engine) => engine.status(after))).then((s) => s.version), newer)
  })
})
