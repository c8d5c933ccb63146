/** Agents on a real server process with the simulated engine: audit through the CLI, and supervision that survives a restart. */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

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
    const ops = { url: server.url, dataDir }
    const workspace = cli(ops, "workspace", "create", "--name", "Agents", "--agent-limit", "2")
    const token = cli(ops, "key", "create", "--workspace", workspace, "--user", "ada", "--scopes", "org:agents")
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    const created = await call("POST", "/v0/agents", { name: "steady" })
    assert.strictEqual(created.status, 201)
    const agent = ((await created.json()) as { agent: { agentId: string; status: string } }).agent
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
    const history = cli({ url: server.url, dataDir }, "audit", "agent", agent.agentId)
    assert.match(history, /AgentStarted\tby engine$/)
    const full = await (await fetch(`${server.url}/v0/agents/${agent.agentId}/events`, { headers: { authorization: `Bearer ${token}` } })).json() as { events: Array<{ type: string; actor: string }> }
    assert.deepInclude(full.events, { ...full.events.find((e) => e.type === "AgentRestartRequested")!, actor: "supervisor" })
  }, 120_000)
})
