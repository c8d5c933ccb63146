/**
 * What the test files on real OpenClaw gateways share (`OpenClawAgentEngine.int.test.ts`, the contract's lifecycle,
 * and `OpenClawAgentEngineWorkspace.int.test.ts`, its workspace half, which run side by side): whether they run, the
 * engine versions, an engine on a data directory of the file's own (each file runs in a process of its own), and
 * OpenClaw's CLI run as an agent's gateway would run it. Slow (a real start takes 10-30 s, ~0.9 GB RSS per gateway)
 * and needs the npm registry for the first install, so they run only with ENGINE_IT=openclaw. Set
 * OPENCLAW_ENGINES_DIR to reuse installed engines between runs (each version is ~650 MB and ~30 s to install).
 * The engine never touches the event store, so CI's second pass (DATABASE_URL set, on Postgres) skips them.
 */
import type { ContractOptions } from "@cairn/agent-engine/testing"
import { assert } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { OpenClawAgentEngine, OpenClawAgentHome } from "../src/index.ts"
import { gatewayEnvironment, inGatewayNetwork, serveAgentApp } from "../src/testing/index.ts"

/** Two recent stable releases, so the suite can upgrade and refuse a downgrade. */
export const versions = ["2026.9.5", "2026.9.6"]
export const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
export const timeout = "300 seconds"

/** This test file's data directory; the file removes it in its `afterAll`. */
export const dataDir = enabled ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-openclaw-")) : ""
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? Path.join(dataDir, "engines")

export const engineLayer = (basePort: number) =>
  OpenClawAgentEngine.layer({
    dataDir: Path.join(dataDir, String(basePort)),
    enginesDir,
    versions,
    basePort,
    startTimeout: "120 seconds",
    stopGrace: "15 seconds",
    // As the server runs them: each version's compile cache filled once by the engine, read only in the sandboxes.
    compileCache: true
  })

export const agentHome = (basePort: number, agentId: string) => Path.join(dataDir, String(basePort), "agents", agentId)

/** The contract's options for an engine on `basePort`: the wall clock, and probes into its gateways. */
export const contractOptions = (basePort: number): ContractOptions => ({
  live: true,
  timeout,
  environmentOf: (agentId) => Effect.sync(() => gatewayEnvironment(agentHome(basePort, agentId))),
  loadedSkills: (agentId) => loadedSkills(agentHome(basePort, agentId)),
  // The agent's gateway port itself (its slot's block of 120 from the base port).
  ownedAppPort: (agentId) =>
    Effect.sync(() => basePort + 120 * JSON.parse(Fs.readFileSync(Path.join(OpenClawAgentHome.metaDirOf(agentHome(basePort, agentId)), "engine.json"), "utf8")).slot),
  serveApp: (agentId) => serveAgentApp(agentHome(basePort, agentId))
})


/** Runs the agent's OpenClaw CLI as its gateway would: same engine, home and environment. */
const openclawWith = (agentDir: string, version: string, env: NodeJS.ProcessEnv, args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<{ readonly code: number | null; readonly stdout: string }>((resolve) => {
      const [file, argv] = inGatewayNetwork(agentDir, process.execPath, [Path.join(enginesDir, version, "node_modules", "openclaw", "openclaw.mjs"), ...args])
      const child = spawn(file, argv, {
        cwd: agentDir,
        stdio: ["ignore", "pipe", "ignore"],
        env
      })
      let stdout = ""
      child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
      child.on("close", (code) => resolve({ code, stdout }))
    })
  )

/** What `openclaw models status --json` says about a provider's credential from the environment, if anything. */
interface ProviderAuth {
  readonly provider: string
  readonly effective?: { readonly kind: string }
  readonly env?: { readonly source: string; readonly value: string }
}

/** Runs `openclaw models status --json` in the environment of the agent's running gateway. */
export const modelsStatus = (agentDir: string, version: string) =>
  Effect.gen(function*() {
    const env = gatewayEnvironment(agentDir)
    assert.isDefined(env, "no gateway runs from the agent's home")
    const { code, stdout } = yield* openclawWith(agentDir, version, env!, ["models", "status", "--json"])
    assert.strictEqual(code, 0, "models status failed")
    const status = JSON.parse(stdout.slice(Math.max(0, stdout.search(/^\{/m)))) as {
      readonly auth: { readonly providers: ReadonlyArray<ProviderAuth>; readonly missingProvidersInUse: ReadonlyArray<string> }
    }
    return status.auth
  })

/** The skills the agent's running gateway has loaded: `openclaw gateway call skills.status` (RPC, about 2 s). */
export const loadedSkills = (agentDir: string) =>
  Effect.gen(function*() {
    const env = gatewayEnvironment(agentDir)
    assert.isDefined(env, "no gateway runs from the agent's home")
    const meta = yield* OpenClawAgentHome.readMeta(agentDir, OpenClawAgentHome.metaDirOf(agentDir))
    const { code, stdout } = yield* openclawWith(agentDir, meta!.version, env!, ["gateway", "call", "skills.status", "--json"])
    assert.strictEqual(code, 0, "gateway call skills.status failed")
    const status = JSON.parse(stdout.slice(Math.max(0, stdout.search(/^\{/m)))) as {
      readonly skills: ReadonlyArray<{ readonly name: string; readonly description: string }>
    }
    return status.skills
  })

/** Runs `openclaw devices list` against an agent's gateway with a token of our choosing. */
export const devicesListWith = (agentDir: string, version: string, token: string) =>
  Effect.promise(() =>
    new Promise<number | null>((resolve) => {
      const child = spawn(
        ...inGatewayNetwork(agentDir, process.execPath, [Path.join(enginesDir, version, "node_modules", "openclaw", "openclaw.mjs"), "devices", "list", "--json"]),
        {
          cwd: agentDir,
          stdio: "ignore",
          env: OpenClawAgentHome.processEnv({ PATH: process.env["PATH"] }, agentDir, Redacted.make(token))
        }
      )
      child.on("exit", (code) => resolve(code))
    })
  )

export function* walk(dir: string): Generator<string> {
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) yield* walk(path)
    else if (entry.isFile() && Fs.statSync(path).size < 50_000_000) yield path
  }
}
