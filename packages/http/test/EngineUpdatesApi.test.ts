/**
 * Engines and engine versions through the real routes (Pinata's agents API): the engines list, an agent's available
 * versions, whether an update is available, and `POST …/update` restarting it onto the version its tag names. The
 * simulated engine offers 2026.3.1, 2026.3.8 and 2026.4.2; a new release is offered during the test, as one appears
 * on npm.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"

const { request, workspace, key, control, dispose } = TestRuntime.makeTestApi()
const { expectError } = ApiKit
const kit = ApiKit.make(request)

let owner: string
let agentId: string

beforeAll(async () => {
  owner = (await key(await workspace(5))).token
  const created = await kit.createAgent(owner, { name: "Keeper" })
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  agentId = created.body!["agent"].agentId
}, 60_000)

afterAll(dispose)

const restarts = async () =>
  ((await request("GET", `/v0/agents/${agentId}/events`, owner)).body!["events"] as Array<{ type: string; data: { engineVersion?: string } }>)
    .filter((event) => event.type === "AgentRestartRequested")

describe("engines and updates", () => {
  it("lists the engine agents run on here", async () => {
    const engines = await request("GET", "/v0/agents/engines", owner)
    assert.strictEqual(engines.status, 200, JSON.stringify(engines.body))
    assert.deepStrictEqual(engines.body, { engines: [{ id: "simulated", label: "Simulated OpenClaw (no real gateway)" }] })
  })

  it("says the agent is up to date on the newest version, and an update then does nothing", async () => {
    const versions = await request("GET", `/v0/agents/${agentId}/available-agent-versions`, owner)
    assert.deepStrictEqual(versions.body, {
      engine: "simulated",
      currentVersion: "2026.4.2",
      availableVersions: ["2026.3.1", "2026.3.8", "2026.4.2"],
      availableVersionsPerEngine: { simulated: ["2026.3.1", "2026.3.8", "2026.4.2"] }
    })
    assert.deepStrictEqual((await request("GET", `/v0/agents/${agentId}/update`, owner)).body, {
      currentVersion: "2026.4.2",
      latestVersion: "2026.4.2",
      updateAvailable: false
    })
    const updated = await request("POST", `/v0/agents/${agentId}/update`, owner)
    assert.deepStrictEqual(updated.body, { success: true, previousVersion: "2026.4.2", newVersion: "2026.4.2", output: "Already on 2026.4.2: nothing to update" })
    assert.lengthOf(await restarts(), 0)
  })

  it("offers a new release, and an update restarts the agent onto it; a beta only when asked for", async () => {
    await control((c) => Effect.all([c.offerVersion("2026.5.1"), c.offerVersion("2026.6.0-beta.1")]))
    assert.deepStrictEqual((await request("GET", `/v0/agents/${agentId}/update`, owner)).body, {
      currentVersion: "2026.4.2",
      latestVersion: "2026.5.1",
      updateAvailable: true
    })
    const updated = await request("POST", `/v0/agents/${agentId}/update`, owner, { tag: "latest" })
    assert.strictEqual(updated.status, 200, JSON.stringify(updated.body))
    assert.deepStrictEqual(updated.body, { success: true, previousVersion: "2026.4.2", newVersion: "2026.5.1", output: "Restarted on 2026.5.1 (was 2026.4.2)" })
    const agent = (await request("GET", `/v0/agents/${agentId}`, owner)).body!["agent"]
    assert.deepInclude(agent, { engineVersion: "2026.5.1", status: "running" })
    assert.deepStrictEqual((await restarts()).map((event) => event.data.engineVersion), ["2026.5.1"])

    const beta = await request("POST", `/v0/agents/${agentId}/update`, owner, { tag: "beta" })
    assert.deepStrictEqual(beta.body, { success: true, previousVersion: "2026.5.1", newVersion: "2026.6.0-beta.1", output: "Restarted on 2026.6.0-beta.1 (was 2026.5.1)" })
    assert.deepStrictEqual((await request("GET", `/v0/agents/${agentId}/update`, owner)).body, {
      currentVersion: "2026.6.0-beta.1",
      latestVersion: "2026.5.1",
      updateAvailable: false
    })
  })

  it("refuses a tag naming no offered version, an older one, a bad body, and an agent the caller cannot see", async () => {
    expectError(await request("POST", `/v0/agents/${agentId}/update`, owner, { tag: "2025.1.1" }), 400, "Invalid version")
    expectError(await request("POST", `/v0/agents/${agentId}/update`, owner, { tag: "2026.3.8" }), 400, "Invalid version")
    const empty = await request("POST", `/v0/agents/${agentId}/update`, owner, { tag: "" })
    assert.strictEqual(empty.status, 400)
    assert.match(empty.body!["error"], /^Validation failed: /)
    const other = (await key(await workspace(1))).token
    expectError(await request("GET", `/v0/agents/${agentId}/update`, other), 404, "Agent not found")
    expectError(await request("POST", `/v0/agents/${agentId}/update`, other), 404, "Agent not found")
    expectError(await request("GET", `/v0/agents/${agentId}/available-agent-versions`, other), 404, "Agent not found")
    assert.strictEqual((await request("GET", "/v0/agents/engines", undefined)).status, 401)
  })
})
