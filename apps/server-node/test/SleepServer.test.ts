/**
 * Sleep and wake on a real server process (decision 0055), on the simulated engine with `AGENT_IDLE_AFTER=2 seconds`:
 * an agent left alone falls asleep while one with a WebSocket open through its own host stays awake; a request to
 * the sleeping agent's host wakes it and is answered; and a kill -9 of Cairn with one agent asleep, one awake and one
 * waking loses none: after the restart the sleeper still sleeps (nothing started it), the awake one runs, the one
 * that was waking is started, and a request wakes the sleeper. Gateways take 1 s to start here, so a wake is seen.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { WebSocket } from "ws"
import { embeddedStorePass, newApiUser, requestWithHost, type ServerProcess, startServer, stopServer, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-sleep-"))
// Embedded defaults: the agents' node and database are this test's alone, also under CI's Postgres pass.
const env = { DATA_DIR: dataDir, ENGINE: "simulated", DATABASE_URL: undefined, AGENT_IDLE_AFTER: "2 seconds", SIMULATED_START_DELAY: "1 second" }
let server: ServerProcess

afterAll(async () => {
  // Unset when the pass skipped the test.
  if ((server as ServerProcess | undefined) !== undefined) await stopServer(server, dataDir)
  else rmSync(dataDir, { recursive: true, force: true })
})

const openSocket = (host: string, token: string) =>
  new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace("http", "ws")}/`, { headers: { host, authorization: `Bearer ${token}` } })
    ws.once("open", () => resolve(ws))
    ws.once("error", reject)
  })

// The embedded store's pass only: the server keeps to its own embedded database either way.
describe.runIf(embeddedStorePass)("sleep and wake on the Node server", () => {
  it("puts an idle agent to sleep, keeps one with an open connection awake, wakes on a request to its host, and survives a kill -9", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    // The server's address as it is now: a restarted server listens elsewhere.
    const ops = { get url() { return server.url }, dataDir }
    const owner = newApiUser(ops, { workspace: "Sleepers", agentLimit: 3, scopes: "org:agents" })
    const port = new URL(server.url).port
    const statusOf = async (agentId: string) => (await owner.call("GET", `/v0/agents/${agentId}`)).body?.agent?.status as string | undefined
    const until = (agentId: string, status: string, timeoutMs = 30_000) =>
      waitUntil(`agent ${agentId} ${status}`, async () => (await statusOf(agentId)) === status || undefined, { timeoutMs, output: server.output })
    const create = async (name: string) => {
      const created = await owner.call("POST", "/v0/agents", { name })
      assert.strictEqual(created.status, 201, JSON.stringify(created.body))
      const agentId = created.body.agent.agentId as string
      await until(agentId, "running")
      return agentId
    }
    const sleeper = await create("sleeper")
    const watched = await create("watched")
    const waker = await create("waker")
    const host = (agentId: string) => `${agentId}.agents.localhost:${port}`

    // A Control UI open on the watched agent: a WebSocket through its own host, held open.
    const socket = await openSocket(host(watched), owner.token)
    await until(sleeper, "sleeping")
    assert.include(server.output(), `Agent ${sleeper} fell asleep after`)
    // Twice its idle time later, the watched agent is still awake.
    await new Promise((resolve) => setTimeout(resolve, 4000))
    assert.strictEqual(await statusOf(watched), "running")

    // A request to the sleeping agent's own host wakes it, and is answered by its gateway.
    const page = await requestWithHost(server, host(sleeper), "/", { headers: { authorization: `Bearer ${owner.token}` } })
    assert.strictEqual(page.status, 200, page.text)
    assert.include(page.text, `Simulated gateway ${sleeper}`)
    assert.strictEqual(await statusOf(sleeper), "running")
    const history = (await owner.call("GET", `/v0/agents/${sleeper}/events`)).body.events as Array<{ type: string; data: any }>
    assert.deepStrictEqual(history.filter((e) => e.type === "AgentWoken").map((e) => e.data.reason), ["request"])

    // Asleep again; then Cairn is killed with the sleeper asleep, the watched agent awake and the waker waking.
    await until(sleeper, "sleeping")
    await until(waker, "sleeping")
    assert.strictEqual(await statusOf(watched), "running")
    void owner.call("GET", `/v0/agents/${waker}/tasks`).catch(() => undefined)
    await until(waker, "starting")
    const starts = async () =>
      ((await owner.call("GET", `/v0/agents/${sleeper}/events`)).body.events as Array<{ type: string }>).filter((e) => e.type === "AgentStarted").length
    const startsBefore = await starts()
    socket.terminate()
    server.child.kill("SIGKILL")
    await server.exited
    server = await startServer(env)
    await waitUntilServing(server)
    await until(watched, "running")
    assert.strictEqual(await statusOf(sleeper), "sleeping", "a restart of Cairn does not start a sleeping agent")
    await until(waker, "running")
    assert.strictEqual(await starts(), startsBefore)
    // A request through the API wakes it on the restarted server.
    const tasks = await owner.call("GET", `/v0/agents/${sleeper}/tasks`)
    assert.strictEqual(tasks.status, 200, JSON.stringify(tasks.body))
    assert.strictEqual(await statusOf(sleeper), "running")
  }, 150_000)
})
