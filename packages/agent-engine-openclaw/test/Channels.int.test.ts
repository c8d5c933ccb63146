/**
 * Messaging channels on real OpenClaw gateways (ENGINE_IT=openclaw; OPENCLAW_ENGINES_DIR to reuse installed engines):
 * Telegram and Slack with well-formed fake tokens. The config holds env SecretRefs and the preinstalled Slack plugin's
 * path, never a token; the gateway runs with them (`channels.status`: configured, tokens available); stops are
 * bounded though the channels' services are unreachable; removing them leaves nothing behind. Prints the measured
 * start, restart and stop times.
 */
import { AgentEngine, EngineChannels } from "@cairn/agent-engine"
import { fakeChannelTokens } from "@cairn/agent-engine/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { OpenClawAgentEngine } from "../src/index.ts"
import { gatewayEnvironment, reserveGatewayPorts } from "../src/testing/index.ts"

const version = "2026.9.6"
const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const dataDir = enabled ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-openclaw-channels-")) : ""
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? Path.join(dataDir, "engines")
const basePort = enabled ? reserveGatewayPorts() : 0
const tokens = [fakeChannelTokens.telegram, fakeChannelTokens.slackBot, fakeChannelTokens.slackApp]

const walk = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : walk(path)
    return entry.isFile() ? [path] : []
  })

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const value = yield* effect
    return { value, ms: Date.now() - started }
  })

describe.skipIf(!enabled)("OpenClaw channels", () => {
  layer(Layer.fresh(OpenClawAgentEngine.layer({ dataDir, enginesDir, versions: [version], basePort, startTimeout: "120 seconds", compileCache: true })), {
    excludeTestServices: true,
    timeout: "600 seconds"
  })((it) => {
    it.effect("runs Telegram and Slack with fake tokens from its environment only, stops in bounded time, and drops them", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = `channels-${Date.now().toString(36)}`
        const home = Path.join(dataDir, "agents", agentId)
        const configPath = Path.join(home, ".openclaw", "openclaw.json")
        yield* engine.provision(agentId, { version, gatewayToken: Redacted.make(`gw_${agentId}-token`) })
        yield* engine.setEnvironment(agentId, {
          [EngineChannels.tokenVariable("telegram", "botToken")]: Redacted.make(fakeChannelTokens.telegram),
          [EngineChannels.tokenVariable("slack", "botToken")]: Redacted.make(fakeChannelTokens.slackBot),
          [EngineChannels.tokenVariable("slack", "appToken")]: Redacted.make(fakeChannelTokens.slackApp)
        })
        yield* engine.setChannels(agentId, [
          { channel: "telegram", enabled: true, dmPolicy: "open", allowFrom: [], tokens: ["botToken"] },
          { channel: "slack", enabled: true, dmPolicy: "pairing", allowFrom: ["U0123456"], tokens: ["botToken", "appToken"] }
        ])
        const written = JSON.parse(Fs.readFileSync(configPath, "utf8"))
        assert.deepStrictEqual(written.channels.telegram, {
          enabled: true,
          dmPolicy: "open",
          allowFrom: ["*"],
          botToken: { source: "env", provider: "default", id: "CHANNEL_TELEGRAM_BOT_TOKEN" }
        })
        assert.deepStrictEqual(written.channels.slack.appToken, { source: "env", provider: "default", id: "CHANNEL_SLACK_APP_TOKEN" })
        assert.deepStrictEqual(written.plugins.load.paths, [Path.join(enginesDir, version, "channel-plugins", "node_modules", "@openclaw", "slack")])
        assert.isTrue(Fs.existsSync(Path.join(written.plugins.load.paths[0], "package.json")), "the Slack plugin is installed with the engine")

        const start = yield* timed(engine.start(agentId))
        const env = gatewayEnvironment(home)
        assert.strictEqual(env?.["CHANNEL_SLACK_BOT_TOKEN"], fakeChannelTokens.slackBot, "the gateway's environment holds the token")
        const status = yield* engine.channelStatus(agentId)
        console.log(`channels.status after start: ${JSON.stringify(status)}`)
        for (const channel of ["telegram", "slack"] as const) {
          assert.deepInclude(status.find((s) => s.channel === channel), { configured: true, tokenStatus: "available" }, channel)
        }
        // The engine's own view of its config (redacted) holds the channels as written: SecretRefs, no token.
        const config = yield* engine.readConfig(agentId)
        const channels = (config.config as { channels?: Record<string, Record<string, unknown>> }).channels
        console.log(`readConfig, channels.slack: ${JSON.stringify(channels?.["slack"])}`)
        assert.strictEqual(channels?.["slack"]?.["enabled"], true)
        assert.strictEqual((channels?.["slack"]?.["botToken"] as { source?: string } | undefined)?.source, "env")
        for (const token of tokens) assert.notInclude(JSON.stringify(config), token)
        // Let the channels try (and fail) to reach their services, which is what makes a gateway slow to stop.
        yield* Effect.sleep("10 seconds")
        const restart = yield* timed(engine.restart(agentId))
        assert.strictEqual((yield* engine.status(agentId)).state, "running", "running after the restart")
        yield* Effect.sleep("10 seconds")
        const stop = yield* timed(engine.stop(agentId))
        console.log(`OpenClaw ${version} with Telegram and Slack configured (unreachable): start ${start.ms} ms, restart ${restart.ms} ms, stop ${stop.ms} ms`)

        for (const file of walk(home)) {
          const text = Fs.readFileSync(file)
          for (const token of tokens) assert.isFalse(text.includes(token), `a token was written to ${file}`)
        }

        yield* engine.setChannels(agentId, [])
        const cleared = JSON.parse(Fs.readFileSync(configPath, "utf8"))
        assert.isUndefined(cleared.channels, JSON.stringify(cleared))
        assert.isUndefined(cleared.plugins?.load, JSON.stringify(cleared))
        yield* engine.start(agentId)
        const after = yield* engine.channelStatus(agentId)
        assert.isTrue(after.every((s) => !s.configured), JSON.stringify(after))
        const idleStop = yield* timed(engine.stop(agentId))
        console.log(`OpenClaw ${version} without channels: stop ${idleStop.ms} ms`)
        yield* engine.destroy(agentId)
      }), 600_000)

    it.effect("links WhatsApp through the plugin's QR login, which says why no code came when WhatsApp is out of reach", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = `whatsapp-${Date.now().toString(36)}`
        yield* engine.provision(agentId, { version, gatewayToken: Redacted.make(`gw_${agentId}-token`) })
        yield* engine.setChannels(agentId, [{ channel: "whatsapp", enabled: true, dmPolicy: "pairing", allowFrom: [], tokens: [] }])
        yield* engine.start(agentId)
        assert.deepInclude((yield* engine.channelStatus(agentId)).find((s) => s.channel === "whatsapp"), { configured: true, linked: false })
        // Nothing under way, nothing linked: the plugin's wait says so at once.
        const before = yield* timed(engine.whatsAppLink(agentId))
        console.log(`web.login.wait before a login (${before.ms} ms): ${JSON.stringify(before.value)}`)
        assert.strictEqual(before.value.status, "not_started")
        // This machine reaches no WhatsApp server: the plugin's login opens its socket, gets no code, and says why.
        const started = yield* timed(engine.startWhatsAppLink(agentId, { force: false }))
        console.log(`web.login.start offline (${started.ms} ms): ${JSON.stringify(started.value)}`)
        assert.strictEqual(started.value.status, "failed", JSON.stringify(started.value))
        assert.match(started.value.message, /QR|WhatsApp/)
        assert.isUndefined(started.value.qrDataUrl)
        assert.strictEqual((yield* engine.whatsAppLink(agentId)).status, "not_started", "a failed login leaves nothing under way")
        yield* engine.stop(agentId)
        // A stopped gateway has no plugin to ask.
        assert.deepInclude(yield* Effect.flip(engine.whatsAppLink(agentId)), { _tag: "ChannelsUnavailable" })
        yield* engine.destroy(agentId)
      }), 600_000)
  })
})
