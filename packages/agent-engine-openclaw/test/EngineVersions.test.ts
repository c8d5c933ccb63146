/**
 * An engine version's install as its user sees it: progress lines while it runs (MB on disk, seconds), what
 * `installing` and the adapter's `provisioning` report meanwhile, and nothing once it is done. A stand-in npm
 * (fixtures/held-npm.mjs) writes 3 MB and then holds the install until the test lets it finish.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted, References } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as EngineVersions from "../src/EngineVersions.ts"
import { OpenClawAgentEngine } from "../src/index.ts"
import { reserveGatewayPorts, sandboxModeForTests, waitUntil } from "../src/testing/index.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-engine-installs-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
const heldNpm = Path.join(import.meta.dirname, "fixtures", "held-npm.mjs")
const repository = Path.resolve(import.meta.dirname, "..", "..", "..")
const release = (enginesDir: string) => Fs.writeFileSync(Path.join(enginesDir, "release-installs"), "")

describe("engine installs", () => {
  it.live("report their progress while they run, and how much they installed in how long when done", () =>
    Effect.gen(function*() {
      const enginesDir = Path.join(root, "versions")
      const lines: Array<string> = []
      const versions = EngineVersions.make({
        enginesDir,
        npmPath: heldNpm,
        npmEnv: process.env,
        allowlist: undefined,
        report: (line) => Effect.sync(() => void lines.push(line)),
        progressEvery: "50 millis"
      })
      const install = yield* Effect.forkChild(versions.ensureInstalled("2026.10.2"))
      yield* waitUntil(() => (versions.installing("2026.10.2")?.installedBytes ?? 0) >= 3_000_000, "the install reports its 3 MB")
      assert.strictEqual(versions.installing("2026.10.2")?.part, "engine")
      assert.match(lines[0]!, /^Installing OpenClaw 2026\.10\.2 from the npm registry into .*versions\/2026\.10\.2 \(about 650 MB, once per version\)$/)
      yield* waitUntil(() => lines.some((line) => /^Installing OpenClaw 2026\.10\.2: 3 MB, \d+ s$/.test(line)), "a progress line with the MB so far")
      release(enginesDir)
      yield* Fiber.join(install)
      assert.isUndefined(versions.installing("2026.10.2"))
      assert.isTrue(yield* versions.isInstalled("2026.10.2"))
      assert.isTrue(lines.some((line) => /^Installed OpenClaw 2026\.10\.2: 3 MB in \d+ s$/.test(line)), lines.join("\n"))
      // Then the channel plugins, reported the same way.
      assert.isTrue(lines.some((line) => /^Installed the channel plugins of OpenClaw 2026\.10\.2: 3 MB in \d+ s$/.test(line)), lines.join("\n"))
    }), 120_000)

  it.live("show on an agent being provisioned: installing_engine with the bytes on disk, then nothing once it runs", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(root, "engine")
      const engine = yield* AgentEngine
      const agentId = "first-agent"
      assert.isUndefined(yield* engine.provisioning(agentId))
      const provision = yield* Effect.forkChild(engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("t") }))
      const report = () => Effect.runSync(engine.provisioning(agentId))
      yield* waitUntil(() => (report()?.installedBytes ?? 0) >= 3_000_000, "provisioning reports the install's bytes")
      assert.deepInclude(report(), { phase: "installing_engine", version: "2026.10.2" })
      assert.isAtLeast(report()!.elapsedMs, 0)
      release(Path.join(dataDir, "engines"))
      yield* Fiber.join(provision)
      assert.isUndefined(yield* engine.provisioning(agentId), "provisioned, stopped")
      yield* engine.start(agentId)
      assert.isUndefined(yield* engine.provisioning(agentId), "running")
      yield* engine.destroy(agentId)
    }).pipe(Effect.provide(OpenClawAgentEngine.layer({
      dataDir: Path.join(root, "engine"),
      npmPath: heldNpm,
      sandbox: sandboxModeForTests,
      sandboxReadOnly: [repository],
      basePort: reserveGatewayPorts(1),
      startTimeout: "10 seconds",
      stopGrace: "2 seconds",
      installProgressEvery: "50 millis"
    })), Effect.provideService(References.MinimumLogLevel, "Warn")), 120_000)
})
