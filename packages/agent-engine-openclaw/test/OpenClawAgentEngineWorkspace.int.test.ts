/**
 * The AgentEngine contract on real OpenClaw gateways, its workspace half (skills, workspace files, console, config,
 * tasks, snapshots, apps, channels, provisioning), and provider keys handed to OpenClaw through the gateway's
 * environment only. The lifecycle half runs from `OpenClawAgentEngine.int.test.ts`, beside this file. Runs only with
 * ENGINE_IT=openclaw, without DATABASE_URL (RealGateways.ts).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { agentEngineContract, freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import { gatewayEnvironment, reserveGatewayPorts } from "../src/testing/index.ts"
import { agentHome, contractOptions, dataDir, enabled, engineLayer, modelsStatus, timeout, versions, walk } from "./RealGateways.ts"

// Gateway ports no other test process on this machine holds: the contract's engine, and one more.
const [contractPorts, skillsPorts] = enabled ? [reserveGatewayPorts(24), reserveGatewayPorts()] : [0, 0]

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
} else {
  describe.skip("OpenClawAgentEngine's workspace against real gateways (set ENGINE_IT=openclaw, without DATABASE_URL, to run)", () => {
    it.skip("needs ENGINE_IT=openclaw", () => {})
  })
}
