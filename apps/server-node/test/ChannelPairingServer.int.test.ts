/**
 * Channel DM pairing on a real OpenClaw agent, through the HTTP API of a real server process (ENGINE_IT=openclaw):
 * Telegram configured in pairing mode with a well-formed fake token. No Telegram DM can arrive offline, so the
 * sender's request is made by OpenClaw's own pairing store in the agent's state, as its channel would make it; the API
 * lists it with OpenClaw's code, approves it by that code, OpenClaw's allow store then holds the sender, and the
 * agent's trail records the approval (channel, sender, who). Prints how long the list and the approval take.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { allowedSenders, processesUnder, removeDataDir, requestPairing, reserveGatewayPorts } from "@cairn/agent-engine-openclaw/testing"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { newApiUser, type ServerProcess, startServer, untilRunning as runs, waitUntilServing } from "../src/testing/index.ts"

// Once per CI run, on the embedded store: the routes on both stores are covered by ChannelPairingApi.test.ts; this is
// about the real engine, and configuring the channel costs a gateway restart (30–60 s).
const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const version = "2026.9.6"
const dataDir = enabled ? mkdtempSync(join(tmpdir(), "cairn-openclaw-pairing-server-")) : ""
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(dataDir, "engines")
const env = {
  DATA_DIR: dataDir,
  ENGINE: undefined,
  OPENCLAW_VERSIONS: version,
  OPENCLAW_BASE_PORT: enabled ? String(reserveGatewayPorts()) : "",
  SECRETS_MASTER_KEY: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
  ...(process.env["OPENCLAW_ENGINES_DIR"] === undefined ? {} : { OPENCLAW_ENGINES_DIR: process.env["OPENCLAW_ENGINES_DIR"] })
}
let server: ServerProcess | undefined

const telegram = "987654321:AAFakeTelegramTokenForCairnTest0123"

afterAll(async () => {
  if (!enabled) return
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  for (const p of processesUnder(join(dataDir, "agents"))) process.kill(p.pid, "SIGKILL")
  removeDataDir(dataDir)
})

describe.skipIf(!enabled)("channel DM pairing on a real OpenClaw agent, through the HTTP API", () => {
  it("lists a Telegram sender's request with OpenClaw's code, approves it by that code, and OpenClaw then allows the sender", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    const { call } = newApiUser({ url: server.url, dataDir }, { workspace: "Pairing", plan: "pro", agentLimit: 1, scopes: "org:agents" })
    const untilRunning = (agentId: string) => runs(call, agentId, server!.output)

    const created = await call("POST", "/v0/agents", { name: "pairing" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    await untilRunning(agentId)
    const home = join(dataDir, "agents", agentId)

    // Not configured yet: nothing to pair with.
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}/channels/telegram/pairing`)).body.error, "Channel is not configured")
    const configured = await call("POST", `/v0/agents/${agentId}/channels/telegram`, { botToken: telegram, dmPolicy: "pairing" })
    assert.strictEqual(configured.status, 200, JSON.stringify(configured.body))
    await untilRunning(agentId)
    assert.deepStrictEqual((await call("GET", `/v0/agents/${agentId}/channels/telegram/pairing`)).body, { channel: "telegram", requests: [] })

    const sender = "555000111"
    const issued = requestPairing(enginesDir, version, home, "telegram", sender)
    assert.isTrue(issued.created, JSON.stringify(issued))

    let started = Date.now()
    const listed = await call("GET", `/v0/agents/${agentId}/channels/telegram/pairing`)
    const listMs = Date.now() - started
    assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
    assert.deepStrictEqual(listed.body.requests.map((r: { code: string; senderId: string }) => [r.code, r.senderId]), [[issued.code, sender]])

    const unknown = await call("POST", `/v0/agents/${agentId}/channels/telegram/pairing/ZZZZ2222/approve`)
    assert.deepStrictEqual([unknown.status, unknown.body], [404, { error: "Pairing request not found" }])

    started = Date.now()
    const approved = await call("POST", `/v0/agents/${agentId}/channels/telegram/pairing/${issued.code}/approve`)
    const approveMs = Date.now() - started
    assert.deepStrictEqual([approved.status, approved.body], [200, { success: true, message: `Telegram sender ${sender} approved` }])
    console.log(`channel pairing through the API: list ${listMs} ms, approve ${approveMs} ms`)

    assert.deepStrictEqual(allowedSenders(enginesDir, version, home, "telegram"), [sender], "OpenClaw's allow store holds the sender")
    assert.deepStrictEqual((await call("GET", `/v0/agents/${agentId}/channels/telegram/pairing`)).body.requests, [])
    const history = (await call("GET", `/v0/agents/${agentId}/events`)).body.events as Array<{ type: string; actor: string; data: Record<string, unknown> }>
    const approval = history.find((event) => event.type === "ChannelPairingApproved")
    assert.deepInclude(approval?.data, { channel: "telegram", senderId: sender })
    assert.strictEqual(approval?.actor, "ada")
  }, 900_000)
})
