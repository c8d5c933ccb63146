/**
 * The AgentEngine contract on real OpenClaw gateways, its lifecycle half (versions, starts, stops, restarts, the
 * gateway's environment, the destroy). The workspace half runs from `OpenClawAgentEngineWorkspace.int.test.ts`,
 * beside this file: in one file the contract took 870 s alone (926 s in CI), the longest file of CI by far. Runs
 * only with ENGINE_IT=openclaw, without DATABASE_URL (RealGateways.ts).
 */
import { agentEngineContract } from "@cairn/agent-engine/testing"
import { afterAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import { reserveGatewayPorts } from "../src/testing/index.ts"
import { contractOptions, dataDir, enabled, engineLayer } from "./RealGateways.ts"

// Gateway ports no other test process on this machine holds.
const contractPorts = enabled ? reserveGatewayPorts(32) : 0

if (enabled) {
  // Runs after the contract's layer closed, which stopped its gateways.
  afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

  agentEngineContract("OpenClawAgentEngine", engineLayer(contractPorts), { ...contractOptions(contractPorts), part: "lifecycle" })
} else {
  describe.skip("OpenClawAgentEngine against real gateways (set ENGINE_IT=openclaw, without DATABASE_URL, to run)", () => {
    it.skip("needs ENGINE_IT=openclaw", () => {})
  })
}
