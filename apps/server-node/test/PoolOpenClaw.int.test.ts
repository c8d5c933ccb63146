/**
 * The warm pool on real OpenClaw gateways (decision 0058), through a real server process with `AGENT_POOL_SIZE=1`:
 * an agent created while the pool fills is a cold start; the next create takes the pooled gateway and is answered
 * `running` at once. The adopted agent is indistinguishable from the cold one: its gateway's environment and its
 * home's files and config are the same but for its own id, token and port, with nothing of another agent, and only
 * its own token opens its gateway. A kill -9 of Cairn with a gateway waiting in the pool leaves nothing of it after
 * the next start: its processes and home are gone, and the pool starts a new one. Runs only with
 * ENGINE_IT=openclaw, in the embedded store's pass (the store's side is AgentPoolApi.test.ts, on both stores).
 */
import { gatewayAnswersReady, gatewayEnvironment, processesUnder } from "@cairn/agent-engine-openclaw/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { embeddedStorePass, filesUnder, newApiUser, realEngineServer, type ServerProcess, startServer, textOf, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const { enabled, dataDir, env, stop } = realEngineServer("pool", { AGENT_POOL_SIZE: "1" })
let server: ServerProcess | undefined
afterAll(() => stop(server))

const homeOf = (agentId: string) => join(dataDir, "agents", agentId)
/** Gateways waiting in the pool, from /metrics. */
const poolReady = async (running: ServerProcess) =>
  Number(/^cairn_agent_pool_ready (\d+)/m.exec(await (await fetch(`${running.url}/metrics`)).text())?.[1] ?? 0)
/** The homes on disk that no agent of `known` has: the pool's. */
const poolHomes = (known: ReadonlyArray<string>) => readdirSync(join(dataDir, "agents")).filter((id) => !known.includes(id))
/** The gateway's config with what is the agent's own (its id, its port) made neutral. */
const neutralConfig = (agentId: string) => {
  const config = JSON.parse(readFileSync(join(homeOf(agentId), ".openclaw", "openclaw.json"), "utf8"))
  delete config.gateway.port
  return JSON.stringify(config).replaceAll(agentId, "<agent>")
}
/** The gateway's environment with its own values (home, token) made neutral. */
const neutralEnvironment = (agentId: string) => {
  const environment = gatewayEnvironment(homeOf(agentId))!
  const { OPENCLAW_GATEWAY_TOKEN: token, ...rest } = environment
  assert.isString(token)
  return JSON.stringify(Object.entries(rest).sort()).replaceAll(agentId, "<agent>")
}
/**
 * Its home's files, by path; logs, caches and the gateway's own state (written as it runs) left out, and so is
 * `openclaw.json.last-good`: OpenClaw copies a config it has run with there once its start has settled, at a time of
 * its own (a gateway that has run longer may have it where a fresher one does not yet).
 */
const homeFiles = (agentId: string) =>
  filesUnder(homeOf(agentId)).map((file) => relative(homeOf(agentId), file))
    .filter((path) => !/(^|\/)(logs?|state|cache|\.cache|sessions|agents|lost\+found|devices|identity|canvas|tmp)(\/|$)|\.log$|\.sqlite|\.last-good$/.test(path))
    .sort()

describe.runIf(enabled && embeddedStorePass)("the warm pool on real OpenClaw gateways", () => {
  it("creates from the pool at once, an agent no different from a cold one, and leaves nothing after a kill -9", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    const first = server
    const owner = newApiUser({ url: first.url, dataDir }, { workspace: "Pooled", agentLimit: 3, scopes: "org:agents" })
    const statusOf = async (agentId: string) => (await owner.call("GET", `/v0/agents/${agentId}`)).body?.agent?.status as string | undefined

    // Created while the pool still fills: a cold start.
    const cold = await owner.call("POST", "/v0/agents", { name: "cold" })
    assert.strictEqual(cold.status, 201, JSON.stringify(cold.body))
    const coldId = cold.body.agent.agentId as string
    await waitUntil("the cold agent runs", async () => (await statusOf(coldId)) === "running" || undefined, { timeoutMs: 240_000, output: first.output, intervalMs: 250 })
    await waitUntil("the pool is full", async () => (await poolReady(first)) === 1 || undefined, { timeoutMs: 240_000, output: first.output, intervalMs: 250 })
    const [pooledId] = poolHomes([coldId])
    assert.isString(pooledId)
    assert.isNotEmpty(processesUnder(homeOf(pooledId!)), "the pooled gateway runs")

    // The next create takes it: running in the create's own answer.
    const warm = await owner.call("POST", "/v0/agents", { name: "warm" })
    assert.strictEqual(warm.status, 201, JSON.stringify(warm.body))
    assert.strictEqual(warm.body.agent.agentId, pooledId)
    assert.strictEqual(warm.body.agent.status, "running")
    const warmId = pooledId!

    // The same as the cold one but for its own id, token and port.
    assert.strictEqual(neutralEnvironment(warmId), neutralEnvironment(coldId))
    assert.strictEqual(neutralConfig(warmId), neutralConfig(coldId))
    assert.deepStrictEqual(homeFiles(warmId), homeFiles(coldId))
    for (const file of filesUnder(homeOf(warmId))) assert.notInclude(textOf(file), coldId, file)
    // Its own token opens its gateway, the cold agent's does not.
    const warmToken = gatewayEnvironment(homeOf(warmId))!["OPENCLAW_GATEWAY_TOKEN"]!
    const coldToken = gatewayEnvironment(homeOf(coldId))!["OPENCLAW_GATEWAY_TOKEN"]!
    assert.notStrictEqual(warmToken, coldToken)
    const port = JSON.parse(readFileSync(join(homeOf(warmId), ".openclaw", "openclaw.json"), "utf8")).gateway.port as number
    assert.isTrue(await gatewayAnswersReady(homeOf(warmId), port))
    const console = await owner.call("POST", `/v0/agents/${warmId}/console/exec`, { command: "echo adopted" })
    assert.strictEqual(console.body.stdout?.trim(), "adopted", JSON.stringify(console.body))

    // The pool fills again, then Cairn is killed with that gateway waiting.
    await waitUntil("the pool is full again", async () => (await poolReady(first)) === 1 || undefined, { timeoutMs: 240_000, output: first.output, intervalMs: 250 })
    const [waitingId] = poolHomes([coldId, warmId])
    assert.isString(waitingId)
    assert.isNotEmpty(processesUnder(homeOf(waitingId!)))
    first.child.kill("SIGKILL")
    await first.exited

    // The next start clears it (its gateway is stopped with the one it left running, its home removed), resumes the
    // agents, and fills the pool with a new one.
    server = await startServer({ ...env, PORT: undefined })
    await waitUntilServing(server)
    const second = server
    await waitUntil("the left gateway's home removed", () => !existsSync(homeOf(waitingId!)) || undefined, { timeoutMs: 120_000, output: second.output, intervalMs: 250 })
    assert.isEmpty(processesUnder(homeOf(waitingId!)))
    await waitUntil("the pool is full after the restart", async () => (await poolReady(second)) === 1 || undefined, { timeoutMs: 240_000, output: second.output, intervalMs: 500 })
    const [refilled] = poolHomes([coldId, warmId])
    assert.notStrictEqual(refilled, waitingId)
    const again = newApiUser({ url: second.url, dataDir }, { workspace: "Pooled again", agentLimit: 1, scopes: "org:agents" })
    assert.strictEqual((await again.call("GET", `/v0/agents/${warmId}`)).status, 404, "another workspace's agent")
  }, 900_000)
})
