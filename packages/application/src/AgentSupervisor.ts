/**
 * Keeps this node's agents running: starts gateways in the background and records the outcome, watches running
 * ones, brings crashed ones back with growing delays, resumes them all when Cairn starts, and lets go of gateways
 * whose agent was deleted or moved through another node. Each agent has at most one supervising fiber; a user's
 * command on an agent (restart, delete) takes its place.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { GatewayTokens } from "@cairn/auth"
import { Agent } from "@cairn/domain"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { Clock, Context, Deferred, Duration, Effect, FiberMap, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as AgentRecords from "./AgentRecords.ts"
import { now } from "./EventCodec.ts"

/** How often the supervisor asks the engine whether running gateways are still up. */
export const WatchInterval = Context.Reference<Duration.Input>("cairn/Agents/WatchInterval", { defaultValue: () => "1 second" })

/**
 * This Cairn node's name. Each agent's gateway runs on the node that created (or last started) it, and only that
 * node supervises it, so nodes sharing one database never start the same agent twice.
 */
export const AgentsNode = Context.Reference<string>("cairn/Agents/Node", { defaultValue: () => "local" })

/**
 * How the supervisor spaces its attempts to bring a crashed gateway back: doubling from `initial` up to `max`. A
 * crash within `stableAfter` of the previous one counts as the same crash loop, and starts from a longer delay.
 */
export const CrashBackoff = Context.Reference<{
  readonly initial: Duration.Input
  readonly max: Duration.Input
  readonly stableAfter: Duration.Input
}>("cairn/Agents/CrashBackoff", { defaultValue: () => ({ initial: "1 second", max: "5 minutes", stableAfter: "10 minutes" }) })

const millis = (input: Duration.Input) => Duration.toMillis(Duration.fromInputUnsafe(input))

export class AgentSupervisor extends Context.Service<AgentSupervisor>()("cairn/AgentSupervisor", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const engine = yield* AgentEngine
    const gatewayTokens = yield* GatewayTokens.GatewayTokens
    const records = AgentRecords.make(store, sql)
    // One supervising fiber per agent; they live as long as the service, and a new one replaces the old one.
    const fibers = yield* FiberMap.make<string>()
    const node = yield* AgentsNode
    /** The agents this node supervises; agents recorded before nodes were named count as everyone's. */
    const mine = sql`(node = ${node} OR node IS NULL)`
    /** Agents whose gateway this node's engine holds, so a delete or a move decided on another node reaches it. */
    const hosted = new Set<string>()
    /** Recent crashes per agent, so a crash loop backs off further each time round. */
    const crashes = new Map<string, { readonly count: number; readonly at: number }>()

    /** Prepares the agent's gateway on this node's engine. */
    const provision = (agentId: string, version: string, generation: number) =>
      Effect.andThen(
        Effect.sync(() => void hosted.add(agentId)),
        engine.provision(agentId, { version, gatewayToken: gatewayTokens.tokenFor(agentId, generation) })
      )

    /** The event that says the gateway runs here now. */
    const started = (agentId: string, engineVersion: string) =>
      Effect.flatMap(now, (at) => records.append(agentId, [new Agent.AgentStarted({ agentId, engineVersion, node, at })], "engine"))

    /** Provisions and starts the gateway, and records the outcome as the agent's next event. */
    const startGateway = (agentId: string, version: string, generation: number) =>
      Effect.gen(function*() {
        yield* provision(agentId, version, generation)
        yield* engine.start(agentId)
        yield* started(agentId, version)
        return "running" as const
      }).pipe(
        Effect.catch((error) =>
          Effect.gen(function*() {
            const logTail = (error as { logTail?: string }).logTail ?? String((error as { message?: string }).message ?? error)
            yield* Effect.logWarning(`Agent ${agentId} failed to start`, logTail)
            yield* records.append(agentId, [new Agent.AgentFailedToStart({ agentId, logTail, at: yield* now })], "engine").pipe(Effect.ignore)
            return "failed" as const
          })
        )
      )

    /**
     * Starts the gateway in the background. The returned deferred completes with the outcome, for a caller that
     * wants to wait.
     */
    const launch = (agentId: string, version: string, generation: number) =>
      Effect.gen(function*() {
        const outcome = yield* Deferred.make<"running" | "failed">()
        yield* FiberMap.run(fibers, agentId, Effect.flatMap(startGateway(agentId, version, generation), (o) => Deferred.succeed(outcome, o)))
        return outcome
      })

    /**
     * Brings a crashed agent back: waits (longer after each failed attempt and each recent crash), starts it, and
     * keeps trying until it runs. Runs in the background.
     */
    const recover = (agentId: string) =>
      Effect.gen(function*() {
        const backoff = yield* CrashBackoff
        const policy = { initialMs: millis(backoff.initial), maxMs: millis(backoff.max) }
        const nowMs = yield* Clock.currentTimeMillis
        const previous = crashes.get(agentId)
        const recentCrashes = previous !== undefined && nowMs - previous.at < millis(backoff.stableAfter) ? previous.count + 1 : 0
        crashes.set(agentId, { count: recentCrashes, at: nowMs })
        const attempts = Effect.gen(function*() {
          for (let attempt = 0;; attempt++) {
            const delayMs = Agent.recoveryDelay(policy, recentCrashes, attempt)
            yield* records.append(agentId, [new Agent.AgentRecoveryScheduled({ agentId, attempt, delayMs, at: yield* now })], "supervisor")
            yield* Effect.sleep(Duration.millis(delayMs))
            const agent = yield* records.row(agentId)
            if (Option.isNone(agent)) return
            yield* records.append(agentId, [new Agent.AgentRestartRequested({ agentId, engineVersion: agent.value.engineVersion, at: yield* now })], "supervisor")
            if ((yield* startGateway(agentId, agent.value.engineVersion, agent.value.tokenGeneration)) === "running") return
          }
        }).pipe(
          // An agent deleted meanwhile has no stream to append to: recovery ends there.
          Effect.catchTag("WrongExpectedVersion", () => Effect.void),
          Effect.catchCause((cause) => Effect.logError(`Recovery of agent ${agentId} stopped`, cause))
        )
        yield* FiberMap.run(fibers, agentId, attempts)
      })

    /** A user's command is about to drive the agent's gateway: whatever the supervisor was doing with it stops. */
    const takeOver = (agentId: string) => FiberMap.remove(fibers, agentId)

    /** The agent is gone: stop supervising it and forget it. */
    const forget = (agentId: string) =>
      Effect.andThen(FiberMap.remove(fibers, agentId), Effect.sync(() => {
        crashes.delete(agentId)
        hosted.delete(agentId)
      }))

    /**
     * After a restart of Cairn, every live agent's gateway is started again (gateways do not outlive Cairn), and
     * agents that were recovering from a crash go on recovering. Agents whose last start failed stay as they are.
     */
    const resume = Effect.gen(function*() {
      const rows = yield* sql<AgentRecords.AgentRow>`SELECT * FROM cairn_agents WHERE (status <> 'not_running' OR recovering) AND ${mine}`.pipe(Effect.orDie)
      for (const agent of rows.map(AgentRecords.toView)) {
        if (agent.recovering) {
          yield* recover(agent.agentId)
          continue
        }
        yield* records.append(agent.agentId, [new Agent.AgentRestartRequested({ agentId: agent.agentId, engineVersion: agent.engineVersion, at: yield* now })], "supervisor").pipe(Effect.ignore)
        yield* launch(agent.agentId, agent.engineVersion, agent.tokenGeneration)
      }
      if (rows.length > 0) yield* Effect.logInfo(`Resumed supervision of ${rows.length} agent(s)`)
    })

    /**
     * One pass of the watch: a running gateway the engine reports crashed (or gone) is recorded `not_running`, and
     * recovered in the background.
     */
    const checkRunning = Effect.gen(function*() {
      const rows = yield* sql<AgentRecords.AgentRow>`SELECT * FROM cairn_agents WHERE status = 'running' AND ${mine}`.pipe(Effect.orDie)
      for (const agent of rows) {
        const state = yield* engine.status(agent.id).pipe(
          Effect.map((status) => status.state),
          Effect.catchTag("AgentNotProvisioned", () => Effect.succeed("crashed" as const))
        )
        // Only a crash counts: a gateway is briefly stopped while a restart or a token rotation replaces it.
        if (state !== "crashed") continue
        // Recorded only if the agent is still running as last read: a restart or a delete since then wins.
        const { state: current, version } = yield* records.load(agent.id)
        if (current._tag !== "Live" || current.agent.status !== "running") continue
        yield* Effect.logWarning(`Agent ${agent.id}'s gateway crashed`)
        const recorded = yield* records.append(agent.id, [new Agent.AgentStopped({ agentId: agent.id, reason: "crashed", at: yield* now })], "supervisor", ExpectedVersion.Exact(version)).pipe(
          Effect.as(true),
          Effect.catchTag("WrongExpectedVersion", () => Effect.succeed(false))
        )
        if (recorded) yield* recover(agent.id)
      }
    })

    /**
     * One pass of reconciliation: a gateway this node holds for an agent that was deleted through another node is
     * destroyed, and one for an agent another node has started since is stopped (its home is left on disk).
     */
    const releaseForeign = Effect.gen(function*() {
      if (hosted.size === 0) return
      const ids = [...hosted]
      const rows = yield* sql<{ id: string; node: string | null }>`SELECT id, node FROM cairn_agents WHERE id = ANY(${ids}::text[])`.pipe(Effect.orDie)
      const owners = new Map(rows.map((r) => [r.id, r.node]))
      for (const agentId of ids) {
        const owner = owners.get(agentId)
        if (owner === undefined) {
          yield* Effect.logInfo(`Agent ${agentId} was deleted elsewhere: removing its gateway here`)
          yield* forget(agentId)
          yield* engine.destroy(agentId)
        } else if (owner !== null && owner !== node) {
          yield* Effect.logInfo(`Agent ${agentId} now runs on node ${owner}: stopping its gateway here`)
          yield* forget(agentId)
          yield* engine.stop(agentId).pipe(Effect.ignore)
        }
      }
    })

    /** Watches this node's gateways for as long as it runs. */
    const watch = Effect.gen(function*() {
      const interval = yield* WatchInterval
      yield* checkRunning.pipe(
        Effect.andThen(releaseForeign),
        Effect.catchCause((cause) => Effect.logError("Agent watch failed", cause)),
        Effect.andThen(Effect.sleep(interval)),
        Effect.forever
      )
    })

    return { node, provision, started, launch, recover, takeOver, forget, resume, checkRunning, releaseForeign, watch }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
