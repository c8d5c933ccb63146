/**
 * The Tasks service over the simulated engine, where listing tasks lets other fibers run (as a real engine's RPC
 * does): concurrent creates on one agent still never take it past its limit of 20.
 */
import { AgentEngine, SimulatedAgentEngine, SimulatedEngineControl } from "@cairn/agent-engine"
import { Agents, CommandHandler, Gateway, type Principal, Tasks } from "@cairn/application"
import { MemoryEventStore } from "@cairn/event-store"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"

const principal: Principal = { workspaceId: "w1", userId: "ada", keyId: "k1", scopes: ["org:agents"] }

/** The simulated engine, but a task list answers only after other fibers had their turn. */
const interleavedEngine = Layer.effect(
  AgentEngine,
  Effect.gen(function*() {
    const engine = yield* AgentEngine
    return {
      ...engine,
      listTasks: (agentId, options) => Effect.tap(engine.listTasks(agentId, options), () => Effect.yieldNow)
    } satisfies AgentEngine["Service"]
  })
).pipe(Layer.provideMerge(SimulatedAgentEngine.layer({ startDelay: "1 millis" })))

// Only `get` is used: every agent is the caller's.
const agents = Layer.succeed(Agents, { get: (_workspaceId: string, agentId: string) => Effect.succeed({ agentId }) } as unknown as Agents["Service"])
// Only `ready` is used: the gateway is up.
const gateway = Layer.succeed(Gateway, { ready: (_agentId: string) => Effect.void } as unknown as Gateway["Service"])

const layer = Layer.effect(Tasks, Tasks.make).pipe(
  Layer.provideMerge(Layer.mergeAll(CommandHandler.layer, agents, gateway, interleavedEngine)),
  Layer.provideMerge(MemoryEventStore.layer())
)

const body = (i: number) =>
  JSON.stringify({ name: `task-${i}`, schedule: { kind: "every", everyMs: 3_600_000 }, payload: { kind: "agentTurn", text: "hi" } })

describe("creating tasks concurrently", () => {
  it.live("lets exactly 20 of 25 concurrent creates on one agent through", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      const tasks = yield* Tasks
      yield* engine.provision("a1", { version: control.defaultVersion, gatewayToken: Redacted.make("gw_test") })
      yield* engine.start("a1")
      const results = yield* Effect.forEach(
        Array.from({ length: 25 }, (_, i) => i),
        (i) => Effect.exit(tasks.create(principal, "a1", body(i))),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter(Exit.isSuccess).length, 20)
      for (const failed of results.filter(Exit.isFailure)) {
        assert.include(JSON.stringify(failed.cause), "tasks exceeds maximum of 20")
      }
      const listed = yield* engine.listTasks("a1", { includeDisabled: true })
      assert.strictEqual(listed.filter((task) => !task.system).length, 20)
    }).pipe(Effect.provide(layer)))
})
