/** Agents on a real server process with the simulated engine: audit through the CLI, and supervision that survives a restart. */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, newApiUser, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-agents-"))
const env = { DATA_DIR: dataDir, ENGINE: "simulated", SIMULATED_START_DELAY: "100 millis" }
let server: ServerProcess

afterAll(async () => {
  if (server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  rmSync(dataDir, { recursive: true, force: true })
})

describe("agents on the Node server", () => {
  it("are audited through the CLI and supervised again after Cairn restarts", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    // The server moves to another port when it restarts: calls follow it.
    const ops = { get url() { return server.url }, dataDir }
    const { call } = newApiUser(ops, { workspace: "Agents", agentLimit: 2, scopes: "org:agents" })
    const created = await call("POST", "/v0/agents", { name: "steady" })
    assert.strictEqual(created.status, 201)
    const agent = created.body.agent as { agentId: string; status: string }
    assert.strictEqual(agent.status, "running")

    const audit = cli(ops, "audit", "agent", agent.agentId)
    assert.match(audit, /AgentStarted\tby engine$/)

    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
    server = await startServer(env)
    await waitUntilServing(server)
    // The simulated engine's state died with the process: devices answer only if the supervisor started it again.
    let devices = await call("GET", `/v0/agents/${agent.agentId}/devices`)
    for (let i = 0; i < 50 && devices.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      devices = await call("GET", `/v0/agents/${agent.agentId}/devices`)
    }
    assert.strictEqual(devices.status, 200)
    const history = cli(ops, "audit", "agent", agent.agentId)
    assert.match(history, /AgentStarted\tby engine$/)
    const full = (await call("GET", `/v0/agents/${agent.agentId}/events`)).body as { events: Array<{ type: string; actor: string }> }
    assert.deepInclude(full.events, { ...full.events.find((e) => e.type === "AgentRestartRequested")!, actor: "supervisor" })
  }, 120_000)
})
