/**
 * Talking to a real agent through Cairn, as a newcomer on the free plan would (ENGINE_IT=openclaw, slow): a real
 * server and OpenClaw gateway, offline, the agent's model a loopback OpenAI-compatible fake (FakeModelServer) that
 * the operator lets agents reach (`AGENT_EGRESS_ALLOW`), set up through the API only: a secret for its key, the
 * provider in the runtime config, the model on the agent. Then a chat (plain and streamed), the session continued,
 * its history, the sessions and models lists, and the audit trail (never the text); then the agent's own host: the
 * `openai` client, the gateway's RPC over its WebSocket, and the Control UI in a browser. A chat with an agent that is not running (409) is the simulated engine's test.
 */
import { FakeModelServer } from "@cairn/agent-engine/testing"
import { OpenClawChat, OpenClawGatewayRpc } from "@cairn/agent-engine-openclaw"
import { removeDataDir, reserveGatewayPorts } from "@cairn/agent-engine-openclaw/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import OpenAI from "openai"
import { chromium } from "playwright-core"
import { type ApiUser, fetchThrough, newApiUser, type ServerProcess, startServer, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const chromiumPath = "/usr/bin/chromium"
const screenshot = fileURLToPath(new URL("../../../docs/images/control-ui.png", import.meta.url))
const realEngine = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** The events of a `text/event-stream` body: name and parsed data. */
const parseEvents = (body: string) =>
  body.split("\n\n").flatMap((block) => {
    const event = /^event: (.+)$/m.exec(block)?.[1]
    const data = block.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n")
    return event === undefined || data === "" ? [] : [{ event, data: JSON.parse(data) }]
  })

/**
 * The agent's own host (`<agentId>.agents.localhost`) with the gateway token, as clients of OpenClaw use it: the
 * official `openai` client on its OpenAI-compatible endpoint (plain and streamed), and the gateway's RPC over the
 * host's WebSocket (`chat.send` and its events, as the Control UI and Pinata's CLI chat). Cairn's own refusal comes
 * before the gateway: no token, 401.
 */
const chatThroughTheHost = async (server: ServerProcess, call: ApiUser["call"], agentId: string) => {
  const { gatewayToken } = (await call("GET", `/v0/agents/${agentId}/gateway-token`)).body
  const host = `${agentId}.agents.localhost:${new URL(server.url).port}`
  const openai = new OpenAI({ apiKey: gatewayToken, baseURL: `http://${host}/v1`, fetch: fetchThrough(server), maxRetries: 0 })
  const completion = await openai.chat.completions.create({ model: "openclaw", messages: [{ role: "user", content: "ping from openai" }] })
  assert.include(completion.choices[0]?.message.content, FakeModelServer.fakeReply("ping from openai"))
  const stream = await openai.chat.completions.create({ model: "openclaw", stream: true, messages: [{ role: "user", content: "streamed from openai" }] })
  let streamed = ""
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? ""
  assert.include(streamed, FakeModelServer.fakeReply("streamed from openai"))
  const refused = await fetchThrough(server)(`http://${host}/v1/chat/completions`, { method: "POST", body: "{}" })
  assert.deepStrictEqual([refused.status, await refused.json()], [401, { error: "Unauthorized", reason: "missing-credentials" }])

  // The gateway's RPC over the host's WebSocket: the TCP connection goes to Cairn, the Host names the agent.
  const target = new URL(server.url)
  const rpc = await OpenClawGatewayRpc.connect({
    url: `ws://${host}/?token=${encodeURIComponent(gatewayToken)}`,
    connect: () => new Promise((resolve, reject) => {
      const socket = Net.connect(Number(target.port), target.hostname, () => resolve(socket))
      socket.once("error", reject)
    }),
    token: gatewayToken
  })
  try {
    const events = await Effect.runPromise(Stream.runCollect(OpenClawChat.turn(rpc, agentId, { message: "ping over the socket", timeoutMs: 120_000 }, async () => undefined)))
    const done = [...events].at(-1)
    assert.include(done?.type === "done" ? done.reply.reply : "", FakeModelServer.fakeReply("ping over the socket"))
  } finally {
    rpc.close()
  }
}

/**
 * What Caddy is in front of Cairn in production, for the browser: a reverse proxy on port 80 (so the page's origin
 * is `http://<agentId>.agents.localhost`, an origin the gateway allows) that names the client in `X-Forwarded-For`.
 * The client it names is not on this machine, so the gateway treats the browser as a remote device that must pair.
 * Undefined when port 80 is taken.
 */
const frontProxy = async (server: ServerProcess, client: string) => {
  const target = new URL(server.url)
  const forwarded = (request: Http.IncomingMessage) => ({ ...request.headers, "x-forwarded-for": client, "x-forwarded-proto": "http" })
  const proxy = Http.createServer((request, response) => {
    const out = Http.request({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers: forwarded(request) }, (answer) => {
      response.writeHead(answer.statusCode!, answer.headers)
      answer.pipe(response)
    })
    out.on("error", () => response.destroy())
    request.pipe(out)
  })
  proxy.on("upgrade", (request: Http.IncomingMessage, socket: Net.Socket, head: Buffer) => {
    const upstream = Net.connect(Number(target.port), target.hostname, () => {
      const lines = Object.entries(forwarded(request)).flatMap(([name, value]) =>
        value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((one) => `${name}: ${one}`))
      upstream.write(`${request.method} ${request.url} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`)
      upstream.write(head)
      socket.pipe(upstream).pipe(socket)
    })
    upstream.on("error", () => socket.destroy())
    socket.on("error", () => upstream.destroy())
  })
  const listening = await new Promise<boolean>((resolve) => {
    proxy.once("error", () => resolve(false))
    proxy.listen(80, "127.0.0.1", () => resolve(true))
  })
  if (!listening) return undefined
  return { close: () => new Promise<void>((resolve) => { proxy.closeAllConnections(); proxy.close(() => resolve()) }) }
}

/**
 * The Control UI in a real browser (Debian's Chromium, headless), through the agent's own host behind a front proxy
 * (frontProxy): opened with the gateway token once (`?token=` for Cairn's cookie, `#token=` for the Control UI
 * itself), the browser asks the gateway to pair as a new device, which is approved through the devices route; then
 * a message typed in the composer gets the agent's model's reply on the page. The screenshot is the one docs/api.md
 * shows (docs/images/control-ui.png, rewritten with `UPDATE_SCREENSHOTS=1`).
 */
const chatInControlUi = async (server: ServerProcess, call: ApiUser["call"], agentId: string) => {
  if (!existsSync(chromiumPath)) return
  const front = await frontProxy(server, "203.0.113.7")
  assert.isDefined(front, "port 80 is free for the front proxy")
  const { gatewayToken } = (await call("GET", `/v0/agents/${agentId}/gateway-token`)).body
  const origin = `http://${agentId}.agents.localhost`
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
  })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    page.setDefaultTimeout(120_000)
    // The query gives Cairn's proxy its cookie (and is redirected away), the fragment gives the Control UI the token.
    const token = encodeURIComponent(gatewayToken)
    await page.goto(`${origin}/?token=${token}#token=${token}`, { waitUntil: "domcontentloaded" })
    assert.notInclude(page.url(), gatewayToken, "the token does not stay in the address bar")
    const composer = page.getByLabel("Chat composer")
    // The browser is a new device of the gateway: its request to pair is approved through the API.
    let approved = 0
    await waitUntil("the Control UI connects, its pairing approved", async () => {
      if (await composer.isVisible()) return true
      const { pending } = (await call("GET", `/v0/agents/${agentId}/devices`)).body ?? {}
      for (const device of pending ?? []) {
        const answer = await call("POST", `/v0/agents/${agentId}/devices/${encodeURIComponent(device.id)}/approve`, {})
        assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
        approved++
      }
      return undefined
    }, { output: server.output, timeoutMs: 180_000 })
    assert.isAbove(approved, 0, "the browser had to pair, and was approved through the API")
    const { paired } = (await call("GET", `/v0/agents/${agentId}/devices`)).body
    assert.isAbove(paired.length, 0, JSON.stringify(paired))
    // On a loaded machine the composer can show before the chat takes a message (the UI is still connecting after
    // the pairing): a message it did not take is typed again, every 30 s without a reply.
    const reply = page.getByText(FakeModelServer.fakeReply("hello from a browser")).first()
    let sentAt = 0
    await waitUntil("the Control UI shows the model's reply", async () => {
      if (await reply.isVisible()) return true
      if (Date.now() - sentAt > 30_000) {
        await composer.fill("hello from a browser")
        await composer.press("Enter")
        sentAt = Date.now()
      }
      return undefined
    }, { output: server.output, timeoutMs: 300_000 })
    const png = await page.screenshot({ fullPage: false })
    writeFileSync(process.env["UPDATE_SCREENSHOTS"] === "1" ? screenshot : join(tmpdir(), `cairn-control-ui-${agentId}.png`), png)
  } finally {
    await browser.close()
    await front?.close()
  }
}

describe.runIf(realEngine)("chat with a real agent through Cairn", () => {
  it("answers through the agent's own model: plain and streamed, a session continued and listed, its history, models, and an audit trail without the text", async () => {
    const fake = await FakeModelServer.startFakeModelServer()
    cleanups.push(() => fake.close())
    const dataDir = mkdtempSync(join(tmpdir(), "cairn-chat-server-"))
    const server: ServerProcess = await startServer({
      DATA_DIR: dataDir,
      SNAPSHOTS: "off",
      OPENCLAW_VERSIONS: "2026.9.6",
      OPENCLAW_BASE_PORT: String(reserveGatewayPorts()),
      AGENT_EGRESS_ALLOW: `127.0.0.1:${fake.port}`,
      SECRETS_MASTER_KEY: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
      ...(process.env["OPENCLAW_ENGINES_DIR"] === undefined ? {} : { OPENCLAW_ENGINES_DIR: process.env["OPENCLAW_ENGINES_DIR"] })
    })
    cleanups.push(async () => {
      if (server.child.exitCode === null) {
        server.child.kill("SIGTERM")
        await server.exited
      }
      removeDataDir(dataDir)
    })
    await waitUntilServing(server)
    const ops = { url: server.url, dataDir }
    const { call, token } = newApiUser(ops, { workspace: "Chat on OpenClaw", agentLimit: 1, scopes: "org:agents" })
    const waitFor = <A>(what: string, check: () => Promise<A | undefined>, timeoutMs = 180_000) =>
      waitUntil(what, check, { output: server.output, timeoutMs })

    // The model's key as a secret of the agent; the provider in the agent's config; the model on the agent.
    const secret = await call("POST", "/v0/secrets", { name: "FAKELLM_API_KEY", value: fake.apiKey })
    assert.strictEqual(secret.status, 201, JSON.stringify(secret.body))
    const created = await call("POST", "/v0/agents", { name: "talker" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    const running = () => waitFor("the agent runs", async () => (await call("GET", `/v0/agents/${agentId}`)).body?.agent?.status === "running" ? true : undefined)
    await running()
    const attached = await call("POST", `/v0/agents/${agentId}/secrets`, { secretIds: [secret.body.secret.id] })
    assert.strictEqual(attached.status, 200, JSON.stringify(attached.body))
    const read = await call("GET", `/v0/agents/${agentId}/config`)
    const provider = FakeModelServer.providerConfig(fake)
    const written = await call("PUT", `/v0/agents/${agentId}/config`, {
      config: { ...read.body.config, models: provider.models },
      baseHash: read.body.hash
    })
    assert.strictEqual(written.status, 200, JSON.stringify(written.body))
    const patched = await call("PATCH", `/v0/agents/${agentId}`, { model: "fakellm/fake-1" })
    assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
    assert.strictEqual(patched.body.agent.model, "fakellm/fake-1")
    // The secret reaches the gateway's environment at its next start.
    assert.strictEqual((await call("POST", `/v0/agents/${agentId}/restart`, {})).status, 200)
    await running()

    const models = await call("GET", `/v0/agents/${agentId}/models`)
    assert.strictEqual(models.status, 200, JSON.stringify(models.body))
    assert.strictEqual(models.body.defaultModel, "fakellm/fake-1")
    assert.isTrue(models.body.models.some((model: { id: string; available: boolean }) => model.id === "fakellm/fake-1" && model.available), JSON.stringify(models.body))

    const first = await waitFor("the agent answers", async () => {
      const reply = await call("POST", `/v0/agents/${agentId}/chat`, { message: "ping 42" })
      return reply.status === 200 ? reply : undefined
    }, 120_000)
    assert.include(first.body.reply, FakeModelServer.fakeReply(""))
    assert.include(first.body.reply, "ping 42")
    assert.strictEqual(first.body.model, "fakellm/fake-1")
    const sessionKey = first.body.sessionKey as string
    assert.isTrue(fake.requests.some((request) => request.lastUserText.includes("ping 42")), "the model was asked")

    // Streamed, in the same session.
    const streamed = await fetch(`${server.url}/v0/agents/${agentId}/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "pong 43", sessionKey, stream: true })
    })
    assert.strictEqual(streamed.status, 200)
    assert.include(streamed.headers.get("content-type") ?? "", "text/event-stream")
    const events = parseEvents(await streamed.text())
    const deltas = events.filter((event) => event.event === "delta").map((event) => event.data.text as string)
    const done = events.find((event) => event.event === "done")
    assert.isAbove(deltas.length, 0, JSON.stringify(events))
    assert.strictEqual(deltas.join(""), done?.data.reply)
    assert.include(done?.data.reply, "pong 43")
    assert.strictEqual(done?.data.sessionKey, sessionKey)

    const sessions = await call("GET", `/v0/agents/${agentId}/chat/sessions`)
    assert.strictEqual(sessions.status, 200, JSON.stringify(sessions.body))
    assert.isTrue(sessions.body.sessions.some((session: { sessionKey: string }) => session.sessionKey === sessionKey))
    const history = await call("GET", `/v0/agents/${agentId}/chat/sessions/${encodeURIComponent(sessionKey)}`)
    assert.strictEqual(history.status, 200, JSON.stringify(history.body))
    const lines = history.body.messages.map((message: { role: string; text: string }) => `${message.role}: ${message.text}`)
    assert.isTrue(lines.some((line: string) => line.startsWith("user: ") && line.includes("ping 42")), lines.join("\n"))
    assert.isTrue(lines.some((line: string) => line.startsWith("assistant: ") && line.includes("pong 43")), lines.join("\n"))

    // The chats are on the agent's trail, with no word of them.
    const trail = JSON.stringify((await call("GET", `/v0/agents/${agentId}/events`)).body)
    assert.include(trail, sessionKey)
    assert.notInclude(trail, "ping 42")
    assert.notInclude(trail, "fake model heard")

    // A session the agent does not have.
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}/chat/sessions/api-nothing-here`)).status, 404)

    await chatThroughTheHost(server, call, agentId)
    await chatInControlUi(server, call, agentId)
  }, 600_000)
})
