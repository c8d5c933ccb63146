/**
 * Channel DM pairing on a real OpenClaw gateway (ENGINE_IT=openclaw; OPENCLAW_ENGINES_DIR to reuse installed engines):
 * Telegram in pairing mode with a well-formed fake token. No Telegram DM can arrive offline, so a sender's request is
 * made by OpenClaw's own pairing store (its `upsertChannelPairingRequest`, run from the engine's files as the gateway's
 * channel would run it, in the agent's state database); the engine lists it with the code OpenClaw chose, approves it
 * by that code, and OpenClaw's allow store then holds the sender (and its `pairing list` no longer shows the request).
 * An unknown code is UnknownPairingCode. Slack (a plugin's channel) too. Prints how long a list and an approval take.
 */
import { AgentEngine, EngineChannels } from "@cairn/agent-engine"
import { fakeChannelTokens } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { OpenClawAgentEngine } from "../src/index.ts"
import { allowedSenders, pendingPairing, removeDataDir, requestPairing, reserveGatewayPorts } from "../src/testing/index.ts"

const version = "2026.9.6"
const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const dataDir = enabled ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-openclaw-pairing-")) : ""
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? Path.join(dataDir, "engines")
const basePort = enabled ? reserveGatewayPorts() : 0

afterAll(() => {
  if (enabled) removeDataDir(dataDir)
})

/** An effect's value and how long it took (Effect.timed), in milliseconds. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(effect), ([duration, value]) => ({ value, ms: Duration.toMillis(duration) }))

describe.skipIf(!enabled)("OpenClaw channel DM pairing", () => {
  layer(Layer.fresh(OpenClawAgentEngine.layer({ dataDir, enginesDir, versions: [version], basePort, startTimeout: "120 seconds", compileCache: true })), {
    excludeTestServices: true,
    timeout: "600 seconds"
  })((it) => {
    it.effect("lists a sender's pending request with OpenClaw's code, approves it by that code, and OpenClaw then allows the sender", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = `pairing-${Date.now().toString(36)}`
        const home = Path.join(dataDir, "agents", agentId)
        yield* engine.provision(agentId, { version, gatewayToken: Redacted.make(`gw_${agentId}-token`) })
        yield* engine.setEnvironment(agentId, {
          [EngineChannels.tokenVariable("telegram", "botToken")]: Redacted.make(fakeChannelTokens.telegram),
          [EngineChannels.tokenVariable("slack", "botToken")]: Redacted.make(fakeChannelTokens.slackBot),
          [EngineChannels.tokenVariable("slack", "appToken")]: Redacted.make(fakeChannelTokens.slackApp)
        })
        yield* engine.setChannels(agentId, [
          { channel: "telegram", enabled: true, dmPolicy: "pairing", allowFrom: ["42"], tokens: ["botToken"] },
          // A channel of a plugin Cairn installs with the engine, not one built into OpenClaw.
          { channel: "slack", enabled: true, dmPolicy: "pairing", allowFrom: [], tokens: ["botToken", "appToken"] }
        ])
        yield* engine.start(agentId)
        assert.deepStrictEqual(yield* engine.listChannelPairing(agentId, "telegram"), [])

        // A Telegram user writes to the bot: OpenClaw's channel stores a request and answers with its code.
        const sender = "555000111"
        const issued = requestPairing(enginesDir, version, home, "telegram", sender)
        assert.isTrue(issued.created, JSON.stringify(issued))
        assert.match(issued.code, /^[A-Z2-9]{8}$/)

        const listed = yield* timed(engine.listChannelPairing(agentId, "telegram"))
        assert.strictEqual(listed.value.length, 1, JSON.stringify(listed.value))
        const [request] = listed.value
        assert.deepInclude(request, { code: issued.code, senderId: sender })
        assert.strictEqual(Date.parse(request!.expiresAt!) - Date.parse(request!.createdAt), 3_600_000)

        const unknown = yield* Effect.flip(engine.approveChannelPairing(agentId, "telegram", "ZZZZ2222"))
        assert.strictEqual(unknown._tag, "UnknownPairingCode")

        const approved = yield* timed(engine.approveChannelPairing(agentId, "telegram", issued.code.toLowerCase()))
        assert.deepStrictEqual(approved.value, { senderId: sender })
        console.log(`channel pairing: list ${listed.ms} ms, approve ${approved.ms} ms`)

        // OpenClaw's own view: the sender is in the channel's allow store, the request is gone, the code spent.
        assert.deepStrictEqual(allowedSenders(enginesDir, version, home, "telegram"), [sender])
        assert.deepStrictEqual(pendingPairing(enginesDir, version, home, "telegram"), [])
        assert.deepStrictEqual(yield* engine.listChannelPairing(agentId, "telegram"), [])
        const again = yield* Effect.flip(engine.approveChannelPairing(agentId, "telegram", issued.code))
        assert.strictEqual(again._tag, "UnknownPairingCode")

        // The same on Slack, whose channel is a plugin's.
        const slack = requestPairing(enginesDir, version, home, "slack", "U0999SLACK")
        assert.deepInclude((yield* engine.listChannelPairing(agentId, "slack"))[0], { code: slack.code, senderId: "U0999SLACK" })
        assert.deepStrictEqual(yield* engine.approveChannelPairing(agentId, "slack", slack.code), { senderId: "U0999SLACK" })
        assert.deepStrictEqual(allowedSenders(enginesDir, version, home, "slack"), ["U0999SLACK"])
        assert.deepStrictEqual(allowedSenders(enginesDir, version, home, "telegram"), [sender], "each channel has its own allow store")

        // The approval wrote nothing into the config (the CLI's approve would have made the sender command owner).
        const config = JSON.parse(Fs.readFileSync(Path.join(home, ".openclaw", "openclaw.json"), "utf8"))
        assert.isUndefined(config.commands?.ownerAllowFrom, JSON.stringify(config.commands))
        yield* engine.destroy(agentId)
      }), 600_000)
  })
})
