/**
 * The AgentEngine contract on real OpenClaw gateways. Slow (a real start takes 10–30 s, ~0.9 GB RSS per gateway)
 * and needs the npm registry for the first install, so it runs only with ENGINE_IT=openclaw. Set
 * OPENCLAW_ENGINES_DIR to reuse installed engines between runs (each version is ~650 MB and ~30 s to install).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { agentEngineContract, freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { OpenClawAgentEngine, OpenClawAgentHome } from "../src/index.ts"
import { processesUnder } from "../src/testing/index.ts"

/** Two recent stable releases, so the suite can upgrade and refuse a downgrade. */
const versions = ["2026.9.5", "2026.9.6"]
const enabled = process.env["ENGINE_IT"] === "openclaw"
const timeout = "300 seconds"

const dataDir = enabled ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-openclaw-")) : ""
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? Path.join(dataDir, "engines")

const engineLayer = (basePort: number) =>
  OpenClawAgentEngine.layer({
    dataDir: Path.join(dataDir, String(basePort)),
    enginesDir,
    versions,
    basePort,
    startTimeout: "120 seconds",
    stopGrace: "15 seconds"
  })

/** Runs `openclaw devices list` against an agent's gateway with a token of our choosing. */
const devicesListWith = (agentDir: string, version: string, token: string) =>
  Effect.promise(() =>
    new Promise<number | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [Path.join(enginesDir, version, "node_modules", "openclaw", "openclaw.mjs"), "devices", "list", "--json"],
        {
          cwd: agentDir,
          stdio: "ignore",
          env: OpenClawAgentHome.processEnv({ PATH: process.env["PATH"] }, agentDir, Redacted.make(token))
        }
      )
      child.on("exit", (code) => resolve(code))
    })
  )

if (enabled) {
  // Runs after the layers below closed, which stopped their gateways.
  afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

  agentEngineContract("OpenClawAgentEngine", engineLayer(12000), { live: true, timeout })

  describe("OpenClawAgentEngine keeps the gateway token out of files", () => {
    layer(Layer.fresh(engineLayer(16000)), { excludeTestServices: true, timeout })((it) => {
      it.effect("writes no token to the agent's config, and the gateway accepts only the current token", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = freshAgent("token")
          const first = `first-${freshAgent()}`
          const second = `second-${freshAgent()}`
          yield* engine.provision(agentId, { version: versions[1]!, gatewayToken: Redacted.make(first) })
          const agentDir = Path.join(dataDir, "16000", "agents", agentId)
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
  describe.skip("OpenClawAgentEngine against real gateways (set ENGINE_IT=openclaw to run)", () => {
    it.skip("needs ENGINE_IT=openclaw", () => {})
  })
}

function* walk(dir: string): Generator<string> {
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) yield* walk(path)
    else if (entry.isFile() && Fs.statSync(path).size < 50_000_000) yield path
  }
}
