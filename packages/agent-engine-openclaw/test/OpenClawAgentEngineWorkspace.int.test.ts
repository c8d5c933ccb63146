/**
 * The AgentEngine contract on real OpenClaw gateways, its workspace half (skills, workspace files, console, config,
 * tasks, snapshots, apps, channels, provisioning), provider keys handed to OpenClaw through the gateway's
 * environment only, and the gateway token kept out of files. The lifecycle half runs from `OpenClawAgentEngine.int.test.ts`, beside this file. Runs only with
 * ENGINE_IT=openclaw, without DATABASE_URL (RealGateways.ts).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { agentEngineContract, freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { gatewayEnvironment, processesUnder, reserveGatewayPorts } from "../src/testing/index.ts"
import { agentHome, contractOptions, dataDir, devicesListWith, enabled, engineLayer, modelsStatus, timeout, versions, walk } from "./RealGateways.ts"

// Gateway ports no other test process on this machine holds: the contract's engine, and two more.
const [contractPorts, skillsPorts, upgradePorts] = enabled ? [reserveGatewayPorts(24), reserveGatewayPorts(), reserveGatewayPorts()] : [0, 0, 0]

if (enabled) {
  // Runs after the layers below closed, which stopped their gateways.
  afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

  agentEngineContract("OpenClawAgentEngine", engineLayer(contractPorts), { ...contractOptions(contractPorts), part: "workspace" })

  describe("OpenClawAgentEngine hands provider keys to OpenClaw through the gateway's environment only", () => {
    layer(Layer.fresh(engineLayer(skillsPorts)), { excludeTestServices: true, timeout })((it) => {
      it.effect("OpenClaw takes ANTHROPIC_API_KEY from the gateway's environment after a restart, and loses it after the next", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const version = versions[1]!
          const agentId = freshAgent("secrets")
          const agentDir = agentHome(skillsPorts, agentId)
          const key = `sk-ant-api03-${freshAgent("dummy")}`
          yield* engine.provision(agentId, { version, gatewayToken: Redacted.make(`token-${freshAgent()}`) })
          yield* engine.start(agentId)
          yield* engine.setEnvironment(agentId, { ANTHROPIC_API_KEY: Redacted.make(key) })
          assert.isUndefined(gatewayEnvironment(agentDir)?.["ANTHROPIC_API_KEY"], "the running gateway saw it before its restart")

          yield* engine.restart(agentId)
          assert.strictEqual(gatewayEnvironment(agentDir)?.["ANTHROPIC_API_KEY"], key)
          const configured = yield* modelsStatus(agentDir, version)
          const anthropic = configured.providers.find((entry) => entry.provider === "anthropic")
          console.log(`OpenClaw ${version} models status --json, provider anthropic: ${JSON.stringify(anthropic)}`)
          assert.isDefined(anthropic, "models status lists no anthropic credential")
          assert.strictEqual(anthropic!.env?.source, "env: ANTHROPIC_API_KEY")
          assert.strictEqual(anthropic!.effective?.kind, "env")
          // OpenClaw shows the key masked: its first 8 characters and last 8, never the whole value.
          assert.strictEqual(anthropic!.env?.value, `${key.slice(0, 8)}...${key.slice(-8)}`)

          yield* engine.setEnvironment(agentId, { OTHER_SETTING: Redacted.make("kept") })
          yield* engine.restart(agentId)
          const environment = gatewayEnvironment(agentDir)
          assert.isUndefined(environment?.["ANTHROPIC_API_KEY"], "the key outlived its removal and a restart")
          assert.strictEqual(environment?.["OTHER_SETTING"], "kept")
          const unconfigured = yield* modelsStatus(agentDir, version)
          assert.isUndefined(unconfigured.providers.find((entry) => entry.env?.source === "env: ANTHROPIC_API_KEY"))

          for (const file of walk(agentDir)) {
            assert.isFalse(Fs.readFileSync(file).includes(key), `the key was written to ${file}`)
          }
          yield* engine.destroy(agentId)
        }), 300_000)
    })
  })

  describe("OpenClawAgentEngine keeps the gateway token out of files", () => {
    layer(Layer.fresh(engineLayer(upgradePorts)), { excludeTestServices: true, timeout })((it) => {
      it.effect("writes no token to the agent's config, and the gateway accepts only the current token", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = freshAgent("token")
          const first = `first-${freshAgent()}`
          const second = `second-${freshAgent()}`
          yield* engine.provision(agentId, { version: versions[1]!, gatewayToken: Redacted.make(first) })
          const agentDir = agentHome(upgradePorts, agentId)
          const config = Fs.readFileSync(Path.join(agentDir, ".openclaw", "openclaw.json"), "utf8")
          assert.notInclude(config, first)
          assert.include(config, "${OPENCLAW_GATEWAY_TOKEN}")

          const startedAt = Date.now()
          yield* engine.start(agentId)
          const startMs = Date.now() - startedAt
          yield* Effect.sleep("3 seconds")
          console.log(`OpenClaw ${versions[1]} gateway: running after ${startMs} ms, RSS ${processesUnder(agentDir).map((p) => `${p.name}=${p.rssKb} kB`).join(", ")}`)
          assert.strictEqual(yield* devicesListWith(agentDir, versions[1]!, first), 0, "the right token is accepted")
          assert.notStrictEqual(yield* devicesListWith(agentDir, versions[1]!, "wrong"), 0, "a wrong token is refused")

          yield* engine.rotateGatewayToken(agentId, Redacted.make(second))
          assert.strictEqual((yield* engine.status(agentId)).state, "running")
          assert.notStrictEqual(yield* devicesListWith(agentDir, versions[1]!, first), 0, "the old token is refused")
          assert.strictEqual(yield* devicesListWith(agentDir, versions[1]!, second), 0, "the new token is accepted")

          for (const file of walk(agentDir)) {
            const text = Fs.readFileSync(file)
            assert.isFalse(text.includes(first) || text.includes(second), `a token was written to ${file}`)
          }
          yield* engine.destroy(agentId)
          assert.isFalse(Fs.existsSync(agentDir))
        }), 300_000)
    })
  })
} else {
  describe.skip("OpenClawAgentEngine's workspace against real gateways (set ENGINE_IT=openclaw, without DATABASE_URL, to run)", () => {
    it.skip("needs ENGINE_IT=openclaw", () => {})
  })
}
