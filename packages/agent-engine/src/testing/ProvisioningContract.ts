/**
 * The AgentEngine contract for `provisioning` (see ContractSection.ts): what an engine reports while it brings an
 * agent up, and that it reports nothing otherwise. Which phase a start is seen in depends on timing no test of the
 * port controls; the adapters' own tests hold an install or a start to see each phase (SimulatedEngineControl, a
 * stand-in npm).
 */
import { assert } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { AgentEngine, type Provisioning } from "../AgentEngine.ts"
import type { SectionContext } from "./ContractSection.ts"

/** A report is a phase of the port's, for the agent's version, with a time that never runs backwards. */
const assertReport = (report: Provisioning, version: string) => {
  assert.include(["installing_engine", "starting_gateway"], report.phase)
  assert.strictEqual(report.version, version)
  assert.isAtLeast(report.elapsedMs, 0)
  if (report.installedBytes !== undefined) assert.isAtLeast(report.installedBytes, 0)
}

export const provisioningContract = <R>({ it, drive, freshAgent, aRunningAgent, timeout }: SectionContext<R>): void => {
  it.effect("reports no provisioning for an unknown agent, a provisioned stopped one, or a running one", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      assert.isUndefined(yield* engine.provisioning("never-provisioned-agent"))
      const agentId = yield* freshAgent
      assert.isUndefined(yield* engine.provisioning(agentId), "a provisioned, stopped agent is not on its way up")
      assert.isUndefined(yield* engine.provisioning(yield* aRunningAgent), "a running agent is up")
    }), timeout)

  it.effect("reports a phase while a gateway starts, nothing once it is ready, nor once it stopped or is gone", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* freshAgent
      const { version } = yield* engine.status(agentId)
      const start = yield* Effect.forkChild(drive(engine.start(agentId)))
      // Whatever the moment: a report only while the agent is not yet running, and a well-formed one.
      const report = yield* engine.provisioning(agentId)
      const { state } = yield* engine.status(agentId)
      if (report !== undefined) assertReport(report, version)
      if (state === "starting") {
        const again = yield* engine.provisioning(agentId)
        if (again !== undefined) assertReport(again, version)
      }
      yield* Fiber.join(start)
      assert.strictEqual((yield* engine.status(agentId)).state, "running")
      assert.isUndefined(yield* engine.provisioning(agentId))
      yield* engine.stop(agentId)
      assert.isUndefined(yield* engine.provisioning(agentId))
      yield* engine.destroy(agentId)
      assert.isUndefined(yield* engine.provisioning(agentId))
    }), timeout)
}
