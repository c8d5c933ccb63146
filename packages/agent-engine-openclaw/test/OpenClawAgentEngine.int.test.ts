/**
 * The AgentEngine contract on real OpenClaw gateways, its lifecycle half (versions, starts, stops, restarts, the
 * gateway's environment, the destroy), and the gateway token kept out of files. The workspace half runs from
 * `OpenClawAgentEngineWorkspace.int.test.ts`, beside this file: one file took a quarter of an hour, most of CI's
 * real-gateway group, alone. Runs only with ENGINE_IT=openclaw, without DATABASE_URL (RealGateways.ts).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { agentEngineContract, freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { processesUnder, reserveGatewayPorts } from "../src/testing/index.ts"
import { agentHome, contractOptions, dataDir, devicesListWith, enabled, engineLayer, timeout, versions, walk } from "./RealGateways.ts"

// Gateway ports no other test process on this machine holds: the contract's engine, and one more.
const [contractPorts, upgradePorts] = enabled ? [reserveGatewayPorts(32), reserveGatewayPorts()] : [0, 0]

if (enabled) {
  // Runs after the layers below closed, which stopped their gateways.
  afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

  agentEngineContract("OpenClawAgentEngine", engineLayer(contractPorts), { ...contractOptions(contractPorts), part: "lifecycle" })

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
  describe.skip("OpenClawAgentEngine against real gateways (set ENGINE_IT=openclaw, without DATABASE_URL, to run)", () => {
    it.skip("needs ENGINE_IT=openclaw", () => {})
  })
}
