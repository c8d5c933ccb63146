/**
 * Failover between the nodes of a cluster (decision 0028): each node renews its lease every heartbeat, and looks for
 * agents whose node's lease has expired (killed, cut off, or stopped). It takes each such agent's lease with a
 * compare-and-set (one node wins), then hands the agent to its gateway's owner here (`Gateway.adopt`), which restores
 * its workspace from its latest snapshot and starts it as after a crash. Nothing happens on a single node
 * (NodeLeases off).
 */
import { Context, Duration, Effect, Layer } from "effect"
import { ClusterSettings, NodeLeases } from "../cluster/NodeLeases.ts"
import { Gateway } from "../gateway/Gateway.ts"
import { Snapshots } from "../snapshots/Snapshots.ts"

export class Failover extends Context.Service<Failover>()("cairn/Failover", {
  make: Effect.gen(function*() {
    const leases = yield* NodeLeases
    const gateway = yield* Gateway
    const snapshots = yield* Snapshots
    const settings = yield* ClusterSettings

    /** One beat: renew this node's lease, then adopt what expired nodes left (each agent in its own fiber). */
    const beat = Effect.gen(function*() {
      yield* leases.heartbeat
      for (const orphan of yield* leases.orphaned) {
        if (yield* leases.adopt(orphan.agentId, orphan.node)) {
          yield* Effect.forkDetach(gateway.adopt(orphan.agentId, orphan.node, snapshots.restoreLatest(orphan.agentId)))
        }
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
