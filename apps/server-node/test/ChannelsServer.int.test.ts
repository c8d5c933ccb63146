/**
 * Messaging channels on a real OpenClaw agent, through the HTTP API of a real server process (ENGINE_IT=openclaw):
 * Telegram and Slack configured with well-formed fake tokens on a running agent. The engine's config, read back
 * through the engine (`GET …/config`, the running gateway's `config.get`), holds them as env references and the
 * preinstalled Slack plugin's path; the gateway runs after each restart; the tokens are in no response, no event, no
 * log (Cairn's output and the gateway's own) and no file under the data directory; a removal drops them. Prints how
 * long a configure (a restart, with channels that cannot reach their services) takes.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { processesUnder, removeDataDir, reserveGatewayPorts } from "@cairn/agent-engine-openclaw/testing"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, filesUnder, untilRunning as runs, type ServerProcess, startServer, textOf, waitUntilServing } from "../src/testing/index.ts"

// Once per CI run, on the embedded store: channels on both stores are covered by ChannelsApi.test.ts; this is about
// the real engine, and a configure costs a gateway restart (30–60 s).
const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const dataDir = enabled ? mkdtempSync(join(tmpdir(), "cairn-openclaw-channels-server-")) : ""
const env = {
  DATA_DIR: dataDir,
  ENGINE: undefined,
  OPENCLAW_VERSIONS: "2026.9.6",
  OPENCLAW_BASE_PORT: enabled ? String(reserveGatewayPorts()) : "",
  SECRETS_MASTER_KEY: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
  ...(process.env["OPENCLAW_ENGINES_DIR"] === undefined ? {} : { OPENCLAW_ENGINES_DIR: process.env["OPENCLAW_ENGINES_DIR"] })
}
let server: ServerProcess | undefined

const telegram = "987654321:AAFakeTelegramTokenForCairnTest0123"
const slackBot = "xoxb-2222222222-3333333333-FakeSlackBotTokenCairn"
const slackApp = "xapp-1-A0FAKE0CAIRN-4444444444-FakeSlackAppTokenCairn"
const tokens = [telegram, slackBot, slackApp]


afterAll(async () => {
  if (!enabled) return
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  for (const p of processesUnder(join(dataDir, "agents"))) process.kill(p.pid, "SIGKILL")
  removeDataDir(dataDir)
})

describe.skipIf(!enabled)("channels on a real OpenClaw agent, through the HTTP API", () => {
  it("configures Telegram and Slack with fake tokens: the engine holds them, the gateway runs, no token leaks", async () => {
    assert.strictEqual(telegram.split(":")[1]!.length, 35)
    server = await startServer(env)
    await waitUntilServing(server)
    const ops = { url: server.url, dataDir }
    const workspaceId = cli(ops, "workspace", "create", "--name", "Channels", "--plan", "pro", "--agent-limit", "1")
    const key = cli(ops, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:agents")
    const responses: Array<string> = []
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      responses.push(text)
      return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
    }
    const untilRunning = (agentId: string) => runs(call, agentId, server!.output)

    const created = await call("POST", "/v0/agents", { name: "channels" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    await untilRunning(agentId)

    let started = Date.now()
    const tg = await call("POST", `/v0/agents/${agentId}/channels/telegram`, { botToken: telegram, dmPolicy: "pairing", allowFrom: ["123456"] })
    const telegramMs = Date.now() - started
    assert.strictEqual(tg.status, 200, JSON.stringify(tg.body))
    started = Date.now()
    const sl = await call("POST", `/v0/agents/${agentId}/channels/slack`, { botToken: slackBot, appToken: slackApp })
    const slackMs = Date.now() - started
    assert.strictEqual(sl.status, 200, JSON.stringify(sl.body))
    console.log(`configure (a gateway restart with channels configured): Telegram ${telegramMs} ms, Slack ${slackMs} ms`)
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}`)).body.agent.status, "running", "running after the restarts")

    const listed = (await call("GET", `/v0/agents/${agentId}/channels`)).body
    assert.deepInclude(listed.telegram, { configured: true, enabled: true, dmPolicy: "pairing", allowFrom: ["123456"], botTokenSet: true, botTokenHint: "0123" })
    assert.deepInclude(listed.slack, { configured: true, enabled: true, botTokenSet: true, appTokenSet: true, appTokenHint: "airn" })

    // The engine's config, read through the engine (the running gateway's `config.get`): env references only.
    const config = await call("GET", `/v0/agents/${agentId}/config`)
    assert.strictEqual(config.status, 200, JSON.stringify(config.body))
    const channels = JSON.stringify(config.body)
    const parsed = config.body.config ?? config.body
    assert.strictEqual(parsed.channels.telegram.enabled, true, channels)
    assert.strictEqual(parsed.channels.telegram.botToken.source, "env", channels)
    assert.strictEqual(parsed.channels.slack.appToken.source, "env", channels)
    assert.include(JSON.stringify(parsed.plugins.load.paths), "@openclaw/slack")

    // An enabled channel takes no other configuration.
    const again = await call("POST", `/v0/agents/${agentId}/channels/slack`, { dmPolicy: "pairing" })
    assert.strictEqual(again.status, 500)
    assert.strictEqual(again.body.error, "Configuration failed")

    // Removal: gone from the list and from the engine's config, and the gateway runs on.
    const removed = await call("DELETE", `/v0/agents/${agentId}/channels/slack`)
    assert.strictEqual(removed.status, 200, JSON.stringify(removed.body))
    const after = (await call("GET", `/v0/agents/${agentId}/config`)).body
    assert.isUndefined((after.config ?? after).channels?.slack)
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}`)).body.agent.status, "running")

    const history = JSON.stringify((await call("GET", `/v0/agents/${agentId}/events`)).body)
    assert.include(history, "ChannelConfigured")
    const home = join(dataDir, "agents", agentId)
    assert.isTrue(existsSync(join(home, ".openclaw", "logs")))
    for (const token of tokens) {
      assert.notInclude(history, token, "an event")
      for (const text of responses) assert.notInclude(text, token, "a response")
      assert.notInclude(server.output(), token, "Cairn's log")
      for (const file of filesUnder(dataDir)) assert.notInclude(textOf(file), token, `the file ${file}`)
    }
  }, 900_000)
})
