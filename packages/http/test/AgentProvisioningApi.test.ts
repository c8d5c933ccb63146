/**
 * `GET /v0/agents/{id}` while the engine brings a new agent up: `provisioning` says the phase and how far it is
 * (the engine version's install, with the MB on disk; then the gateway's start), and is gone once the agent runs.
 * The simulated engine holds the install and the start, so each phase is seen for sure, not caught by luck.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"

const { runtime, request, workspace, key, control, dispose } = TestRuntime.makeTestApi()
afterAll(dispose)

// Asks for the agent until a phase is seen; the engine moves on in the background.
const { waitForAgent: waitFor } = ApiKit.make(request)

describe("an agent's provisioning through /v0/agents/{id}", () => {
  it("shows installing_engine with the MB installed, then starting_gateway, and nothing once running", async () => {
    const token = (await key(await workspace(5))).token
    const versions = await runtime.runPromise(AgentEngine.use((engine) => engine.listVersions))
    const version = versions[versions.length - 1]!
    await control((c) => c.holdInstall(version))
    await control((c) => c.holdStarts)

    const created = await request("POST", "/v0/agents", token, { name: "first" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.body!["agent"].status, "starting")
    const agentId = created.body!["agent"].agentId as string

    const installing = (await request("GET", `/v0/agents/${agentId}`, token)).body!
    assert.strictEqual(installing["agent"].status, "starting")
    assert.deepInclude(installing["provisioning"], { phase: "installing_engine" })
    assert.deepInclude(installing["provisioning"].progress, { engineVersion: version, installedMB: 0 })
    assert.isAtLeast(installing["provisioning"].progress.elapsedSeconds, 0)

    await control((c) => c.reportInstall(version, 312_456_789))
    const further = (await request("GET", `/v0/agents/${agentId}`, token)).body!
    assert.strictEqual(further["provisioning"].progress.installedMB, 312.5)

    await control((c) => c.finishInstall(version))
    const starting = await waitFor(token, agentId, "starting_gateway", (body) => body["provisioning"]?.phase === "starting_gateway")
    assert.strictEqual(starting["agent"].status, "starting")
    assert.deepStrictEqual(Object.keys(starting["provisioning"].progress).sort(), ["elapsedSeconds", "engineVersion"])

    await control((c) => c.releaseStarts)
    const running = await waitFor(token, agentId, "running", (body) => body["agent"].status === "running")
    assert.notProperty(running, "provisioning")
    // Transient runtime state: nothing of it is in the agent's history.
    const history = (await request("GET", `/v0/agents/${agentId}/events`, token)).body!["events"] as Array<{ type: string; data: unknown }>
    assert.notInclude(JSON.stringify(history), "installing_engine")
    assert.notInclude(JSON.stringify(history), "provisioning")
  })
})
