/**
 * Keeps this node's agents running: starts gateways in the background and records the outcome, watches running
 * ones, brings crashed ones back with growing delays, resumes them all when Cairn starts, and lets go of gateways
 * whose agent was deleted or moved through another node. Each agent has at most one supervising fiber; a user's
 * command on an agent (restart, delete) takes its place. What it learns is recorded through agent commands, so a
 * report that lost a race (a crash seen while the user restarts) is decided again against the newer history.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { GatewayTokens } from "@cairn/auth"
import { Agent } from "@cairn/domain"
import { Clock, Context, Deferred, Duration, Effect, FiberMap, Layer, Metric } from "effect"
import { SqlClient } from "effect/sql"
import * as ChannelDelivery from "./ChannelDelivery.ts"
import { CommandHandler } from "../CommandHandler.ts"
import * as GatewayMetrics from "./GatewayMetrics.ts"
import { NodeLeases } from "../cluster/NodeLeases.ts"
import { now } from "../Now.ts"
import * as AgentsTable from "../readmodels/AgentsTable.ts"
import { Secrets } from "../secrets/Secrets.ts"
import { SecretVault } from "../secrets/SecretVault.ts"
import { Skills } from "../skills/Skills.ts"

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

/** The agent a decision on a live agent leaves behind. */
const agentAfter = (state: Agent.AgentState) => (state._tag === "NoAgent" ? undefined : state.agent)

export class AgentSupervisor extends Context.Service<AgentSupervisor>()("cairn/AgentSupervisor", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const secrets = yield* Secrets
    const vault = yield* SecretVault
    const skills = yield* Skills
    const agents = AgentsTable.queries(yield* SqlClient.SqlClient)
    const engine = yield* AgentEngine
    const gatewayTokens = yield* GatewayTokens.GatewayTokens
    // One supervising fiber per agent; they live as long as the service, and a new one replaces the old one.
    const fibers = yield* FiberMap.make<string>()
    const node = yield* AgentsNode
    const leases = yield* NodeLeases
    /** Agents whose gateway this node's engine holds, so a delete or a move decided on another node reaches it. */
    const hosted = new Set<string>()
    /** Recent crashes per agent, so a crash loop backs off further each time round. */
    const crashes = new Map<string, { readonly count: number; readonly at: number }>()

    const record = (actor: "engine" | "supervisor", agentId: string, command: Agent.AgentCommand) =>
      commands.execute(Agent.decider, Agent.stream(agentId), command, { actor })

    /** Prepares the agent's gateway on this node's engine, and takes its lease (NodeLeases.ts). */
    const provision = (agentId: string, version: string, generation: number) =>
      Effect.andThen(
        Effect.andThen(Effect.sync(() => void hosted.add(agentId)), leases.claim(agentId)),
        engine.provision(agentId, { version, gatewayToken: gatewayTokens.tokenFor(agentId, generation) })
      )

    /**
     * Gives the engine the agent's secrets for its gateway's next start; says which value versions those are. A
     * secret that does not decrypt fails here, so a gateway never starts with a wrong or missing value.
     */
    const deliverSecrets = (agentId: string) =>
      Effect.gen(function*() {
        const { state } = yield* commands.load(Agent.decider, Agent.stream(agentId))
        if (state._tag !== "Live") return yield* new Agent.AgentNotFound({ agentId })
        const { environment, delivered } = yield* secrets.deliveryFor(state.agent)
        // The agent's channels ride along: their tokens in the same environment, their settings into its config.
        const channels = yield* ChannelDelivery.deliveryFor(commands, vault, agentId, state.agent.workspaceId)
        yield* engine.setEnvironment(agentId, { ...environment, ...channels.environment })
        yield* engine.setChannels(agentId, channels.specs).pipe(
          Effect.catchTag("ChannelsUnavailable", (error) => Effect.logWarning(`Agent ${agentId}: channels not applied`, error.detail))
        )
        return delivered
      })

    /**
     * Puts back attached skills the workspace lacks (an install cut short, a home moved between nodes). A skill
     * that cannot be installed is logged and the gateway starts without it rather than not at all.
     */
    const restoreSkills = (agentId: string) =>
      Effect.gen(function*() {
        const { state } = yield* commands.load(Agent.decider, Agent.stream(agentId))
        if (state._tag === "Live") yield* skills.ensureInstalled(state.agent)
      }).pipe(Effect.catch((error) => Effect.logWarning(`Agent ${agentId}: attached skills could not all be installed`, error)))

    /** Records that the gateway runs here now, with these secrets; gives the agent as it then is. */
    const started = (agentId: string, engineVersion: string, delivered: ReadonlyArray<Agent.DeliveredSecret>) =>
      Effect.flatMap(now, (at) => record("engine", agentId, new Agent.RecordAgentStarted({ agentId, engineVersion, node, secrets: delivered, at }))).pipe(
        Effect.map(({ state }) => agentAfter(state)!)
      )

    /** Provisions and starts the gateway with its secrets, and records the outcome as the agent's next event. */
    const startGateway = (agentId: string, version: string, generation: number) =>
      Effect.gen(function*() {
        yield* provision(agentId, version, generation)
        const delivered = yield* deliverSecrets(agentId)
        yield* restoreSkills(agentId)
        yield* engine.start(agentId)
        yield* started(agentId, version, delivered)
        return "running" as const
      }).pipe(
        Effect.catch((error) =>
          Effect.gen(function*() {
            const logTail = (error as { logTail?: string }).logTail ?? String((error as { message?: string }).message ?? error)
            yield* Effect.logWarning(`Agent ${agentId} failed to start`, logTail)
            yield* record("engine", agentId, new Agent.RecordStartFailure({ agentId, logTail, at: yield* now })).pipe(Effect.ignore)
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
     * keeps trying until it runs. Runs in the background; an agent deleted meanwhile ends it.
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
            yield* record("supervisor", agentId, new Agent.ScheduleRecovery({ agentId, attempt, delayMs, at: yield* now }))
            yield* Effect.sleep(Duration.millis(delayMs))
            const { state } = yield* record("supervisor", agentId, new Agent.RelaunchAgent({ agentId, at: yield* now }))
            const agent = agentAfter(state)!
            yield* Metric.update(GatewayMetrics.restarts, 1)
            if ((yield* startGateway(agentId, agent.engineVersion, agent.tokenGeneration)) === "running") return
          }
        }).pipe(
          Effect.catchTag("AgentNotFound", () => Effect.void),
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

    /** The agent was deleted: its lease goes too. */
    const forgetDeleted = (agentId: string) => Effect.andThen(forget(agentId), leases.release(agentId))

    /**
     * After a restart of Cairn, every live agent's gateway is started again (gateways do not outlive Cairn), and
     * agents that were recovering from a crash go on recovering. Agents whose last start failed stay as they are.
     */
    const resume = Effect.gen(function*() {
      const toResume = yield* agents.toResume(node)
      for (const agent of toResume) {
        // Another live node adopted it while this one was down (Failover.ts): it runs there now.
        if (!(yield* leases.claim(agent.agentId))) continue
        if (agent.recovering) {
          yield* recover(agent.agentId)
          continue
        }
        yield* record("supervisor", agent.agentId, new Agent.RelaunchAgent({ agentId: agent.agentId, at: yield* now })).pipe(Effect.ignore)
        yield* launch(agent.agentId, agent.engineVersion, agent.tokenGeneration)
      }
      if (toResume.length > 0) yield* Effect.logInfo(`Resumed supervision of ${toResume.length} agent(s)`)
    })

    /**
     * One pass of the watch: a running gateway the engine reports crashed (or gone) is recorded `not_running`, and
     * recovered in the background.
     */
    const checkRunning = Effect.gen(function*() {
      for (const agent of yield* agents.runningOn(node)) {
        const state = yield* engine.status(agent.agentId).pipe(
          Effect.map((status) => status.state),
          Effect.catchTag("AgentNotProvisioned", () => Effect.succeed("crashed" as const))
        )
        // Only a crash counts: a gateway is briefly stopped while a restart or a token rotation replaces it.
        if (state !== "crashed") continue
        // Decided against the agent's history: a restart or a delete recorded since the sweep read it wins.
        const { events } = yield* record("supervisor", agent.agentId, new Agent.RecordCrash({ agentId: agent.agentId, at: yield* now }))
        if (events.length === 0) continue
        yield* Effect.logWarning(`Agent ${agent.agentId}'s gateway crashed`)
        yield* recover(agent.agentId)
      }
    })

    /**
     * One pass of reconciliation: a gateway this node holds for an agent that was deleted through another node is
     * destroyed, and one for an agent another node has started since is stopped (its home is left on disk). On
     * several nodes, the agent's lease says which node that is (an adoption holds it before its start is recorded).
     */
    const releaseForeign = Effect.gen(function*() {
      if (hosted.size === 0) return
      const ids = [...hosted]
      const owners = yield* agents.owners(ids)
      const holders = yield* leases.holders(ids)
      for (const agentId of ids) {
        const recorded = owners.get(agentId)
        const owner = recorded === undefined ? undefined : holders.get(agentId) ?? recorded
        if (owner === undefined) {
          yield* Effect.logInfo(`Agent ${agentId} was deleted elsewhere: removing its gateway here`)
          yield* forgetDeleted(agentId)
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

    return { node, provision, deliverSecrets, restoreSkills, started, launch, recover, takeOver, forget, forgetDeleted, resume, checkRunning, releaseForeign, watch }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
