/**
 * Which engine and versions an agent can run on, and moving it onto a newer one (Pinata's `GET /v0/agents/engines`,
 * `…/available-agent-versions` and `…/update`). An update is a restart onto the version its tag names, through the
 * gateway's owner like every restart, so the version rules are the restart's: never older than the agent's own.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { Agent, EngineVersion } from "@cairn/domain"
import { Context, Effect, Layer } from "effect"
import type { Principal } from "../Access.ts"
import { Agents } from "./Agents.ts"

export interface EngineInfo {
  readonly id: string
  readonly label: string
}

export interface AgentVersions {
  readonly engine: string
  readonly currentVersion: string
  /** Every version this node can run the agent on, oldest first. */
  readonly availableVersions: ReadonlyArray<string>
  /** The newest release among them (pre-releases only when there is no release). */
  readonly latestVersion: string
  readonly updateAvailable: boolean
}

export interface UpdateOutcome {
  readonly previousVersion: string
  readonly newVersion: string
  /** What happened, in a sentence (Pinata answers its updater's output). */
  readonly output: string
}

const labels: Record<string, string> = { openclaw: "OpenClaw", simulated: "Simulated OpenClaw (no real gateway)" }

export class EngineUpdates extends Context.Service<EngineUpdates>()("cairn/EngineUpdates", {
  make: Effect.gen(function*() {
    const agents = yield* Agents
    const engine = yield* AgentEngine

    /** The engines agents run on here: one per node, the one it was started with. */
    const engines: ReadonlyArray<EngineInfo> = [{ id: engine.name, label: labels[engine.name] ?? engine.name }]

    const versionsOf = Effect.fn("EngineUpdates.versionsOf")(function*(principal: Principal, agentId: string) {
      const agent = yield* agents.get(principal.workspaceId, agentId)
      const availableVersions = yield* engine.listVersions
      const latestVersion = EngineVersion.latestRelease(availableVersions) ?? agent.engineVersion
      return {
        engine: engine.name,
        currentVersion: agent.engineVersion,
        availableVersions,
        latestVersion,
        updateAvailable: EngineVersion.isOlder(agent.engineVersion, latestVersion)
      } satisfies AgentVersions
    })

    /** Restarts the agent onto the version `tag` names (`latest` when absent); on it already: nothing to do. */
    const update = Effect.fn("EngineUpdates.update")(function*(principal: Principal, agentId: string, tag = "latest") {
      const agent = yield* agents.get(principal.workspaceId, agentId)
      const target = EngineVersion.resolveTag(tag, yield* engine.listVersions)
      if (target === undefined) return yield* new Agent.InvalidVersion({ version: tag })
      const previousVersion = agent.engineVersion
      if (target === previousVersion) {
        return { previousVersion, newVersion: target, output: `Already on ${target}: nothing to update` } satisfies UpdateOutcome
      }
      const restarted = yield* agents.restart(principal, agentId, target)
      return { previousVersion, newVersion: restarted.engineVersion, output: `Restarted on ${restarted.engineVersion} (was ${previousVersion})` } satisfies UpdateOutcome
    })

    return { engines, versionsOf, update }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
