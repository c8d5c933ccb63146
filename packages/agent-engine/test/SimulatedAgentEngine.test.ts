import { AgentEngine, RedactedMarker, SimulatedAgentEngine, SimulatedEngineControl } from "@cairn/agent-engine"
import { SimulatedGateway } from "@cairn/agent-engine/node"
import { advanceTestClock, agentEngineContract } from "@cairn/agent-engine/testing"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Logger, Redacted } from "effect"
import { TestClock } from "effect/testing"

/** The contract's probe: what the gateway's launch received, read through the control the layer provides too. */
const environmentOf = (agentId: string) => SimulatedEngineControl.use((control) => control.environmentOf(agentId))

agentEngineContract("SimulatedAgentEngine without a start delay", SimulatedAgentEngine.layer({ startDelay: 0, openGateway: SimulatedGateway.open }), {
  environmentOf,
  chat: {}
})

agentEngineContract("SimulatedAgentEngine with a start delay on the TestClock", SimulatedAgentEngine.layer({ openGateway: SimulatedGateway.open }), {
  driveTime: advanceTestClock("1 second"),
  environmentOf,
  chat: {}
})

// How a real adapter runs the suite: on the wall clock, with time passing by itself.
agentEngineContract("SimulatedAgentEngine on the wall clock", SimulatedAgentEngine.layer({ startDelay: "5 millis", openGateway: SimulatedGateway.open }), {
  live: true,
  timeout: "10 seconds",
  environmentOf
})

// Without a probe, the suite leaves out what it cannot see, and the rest still holds.
agentEngineContract("SimulatedAgentEngine seen only through the port", SimulatedAgentEngine.layer({ startDelay: 0, openGateway: SimulatedGateway.open }))

const agentId = "agent-1"
const drive = advanceTestClock("1 second")

/** A fresh simulated engine (2-second start delay unless `options` say otherwise) with agent-1 provisioned. */
const withEngine = (options: SimulatedAgentEngine.Options = {}) =>
<A, E>(test: Effect.Effect<A, E, AgentEngine | SimulatedEngineControl>) =>
  Effect.gen(function*() {
    const engine = yield* AgentEngine
    const control = yield* SimulatedEngineControl
    yield* engine.provision(agentId, { version: control.defaultVersion, gatewayToken: Redacted.make("first-token") })
    return yield* test
  }).pipe(Effect.provide(SimulatedAgentEngine.layer(options)))

const text = (path: string, content: string) => ({ path, content: new TextEncoder().encode(content) })

const state = (id = agentId) => AgentEngine.use((engine) => engine.status(id)).pipe(Effect.map((s) => s.state))

describe("SimulatedAgentEngine", () => {
  it.effect("holds a starting agent in `starting` until the start delay has passed on the clock", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const start = yield* Effect.forkChild(engine.start(agentId))
      yield* Effect.yieldNow
      assert.strictEqual(yield* state(), "starting")
      yield* TestClock.adjust("1999 millis")
      assert.strictEqual(yield* state(), "starting")
      assert.deepInclude(yield* Effect.flip(engine.listDevices(agentId)), { _tag: "EngineCliError" })
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(start)
      assert.strictEqual(yield* state(), "running")
    })))

  it.effect("honours a configured start delay", () =>
    withEngine({ startDelay: "30 seconds" })(Effect.gen(function*() {
      const start = yield* Effect.forkChild(AgentEngine.use((engine) => engine.start(agentId)))
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual(yield* state(), "starting")
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(start)
      assert.strictEqual(yield* state(), "running")
    })))

  it.effect("lets a second start join the one in progress instead of launching another gateway", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      const first = yield* Effect.forkChild(engine.start(agentId))
      const second = yield* Effect.forkChild(engine.start(agentId))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      assert.strictEqual(yield* control.startCount(agentId), 1)
      assert.strictEqual(yield* state(), "running")
    })))

  it.effect("keeps starting the gateway when the caller stops waiting", () =>
    withEngine()(Effect.gen(function*() {
      const start = yield* Effect.forkChild(AgentEngine.use((engine) => engine.start(agentId)))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(start)
      assert.strictEqual(yield* state(), "starting")
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* state(), "running")
    })))

  it.effect("fails a start that is stopped before the gateway is ready", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const start = yield* Effect.forkChild(engine.start(agentId))
      yield* Effect.yieldNow
      yield* engine.stop(agentId)
      const error = yield* Effect.flip(Fiber.join(start))
      assert.deepInclude(error, { _tag: "GatewayDidNotStart", agentId })
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* state(), "stopped", "the abandoned start must not finish later")
    })))

  it.effect("fails a start in progress when the agent is destroyed", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const start = yield* Effect.forkChild(engine.start(agentId))
      yield* Effect.yieldNow
      yield* engine.destroy(agentId)
      assert.strictEqual((yield* Effect.flip(Fiber.join(start)))._tag, "GatewayDidNotStart")
      assert.strictEqual((yield* Effect.flip(engine.status(agentId)))._tag, "AgentNotProvisioned")
    })))

  it.effect("fails the next start with the scripted log tail, then starts normally", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* control.failNextStart(agentId, "Config invalid: gateway.mode must be local")
      const error = yield* Effect.flip(drive(engine.start(agentId)))
      assert.deepInclude(error, {
        _tag: "GatewayDidNotStart",
        agentId,
        logTail: "Config invalid: gateway.mode must be local"
      })
      assert.strictEqual(yield* state(), "crashed")
      yield* drive(engine.start(agentId))
      assert.strictEqual(yield* state(), "running")
      assert.strictEqual(yield* control.startCount(agentId), 2)
    })))

  it.effect("fails the next start of whichever agent starts next, once, when scripted for every agent", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.provision("agent-2", { version: control.defaultVersion, gatewayToken: Redacted.make("t") })
      yield* control.failNextStart("*", "out of memory")
      const error = yield* Effect.flip(drive(engine.start("agent-2")))
      assert.deepInclude(error, { _tag: "GatewayDidNotStart", agentId: "agent-2", logTail: "out of memory" })
      yield* drive(engine.start(agentId))
      yield* drive(engine.start("agent-2"))
      assert.deepStrictEqual([yield* state(agentId), yield* state("agent-2")], ["running", "running"])
    })))

  it.effect("queues scripted start failures and drops them when cleared", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* control.failNextStart(agentId, "first")
      yield* control.failNextStart(agentId, "second")
      yield* control.failNextStart(agentId, "third")
      assert.deepInclude(yield* Effect.flip(drive(engine.start(agentId))), { logTail: "first" })
      assert.deepInclude(yield* Effect.flip(drive(engine.start(agentId))), { logTail: "second" })
      yield* control.clearFailures(agentId)
      yield* drive(engine.start(agentId))
      assert.strictEqual(yield* state(), "running")
    })))

  it.effect("fails every start of the agents the options script, and reports it from a restart as GatewayRestartFailed", () =>
    withEngine({ failStartFor: (id) => (id.startsWith("broken-") ? `${id} cannot load its config` : undefined) })(
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const control = yield* SimulatedEngineControl
        yield* engine.provision("broken-1", { version: "2026.3.1", gatewayToken: Redacted.make("t") })
        for (let i = 0; i < 2; i++) {
          assert.deepInclude(yield* Effect.flip(drive(engine.start("broken-1"))), {
            _tag: "GatewayDidNotStart",
            logTail: "broken-1 cannot load its config"
          })
        }
        const error = yield* Effect.flip(drive(engine.restart("broken-1", { version: "2026.3.8" })))
        assert.strictEqual(error._tag, "GatewayRestartFailed")
        assert.deepInclude(error, { agentId: "broken-1" })
        assert.deepInclude(error.cause, { _tag: "GatewayDidNotStart", logTail: "broken-1 cannot load its config" })
        assert.deepStrictEqual(yield* engine.status("broken-1"), { state: "crashed", version: "2026.3.8" })
        assert.strictEqual(yield* control.startCount("broken-1"), 3)
        yield* drive(engine.start(agentId))
        assert.strictEqual(yield* state(), "running")
      })
    ))

  it.effect("marks a crashed gateway as crashed, refuses its devices, and starts it again", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* drive(engine.start(agentId))
      yield* control.crash(agentId)
      assert.deepStrictEqual(yield* engine.status(agentId), { state: "crashed", version: control.defaultVersion })
      assert.deepInclude(yield* Effect.flip(engine.listDevices(agentId)), { _tag: "EngineCliError", agentId })
      yield* drive(engine.start(agentId))
      assert.strictEqual(yield* state(), "running")
      assert.strictEqual(yield* control.startCount(agentId), 2)
    })))

  it.effect("fails a start in progress when the gateway crashes, and leaves a stopped agent stopped", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* control.crash(agentId)
      assert.strictEqual(yield* state(), "stopped", "nothing runs, so nothing can crash")
      const start = yield* Effect.forkChild(engine.start(agentId))
      yield* Effect.yieldNow
      yield* control.crash(agentId)
      assert.deepInclude(yield* Effect.flip(Fiber.join(start)), { _tag: "GatewayDidNotStart", agentId })
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* state(), "crashed")
      assert.strictEqual((yield* Effect.flip(control.crash("agent-unknown")))._tag, "AgentNotProvisioned")
    })))

  it.effect("fails engine commands with the scripted detail until the failure is cleared", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* drive(engine.start(agentId))
      yield* control.failCli(agentId, "gateway closed (1006): abnormal closure")
      for (let i = 0; i < 2; i++) {
        assert.deepInclude(yield* Effect.flip(engine.listDevices(agentId)), {
          _tag: "EngineCliError",
          agentId,
          detail: "gateway closed (1006): abnormal closure"
        })
      }
      yield* control.clearFailures(agentId)
      assert.deepStrictEqual(yield* engine.listDevices(agentId), { pending: [], paired: [] })
    })))

  it.effect("lists the devices added to each list, and moves a device that pairs", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* drive(engine.start(agentId))
      const phone = { id: "d-1", name: "Phone", requestedAt: "2026-11-22T10:00:00Z" }
      const laptop = { id: "d-2", name: "Laptop" }
      yield* control.addDevice(agentId, phone, "pending")
      yield* control.addDevice(agentId, laptop, "paired")
      assert.deepStrictEqual(yield* engine.listDevices(agentId), { pending: [phone], paired: [laptop] })
      yield* control.addDevice(agentId, phone, "paired")
      assert.deepStrictEqual(yield* engine.listDevices(agentId), { pending: [], paired: [laptop, phone] })
      assert.strictEqual((yield* Effect.flip(control.addDevice("agent-unknown", phone, "pending")))._tag, "AgentNotProvisioned")
    })))

  it.effect("relaunches scripts, or fails with the scripted detail until cleared", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.relaunchScripts(agentId)
      yield* control.failScripts(agentId, "npm run build exited with 1")
      assert.deepInclude(yield* Effect.flip(engine.relaunchScripts(agentId)), {
        _tag: "ScriptsFailedToLaunch",
        agentId,
        detail: "npm run build exited with 1"
      })
      yield* control.clearFailures(agentId)
      yield* engine.relaunchScripts(agentId)
      assert.strictEqual(yield* control.scriptLaunches(agentId), 2)
    })))

  it.effect("hands a rotated gateway token to the engine", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      assert.strictEqual(Redacted.value(yield* control.currentToken(agentId)), "first-token")
      yield* engine.rotateGatewayToken(agentId, Redacted.make("second-token"))
      assert.strictEqual(Redacted.value(yield* control.currentToken(agentId)), "second-token")
      yield* engine.provision(agentId, { version: control.defaultVersion, gatewayToken: Redacted.make("third-token") })
      assert.strictEqual(Redacted.value(yield* control.currentToken(agentId)), "second-token", "provision is idempotent")
    })))

  it.effect("gives each launch a copy of the environment set before it, under the engine's own variables", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      assert.isUndefined(yield* control.environmentOf(agentId), "never launched")
      yield* engine.setEnvironment(agentId, {
        ANTHROPIC_API_KEY: Redacted.make("sk-ant-first"),
        HOME: Redacted.make("/elsewhere"),
        OPENCLAW_STATE_DIR: Redacted.make("/elsewhere")
      })
      yield* drive(engine.start(agentId))
      assert.deepStrictEqual(yield* control.environmentOf(agentId), {
        ANTHROPIC_API_KEY: "sk-ant-first",
        HOME: `/simulated/agents/${agentId}`,
        PATH: "/usr/local/bin:/usr/bin:/bin",
        OPENCLAW_HOME: `/simulated/agents/${agentId}`,
        OPENCLAW_GATEWAY_TOKEN: "first-token"
      })
      yield* engine.setEnvironment(agentId, { OPENAI_API_KEY: Redacted.make("sk-second") })
      assert.strictEqual((yield* control.environmentOf(agentId))?.["ANTHROPIC_API_KEY"], "sk-ant-first", "the running one keeps it")
      yield* engine.stop(agentId)
      assert.strictEqual((yield* control.environmentOf(agentId))?.["ANTHROPIC_API_KEY"], "sk-ant-first", "the last launch's")
      yield* drive(engine.start(agentId))
      const restarted = yield* control.environmentOf(agentId)
      assert.isUndefined(restarted?.["ANTHROPIC_API_KEY"])
      assert.strictEqual(restarted?.["OPENAI_API_KEY"], "sk-second")
    })))

  it.effect("hands the environment to a gateway whose launch fails, as a real process gets it before it exits", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.setEnvironment(agentId, { ANTHROPIC_API_KEY: Redacted.make("sk-ant") })
      yield* control.failNextStart(agentId, "Config invalid")
      yield* Effect.flip(drive(engine.start(agentId)))
      assert.strictEqual((yield* control.environmentOf(agentId))?.["ANTHROPIC_API_KEY"], "sk-ant")
    })))

  it.effect("relaunches a running gateway on a token rotation, which then holds the new token and environment", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.rotateGatewayToken(agentId, Redacted.make("stopped-token"))
      assert.strictEqual(yield* control.startCount(agentId), 0, "a stopped gateway is not launched by a rotation")
      yield* drive(engine.start(agentId))
      yield* engine.setEnvironment(agentId, { ANTHROPIC_API_KEY: Redacted.make("sk-ant") })
      yield* engine.rotateGatewayToken(agentId, Redacted.make("rotated-token"))
      assert.strictEqual(yield* control.startCount(agentId), 2)
      assert.strictEqual(yield* state(), "running")
      const environment = yield* control.environmentOf(agentId)
      assert.strictEqual(environment?.["OPENCLAW_GATEWAY_TOKEN"], "rotated-token")
      assert.strictEqual(environment?.["ANTHROPIC_API_KEY"], "sk-ant")
    })))

  it.effect("forgets a destroyed agent's environment, and gives a new agent of that id none of it", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.setEnvironment(agentId, { ANTHROPIC_API_KEY: Redacted.make("sk-ant") })
      yield* drive(engine.start(agentId))
      yield* engine.destroy(agentId)
      assert.isUndefined(yield* control.environmentOf(agentId))
      yield* engine.provision(agentId, { version: control.defaultVersion, gatewayToken: Redacted.make("t") })
      yield* drive(engine.start(agentId))
      assert.isUndefined((yield* control.environmentOf(agentId))?.["ANTHROPIC_API_KEY"])
    })))

  it.effect("names the variables it leaves out in a warning, never their values", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const logged: Array<string> = []
      const logger = Logger.make(({ message }) => {
        for (const part of Array.isArray(message) ? message : [message]) logged.push(String(part))
      })
      yield* engine.setEnvironment(agentId, {
        OPENCLAW_STATE_DIR: Redacted.make("/tmp/elsewhere"),
        BROKEN: Redacted.make("nul\0value"),
        FINE: Redacted.make("fine-value")
      }).pipe(Effect.provide(Logger.layer([logger])))
      const text = logged.join("\n")
      assert.include(text, `"OPENCLAW_STATE_DIR", "BROKEN"`)
      for (const value of ["/tmp/elsewhere", "nul", "fine-value"]) assert.notInclude(text, value)
    })))

  it.effect("lists workspace skills as OpenClaw does: by front-matter name, dot-folders and SKILL.md without a description skipped", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      const skill = (name: string, body: string) => ({ name, files: [text("SKILL.md", body)] })
      yield* engine.installSkill(agentId, skill("folder-a", "---\nname: front-a\ndescription: named in its front matter\n---\n"))
      yield* engine.installSkill(agentId, skill("unnamed", "---\ndescription: no name\n---\n"))
      yield* engine.installSkill(agentId, skill("undescribed", "---\nname: undescribed\n---\n"))
      yield* engine.installSkill(agentId, skill("plain", "No front matter at all\n"))
      yield* engine.installSkill(agentId, skill("my-weather", `---\nname: "weather"\ndescription: 'mine'\n---\n`))
      yield* control.editWorkspaceFile(agentId, "skills/.staged/SKILL.md", new TextEncoder().encode("---\nname: staged\ndescription: x\n---\n"))
      const skills = yield* engine.listSkills(agentId)
      assert.deepStrictEqual(skills.filter((s) => s.source === "workspace").map((s) => s.name), ["front-a", "unnamed", "weather"])
      assert.deepStrictEqual(skills.map((s) => s.name), [...skills.map((s) => s.name)].sort(), "sorted by name")
      assert.deepStrictEqual(
        skills.filter((s) => s.source !== "workspace"),
        SimulatedAgentEngine.bundledSkills.filter((s) => s.name !== "weather"),
        "a workspace skill overrides the bundled one of its name"
      )
    })))

  it.effect("reads back a skill's files as an edit inside the agent left them", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.installSkill(agentId, { name: "hello", files: [text("SKILL.md", "v1"), text("notes.md", "n")] })
      yield* control.editWorkspaceFile(agentId, "skills/hello/SKILL.md", new TextEncoder().encode("edited"))
      yield* control.editWorkspaceFile(agentId, "skills/hello/notes.md", undefined)
      yield* control.editWorkspaceFile(agentId, "skills/hello/added.md", new TextEncoder().encode("a"))
      const files = yield* engine.readSkill(agentId, "hello")
      assert.deepStrictEqual(files?.map((f) => [f.path, new TextDecoder().decode(f.content)]), [["SKILL.md", "edited"], ["added.md", "a"]])
      yield* control.editWorkspaceFile(agentId, "skills/hello/SKILL.md", undefined)
      yield* control.editWorkspaceFile(agentId, "skills/hello/added.md", undefined)
      assert.deepStrictEqual(yield* engine.readSkill(agentId, "hello"), [], "the emptied folder is still there")
      assert.strictEqual((yield* Effect.exit(control.editWorkspaceFile(agentId, "../x", undefined)))._tag, "Failure")
      assert.strictEqual((yield* Effect.flip(control.editWorkspaceFile("agent-unknown", "x", undefined)))._tag, "AgentNotProvisioned")
    })))

  it.effect("keeps what callers pass and get as copies: changing their bytes changes nothing inside", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const content = new TextEncoder().encode("original")
      yield* engine.writeWorkspaceFiles(agentId, [{ path: "AGENTS.md", content }])
      content[0] = 0x58
      const read = yield* engine.readWorkspaceFile(agentId, "AGENTS.md")
      read![1] = 0x58
      assert.strictEqual(new TextDecoder().decode(yield* engine.readWorkspaceFile(agentId, "AGENTS.md")), "original")
    })))

  it.effect("fails workspace writes where a file and a folder meet, as a filesystem does", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      yield* engine.writeWorkspaceFiles(agentId, [text("notes/a.md", "a"), text("skills", "a file named skills")])
      assert.strictEqual((yield* Effect.flip(engine.writeWorkspaceFiles(agentId, [text("notes", "x")])))._tag, "EngineUnavailable")
      assert.strictEqual((yield* Effect.flip(engine.writeWorkspaceFiles(agentId, [text("notes/a.md/b", "x")])))._tag, "EngineUnavailable")
      assert.strictEqual((yield* Effect.flip(engine.installSkill(agentId, { name: "x", files: [text("SKILL.md", "x")] })))._tag, "EngineUnavailable")
      assert.strictEqual((yield* Effect.exit(engine.writeWorkspaceFiles(agentId, [text("a", "x"), text("a/b", "y")])))._tag, "Failure")
      assert.strictEqual((yield* Effect.exit(engine.writeWorkspaceFiles(agentId, [text("c", "x"), text("c", "y")])))._tag, "Failure")
    })))

  it.effect("fails workspace operations while the engine is unavailable, and skill listings while its CLI fails", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* control.failEngine("disk full")
      const errors = yield* Effect.all([
        Effect.flip(engine.installSkill(agentId, { name: "x", files: [text("SKILL.md", "x")] })),
        Effect.flip(engine.removeSkill(agentId, "x")),
        Effect.flip(engine.readSkill(agentId, "x")),
        Effect.flip(engine.writeWorkspaceFiles(agentId, [text("AGENTS.md", "x")])),
        Effect.flip(engine.readWorkspaceFile(agentId, "AGENTS.md"))
      ])
      for (const error of errors) assert.deepInclude(error, { _tag: "EngineUnavailable", cause: "disk full" })
      yield* control.restoreEngine
      yield* control.failCli(agentId, "skills list exited with 1")
      assert.deepInclude(yield* Effect.flip(engine.listSkills(agentId)), { _tag: "EngineCliError", detail: "skills list exited with 1" })
      yield* control.clearFailures(agentId)
      assert.isAbove((yield* engine.listSkills(agentId)).length, 0)
    })))

  it.effect("launches a new gateway on every restart", () =>
    withEngine({ versions: ["2026.3.1", "2026.3.8"] })(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.provision("agent-old", { version: "2026.3.1", gatewayToken: Redacted.make("t") })
      yield* drive(engine.start("agent-old"))
      yield* drive(engine.restart("agent-old"))
      const restart = yield* Effect.forkChild(engine.restart("agent-old", { version: "2026.3.8" }))
      yield* Effect.yieldNow
      assert.deepStrictEqual(yield* engine.status("agent-old"), { state: "starting", version: "2026.3.8" })
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(restart)
      assert.strictEqual(yield* control.startCount("agent-old"), 3)
      assert.deepStrictEqual(yield* engine.status("agent-old"), { state: "running", version: "2026.3.8" })
    })))

  it.effect("lists its versions oldest first whatever order they were given in, and defaults to the newest", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      assert.deepStrictEqual(yield* engine.listVersions, ["2026.3.8", "2026.4.2", "2026.10.1"])
      assert.strictEqual(control.defaultVersion, "2026.10.1")
    }).pipe(Effect.provide(SimulatedAgentEngine.layer({ versions: ["2026.10.1", "2026.3.8", "2026.4.2"] }))))

  it.effect("offers the default versions unless told otherwise", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* AgentEngine.use((engine) => engine.listVersions), ["2026.3.1", "2026.3.8", "2026.4.2"])
      assert.strictEqual((yield* SimulatedEngineControl).defaultVersion, "2026.4.2")
    }).pipe(Effect.provide(SimulatedAgentEngine.layer())))

  it.effect("uses a configured default version", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* SimulatedEngineControl).defaultVersion, "2026.3.8")
    }).pipe(Effect.provide(SimulatedAgentEngine.layer({ defaultVersion: "2026.3.8" }))))

  it.effect("refuses a default version it does not offer", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(SimulatedAgentEngine.layer({ defaultVersion: "2025.1.1" })))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.match(String(Cause.squash(exit.cause)), /default version 2025\.1\.1 is not among/)
    }))

  it.effect("is unavailable while scripted so, for listing versions and provisioning", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* control.failEngine("registry unreachable")
      assert.deepInclude(yield* Effect.flip(engine.listVersions), { _tag: "EngineUnavailable", cause: "registry unreachable" })
      const error = yield* Effect.flip(engine.provision("agent-2", { version: control.defaultVersion, gatewayToken: Redacted.make("t") }))
      assert.strictEqual(error._tag, "EngineUnavailable")
      assert.strictEqual((yield* Effect.flip(engine.status("agent-2")))._tag, "AgentNotProvisioned")
      yield* control.restoreEngine
      yield* engine.provision("agent-2", { version: control.defaultVersion, gatewayToken: Redacted.make("t") })
      assert.strictEqual(yield* state("agent-2"), "stopped")
    })))
})

describe("SimulatedAgentEngine workspace operations", () => {
  const exec = (command: string, cwd?: string) =>
    AgentEngine.use((engine) =>
      engine.exec(agentId, { command, ...(cwd === undefined ? {} : { cwd }), timeoutMs: 30_000, maxOutputBytes: 1024 })
    )

  it.effect("runs console commands in the workspace with the agent's current environment, running or not, and logs them", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.writeWorkspaceFiles(agentId, [text("notes/today.md", "remember")])
      yield* engine.setEnvironment(agentId, { ANTHROPIC_API_KEY: Redacted.make("sk-ant") })
      assert.deepInclude(yield* exec("pwd; printenv ANTHROPIC_API_KEY; printenv HOME"), {
        stdout: `${SimulatedAgentEngine.workspaceRoot(agentId)}\nsk-ant\n${SimulatedAgentEngine.homeOf(agentId)}\n`,
        exitCode: 0
      })
      assert.strictEqual((yield* exec("cat today.md", "notes")).stdout, "remember")
      assert.strictEqual((yield* exec("ls", `${SimulatedAgentEngine.workspaceRoot(agentId)}/notes`)).stdout, "today.md\n")
      yield* control.editWorkspaceFile(agentId, "notes/today.md", undefined)
      assert.deepInclude(yield* exec("cat notes/today.md"), { exitCode: 1, stderr: "cat: notes/today.md: No such file or directory\n" })
      assert.deepStrictEqual((yield* control.execLog(agentId)).map((request) => [request.command, request.cwd]), [
        ["pwd; printenv ANTHROPIC_API_KEY; printenv HOME", undefined],
        ["cat today.md", "notes"],
        ["ls", `${SimulatedAgentEngine.workspaceRoot(agentId)}/notes`],
        ["cat notes/today.md", undefined]
      ])
      assert.strictEqual((yield* Effect.flip(control.execLog("agent-unknown")))._tag, "AgentNotProvisioned")
    })))

  it.effect("refuses a working directory outside the workspace or that is no folder, and fails exec as scripted", () =>
    withEngine()(Effect.gen(function*() {
      const control = yield* SimulatedEngineControl
      yield* AgentEngine.use((engine) => engine.writeWorkspaceFiles(agentId, [text("file.txt", "x")]))
      for (const cwd of ["..", "../..", "/tmp", "file.txt", "missing"]) {
        assert.deepInclude(yield* Effect.flip(exec("pwd", cwd)), { _tag: "WorkingDirectoryOutside", agentId, cwd })
      }
      yield* control.failExec(agentId, "bwrap: No permissions to create new namespace")
      assert.deepInclude(yield* Effect.flip(exec("true")), { _tag: "ExecFailed", agentId, detail: "bwrap: No permissions to create new namespace" })
      assert.deepInclude(yield* Effect.flip(exec("true", "..")), { _tag: "WorkingDirectoryOutside" }, "the directory is checked first")
      assert.deepStrictEqual(yield* control.execLog(agentId), [], "commands that never started are not logged")
      yield* control.clearFailures(agentId)
      assert.strictEqual((yield* exec("true")).exitCode, 0)
      assert.strictEqual((yield* Effect.flip(AgentEngine.use((engine) => engine.exec("agent-unknown", { command: "true", timeoutMs: 1, maxOutputBytes: 1 }))))._tag, "AgentNotProvisioned")
    })))

  it.effect("keeps the gateway token in the config, redacted on reads, kept through a marker, changed by a rotation", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      const tokenOf = (config: Readonly<Record<string, unknown>>) => (config["gateway"] as { auth: { token: unknown } }).auth.token
      const read = yield* engine.readConfig(agentId)
      assert.strictEqual(tokenOf(read.config), RedactedMarker)
      assert.strictEqual(tokenOf(yield* control.storedConfig(agentId)), "first-token")
      const written = yield* engine.writeConfig(agentId, { config: { ...read.config, cron: { enabled: true } }, baseHash: read.hash })
      assert.strictEqual(tokenOf(yield* control.storedConfig(agentId)), "first-token")
      yield* engine.rotateGatewayToken(agentId, Redacted.make("second-token"))
      assert.strictEqual(tokenOf(yield* control.storedConfig(agentId)), "second-token")
      assert.notStrictEqual((yield* engine.readConfig(agentId)).hash, written.hash, "a rotation changes the stored config")
      assert.deepInclude((yield* control.storedConfig(agentId))["cron"], { enabled: true })
      const other = yield* Effect.flip(engine.writeConfig(agentId, { config: { channels: { slack: { botToken: RedactedMarker } } } }))
      assert.deepInclude(other, { _tag: "ConfigRejected" })
      yield* engine.destroy(agentId)
      yield* engine.provision(agentId, { version: control.defaultVersion, gatewayToken: Redacted.make("new-token") })
      assert.isUndefined((yield* control.storedConfig(agentId))["cron"], "a new agent of the same id has the old one's config")
    })))

  it.effect("fails config reads, writes and validation as scripted, until cleared", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      const { config, hash } = yield* engine.readConfig(agentId)
      yield* control.failConfig(agentId, "write", "EACCES")
      assert.deepInclude(yield* Effect.flip(engine.writeConfig(agentId, { config, baseHash: hash })), { _tag: "ConfigUnwritable", agentId, detail: "EACCES" })
      assert.deepInclude(yield* Effect.flip(engine.writeConfig(agentId, { config: { bogusKey: 1 } })), { _tag: "ConfigRejected" }, "validated first")
      assert.strictEqual((yield* engine.readConfig(agentId)).hash, hash)
      yield* control.failConfig(agentId, "validate", "spawn openclaw ENOENT")
      assert.deepInclude(yield* Effect.flip(engine.validateConfig(agentId, config)), { _tag: "ValidatorFailed", detail: "spawn openclaw ENOENT" })
      yield* control.failConfig(agentId, "read", "unexpected end of JSON5")
      assert.deepInclude(yield* Effect.flip(engine.readConfig(agentId)), { _tag: "ConfigUnreadable", detail: "unexpected end of JSON5" })
      assert.deepInclude(yield* Effect.flip(engine.writeConfig(agentId, { config })), { _tag: "ConfigUnreadable" })
      yield* control.clearFailures(agentId)
      assert.strictEqual((yield* engine.writeConfig(agentId, { config, baseHash: hash })).hash, hash, "the same document, the same hash")
      assert.isTrue((yield* engine.validateConfig(agentId, config)).valid)
    })))

  it.effect("keeps tasks through stops and restarts, drops them with the agent, and fails them as scripted", () =>
    withEngine()(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      const notRunning = yield* Effect.flip(engine.listTasks(agentId, { includeDisabled: true }))
      assert.deepInclude(notRunning, { _tag: "TasksFailed", agentId, detail: `Gateway not reachable at ws://127.0.0.1:${SimulatedAgentEngine.firstPort} (ECONNREFUSED).` })
      yield* drive(engine.start(agentId))
      const task = yield* engine.addTask(agentId, { name: "t", schedule: { kind: "every", everyMs: 60_000 }, payload: { kind: "systemEvent", message: "m" } })
      assert.match(task.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/)
      yield* engine.stop(agentId)
      yield* drive(engine.start(agentId))
      assert.deepInclude(yield* engine.getTask(agentId, task.id), { name: "t" })
      yield* control.failTasks(agentId, "rate limit exceeded for cron.add; retry after 3s")
      assert.deepInclude(yield* Effect.flip(engine.getTask(agentId, task.id)), { _tag: "TasksFailed", detail: "rate limit exceeded for cron.add; retry after 3s" })
      yield* control.clearFailures(agentId)
      const { runId } = yield* engine.runTask(agentId, task.id)
      assert.deepInclude((yield* engine.taskRuns(agentId, task.id, 5))[0], { runId, status: "ok", summary: "m" })
      yield* engine.destroy(agentId)
      yield* engine.provision(agentId, { version: control.defaultVersion, gatewayToken: Redacted.make("t") })
      yield* drive(engine.start(agentId))
      assert.deepInclude(yield* Effect.flip(engine.getTask(agentId, task.id)), { _tag: "TaskNotFound" })
      assert.deepStrictEqual((yield* engine.listTasks(agentId, { includeDisabled: true })).map((t) => t.system), [true, true, true])
    })))
})

