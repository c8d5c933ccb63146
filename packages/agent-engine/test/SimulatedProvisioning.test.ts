/**
 * SimulatedAgentEngine's `provisioning`, phase by phase: an install held by the control (with the bytes it reports),
 * then a held gateway start, on the TestClock, so every report is exact.
 */
import { AgentEngine, SimulatedAgentEngine, SimulatedEngineControl } from "@cairn/agent-engine"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"

const provisioning = (agentId: string) => AgentEngine.use((engine) => engine.provisioning(agentId))
const token = Redacted.make("token")

describe("SimulatedAgentEngine provisioning", () => {
  it.effect("reports installing_engine with the bytes installed, then starting_gateway, then nothing once running", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      const version = control.defaultVersion
      yield* control.holdInstall(version)
      yield* control.holdStarts
      const provision = yield* Effect.forkChild(engine.provision("agent-1", { version, gatewayToken: token }))
      yield* Effect.yieldNow
      assert.deepStrictEqual(yield* provisioning("agent-1"), { phase: "installing_engine", version, elapsedMs: 0, installedBytes: 0 })
      assert.strictEqual((yield* Effect.flip(engine.status("agent-1")))._tag, "AgentNotProvisioned", "not provisioned before its install")

      yield* TestClock.adjust("12 seconds")
      yield* control.reportInstall(version, 312_000_000)
      assert.deepStrictEqual(yield* provisioning("agent-1"), { phase: "installing_engine", version, elapsedMs: 12_000, installedBytes: 312_000_000 })

      yield* control.finishInstall(version)
      yield* Fiber.join(provision)
      assert.deepStrictEqual(yield* engine.status("agent-1"), { state: "stopped", version })
      assert.isUndefined(yield* provisioning("agent-1"), "provisioned and not started: not on its way up")

      const start = yield* Effect.forkChild(engine.start("agent-1"))
      yield* TestClock.adjust("3 seconds")
      // The start delay (2 s) has passed, but starts are held: the gateway is still starting, timed from the provision.
      assert.deepStrictEqual(yield* provisioning("agent-1"), { phase: "starting_gateway", version, elapsedMs: 15_000 })
      yield* control.releaseStarts
      yield* Fiber.join(start)
      assert.strictEqual((yield* engine.status("agent-1")).state, "running")
      assert.isUndefined(yield* provisioning("agent-1"))
    }).pipe(Effect.provide(SimulatedAgentEngine.layer())))

  it.effect("holds only provisions of the held version, and lets the others through meanwhile", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      const [older, newer] = SimulatedAgentEngine.defaultVersions.slice(-2) as [string, string]
      yield* control.holdInstall(newer)
      const waiting = yield* Effect.forkChild(engine.provision("waits", { version: newer, gatewayToken: token }))
      yield* Effect.yieldNow
      yield* engine.provision("goes-on", { version: older, gatewayToken: token })
      assert.deepStrictEqual(yield* engine.status("goes-on"), { state: "stopped", version: older })
      assert.strictEqual((yield* provisioning("waits"))?.phase, "installing_engine")
      yield* control.finishInstall(newer)
      yield* Fiber.join(waiting)
      assert.deepStrictEqual(yield* engine.status("waits"), { state: "stopped", version: newer })
    }).pipe(Effect.provide(SimulatedAgentEngine.layer())))

  it.effect("reports nothing for an agent whose start failed, nor after a destroy", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const control = yield* SimulatedEngineControl
      yield* engine.provision("agent-2", { version: control.defaultVersion, gatewayToken: token })
      yield* control.failNextStart("agent-2", "boom")
      yield* Effect.flip(engine.start("agent-2"))
      assert.isUndefined(yield* provisioning("agent-2"))
      yield* control.holdStarts
      const start = yield* Effect.forkChild(engine.start("agent-2"))
      yield* Effect.yieldNow
      assert.strictEqual((yield* provisioning("agent-2"))?.phase, "starting_gateway")
      yield* engine.destroy("agent-2")
      yield* Effect.flip(Fiber.join(start))
      assert.isUndefined(yield* provisioning("agent-2"))
    }).pipe(Effect.provide(SimulatedAgentEngine.layer())))
})
