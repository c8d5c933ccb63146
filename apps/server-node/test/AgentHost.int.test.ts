/**
 * Each agent's own host (decision 0046), end to end: a real server process and `<agentId>.agents.localhost` as the
 * Host. On the simulated engine (always; both stores) the agent's gateway is the engine's loopback stand-in
 * (@cairn/agent-engine/node SimulatedGateway: a page, `/v1/chat/completions`, `/v1/responses`, a WebSocket echo, all behind the gateway
 * token): the token's three ways in (bearer, `?token=` turned into a cookie and a redirect, the cookie), an API key
 * of the agent's workspace, the refusals (a cross-origin cookie among them), the official `openai` client pointed at
 * the host, Cairn's own `/v0` routes on it, a WebSocket through it, and a domain without a port. On the real engine,
 * ChatServer.int.test.ts takes the same paths to an OpenClaw gateway with a model (the Control UI in a browser, the
 * `openai` client, the RPC over the host's WebSocket), with one gateway start for both.
 */
import { removeDataDir } from "@cairn/agent-engine-openclaw/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { once } from "node:events"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { WebSocket } from "ws"
import { type ApiUser, fetchThrough, newApiUser, requestWithHost, type ServerProcess, startServer, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const servers: Array<{ server: ServerProcess; dataDir: string }> = []

const via = requestWithHost

afterAll(async () => {
  for (const { server, dataDir } of servers) {
    if (server.child.exitCode === null) {
      server.child.kill("SIGTERM")
      await server.exited
    }
    removeDataDir(dataDir)
  }
})


/** A WebSocket to the server for `host`: resolves once open; rejects with the status it was refused with. */
const openSocket = (server: ServerProcess, host: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace("http", "ws")}${path}`, { headers: { host, ...headers } })
    ws.once("open", () => resolve(ws))
    ws.once("unexpected-response", (_request, response) => reject(Object.assign(new Error(`refused ${response.statusCode}`), { status: response.statusCode })))
    ws.once("error", reject)
  })

const exchange = async (ws: WebSocket, message: string) => {
  const reply = once(ws, "message")
  ws.send(message)
  const [data] = await reply
  return String(data)
}

const started = async (env: Record<string, string | undefined>, prefix: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  const server = await startServer({ DATA_DIR: dataDir, SNAPSHOTS: "off", ...env })
  servers.push({ server, dataDir })
  await waitUntilServing(server)
  return { server, ops: { url: server.url, dataDir } }
}

const waitForRunning = (server: ServerProcess, call: ApiUser["call"], agentId: string, timeoutMs = 180_000) =>
  waitUntil("the agent runs", async () =>
    (await call("GET", `/v0/agents/${agentId}`)).body?.agent?.status === "running" ? true : undefined, { output: server.output, timeoutMs })

describe("each agent's own host, on the simulated engine", () => {
  it("reaches the agent's gateway with its gateway token or an API key of its workspace: the page with the token cookie, chat completions through the openai client, a WebSocket, Cairn's /v0 routes; refusals say why", async () => {
    // A request waits a second for a gateway on its way up (GATEWAY_READY_WAIT), and this one takes 5 s.
    const { server, ops } = await started({ ENGINE: "simulated", SIMULATED_START_DELAY: "5 seconds", GATEWAY_READY_WAIT: "1 second" }, "cairn-agent-host-")
    const port = new URL(server.url).port
    const owner = newApiUser(ops, { workspace: "Agent hosts", agentLimit: 2, scopes: "org:agents" })
    const stranger = newApiUser(ops, { workspace: "Someone else", agentLimit: 1, scopes: "org:agents" })
    const created = await owner.call("POST", "/v0/agents", { name: "hosted" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    const host = `${agentId}.agents.localhost:${port}`
    const token = (await owner.call("GET", `/v0/agents/${agentId}/gateway-token`)).body.gatewayToken as string
    assert.match(token, /^gw_/)
    const bearer = { authorization: `Bearer ${token}` }

    // Still starting (its gateway takes 5 s here, ample on a loaded machine): 503 with Retry-After, not a failure.
    const starting = await via(server, host, "/", { headers: bearer })
    assert.strictEqual(starting.status, 503, starting.text)
    assert.strictEqual(starting.json.status, "starting")
    assert.isDefined(starting.headers["retry-after"])
    await waitForRunning(server, owner.call, agentId)

    // No credentials, a wrong token, another workspace's key: 401, each saying why.
    const bare = await via(server, host, "/")
    assert.strictEqual(bare.status, 401)
    assert.deepStrictEqual(bare.json, { error: "Unauthorized", reason: "missing-credentials" })
    assert.match(String(bare.headers["www-authenticate"]), /^Bearer realm="cairn"/)
    const wrong = await via(server, host, "/", { headers: { authorization: `Bearer gw_${"0".repeat(43)}` } })
    assert.deepStrictEqual([wrong.status, wrong.json], [401, { error: "Unauthorized", reason: "stale-gateway-token" }])
    const wrongQuery = await via(server, host, "/?token=gw_nope")
    assert.deepStrictEqual([wrongQuery.status, wrongQuery.json?.reason], [401, "stale-gateway-token"])
    const foreign = await via(server, host, "/", { headers: { authorization: `Bearer ${stranger.token}` } })
    assert.deepStrictEqual([foreign.status, foreign.json], [401, { error: "Unauthorized", reason: "other-workspace" }])
    const junk = await via(server, host, "/", { headers: { authorization: "Bearer not-a-key" } })
    assert.strictEqual(junk.status, 401)
    assert.strictEqual(junk.json.reason, "malformed")

    // ?token= sets the cookie (HttpOnly, SameSite=Lax, this host's own) and sends the browser on without the token.
    const withQuery = await via(server, host, "/?token=" + encodeURIComponent(token) + "&view=chat")
    assert.strictEqual(withQuery.status, 302, withQuery.text)
    assert.strictEqual(withQuery.headers.location, "/?view=chat")
    const cookie = String(withQuery.headers["set-cookie"]?.[0])
    assert.match(cookie, /^gw_token=[^;]+; Path=\/; HttpOnly; SameSite=Lax$/)
    assert.notInclude(cookie, "Domain=")
    const page = await via(server, host, "/?view=chat", { headers: { cookie: cookie.split(";")[0]! } })
    assert.strictEqual(page.status, 200, page.text)
    assert.include(page.text, `Simulated gateway ${agentId}`)
    assert.match(String(page.headers["content-type"]), /^text\/html/)
    // The bearer token, and an API key of the agent's workspace, reach it too; the Host's case and port do not matter.
    assert.strictEqual((await via(server, host.toUpperCase(), "/", { headers: bearer })).status, 200)
    assert.strictEqual((await via(server, `${agentId}.agents.localhost`, "/healthz", { headers: { authorization: `Bearer ${owner.token}` } })).status, 200)

    // The OpenAI-compatible endpoint, through the official client, with the gateway token as its key.
    const client = new OpenAI({ apiKey: token, baseURL: `http://${agentId}.agents.localhost:${port}/v1`, fetch: fetchThrough(server), maxRetries: 0 })
    const completion = await client.chat.completions.create({ model: "openclaw", messages: [{ role: "user", content: "hello" }] })
    assert.strictEqual(completion.choices[0]?.message.content, "Echo: hello")
    const stream = await client.chat.completions.create({ model: "openclaw", stream: true, messages: [{ role: "user", content: "hello there, agent" }] })
    let streamed = ""
    let chunks = 0
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta.content ?? ""
      chunks++
    }
    assert.strictEqual(streamed, "Echo: hello there, agent")
    assert.isAbove(chunks, 2, "streamed in pieces")
    const answered = await client.responses.create({ model: "openclaw", input: "what now?" })
    assert.strictEqual(answered.output_text, "Echo: what now?")
    // An API key of the workspace works as the client's key: the gateway gets its own token, never the key.
    const withKey = new OpenAI({ apiKey: owner.token, baseURL: `http://${agentId}.agents.localhost:${port}/v1`, fetch: fetchThrough(server), maxRetries: 0 })
    assert.strictEqual((await withKey.chat.completions.create({ model: "openclaw", messages: [{ role: "user", content: "by key" }] })).choices[0]?.message.content, "Echo: by key")
    for (const apiKey of [`gw_${"1".repeat(43)}`, stranger.token]) {
      const refused = new OpenAI({ apiKey, baseURL: `http://${agentId}.agents.localhost:${port}/v1`, fetch: fetchThrough(server), maxRetries: 0 })
      const status = await refused.chat.completions.create({ model: "openclaw", messages: [{ role: "user", content: "x" }] }).then(
        () => 200,
        (error: { status?: number }) => error.status
      )
      assert.strictEqual(status, 401)
    }

    // Cairn's own /v0 routes on the agent's host, with the gateway token (bearer or cookie), as on Pinata's.
    const own = await via(server, host, `/v0/agents/${agentId}`, { headers: bearer })
    assert.strictEqual(own.status, 200, own.text)
    assert.strictEqual(own.json.agent.agentId, agentId)
    assert.strictEqual((await via(server, host, `/v0/agents/${agentId}`, { headers: { cookie: cookie.split(";")[0]! } })).status, 200)
    assert.strictEqual((await via(server, host, `/v0/agents/${agentId}`)).status, 401)
    // The cookie is not taken on a request another site's page made (another agent's app is same-site).
    const forged = await via(server, host, `/v0/agents/${agentId}/console/exec`, {
      method: "POST",
      headers: { cookie: cookie.split(";")[0]!, origin: `http://evil.apps.localhost:${port}`, "content-type": "text/plain" },
      body: JSON.stringify({ command: "echo pwned" })
    })
    assert.deepStrictEqual([forged.status, forged.json], [401, { error: "Unauthorized", reason: "cross-origin-cookie" }])
    const forgedChat = await via(server, host, "/v1/chat/completions", {
      method: "POST",
      headers: { cookie: cookie.split(";")[0]!, origin: `http://evil.apps.localhost:${port}`, "content-type": "text/plain" },
      body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content: "x" }] })
    })
    assert.strictEqual(forgedChat.status, 401)

    // A WebSocket through the host: the token as ?token= or bearer; none is 401.
    const ws = await openSocket(server, host, `/?token=${encodeURIComponent(token)}`)
    assert.strictEqual(await exchange(ws, "hello"), "hello")
    assert.strictEqual(await exchange(ws, "x".repeat(1000)), "x".repeat(1000))
    ws.close()
    const wsByKey = await openSocket(server, host, "/", { authorization: `Bearer ${owner.token}` })
    assert.strictEqual(await exchange(wsByKey, "by key"), "by key")
    wsByKey.close()
    const refusedSocket = await openSocket(server, host, "/").then(() => undefined, (error: { status: number }) => error.status)
    assert.strictEqual(refusedSocket, 401)

    // A domain added without a port is the agent's gateway too, protected by its token (issue 34, item 7).
    const domain = await owner.call("POST", `/v0/agents/${agentId}/domains`, { subdomain: `front-${agentId}` })
    assert.strictEqual(domain.status, 201, JSON.stringify(domain.body))
    assert.include(domain.body.domain, { protected: true, targetPort: 18789 })
    const front = `front-${agentId}.apps.localhost:${port}`
    assert.deepStrictEqual((await via(server, front, "/")).json, { error: "Unauthorized", reason: "missing-credentials" })
    const viaDomain = await via(server, front, "/", { headers: bearer })
    assert.strictEqual(viaDomain.status, 200, viaDomain.text)
    assert.include(viaDomain.text, `Simulated gateway ${agentId}`)
    assert.strictEqual((await via(server, front, `/v0/agents/${agentId}`, { headers: bearer })).json.agent.agentId, agentId)

    // A host no agent has is 404; Caddy's TLS ask says yes to a live agent's host only.
    const unknown = await via(server, `nobody000.agents.localhost:${port}`, "/", { headers: bearer })
    assert.deepStrictEqual([unknown.status, unknown.json], [404, { error: "Agent not found" }])
    assert.strictEqual((await fetch(`${server.url}/tls/ask?domain=${agentId}.agents.localhost`)).status, 200)
    assert.strictEqual((await fetch(`${server.url}/tls/ask?domain=nobody000.agents.localhost`)).status, 404)

    // A rotated token no longer opens the host; the new one does.
    const rotated = await owner.call("POST", `/v0/agents/${agentId}/gateway-token/rotate`, {})
    assert.strictEqual(rotated.status, 200, JSON.stringify(rotated.body))
    assert.strictEqual((await via(server, host, "/", { headers: bearer })).status, 401)
    const fresh = (await owner.call("GET", `/v0/agents/${agentId}/gateway-token`)).body.gatewayToken as string
    await waitUntil("the new token opens the host", async () =>
      (await via(server, host, "/", { headers: { authorization: `Bearer ${fresh}` } })).status === 200 ? true : undefined, { output: server.output, timeoutMs: 30_000 })
  }, 120_000)
})
