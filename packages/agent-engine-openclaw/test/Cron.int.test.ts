/**
 * Scheduled tasks on a real OpenClaw gateway, beyond the shared contract (AgentEngineContract's tasks section): how
 * tasks are stored as OpenClaw's jobs (read back with the raw `cron.get`), which of its own jobs it declares and what
 * it lets clients do with them, and what a list costs over the kept-open connection against the raw RPC call on an
 * open socket. Runs only with ENGINE_IT=openclaw (one gateway, about a minute); see OpenClawAgentEngine.int.test.ts.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { connect, type GatewayClient } from "../src/GatewayRpc.ts"
import { OpenClawAgentEngine } from "../src/index.ts"
import { intoGatewayNetwork, reserveGatewayPorts } from "../src/testing/index.ts"

const version = "2026.9.6"
const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const basePort = enabled ? reserveGatewayPorts(1) : 0

const dataDir = enabled ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-openclaw-cron-")) : ""
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? Path.join(dataDir, "engines")

const agentId = `cron-${Date.now().toString(36)}`
const token = `token-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`

/**
 * A connection of the test's own to the agent's gateway (its only agent, so on the base port), into the agent's own
 * network (decision 0043).
 */
const rawClient = Effect.flatMap(intoGatewayNetwork(Path.join(dataDir, "agents", agentId)), (into) =>
  Effect.acquireRelease(
    Effect.promise(() => connect({ url: "ws://localhost", connect: () => into.connect(basePort), token })),
    (client) => Effect.sync(() => client.close())
  ))
const raw = (client: GatewayClient, method: string, params: unknown) => Effect.promise(() => client.request(method, params))

if (enabled) {
  afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

  describe("OpenClawAgentEngine keeps scheduled tasks as the gateway's cron jobs", () => {
    const engineLayer = OpenClawAgentEngine.layer({
      dataDir,
      enginesDir,
      versions: [version],
      basePort,
      startTimeout: "120 seconds",
      stopGrace: "15 seconds",
      compileCache: true
    })
    layer(Layer.fresh(engineLayer), { excludeTestServices: true, timeout: "300 seconds" })((it) => {
      const running = Effect.gen(function*() {
        const engine = yield* AgentEngine
        yield* engine.provision(agentId, { version, gatewayToken: Redacted.make(token) })
        if ((yield* engine.status(agentId)).state !== "running") yield* engine.start(agentId)
        return engine
      })

      it.effect("marks the jobs OpenClaw declares for itself as system tasks, and lets a client toggle only its plugin's", () =>
        Effect.gen(function*() {
          const engine = yield* running
          // OpenClaw declares them while its gateway comes up: wait until all three are there.
          const deadline = Date.now() + 60_000
          let tasks = yield* engine.listTasks(agentId, { includeDisabled: true })
          while (tasks.filter((task) => task.system).length < 3 && Date.now() < deadline) {
            yield* Effect.sleep("500 millis")
            tasks = yield* engine.listTasks(agentId, { includeDisabled: true })
          }
          const system = Object.fromEntries(tasks.filter((task) => task.system).map((task) => [task.name, task]))
          assert.sameMembers(Object.keys(system), ["heartbeat-main", "Memory Dreaming Promotion", "skill-collection-review-main"])
          assert.deepStrictEqual(system["heartbeat-main"]!.payload, { kind: "heartbeat" })

          // OpenClaw itself refuses any change to its monitors, a toggle included: SystemTaskProtected, as the port says.
          const heartbeat = system["heartbeat-main"]!
          const refused = yield* Effect.flip(engine.updateTask(agentId, heartbeat.id, { enabled: false }))
          assert.deepInclude(refused, { _tag: "SystemTaskProtected", agentId, taskId: heartbeat.id })
          assert.isTrue((yield* engine.getTask(agentId, heartbeat.id)).enabled)

          // Memory-core's job can be toggled (the plugin enables it again when the gateway next starts).
          const dreaming = system["Memory Dreaming Promotion"]!
          assert.deepInclude(yield* engine.updateTask(agentId, dreaming.id, { enabled: false }), { enabled: false, system: true })
          assert.deepInclude(yield* engine.updateTask(agentId, dreaming.id, { enabled: true }), { enabled: true, system: true })
        }), 300_000)

      it.effect("stores an agent turn's text as OpenClaw's message and a system event's message as its text", () =>
        Effect.scoped(Effect.gen(function*() {
          const engine = yield* running
          const client = yield* rawClient
          const turn = yield* engine.addTask(agentId, {
            name: "turn",
            schedule: { kind: "cron", expr: "30 7 * * 1-5", tz: "Europe/Paris" },
            payload: { kind: "agentTurn", text: "Plan the day.", model: "anthropic/claude-sonnet-4-5", timeoutSeconds: 120 }
          })
          assert.deepInclude(yield* raw(client, "cron.get", { id: turn.id }), {
            sessionTarget: "isolated",
            wakeMode: "now",
            delivery: { mode: "none" },
            schedule: { kind: "cron", expr: "30 7 * * 1-5", tz: "Europe/Paris" }
          })
          const stored = (yield* raw(client, "cron.get", { id: turn.id })) as { readonly payload: Record<string, unknown> }
          assert.deepInclude(stored.payload, {
            kind: "agentTurn",
            message: "Plan the day.",
            model: "anthropic/claude-sonnet-4-5",
            timeoutSeconds: 120
          })

          // A payload of another kind moves the job to the session OpenClaw runs that kind in.
          const event = yield* engine.updateTask(agentId, turn.id, { payload: { kind: "systemEvent", message: "Stand up." } })
          assert.deepInclude(event, { sessionTarget: "main", payload: { kind: "systemEvent", message: "Stand up." } })
          const moved = (yield* raw(client, "cron.get", { id: turn.id })) as {
            readonly sessionTarget: string
            readonly payload: Record<string, unknown>
          }
          assert.strictEqual(moved.sessionTarget, "main")
          assert.deepInclude(moved.payload, { kind: "systemEvent", text: "Stand up." })

          // A delivery given replaces the stored one whole.
          const hooked = yield* engine.updateTask(agentId, turn.id, {
            payload: { kind: "agentTurn", text: "Report." },
            delivery: { mode: "webhook", to: "https://example.invalid/hook" }
          })
          assert.deepInclude(hooked, { sessionTarget: "isolated", delivery: { mode: "webhook", to: "https://example.invalid/hook" } })
          const quiet = yield* engine.updateTask(agentId, turn.id, { delivery: { mode: "none" } })
          assert.deepStrictEqual(quiet.delivery, { mode: "none" })
          assert.deepStrictEqual(quiet.payload, { kind: "agentTurn", text: "Report." })

          // What OpenClaw refuses comes back with its own words.
          const invalid = yield* Effect.flip(engine.addTask(agentId, {
            name: "never",
            schedule: { kind: "cron", expr: "61 * * * *" },
            payload: { kind: "agentTurn", text: "x" }
          }))
          assert.deepInclude(invalid, { _tag: "TasksFailed", agentId })
          assert.include((invalid as { readonly detail: string }).detail, "Invalid value for minute: 61")
          yield* engine.removeTask(agentId, turn.id)
        })), 300_000)
    })
  })
} else {
  describe.skip("Scheduled tasks on real OpenClaw gateways (set ENGINE_IT=openclaw, without DATABASE_URL, to run)", () => {
    it.skip("needs ENGINE_IT=openclaw", () => {})
  })
}
