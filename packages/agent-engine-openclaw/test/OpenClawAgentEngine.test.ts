/**
 * The adapter's own logic (versions, installs, files on disk, process supervision) against a stand-in for npm and
 * the `openclaw` CLI (test/fixtures), so it runs everywhere in seconds. OpenClawAgentEngine.int.test.ts runs the same
 * contract on real gateways.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { agentEngineContract, freshAgent, loggedBy } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { metaDirOf } from "../src/AgentHome.ts"
import { readPidRecord } from "../src/GatewayProcess.ts"
import { OpenClawAgentEngine } from "../src/index.ts"
import { gatewayEnvironment, onGatewayPorts, processesUnder, reserveGatewayPorts, sandboxModeForTests, serveAgentApp, waitUntil } from "../src/testing/index.ts"
import { engineProcess } from "./fixtures/EngineProcess.ts"
import { fakeNpm, repository, standInEngine } from "./fixtures/StandInEngine.ts"

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-openclaw-fake-"))
afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

// Cairn's own configuration, which npm's install scripts (third-party code) must never see.
process.env["SECRETS_MASTER_KEY"] = "master-key-that-must-not-reach-npm"
process.env["CAIRN_GATEWAY_KEY"] = "gateway-key-that-must-not-reach-npm"
// Set here, not only by CI's PostgreSQL pass: this package's tests run in the embedded pass only (vitest.config.ts).
process.env["DATABASE_URL"] = "postgres://cairn:password-that-must-not-reach-npm@127.0.0.1/cairn"

const engineAt = (name: string, basePort: number, versions?: ReadonlyArray<string>, maxConcurrentStarts?: number) =>
  standInEngine({
    dataDir: Path.join(dataDir, name),
    basePort,
    ...(versions === undefined ? {} : { versions }),
    ...(maxConcurrentStarts === undefined ? {} : { maxConcurrentStarts })
  })

/** An engine on gateway ports no other test process holds while it lives (`slots`: agents it holds at once). */
const engineLayer = (name: string, slots: number, versions?: ReadonlyArray<string>, maxConcurrentStarts?: number) =>
  onGatewayPorts(slots, (basePort) => engineAt(name, basePort, versions, maxConcurrentStarts))

/** The port slot the engine gave an agent, from the metadata in Cairn's folder for it. */
const agentSlot = (home: string): number => JSON.parse(Fs.readFileSync(Path.join(metaDirOf(home), "engine.json"), "utf8")).slot

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}


// Ports reserved for this process (a gateway listens on a fixed port): parallel test files and runs never share them.
const contractPorts = reserveGatewayPorts(32)
agentEngineContract("OpenClawAgentEngine on a stand-in engine", engineAt("contract", contractPorts, ["2026.9.1", "2026.9.5", "2026.10.2"]), {
  live: true,
  timeout: "30 seconds",
  environmentOf: (agentId) => Effect.sync(() => gatewayEnvironment(Path.join(dataDir, "contract", "agents", agentId))),
  // One of the ports OpenClaw derives from the agent's gateway port (its slot's block of 120 from the base port).
  ownedAppPort: (agentId) => Effect.sync(() => contractPorts + 120 * agentSlot(Path.join(dataDir, "contract", "agents", agentId)) + 7),
  serveApp: (agentId) => serveAgentApp(Path.join(dataDir, "contract", "agents", agentId))
})

describe("OpenClawAgentEngine", () => {
  layer(Layer.fresh(engineLayer("default", 4)), { excludeTestServices: true, timeout: "30 seconds" })((it) => {
    it.effect("offers only the latest stable release when no allowlist is given", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* (yield* AgentEngine).listVersions, ["2026.10.2"])
      }))
  })

  layer(Layer.fresh(engineLayer("one-at-a-time", 4, undefined, 1)), { excludeTestServices: true, timeout: "30 seconds" })((it) => {
    it.effect("starts one gateway at a time when asked to, queueing the others as starting", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const ids = [freshAgent(), freshAgent(), freshAgent()]
        for (const id of ids) yield* engine.provision(id, { version: "2026.10.2", gatewayToken: Redacted.make("t") })
        const starts = yield* Effect.forkChild(Effect.all(ids.map((id) => engine.start(id)), { concurrency: "unbounded" }))
        // All three are queued as soon as their starts run (the first gateway takes far longer to come up).
        const states = () => ids.map((id) => Effect.runSync(Effect.map(Effect.orDie(engine.status(id)), (s) => s.state)))
        yield* waitUntil(() => states().every((state) => state !== "stopped"), "the three starts have begun")
        assert.deepStrictEqual(states(), ["starting", "starting", "starting"])
        yield* Fiber.join(starts)
        // Each gateway notes its events, with the time, in its own home (the only place its sandbox can write).
        const events = ids
          .flatMap((id) => Fs.readFileSync(Path.join(dataDir, "one-at-a-time", "agents", id, "gateway-events.log"), "utf8").trim().split("\n"))
          .map((line) => line.split(" "))
          .sort((a, b) => Number(a[0]) - Number(b[0]))
          .map((fields) => fields.slice(1).join(" "))
        // Each gateway is ready before the next one is spawned.
        assert.deepStrictEqual(events.map((line) => line.split(" ")[0]), ["spawned", "ready", "spawned", "ready", "spawned", "ready"])
        for (let i = 0; i < events.length; i += 2) assert.strictEqual(events[i]!.split(" ")[1], events[i + 1]!.split(" ")[1])
      }))
  })

  it.live("fails with EngineUnavailable, not an empty list, when the allowlist matches nothing on the registry", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip((yield* AgentEngine).listVersions)
      assert.strictEqual(error._tag, "EngineUnavailable")
      assert.include(String(error.cause), "1999.1.1")
    }).pipe(Effect.provide(engineLayer("nothing-allowed", 1, ["1999.1.1"]))))

  it.live("kills a running gateway that stops answering, and reports it crashed", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = freshAgent()
      yield* engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("hang-when-ready") })
      yield* engine.start(agentId)
      const pid = readPidRecord(metaDirOf(Path.join(dataDir, "liveness", "agents", agentId)))!.pid
      assert.strictEqual((yield* engine.status(agentId)).state, "running")
      yield* waitUntil(() => !isAlive(pid), "the hung gateway is killed")
      yield* waitUntil(() => Effect.runSync(Effect.map(Effect.orDie(engine.status(agentId)), (s) => s.state === "crashed")), "it is reported crashed")
    }).pipe(Effect.provide(OpenClawAgentEngine.layer({
      dataDir: Path.join(dataDir, "liveness"),
      npmPath: fakeNpm,
      sandbox: sandboxModeForTests,
      sandboxReadOnly: [repository],
      basePort: reserveGatewayPorts(1),
      liveness: { interval: "100 millis", misses: 3 }
    }))), 120_000)

  describe("when the npm registry cannot be reached", () => {
    const offlineDir = Path.join(dataDir, "offline")
    // One version installed by an earlier run, and the remains of an install that was cut short.
    const installed = Path.join(offlineDir, "engines", "2026.9.5", "node_modules", "openclaw")
    Fs.mkdirSync(installed, { recursive: true })
    // A shim, as fake-npm.mjs installs it: the fixture runs where it is, so that its own imports resolve.
    const fixture = pathToFileURL(Path.join(import.meta.dirname, "fixtures", "fake-openclaw.mjs")).href
    Fs.writeFileSync(Path.join(installed, "openclaw.mjs"), `import ${JSON.stringify(fixture)}\n`)
    Fs.mkdirSync(Path.join(offlineDir, "engines", "2026.9.6.installing-1-x"), { recursive: true })
    const offlinePorts = reserveGatewayPorts()
    const offline = (versions?: ReadonlyArray<string>) =>
      OpenClawAgentEngine.layer({
        dataDir: offlineDir,
        npmPath: Path.join(import.meta.dirname, "fixtures", "offline-npm.mjs"),
        sandbox: sandboxModeForTests,
      sandboxReadOnly: [repository],
        basePort: offlinePorts,
        ...(versions === undefined ? {} : { versions })
      })

    it.live("offers the versions installed here, and runs agents on them", () =>
      Effect.gen(function*() {
        const warnings = yield* loggedBy(Effect.gen(function*() {
          const engine = yield* AgentEngine
          assert.deepStrictEqual(yield* engine.listVersions, ["2026.9.5"])
          const agentId = freshAgent()
          yield* engine.provision(agentId, { version: "2026.9.5", gatewayToken: Redacted.make("t") })
          yield* engine.start(agentId)
          assert.strictEqual((yield* engine.status(agentId)).state, "running")
        }).pipe(Effect.provide(offline())))
        // Without the registry it says so, once for the versions and once for the channel plugins, and agents still run.
        assert.isTrue(warnings.some((w) => w.startsWith("The npm registry cannot be reached; offering the engine versions known here")), warnings.join("\n"))
        assert.isTrue(warnings.some((w) => w.includes("channel plugins of OpenClaw 2026.9.5 could not be installed")), warnings.join("\n"))
      }), 120_000)

    it.live("fails with EngineUnavailable when nothing allowed is installed", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip((yield* AgentEngine).listVersions)
        assert.strictEqual(error._tag, "EngineUnavailable")
      }).pipe(Effect.provide(offline(["2026.9.6"]))))
  })

  describe("workspace files and skills on disk", () => {
    const home = (agentId: string) => Path.join(dataDir, "workspace", "agents", agentId)
    const workspace = (agentId: string) => Path.join(home(agentId), ".openclaw", "workspace")
    const text = (path: string, content: string) => ({ path, content: new TextEncoder().encode(content) })
    const skillMd = (name: string) => text("SKILL.md", `---\nname: ${name}\ndescription: on disk\n---\n`)
    const provisioned = Effect.gen(function*() {
      const agentId = freshAgent()
      yield* (yield* AgentEngine).provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("t") })
      return agentId
    })
    const mode = (path: string) => Fs.statSync(path).mode & 0o777
    const hidden = (dir: string) => Fs.readdirSync(dir).filter((name) => name.startsWith("."))

    layer(Layer.fresh(engineLayer("workspace", 8)), { excludeTestServices: true, timeout: "30 seconds" })((it) => {
      it.effect("writes a skill where OpenClaw looks, scripts executable and the rest 0644, and leaves no temporary folder", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          yield* engine.installSkill(agentId, {
            name: "hello",
            files: [skillMd("hello"), text("scripts/run.py", "print(1)\n"), text("tool", "#!/bin/sh\n"), text("docs/a.md", "a")]
          })
          const folder = Path.join(workspace(agentId), "skills", "hello")
          assert.deepStrictEqual(
            [mode(Path.join(folder, "SKILL.md")), mode(Path.join(folder, "scripts", "run.py")), mode(Path.join(folder, "tool")), mode(Path.join(folder, "docs", "a.md"))],
            [0o644, 0o755, 0o755, 0o644]
          )
          yield* engine.installSkill(agentId, { name: "hello", files: [skillMd("hello")] })
          yield* engine.removeSkill(agentId, "hello")
          yield* engine.writeWorkspaceFiles(agentId, [text("AGENTS.md", "a"), text("memory/today.md", "b")])
          assert.deepStrictEqual(hidden(Path.join(workspace(agentId), "skills")), [])
          assert.deepStrictEqual(hidden(workspace(agentId)), [])
          assert.deepStrictEqual(hidden(Path.join(workspace(agentId), "memory")), [])
          assert.strictEqual(mode(Path.join(workspace(agentId), "AGENTS.md")), 0o644)
        }))

      it.effect("keeps the old skill folder whole when the new copy cannot be written", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          const first = [skillMd("kept"), text("notes.md", "first")]
          yield* engine.installSkill(agentId, { name: "kept", files: first })
          // 4,015 bytes pass the path rules (at most 4,096), but under the workspace the whole path is longer than the
          // filesystem takes (PATH_MAX, 4,096 bytes with the home's own path).
          const deep = Array.from({ length: 16 }, () => "d".repeat(250)).join("/")
          const error = yield* Effect.flip(engine.installSkill(agentId, { name: "kept", files: [skillMd("kept"), text(deep, "x")] }))
          assert.strictEqual(error._tag, "EngineUnavailable")
          assert.deepStrictEqual(
            (yield* engine.readSkill(agentId, "kept"))?.map((file) => file.path),
            ["SKILL.md", "notes.md"]
          )
          assert.deepStrictEqual(hidden(Path.join(workspace(agentId), "skills")), [], "the temporary copy was left behind")
        }))

      it.effect("follows no symlink out of the workspace, for reads or writes", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          const outside = Path.join(dataDir, `outside-${agentId}`)
          Fs.mkdirSync(outside, { recursive: true })
          Fs.writeFileSync(Path.join(outside, "secret.md"), "outside")
          yield* engine.writeWorkspaceFiles(agentId, [text("inside.md", "inside")])
          const ws = workspace(agentId)
          Fs.symlinkSync(outside, Path.join(ws, "out-dir"))
          Fs.symlinkSync(Path.join(outside, "secret.md"), Path.join(ws, "out-file.md"))
          Fs.symlinkSync(Path.join(ws, "inside.md"), Path.join(ws, "in-file.md"))

          assert.strictEqual((yield* Effect.flip(engine.readWorkspaceFile(agentId, "out-dir/secret.md")))._tag, "EngineUnavailable")
          assert.strictEqual((yield* Effect.flip(engine.readWorkspaceFile(agentId, "out-file.md")))._tag, "EngineUnavailable")
          assert.strictEqual(new TextDecoder().decode(yield* engine.readWorkspaceFile(agentId, "in-file.md")), "inside")
          assert.strictEqual((yield* Effect.flip(engine.writeWorkspaceFiles(agentId, [text("out-dir/new/x.md", "x")])))._tag, "EngineUnavailable")
          // A symlink where a file goes is replaced, not written through.
          yield* engine.writeWorkspaceFiles(agentId, [text("out-file.md", "replaced")])
          assert.isFalse(Fs.lstatSync(Path.join(ws, "out-file.md")).isSymbolicLink())
          assert.deepStrictEqual(Fs.readdirSync(outside), ["secret.md"])
          assert.strictEqual(Fs.readFileSync(Path.join(outside, "secret.md"), "utf8"), "outside")

          // A skill's symlink is reported, not followed; a skills folder leading outside is refused.
          yield* engine.installSkill(agentId, { name: "linked", files: [skillMd("linked")] })
          Fs.symlinkSync(Path.join(outside, "secret.md"), Path.join(ws, "skills", "linked", "leak.md"))
          assert.deepStrictEqual(
            (yield* engine.readSkill(agentId, "linked"))?.map((file) => [file.path, new TextDecoder().decode(file.content)]),
            [["SKILL.md", "---\nname: linked\ndescription: on disk\n---\n"], ["leak.md", `symlink:${Path.join(outside, "secret.md")}`]]
          )
          Fs.rmSync(Path.join(ws, "skills"), { recursive: true })
          Fs.symlinkSync(outside, Path.join(ws, "skills"))
          assert.strictEqual((yield* Effect.flip(engine.installSkill(agentId, { name: "x", files: [skillMd("x")] })))._tag, "EngineUnavailable")
          assert.strictEqual((yield* Effect.flip(engine.readSkill(agentId, "x")))._tag, "EngineUnavailable")
          assert.deepStrictEqual(Fs.readdirSync(outside), ["secret.md"])
        }))
    })
  })

  describe("when the process running the engine is killed", () => {
    it.live("its gateways stop themselves (no orphans)", () =>
      Effect.gen(function*() {
        const { child, gatewayPid } = yield* engineProcess(Path.join(dataDir, "killed"), reserveGatewayPorts(1), freshAgent(), "t", "2 seconds")
        assert.isTrue(isAlive(gatewayPid))
        child.kill("SIGKILL")
        yield* waitUntil(() => !isAlive(gatewayPid), "the orphaned gateway is gone")
      }), 120_000)

    it.live("a gateway stuck in its shutdown is reaped by the next engine on that data dir, which starts the agent again", () =>
      Effect.gen(function*() {
        const agentId = freshAgent()
        const basePort = reserveGatewayPorts(1)
        // The stuck gateway ignores SIGTERM, and the dead engine gave it a minute before SIGKILL.
        const { child, gatewayPid } = yield* engineProcess(Path.join(dataDir, "stuck"), basePort, agentId, "ignore-sigterm", "60 seconds")
        child.kill("SIGKILL")
        yield* Effect.sleep("500 millis")
        assert.isTrue(isAlive(gatewayPid), "the stuck gateway outlived its engine")
        yield* Effect.gen(function*() {
          const engine = yield* AgentEngine
          yield* engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("t") })
          yield* engine.start(agentId)
          assert.strictEqual((yield* engine.status(agentId)).state, "running")
          assert.isFalse(isAlive(gatewayPid), "the stale gateway was reaped")
        }).pipe(Effect.provide(engineAt("stuck", basePort)))
      }), 120_000)
  })

  layer(Layer.fresh(engineLayer("files", 24, ["2026.9.5", "2026.10.2"])), {
    excludeTestServices: true,
    timeout: "30 seconds"
  })((it) => {
    it.effect("installs a version once, however many agents ask for it at the same time", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        yield* Effect.all(
          Array.from({ length: 4 }, () => engine.provision(freshAgent(), { version: "2026.9.5", gatewayToken: Redacted.make("t") })),
          { concurrency: "unbounded" }
        )
        const installs = Fs.readFileSync(Path.join(dataDir, "files", "engines", "installs.log"), "utf8")
        assert.deepStrictEqual(installs.trim().split("\n"), ["openclaw@2026.9.5"])
      }))

    it.effect("gives npm what it needs and none of Cairn's own configuration (install scripts are third-party code)", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        yield* engine.provision(freshAgent(), { version: "2026.10.2", gatewayToken: Redacted.make("t") })
        const seen = Fs.readFileSync(Path.join(dataDir, "files", "engines", "npm-env.log"), "utf8").trim().split("\n").map((line) => JSON.parse(line))
        assert.isAbove(seen.length, 0)
        for (const install of seen) assert.deepStrictEqual(install, { leaked: [], home: true })
      }))

    it.effect("writes an offline config that refers to the token without holding it, on ports 120 apart", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const [a, b] = [freshAgent(), freshAgent()]
        yield* engine.provision(a, { version: "2026.10.2", gatewayToken: Redacted.make("secret-a") })
        yield* engine.provision(b, { version: "2026.10.2", gatewayToken: Redacted.make("secret-b") })
        const read = (agentId: string) => {
          const text = Fs.readFileSync(Path.join(dataDir, "files", "agents", agentId, ".openclaw", "openclaw.json"), "utf8")
          assert.notInclude(text, "secret-")
          return JSON.parse(text)
        }
        const [configA, configB] = [read(a), read(b)]
        assert.strictEqual(configA.gateway.auth.token, "${OPENCLAW_GATEWAY_TOKEN}")
        assert.strictEqual(configA.update.checkOnStart, false)
        assert.strictEqual(configA.models.catalogRefresh.enabled, false)
        assert.strictEqual(configA.discovery.mdns.mode, "off")
        assert.strictEqual(configA.logging.file, Path.join(dataDir, "files", "agents", a, ".openclaw", "logs", "openclaw.log"))
        assert.strictEqual(Math.abs(configB.gateway.port - configA.gateway.port) % 120, 0)
        assert.notStrictEqual(configB.gateway.port, configA.gateway.port)
      }))

    it.effect("fails a start with the gateway's last output, and reports the agent crashed", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = freshAgent()
        yield* engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("refuse-to-start") })
        const error = yield* Effect.flip(engine.start(agentId))
        assert.strictEqual(error._tag, "GatewayDidNotStart")
        if (error._tag === "GatewayDidNotStart") assert.include(error.logTail, "fake refusal")
        assert.strictEqual((yield* engine.status(agentId)).state, "crashed")
      }))

    it.effect("reports a gateway that dies on its own as crashed", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = freshAgent()
        yield* engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("t") })
        yield* engine.start(agentId)
        const port = JSON.parse(
          Fs.readFileSync(Path.join(dataDir, "files", "agents", agentId, ".openclaw", "openclaw.json"), "utf8")
        ).gateway.port
        const pid = pidListeningOn(Path.join(dataDir, "files", "agents", agentId), port)
        assert.isDefined(pid)
        process.kill(pid!, "SIGKILL")
        yield* waitUntil(() => Effect.runSync(Effect.map(Effect.orDie(engine.status(agentId)), (s) => s.state !== "running")), "the kill is seen")
        assert.strictEqual((yield* engine.status(agentId)).state, "crashed")
        yield* engine.start(agentId)
        assert.strictEqual((yield* engine.status(agentId)).state, "running")
      }))

    it.effect("stops a gateway that is still starting, and its start fails", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = freshAgent()
        yield* engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("t") })
        const starting = yield* Effect.forkChild(Effect.flip(engine.start(agentId)))
        while ((yield* engine.status(agentId)).state !== "starting") yield* Effect.sleep("20 millis")
        yield* engine.stop(agentId)
        assert.strictEqual((yield* Fiber.join(starting))._tag, "GatewayDidNotStart")
        assert.strictEqual((yield* engine.status(agentId)).state, "stopped")
      }))

    it.effect("hands the environment to the gateway a token rotation restarts, under the engine's own, and writes it to no file", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = freshAgent()
        const home = Path.join(dataDir, "files", "agents", agentId)
        yield* engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("first-token") })
        yield* engine.setEnvironment(agentId, { ANTHROPIC_API_KEY: Redacted.make("sk-ant-first-value") })
        yield* engine.start(agentId)
        // DO_NOT_TRACK is no reserved name, but the engine sets it: the engine's value wins.
        yield* engine.setEnvironment(agentId, {
          ANTHROPIC_API_KEY: Redacted.make("sk-ant-second-value"),
          DO_NOT_TRACK: Redacted.make("0")
        })
        yield* engine.rotateGatewayToken(agentId, Redacted.make("second-token"))
        const environment = gatewayEnvironment(home)
        assert.strictEqual(environment?.["ANTHROPIC_API_KEY"], "sk-ant-second-value")
        assert.strictEqual(environment?.["OPENCLAW_GATEWAY_TOKEN"], "second-token")
        assert.strictEqual(environment?.["DO_NOT_TRACK"], "1")
        for (const file of filesUnder(home)) {
          assert.notInclude(Fs.readFileSync(file, "utf8"), "-value", `a secret was written to ${file}`)
        }
      }))

    it.effect("keeps the environment out of a failed start's error", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = freshAgent()
        yield* engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("refuse-to-start") })
        const warnings = yield* loggedBy(engine.setEnvironment(agentId, {
          ANTHROPIC_API_KEY: Redacted.make("sk-ant-secret-value"),
          BROKEN: Redacted.make("nul\0secret-value")
        }))
        assert.strictEqual(warnings.length, 1)
        assert.include(warnings[0]!, `"BROKEN"`)
        const error = yield* Effect.flip(engine.start(agentId))
        assert.strictEqual(error._tag, "GatewayDidNotStart")
        if (error._tag === "GatewayDidNotStart") assert.include(error.logTail, "fake refusal")
        for (const text of warnings) assert.notInclude(text, "secret-value")
        for (const text of [String(error), JSON.stringify(error), error.message]) assert.notInclude(text, "secret-value")
      }))

    it.effect("maps the engine's device list", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = freshAgent()
        yield* engine.provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make("t") })
        yield* engine.start(agentId)
        assert.deepStrictEqual(yield* engine.listDevices(agentId), {
          pending: [{ id: "req-1", name: "Phone", requestedAt: "1970-01-01T00:00:00.000Z" }],
          paired: []
        })
      }))
  })
})

/**
 * The pid of the process running in the agent's home that listens on `port`, found through /proc (Linux): each
 * process's own view of TCP (`/proc/<pid>/net/tcp`: the agent's network, where it has one of its own).
 */
function pidListeningOn(home: string, port: number): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, "0")
  for (const { pid } of processesUnder(Fs.realpathSync(home))) {
    try {
      const inode = Fs.readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n")
        .map((line) => line.trim().split(/\s+/))
        .find((cols) => cols[1]?.endsWith(`:${hex}`) && cols[3] === "0A")?.[9]
      if (inode === undefined) continue
      const fds = Fs.readdirSync(`/proc/${pid}/fd`)
      if (fds.some((fd) => Fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`)) return pid
    } catch {
      // Not ours to read, or gone.
    }
  }
  return undefined
}

function* filesUnder(dir: string): Generator<string> {
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) yield* filesUnder(path)
    else if (entry.isFile()) yield path
  }
}
