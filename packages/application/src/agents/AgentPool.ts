/**
 * A warm pool of agent gateways on this node (issue 36 item 2; decision 0058). A gateway start is OpenClaw's own
 * ~10 CPU-seconds, so the pool keeps `size` gateways started ahead, each under the id (and so the home, token,
 * network, cgroup and disk) of an agent that does not exist yet. A create that needs nothing a running gateway
 * cannot be given afterwards (no secrets, template or fork: those are in the gateway's environment or workspace
 * from its first start) takes one: the agent is created under the pooled id, and its first start finds the gateway
 * running. A pooled gateway is never anyone's before its create, so an adopted agent is a cold-started one that
 * started earlier: same files, same environment, nothing of any other agent, and it belongs to the one workspace
 * whose create took it.
 *
 * The gateways are started and removed by their one owner, Gateway.ts (`startAhead`, `discardAhead`); the pool
 * only decides when. Recorded on `agent-pool-<node>`: each id reserved (before anything is made for it), taken (in the create's own
 * append) or discarded with why. What an earlier run left reserved is discarded at start, home and all.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { AgentPool as Pool } from "@cairn/domain"
import { Context, Effect, Layer, Metric, Option, Queue } from "effect"
import { CommandHandler, unreadDecision } from "../CommandHandler.ts"
import { AgentsNode } from "../cluster/NodeLeases.ts"
import { Gateway } from "../gateway/Gateway.ts"
import { now } from "../Now.ts"
import { newAgentId } from "./AgentIds.ts"

export interface PoolSettings {
  /** Gateways kept started ahead, per node; 0: no pool. */
  readonly size: number
  /** How often the pooled gateways are looked at (a crashed one replaced, an outdated one too). */
  readonly checkEveryMs: number
}

export const defaultPoolSettings: PoolSettings = { size: 0, checkEveryMs: 10_000 }

export const PoolSettings = Context.Reference<PoolSettings>("cairn/AgentPool/Settings", { defaultValue: () => defaultPoolSettings })

const ready = Metric.gauge("cairn_agent_pool_ready", { description: "Gateways started ahead in this node's warm pool, waiting for a create" })
const takes = (outcome: "hit" | "miss") =>
  Metric.counter("cairn_agent_pool_takes_total", {
    description: "Creates that could use the warm pool: hit, a pooled gateway taken; miss, none was ready",
    attributes: { outcome },
    incremental: true
  })
const hits = takes("hit")
const misses = takes("miss")

/** The longest wait between two failed starts of a pooled gateway. */
const maxBackoffMs = 10 * 60_000

interface Pooled {
  readonly agentId: string
  readonly version: string
  readonly reservedAt: string
}

export class AgentPool extends Context.Service<AgentPool>()("cairn/AgentPool", {
  make: Effect.gen(function*() {
    const engine = yield* AgentEngine
    const commands = yield* CommandHandler
    const gateway = yield* Gateway
    const node = yield* AgentsNode
    const settings = yield* PoolSettings
    const stream = Pool.stream(node)
    /** Gateways running, waiting to be taken: the only place an id is handed out from, once. */
    const waiting: Array<Pooled> = []
    /** Wakes the filler when a gateway was taken. */
    const taken = yield* Queue.sliding<void>(1)

    const record = (command: Pool.PoolCommand) => commands.record(Pool.decider, stream, command, { actor: "pool" })
    const latestVersion = Effect.map(engine.listVersions, (versions) => versions[versions.length - 1]!)
    const showCount = Effect.suspend(() => Metric.update(ready, waiting.length))

    const discard = (agentId: string, reason: Pool.PoolGatewayDiscarded["reason"], detail?: string) =>
      Effect.gen(function*() {
        yield* gateway.discardAhead(agentId)
        yield* record(new Pool.DiscardPoolGateway({ agentId, reason, ...(detail === undefined ? {} : { detail }), at: yield* now }))
      })

    /** One more gateway for the pool: reserved, provisioned as a new agent's, started. */
    const prepare = (version: string) =>
      Effect.gen(function*() {
        const agentId = newAgentId()
        const reservedAt = yield* now
        yield* record(new Pool.ReservePoolGateway({ agentId, version, at: reservedAt }))
        const started = yield* Effect.result(gateway.startAhead(agentId, version))
        if (started._tag === "Failure") {
          const failure = started.failure
          const detail = "logTail" in failure ? failure.logTail : "detail" in failure ? failure.detail : failure._tag
          yield* discard(agentId, "failed", detail.slice(-2000))
          return false
        }
        waiting.push({ agentId, version, reservedAt })
        yield* showCount
        return true
      })

    /** Drops what cannot be taken any more: a gateway that is no longer running, or runs an older version. */
    const prune = (version: string) =>
      Effect.gen(function*() {
        for (const pooled of [...waiting]) {
          const reason = !(yield* gateway.runningAhead(pooled.agentId)) ? "crashed" : pooled.version !== version ? "outdated" : undefined
          // A create may have taken it meanwhile: it is that agent's now.
          const index = waiting.indexOf(pooled)
          if (reason === undefined || index === -1) continue
          waiting.splice(index, 1)
          yield* discard(pooled.agentId, reason)
        }
        yield* showCount
      })

    /** What an earlier run of Cairn reserved and no create took: its gateway is gone, its home is removed. */
    const clearLeftovers = Effect.gen(function*() {
      const { state } = yield* commands.load(Pool.decider, stream)
      for (const agentId of state.reserved.keys()) yield* discard(agentId, "left")
    })

    /**
     * A pooled gateway for a create of `version`, handed out once; none when the pool is off or empty. The create
     * appends `decision` with its `AgentCreated`; should that append fail, it gives the gateway back.
     */
    const take = (workspaceId: string, version: string) =>
      Effect.gen(function*() {
        if (settings.size === 0) return Option.none()
        let pooled: Pooled | undefined
        while (pooled === undefined) {
          const index = waiting.findIndex((candidate) => candidate.version === version)
          if (index === -1) {
            yield* Metric.update(misses, 1)
            return Option.none()
          }
          // Out of the pool before anything else runs, so that no other create can be handed it too.
          const [candidate] = waiting.splice(index, 1)
          yield* Queue.offer(taken, undefined)
          // One that crashed since the last look would only be started cold: removed, and the next one tried.
          if (yield* gateway.runningAhead(candidate!.agentId)) pooled = candidate
          else yield* discard(candidate!.agentId, "crashed")
        }
        yield* showCount
        yield* Metric.update(hits, 1)
        const takenOne = pooled
        return Option.some({
          agentId: takenOne.agentId,
          reservedAt: takenOne.reservedAt,
          decision: unreadDecision(Pool.decider, stream, new Pool.TakePoolGateway({ agentId: takenOne.agentId, workspaceId, at: yield* now })),
          giveBack: Effect.sync(() => void waiting.unshift(takenOne)).pipe(Effect.andThen(showCount))
        })
      })

    /**
     * One look: what can no longer be taken dropped, then the pool filled up with the newest version once it is
     * installed, one gateway at a time while no agent's own start (a create, a wake, a recovery, the resumption after
     * a restart) waits for the engine; false when a start failed.
     */
    const round = Effect.gen(function*() {
      const version = yield* latestVersion
      yield* prune(version)
      // A version not installed yet is installed by the first create that needs it, not by the pool: a node that
      // never runs an agent downloads no engine.
      if (!(yield* engine.isInstalled(version))) return true
      while (waiting.length < settings.size && !(yield* gateway.agentsStarting)) if (!(yield* prepare(version))) return false
      return true
    })

    /** For as long as the node runs: leftovers cleared, then the pool kept full. */
    const run = Effect.gen(function*() {
      yield* clearLeftovers
      yield* showCount
      if (settings.size === 0) return
      for (let failures = 0;;) {
        failures = (yield* round) ? 0 : failures + 1
        // A start failed: a longer wait after each failure in a row, so a broken engine is not hammered. Full: until
        // a take or the next look.
        if (failures > 0) yield* Effect.sleep(Math.min(settings.checkEveryMs * 2 ** failures, maxBackoffMs))
        else yield* Queue.take(taken).pipe(Effect.timeoutOption(settings.checkEveryMs))
      }
    }).pipe(Effect.catchCause((cause) => Effect.logError("The agent pool stopped", cause)))

    return { take, round, run, clearLeftovers, settings, waiting: Effect.sync(() => waiting.map((pooled) => pooled.agentId)) }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
