/**
 * Failover between the nodes of a cluster (decision 0028): each node renews its lease every heartbeat, and looks for
 * agents whose node's lease has expired (killed, cut off, or stopped). It takes each such agent's lease with a
 * compare-and-set (one node wins), then brings the agent back here: its workspace restored from its latest snapshot
 * and its gateway started, as after a crash. An agent with nothing to restore from is recorded `not_running`, with the
 * reason in its history, rather than started with an empty workspace; an agent that was not running is only adopted
 * (its requests come here from now on). Nothing happens on a single node (NodeLeases off).
 */
import { Agent } from "@cairn/domain"
import { Cause, Clock, Context, Deferred, Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { AgentSupervisor } from "../gateway/AgentSupervisor.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { ClusterSettings, NodeLeases, type OrphanedAgent } from "../cluster/NodeLeases.ts"
import { now } from "../Now.ts"
import * as AgentsTable from "../readmodels/AgentsTable.ts"
import { Snapshots } from "../snapshots/Snapshots.ts"

export class Failover extends Context.Service<Failover>()("cairn/Failover", {
  make: Effect.gen(function*() {
    const leases = yield* NodeLeases
    const supervisor = yield* AgentSupervisor
    const snapshots = yield* Snapshots
    const commands = yield* CommandHandler
    const agents = AgentsTable.queries(yield* SqlClient.SqlClient)
    const settings = yield* ClusterSettings

    const notRunning = (agentId: string, logTail: string) =>
      Effect.flatMap(now, (at) =>
        commands.execute(Agent.decider, Agent.stream(agentId), new Agent.RecordStartFailure({ agentId, logTail, at }), { actor: "supervisor" }))

    /** Brings an agent this node has just taken the lease of back here. */
    const takeOver = ({ agentId, node: from }: OrphanedAgent) =>
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        const row = yield* agents.byId(agentId)
        if (Option.isNone(row)) return yield* leases.release(agentId)
        const agent = row.value
        if (agent.status === "not_running" && !agent.recovering) {
          return yield* Effect.logInfo(`Agent ${agentId} adopted from node ${from}, whose lease expired (it was not running)`)
        }
        yield* supervisor.takeOver(agentId)
        yield* supervisor.provision(agentId, agent.engineVersion, agent.tokenGeneration)
        const restored = yield* Effect.result(snapshots.restoreLatest(agentId))
        if (restored._tag === "Failure" || Option.isNone(restored.success)) {
          const why = restored._tag === "Failure"
            ? `its latest snapshot could not be restored here (${String((restored.failure as { message?: string }).message ?? restored.failure)})`
            : "it has no snapshot to restore its workspace from"
          const reason = `Node ${from} stopped renewing its lease, and node ${leases.node} did not start the agent: ${why}. ` +
            `Restart it to start it afresh here, or on ${from} once it is back`
          yield* Effect.logWarning(`Agent ${agentId}: ${reason}`)
          return yield* notRunning(agentId, reason)
        }
        const { state } = yield* commands.execute(Agent.decider, Agent.stream(agentId), new Agent.RelaunchAgent({ agentId, at: yield* now }), {
          actor: "supervisor"
        })
        if (state._tag !== "Live") return
        const outcome = yield* Deferred.await(yield* supervisor.launch(agentId, state.agent.engineVersion, state.agent.tokenGeneration))
        const tookMs = (yield* Clock.currentTimeMillis) - startedAt
        yield* Effect.logInfo(
          `Agent ${agentId} adopted from node ${from}, whose lease expired: workspace restored from snapshot ${restored.success.value}, ` +
            `gateway ${outcome} after ${tookMs} ms`
        )
      }).pipe(Effect.catchCause((cause) => Effect.logError(`Adopting agent ${agentId} from node ${from} failed`, Cause.pretty(cause))))

    /** One beat: renew this node's lease, then adopt what expired nodes left (each agent in its own fiber). */
    const beat = Effect.gen(function*() {
      yield* leases.heartbeat
      for (const orphan of yield* leases.orphaned) {
        if (yield* leases.adopt(orphan.agentId, orphan.node)) yield* Effect.forkDetach(takeOver(orphan))
      }
    })

    /** For as long as the node runs; it leaves the cluster when it stops, so its agents move at once. */
    const run = Effect.gen(function*() {
      if (!leases.enabled) return
      yield* Effect.addFinalizer(() => leases.leave.pipe(Effect.ignore))
      yield* beat.pipe(
        Effect.catchCause((cause) => Effect.logError("Node heartbeat failed", cause)),
        Effect.andThen(Effect.sleep(Duration.fromInputUnsafe(settings.heartbeatInterval))),
        Effect.forever,
        Effect.forkScoped
      )
    })

    return { beat, run }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
