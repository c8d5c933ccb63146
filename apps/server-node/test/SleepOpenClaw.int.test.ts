/**
 * Sleep and wake on real OpenClaw gateways (decision 0055), through a real server process with
 * `AGENT_IDLE_AFTER=5 seconds`: an idle agent falls asleep and its gateway's processes are gone (nothing of it runs
 * on the node); a file its shell wrote before is there after the wake; a request that needs the gateway (its runtime
 * config, read through the gateway's RPC) wakes it and is answered. Runs only with ENGINE_IT=openclaw, in the
 * embedded store's pass (the sleep is the engine's part; the store's is tested in SleepApi.test.ts on both stores).
 */
import { processesUnder } from "@cairn/agent-engine-openclaw/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { join } from "node:path"
import { embeddedStorePass, newApiUser, realEngineServer, type ServerProcess, startServer, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const { enabled, dataDir, env, stop } = realEngineServer("sleep", { AGENT_IDLE_AFTER: "5 seconds" })
let server: ServerProcess | undefined
afterAll(() => stop(server))

describe.runIf(enabled && embeddedStorePass)("sleep and wake on real OpenClaw gateways", () => {
  it("stops an idle agent's gateway, keeps its home, and wakes it for a request that needs the gateway", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    const running = server
    const owner = newApiUser({ url: running.url, dataDir }, { workspace: "Sleepy", agentLimit: 1, scopes: "org:agents" })
    const created = await owner.call("POST", "/v0/agents", { name: "dozer" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    const statusOf = async () => (await owner.call("GET", `/v0/agents/${agentId}`)).body?.agent?.status as string | undefined
    const until = (status: string, timeoutMs: number) =>
      waitUntil(`agent ${status}`, async () => (await statusOf()) === status || undefined, { timeoutMs, output: running.output, intervalMs: 250 })
    await until("running", 180_000)

    // Its shell leaves a file in its workspace.
    const wrote = await owner.call("POST", `/v0/agents/${agentId}/console/exec`, { command: "echo before-sleep > note.txt" })
    assert.strictEqual(wrote.status, 200, JSON.stringify(wrote.body))
    const home = join(dataDir, "agents", agentId)
    assert.isNotEmpty(processesUnder(home), "its gateway runs")

    await until("sleeping", 60_000)
    await waitUntil("its gateway's processes gone", () => processesUnder(home).length === 0 || undefined, { timeoutMs: 20_000, output: running.output })

    // A request that needs the gateway wakes it: the runtime config, read through the gateway's own RPC. A wake
    // longer than GATEWAY_READY_WAIT (a cold start on CI's loaded machine) answers 503 with Retry-After meanwhile,
    // and the client asks again, as a client of the API does.
    let config = await owner.call("GET", `/v0/agents/${agentId}/config`)
    const deadline = Date.now() + 240_000
    while (config.status === 503 && Date.now() < deadline) {
      assert.strictEqual(config.body.error, "Agent is starting, try again shortly")
      await new Promise((resolve) => setTimeout(resolve, 1000))
      config = await owner.call("GET", `/v0/agents/${agentId}/config`)
    }
    assert.strictEqual(config.status, 200, JSON.stringify(config.body))
    assert.strictEqual(await statusOf(), "running")
    assert.isNotEmpty(processesUnder(home), "its gateway runs again")
    const read = await owner.call("POST", `/v0/agents/${agentId}/console/exec`, { command: "cat note.txt" })
    assert.strictEqual(read.body.stdout.trim(), "before-sleep")
    const woke = /Agent \S+ woke \(request\): gateway running after (\d+) ms/.exec(running.output())
    assert.isNotNull(woke, running.output().slice(-2000))
    console.log(`Woken in ${woke![1]} ms`)
  }, 600_000)
})
