/**
 * The one owner of this node's agents' gateways: the only code that drives the AgentEngine's lifecycle operations
 * (provision, start, stop, restart, token rotation, destroy) and records what came of them (`AgentStarted`,
 * `AgentFailedToStart`, `AgentStopped`, recoveries). Every use case that changes a gateway asks it: create
 * (`launch`), restart, a workspace reset (`whileStopped`), a channel change (`applyChannels`), a failover (`adopt`),
 * a delete (`remove`); and it supervises what runs here: watches running gateways, brings crashed ones back with
 * growing delays, resumes them all when Cairn starts, and lets go of gateways whose agent was deleted or moved
 * through another node. It also puts idle agents to sleep (`sleep`, asked by AgentSleep.ts) and wakes them: a
 * request that needs a sleeping agent's gateway (`ready`) starts it once, however many requests ask at a time.
 *
 * A gateway starts one way: its environment delivered (the agent's secrets and its channels' tokens), its attached
 * skills put back, the engine's start, and the outcome recorded. Each agent has at most one fiber driving its gateway
 * in the background; a user's command on the agent takes its place. What is learnt is recorded through agent
 * commands, so a report that lost a race (a crash seen while the user restarts) is decided again on the newer
 * history; an attempt reads the agent's stream once, and decides its outcome on what that read and its own appends
 * left (a concurrent write makes the handler read again).
 */
import { AgentEngine, type WorkspaceFile } from "@cairn/agent-engine"
import { GatewayTokens } from "@cairn/auth"
import { Agent } from "@cairn/domain"
import { Cause, Clock, Context, Deferred, Duration, Effect, FiberMap, Layer, Metric, Option, Result } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { CommandHandler, type Loaded } from "../CommandHandler.ts"
import { AgentsNode, NodeLeases } from "../cluster/NodeLeases.ts"
import { now } from "../Now.ts"
import * as AgentModel from "./AgentModel.ts"
import * as AgentsTable from "../readmodels/AgentsTable.ts"
import { Secrets } from "../secrets/Secrets.ts"
import { SecretVault } from "../secrets/SecretVault.ts"
import { Skills } from "../skills/Skills.ts"
import * as ChannelDelivery from "./ChannelDelivery.ts"
import * as GatewayMetrics from "./GatewayMetrics.ts"

/** How often the gateway owner asks the engine whether running gateways are still up. */
export const WatchInterval = Context.Reference<Duration.Input>("cairn/Agents/WatchInterval", { defaultValue: () => "1 second" })

/**
 * How crashed gateways are brought back: attempts doubling from `initial` up to `max`. A crash within `stableAfter`
 * of the previous one counts as the same crash loop, and starts from a longer delay.
 */
export const CrashBackoff = Context.Reference<{
  readonly initial: Duration.Input
  readonly max: Duration.Input
  readonly stableAfter: Duration.Input
}>("cairn/Agents/CrashBackoff", { defaultValue: () => ({ initial: "1 second", max: "5 minutes", stableAfter: "10 minutes" }) })

/**
 * How long a request that needs the agent's gateway waits for one that is starting (a create, a restart, a
 * recovery) before it is answered 503 with `Retry-After`.
 */
export const ReadyWait = Context.Reference<Duration.Input>("cairn/Agents/ReadyWait", { defaultValue: () => "20 seconds" })

/** What a background start came to. */
export type LaunchOutcome = "running" | "failed"

const millis = (input: Duration.Input) => Duration.toMillis(Duration.fromInputUnsafe(input))

type AgentLoaded = Loaded<Agent.AgentState>

/** The agent a decision on a live agent leaves behind. */
const agentAfter = (state: Agent.AgentState) => (state._tag === "NoAgent" ? undefined : state.agent)

/** The stream as an outcome left it, to decide the next command on without reading it again. */
const loadedAfter = (outcome: { readonly state: Agent.AgentState; readonly version: number | undefined }): AgentLoaded | undefined =>
  outcome.version === undefined ? undefined : { state: outcome.state, version: outcome.version }

/** The first line of what went wrong, for an agent's history. */
const reasonOf = (error: unknown) =>
  (error as { logTail?: string }).logTail ?? String((error as { message?: string }).message ?? error)

export class Gateway extends Context.Service<Gateway>()("cairn/Gateway", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const secrets = yield* Secrets
    const vault = yield* SecretVault
    const skills = yield* Skills
    const agents = AgentsTable.queries(yield* SqlClient.SqlClient)
    const engine = yield* AgentEngine
    const gatewayTokens = yield* GatewayTokens.GatewayTokens
    // One driving fiber per agent; they live as long as the service, and a new one replaces the old one.
    const fibers = yield* FiberMap.make<string>()
    const node = yield* AgentsNode
    const leases = yield* NodeLeases
    /** Agents whose gateway this node's engine holds, so a delete or a move decided on another node reaches it. */
    const hosted = new Set<string>()
    const readyWaitMs = millis(yield* ReadyWait)
    /** Recent crashes per agent, so a crash loop backs off further each time round. */
    const crashes = new Map<string, { readonly count: number; readonly at: number }>()
    /** When something was last addressed to each agent here, and how many connections to it are open now. */
    const lastActive = new Map<string, number>()
    const open = new Map<string, number>()
    /** Wakes under way, by agent: a second request joins the first one's. */
    const waking = new Map<string, Deferred.Deferred<LaunchOutcome>>()
    /** Agents being put to sleep now: a request for one waits for that, then wakes it. */
    const fallingAsleep = new Map<string, Deferred.Deferred<void>>()

    const load = (agentId: string) => commands.load(Agent.decider, Agent.stream(agentId))

    const record = (actor: string, agentId: string, command: Agent.AgentCommand, loaded?: AgentLoaded) =>
      commands.execute(Agent.decider, Agent.stream(agentId), command, { actor }, loaded)

    /** Prepares the agent's gateway on this node's engine, and takes its lease (NodeLeases.ts). */
    const provision = (agentId: string, version: string, generation: number) =>
      Effect.andThen(
        Effect.andThen(Effect.sync(() => void hosted.add(agentId)), leases.claim(agentId)),
        engine.provision(agentId, { version, gatewayToken: gatewayTokens.tokenFor(agentId, generation) })
      )

    /**
     * Gives the engine the agent's secrets and its channels (tokens in the same environment, settings into its
     * config) for its gateway's next start; says which secret value versions those are. A secret that does not
     * decrypt fails here, so a gateway never starts with a wrong or missing value.
     */
    const deliverEnvironment = (agent: Agent.Agent) =>
      Effect.gen(function*() {
        const { environment, delivered } = yield* secrets.deliveryFor(agent)
        const channels = yield* ChannelDelivery.deliveryFor(commands, vault, agent.agentId, agent.workspaceId)
        yield* engine.setEnvironment(agent.agentId, { ...environment, ...channels.environment })
        yield* engine.setChannels(agent.agentId, channels.specs).pipe(
          Effect.catchTag("ChannelsUnavailable", (error) => Effect.logWarning(`Agent ${agent.agentId}: channels not applied`, error.detail))
        )
        return delivered
      })

    /**
     * Puts back attached skills the workspace lacks (an install cut short, a home moved between nodes). A skill
     * that cannot be installed is logged and the gateway starts without it rather than not at all.
     */
    const restoreSkills = (agent: Agent.Agent) =>
      skills.ensureInstalled(agent).pipe(
        Effect.catch((error) => Effect.logWarning(`Agent ${agent.agentId}: attached skills could not all be installed`, error))
      )

    /**
     * The agent's model setting in its runtime config (AgentModel.ts), before its gateway starts. A config that cannot
     * be written is logged and the gateway starts with the model it has rather than not at all.
     */
    const applyModel = (agent: Agent.Agent) =>
      agent.model === null ? Effect.void : AgentModel.apply(engine, agent.agentId, agent.model).pipe(
        Effect.catch((error) => Effect.logWarning(`Agent ${agent.agentId}: model ${agent.model} not applied to its runtime config`, error))
      )

    /** The environment, skills and model for a start of the agent as `loaded` has it. */
    const prepareStart = (agentId: string, loaded: AgentLoaded) =>
      Effect.gen(function*() {
        if (loaded.state._tag !== "Live") return yield* new Agent.AgentNotFound({ agentId })
        const delivered = yield* deliverEnvironment(loaded.state.agent)
        yield* restoreSkills(loaded.state.agent)
        yield* applyModel(loaded.state.agent)
        return delivered
      })

    /** Records that the gateway runs here now, with these secrets; gives the agent as it then is. */
    const started = (agentId: string, engineVersion: string, delivered: ReadonlyArray<Agent.DeliveredSecret>, loaded?: AgentLoaded) =>
      Effect.flatMap(now, (at) => record("engine", agentId, new Agent.RecordAgentStarted({ agentId, engineVersion, node, secrets: delivered, at }), loaded)).pipe(
        Effect.map(({ state }) => agentAfter(state)!)
      )

    const startFailed = (agentId: string, logTail: string, actor = "engine", loaded?: AgentLoaded) =>
      Effect.flatMap(now, (at) => record(actor, agentId, new Agent.RecordStartFailure({ agentId, logTail, at }), loaded))

    /**
     * The one start recipe: provisions, delivers the environment, restores skills, starts the gateway, and records
     * the outcome as the agent's next event. `loaded` is the stream as the caller just left it, if it has it.
     */
    const startGateway = (agentId: string, version: string, generation: number, loaded?: AgentLoaded) =>
      Effect.gen(function*() {
        yield* provision(agentId, version, generation)
        const current = loaded ?? (yield* load(agentId))
        const delivered = yield* prepareStart(agentId, current)
        yield* engine.start(agentId)
        yield* started(agentId, version, delivered, current)
        return "running" as const
      }).pipe(
        Effect.catch((error) =>
          Effect.gen(function*() {
            const logTail = reasonOf(error)
            yield* Effect.logWarning(`Agent ${agentId} failed to start`, logTail)
            yield* startFailed(agentId, logTail).pipe(Effect.ignore)
            return "failed" as const
          })
        )
      )

    /**
     * Starts a new agent's gateway in the background; the returned deferred completes with the outcome, for a caller
     * that wants to wait. `files` (a template's) are written into its workspace before anything starts.
     */
    /**
     * The agent's first start. Its workspace may be given first: `files` written into it, or `prepare` run on the
     * provisioned agent (a fork's snapshot restored into it), before the gateway starts.
     */
    const launch = <E = never>(
      agentId: string,
      version: string,
      generation: number,
      options: { readonly files?: ReadonlyArray<WorkspaceFile>; readonly prepare?: Effect.Effect<void, E> } = {}
    ) =>
      Effect.gen(function*() {
        if (options.files !== undefined || options.prepare !== undefined) yield* provision(agentId, version, generation)
        if (options.files !== undefined) yield* engine.writeWorkspaceFiles(agentId, options.files)
        if (options.prepare !== undefined) yield* options.prepare
        const outcome = yield* Deferred.make<LaunchOutcome>()
        yield* FiberMap.run(fibers, agentId, Effect.flatMap(startGateway(agentId, version, generation), (o) => Deferred.succeed(outcome, o)))
        return outcome
      })

    /**
     * A gateway for the warm pool (AgentPool.ts), under the id of an agent not created yet: provisioned with that
     * agent's first token and as its first start would have it (no secrets, no channels: deliverEnvironment for an
     * agent with nothing), and started. It is no one's, not hosted nor leased, until its create launches it: that
     * start then finds it running.
     */
    const startAhead = (agentId: string, version: string) =>
      engine.provision(agentId, { version, gatewayToken: gatewayTokens.tokenFor(agentId, 0) }).pipe(
        Effect.andThen(engine.setEnvironment(agentId, {})),
        Effect.andThen(engine.setChannels(agentId, [])),
        Effect.andThen(engine.start(agentId))
      )

    /** Whether a gateway started ahead still runs. */
    const runningAhead = (agentId: string) =>
      engine.status(agentId).pipe(Effect.map((status) => status.state === "running"), Effect.orElseSucceed(() => false))

    /** Whether one of this node's agents is on its way up: the pool then waits, so that agents' starts come first. */
    const agentsStarting = Effect.gen(function*() {
      for (const agentId of hosted) if ((yield* engine.provisioning(agentId)) !== undefined) return true
      return false
    })

    /** Stops a gateway started ahead, or one an earlier run left, and removes everything of it. */
    const discardAhead = (agentId: string) => engine.destroy(agentId)

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
            const relaunched = yield* record("supervisor", agentId, new Agent.RelaunchAgent({ agentId, at: yield* now }))
            const agent = agentAfter(relaunched.state)!
            yield* Metric.update(GatewayMetrics.restarts, 1)
            if ((yield* startGateway(agentId, agent.engineVersion, agent.tokenGeneration, loadedAfter(relaunched))) === "running") return
          }
        }).pipe(
          Effect.catchTag("AgentNotFound", () => Effect.void),
          Effect.catchCause((cause) => Effect.logError(`Recovery of agent ${agentId} stopped`, cause))
        )
        yield* FiberMap.run(fibers, agentId, attempts)
      })

    /** A user's command is about to drive the agent's gateway: whatever was driving it in the background stops. */
    const takeOver = (agentId: string) => FiberMap.remove(fibers, agentId)

    /** Stop driving and watching the agent here. */
    const forget = (agentId: string) =>
      Effect.andThen(FiberMap.remove(fibers, agentId), Effect.sync(() => {
        crashes.delete(agentId)
        hosted.delete(agentId)
        lastActive.delete(agentId)
      }))

    /** The agent was deleted: no gateway of it is driven here any longer, its lease goes, and its home is removed. */
    const remove = (agentId: string) =>
      forget(agentId).pipe(Effect.andThen(leases.release(agentId)), Effect.andThen(engine.destroy(agentId)))

    /** Restarts the gateway, once: the decision, the environment, the engine's restart, the outcome. */
    const restartNow = Effect.fn("Gateway.restart")(function*(principal: Principal, agentId: string, requested: string | undefined) {
      const offeredVersions = yield* engine.listVersions
      const command = new Agent.RestartAgent({
        agentId,
        workspaceId: principal.workspaceId,
        ...(requested === undefined ? {} : { version: requested }),
        offeredVersions,
        at: yield* now
      })
      const requestedOutcome = yield* record(principal.userId, agentId, command)
      const loaded = loadedAfter(requestedOutcome)!
      const version = (requestedOutcome.events[0] as Agent.AgentRestartRequested).engineVersion
      const agent = agentAfter(requestedOutcome.state)!
      /** The engine refused before stopping anything: the gateway runs on as it was. */
      const refused = engine.status(agentId).pipe(
        Effect.flatMap((status) => status.state === "running" ? started(agentId, status.version, [], loaded) : Effect.void),
        Effect.ignore,
        Effect.andThen(Effect.fail(new Agent.InvalidVersion({ version })))
      )
      const failed = (reason?: string) => new Agent.RestartFailed({ agentId, ...(reason === undefined ? {} : { reason }) })
      // The agent's secrets as they are now go to the engine first (a restart is how a change reaches the gateway),
      // and attached skills the workspace lost are put back.
      const prepare = prepareStart(agentId, loaded).pipe(
        Effect.catchTag("SecretUnreadable", (e) => Effect.fail(failed(e.message)))
      )
      yield* takeOver(agentId)
      const delivered = yield* prepare.pipe(
        Effect.flatMap((delivered) => Effect.as(engine.restart(agentId, requested === undefined ? {} : { version: requested }), delivered)),
        Effect.catchTags({
          VersionNotOffered: () => refused,
          DowngradeRefused: () => refused,
          // The engine no longer holds the agent (its node restarted without it): provision it and start afresh.
          AgentNotProvisioned: () =>
            provision(agentId, version, agent.tokenGeneration).pipe(
              Effect.mapError(() => failed()),
              Effect.andThen(prepare),
              Effect.tap(() => engine.start(agentId).pipe(Effect.mapError(() => failed())))
            ),
          GatewayRestartFailed: () => Effect.fail(failed())
        }),
        Effect.tapError((error) =>
          error._tag === "RestartFailed"
            ? startFailed(agentId, error.reason ?? "restart failed", "engine", loaded).pipe(
              Effect.ignore,
              // A crashed agent stays in the owner's hands: this was one more attempt, not the last.
              Effect.andThen(agent.recovering ? recover(agentId) : Effect.void)
            )
            : Effect.void
        )
      )
      return yield* started(agentId, version, delivered, loaded)
    })

    /**
     * One restart per agent at a time. A restart that arrives while one runs for the same version (a double click, a
     * client's retry) joins it and gets its outcome, recording nothing of its own; one for another version waits for
     * it and then runs. The restart runs detached from the request, so a client that hangs up does not cut it off
     * between stopping and starting the gateway.
     */
    type Restarted = Effect.Success<ReturnType<typeof restartNow>>
    type RestartError = Effect.Error<ReturnType<typeof restartNow>>
    const restarting = new Map<string, { readonly requested: string | undefined; readonly done: Deferred.Deferred<Restarted, RestartError> }>()
    const restart = (principal: Principal, agentId: string, requested: string | undefined): Effect.Effect<Restarted, RestartError> =>
      Effect.suspend(() => {
        const running = restarting.get(agentId)
        if (running !== undefined) {
          return running.requested === requested
            ? Deferred.await(running.done)
            : Deferred.await(running.done).pipe(Effect.ignore, Effect.andThen(restart(principal, agentId, requested)))
        }
        // Claimed in the same synchronous step as the check above: no other request can slip in between.
        const done = Deferred.makeUnsafe<Restarted, RestartError>()
        restarting.set(agentId, { requested, done })
        return restartNow(principal, agentId, requested).pipe(
          Effect.exit,
          Effect.tap((exit) => Effect.sync(() => restarting.delete(agentId)).pipe(Effect.andThen(Deferred.done(done, exit)))),
          Effect.forkDetach,
          Effect.andThen(Deferred.await(done))
        )
      })

    /** Starts the gateway again after it was stopped for some work; a failure is the agent's next event. */
    const startAgain = (agentId: string, engineVersion: string, why: string) =>
      Effect.gen(function*() {
        const loaded = yield* load(agentId)
        const delivered = yield* prepareStart(agentId, loaded)
        yield* engine.start(agentId)
        yield* started(agentId, engineVersion, delivered, loaded)
      }).pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning(`Agent ${agentId}: the gateway did not start again after ${why}`, cause).pipe(
            Effect.andThen(startFailed(agentId, `the gateway did not start after ${why}: ${Cause.pretty(cause).split("\n")[0]}`)),
            Effect.ignore
          )
        )
      )

    /**
     * Runs `work` on the agent's home with its gateway stopped (a workspace restore), then starts the gateway again
     * if it was running or starting: the work's result, whatever it was, once the gateway is back.
     */
    const whileStopped = <A, E>(agentId: string, engineVersion: string, why: string, work: Effect.Effect<A, E>) =>
      Effect.gen(function*() {
        const wasRunning = yield* engine.status(agentId).pipe(
          Effect.map((status) => status.state === "running" || status.state === "starting"),
          Effect.orElseSucceed(() => false)
        )
        yield* takeOver(agentId)
        const outcome = yield* engine.stop(agentId).pipe(Effect.andThen(work), Effect.result)
        if (wasRunning) yield* startAgain(agentId, engineVersion, why)
        return outcome as Result.Result<A, E | Effect.Error<ReturnType<typeof engine.stop>>>
      })

    /**
     * Hands the agent's channels to the engine: the config for the next start always, and a running (or starting)
     * gateway restarted with them. An agent the engine does not hold here gets them at its next start; a sleeping
     * one is woken with them.
     */
    const applyChannels = (principal: Principal, agentId: string) =>
      Effect.gen(function*() {
        // A sleeping agent is woken, and its gateway starts with its channels: a polling channel only hears its
        // messages while the gateway runs (and keeps it awake from then on).
        if (yield* sleeping(agentId)) return yield* Effect.asVoid(within(yield* wake(agentId, "request"), readyWaitMs))
        const { specs } = yield* ChannelDelivery.deliveryFor(commands, vault, agentId, principal.workspaceId)
        const written = yield* engine.setChannels(agentId, specs).pipe(
          Effect.as(true),
          Effect.catchTag("AgentNotProvisioned", () => Effect.succeed(false))
        )
        if (!written) return
        const status = yield* engine.status(agentId).pipe(Effect.option)
        if (Option.isSome(status) && (status.value.state === "running" || status.value.state === "starting")) {
          yield* restart(principal, agentId, undefined)
        } else {
          const { state } = yield* load(agentId)
          if (state._tag === "Live") yield* deliverEnvironment(state.agent)
        }
      })

    /** The gateway accepts only `token` from now on (a gateway this node does not hold gets it at provisioning). */
    const rotateToken = (agentId: string, token: Parameters<typeof engine.rotateGatewayToken>[1]) =>
      engine.rotateGatewayToken(agentId, token).pipe(Effect.catchTag("AgentNotProvisioned", () => Effect.void))

    /**
     * Brings an agent this node has just taken the lease of (its node's lease expired) back here: its home
     * provisioned, its workspace restored by `restoreWorkspace` (the CID it restored, or none when there is nothing to
     * restore from), and its gateway started as after a crash. An agent with nothing to restore is recorded
     * `not_running` with the reason rather than started with an empty workspace; one that was not running is only
     * adopted (its requests come here from now on).
     */
    const adopt = <E>(agentId: string, from: string, restoreWorkspace: Effect.Effect<Option.Option<string>, E>) =>
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        const row = yield* agents.byId(agentId)
        if (Option.isNone(row)) return yield* leases.release(agentId)
        const agent = row.value
        if (agent.status === "not_running" && !agent.recovering) {
          return yield* Effect.logInfo(`Agent ${agentId} adopted from node ${from}, whose lease expired (it was not running)`)
        }
        yield* takeOver(agentId)
        yield* provision(agentId, agent.engineVersion, agent.tokenGeneration)
        const restored = yield* Effect.result(restoreWorkspace)
        if (restored._tag === "Failure" || Option.isNone(restored.success)) {
          const why = restored._tag === "Failure"
            ? `its latest snapshot could not be restored here (${String((restored.failure as { message?: string }).message ?? restored.failure)})`
            : "it has no snapshot to restore its workspace from"
          const reason = `Node ${from} stopped renewing its lease, and node ${leases.node} did not start the agent: ${why}. ` +
            `Restart it to start it afresh here, or on ${from} once it is back`
          yield* Effect.logWarning(`Agent ${agentId}: ${reason}`)
          return yield* startFailed(agentId, reason, "supervisor")
        }
        if (agent.status === "sleeping") {
          // It sleeps on here: its home is this node's now, and the next request for it wakes it here.
          return yield* Effect.logInfo(
            `Agent ${agentId} adopted asleep from node ${from}, whose lease expired: workspace restored from snapshot ${restored.success.value}`
          )
        }
        const relaunched = yield* record("supervisor", agentId, new Agent.RelaunchAgent({ agentId, at: yield* now }))
        if (relaunched.state._tag !== "Live") return
        const { engineVersion, tokenGeneration } = relaunched.state.agent
        const outcome = yield* Deferred.await(yield* launch(agentId, engineVersion, tokenGeneration))
        const tookMs = (yield* Clock.currentTimeMillis) - startedAt
        yield* Effect.logInfo(
          `Agent ${agentId} adopted from node ${from}, whose lease expired: workspace restored from snapshot ${restored.success.value}, ` +
            `gateway ${outcome} after ${tookMs} ms`
        )
      }).pipe(Effect.catchCause((cause) => Effect.logError(`Adopting agent ${agentId} from node ${from} failed`, Cause.pretty(cause))))

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
        const relaunched = yield* record("supervisor", agent.agentId, new Agent.RelaunchAgent({ agentId: agent.agentId, at: yield* now })).pipe(Effect.option)
        const loaded = Option.flatMap(relaunched, (r) => Option.fromNullishOr(loadedAfter(r)))
        yield* FiberMap.run(fibers, agent.agentId, startGateway(agent.agentId, agent.engineVersion, agent.tokenGeneration, Option.getOrUndefined(loaded)))
      }
      if (toResume.length > 0) yield* Effect.logInfo(`Resumed supervision of ${toResume.length} agent(s)`)
    })

    /**
     * One pass of the watch: a running gateway the engine reports crashed (or gone) is recorded `not_running`, and
     * recovered in the background.
     */
    const checkRunning = Effect.gen(function*() {
      for (const agent of yield* agents.runningOn(node)) {
        const { state, reason } = yield* engine.status(agent.agentId).pipe(
          Effect.map((status) => ({ state: status.state, reason: status.reason })),
          Effect.catchTag("AgentNotProvisioned", () => Effect.succeed({ state: "crashed" as const, reason: undefined }))
        )
        // Only a crash counts: a gateway is briefly stopped while a restart or a token rotation replaces it.
        if (state !== "crashed") continue
        // Decided against the agent's history: a restart or a delete recorded since the sweep read it wins. An OOM
        // kill at the agent's memory cap is recorded as such (AgentStopped reason `oom`).
        const crash = new Agent.RecordCrash({ agentId: agent.agentId, ...(reason === undefined ? {} : { reason }), at: yield* now })
        const { events } = yield* record("supervisor", agent.agentId, crash)
        if (events.length === 0) continue
        yield* Effect.logWarning(`Agent ${agent.agentId}'s gateway ${reason === "oom" ? "was killed at its memory cap (OOM)" : "crashed"}`)
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
          yield* remove(agentId)
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

    /** Whether the gateway is on its way up: a restart under way, or the engine starting it. */
    const starting = (agentId: string) =>
      restarting.has(agentId)
        ? Effect.succeed(true)
        : engine.status(agentId).pipe(Effect.map((status) => status.state === "starting"), Effect.orElseSucceed(() => false))

    /** Something was addressed to the agent now: its idle time starts again. */
    const touch = (agentId: string) => Effect.map(Clock.currentTimeMillis, (at) => void lastActive.set(agentId, at))

    /**
     * A connection to the agent (a proxied request or WebSocket, a chat stream) opened: the agent does not sleep
     * while one is open. The function given closes it, and counts as activity.
     */
    const opened = (agentId: string) =>
      Clock.clockWith((clock) =>
        Effect.sync(() => {
          lastActive.set(agentId, clock.currentTimeMillisUnsafe())
          open.set(agentId, (open.get(agentId) ?? 0) + 1)
          let closed = false
          // Called by the proxy outside Effect: the time from the same Clock as every other activity.
          return () => {
            if (closed) return
            closed = true
            const left = (open.get(agentId) ?? 1) - 1
            if (left > 0) open.set(agentId, left)
            else open.delete(agentId)
            lastActive.set(agentId, clock.currentTimeMillisUnsafe())
          }
        }))

    /**
     * Since when nothing was addressed to the agent here (in Clock milliseconds); undefined while a connection to
     * it is open. An agent this node has not seen activity for yet starts its idle time now.
     */
    const quietSince = (agentId: string) =>
      Effect.map(Clock.currentTimeMillis, (nowMs) => {
        if ((open.get(agentId) ?? 0) > 0) return undefined
        const known = lastActive.get(agentId)
        if (known !== undefined) return known
        lastActive.set(agentId, nowMs)
        return nowMs
      })

    /**
     * Puts an idle agent to sleep: its gateway stopped, its workspace snapshotted as it was left (`snapshot`, which
     * gives the CID, or none when snapshots are off or failed: the home stays here all the same), and that recorded
     * (`AgentFellAsleep`, with when to wake it for a task). A request meanwhile waits for this, then wakes it. Nothing
     * happens (false) when something was addressed to the agent since `quietSince` said `since`, or it is being woken
     * or restarted; and nothing is recorded when it is no longer running by then (a restart drives it).
     */
    const sleep = (
      agentId: string,
      since: number,
      asleep: { readonly idleMs: number; readonly wakeAt?: string; readonly snapshot: Effect.Effect<Option.Option<string>> }
    ) =>
      Effect.suspend(() => {
        if (waking.has(agentId) || restarting.has(agentId) || fallingAsleep.has(agentId)) return Effect.succeed(false)
        if ((open.get(agentId) ?? 0) > 0 || lastActive.get(agentId) !== since) return Effect.succeed(false)
        const done = Deferred.makeUnsafe<void>()
        fallingAsleep.set(agentId, done)
        return Effect.gen(function*() {
          yield* takeOver(agentId)
          yield* engine.stop(agentId).pipe(Effect.catchTag("AgentNotProvisioned", () => Effect.void))
          const snapshotCid = Option.getOrUndefined(yield* asleep.snapshot)
          const { events } = yield* record("supervisor", agentId, new Agent.PutToSleep({
            agentId,
            idleMs: asleep.idleMs,
            ...(snapshotCid === undefined ? {} : { snapshotCid }),
            ...(asleep.wakeAt === undefined ? {} : { wakeAt: asleep.wakeAt }),
            at: yield* now
          }))
          if (events.length === 0) return false
          lastActive.delete(agentId)
          yield* Metric.update(GatewayMetrics.sleeps, 1)
          yield* Effect.logInfo(`Agent ${agentId} fell asleep after ${Math.round(asleep.idleMs / 1000)} s idle` +
            (snapshotCid === undefined ? "" : `, workspace in snapshot ${snapshotCid}`) +
            (asleep.wakeAt === undefined ? "" : `; it wakes at ${asleep.wakeAt} for a scheduled task`))
          return true
        }).pipe(Effect.ensuring(Effect.sync(() => fallingAsleep.delete(agentId)).pipe(Effect.andThen(Deferred.succeed(done, undefined)))))
      })

    /**
     * Wakes a sleeping agent: recorded (`AgentWoken`), then its gateway started as after a restart of Cairn, in the
     * background. The deferred completes with how that ended; a wake under way is joined, and an agent not asleep
     * (woken meanwhile) is `running` at once.
     */
    const wake = (agentId: string, reason: Agent.WakeReason): Effect.Effect<Deferred.Deferred<LaunchOutcome>> =>
      Effect.suspend(() => {
        const underWay = waking.get(agentId)
        if (underWay !== undefined) return Effect.succeed(underWay)
        const done = Deferred.makeUnsafe<LaunchOutcome>()
        waking.set(agentId, done)
        const attempt = Effect.gen(function*() {
          const startedAt = yield* Clock.currentTimeMillis
          const woken = yield* record("supervisor", agentId, new Agent.WakeAgent({ agentId, reason, at: yield* now }))
          if (woken.events.length === 0) return "running" as const
          const agent = agentAfter(woken.state)!
          const outcome = yield* startGateway(agentId, agent.engineVersion, agent.tokenGeneration, loadedAfter(woken))
          const endedAt = yield* Clock.currentTimeMillis
          lastActive.set(agentId, endedAt)
          yield* Metric.update(GatewayMetrics.wakeDuration(reason, outcome), (endedAt - startedAt) / 1000)
          yield* Effect.logInfo(`Agent ${agentId} woke (${reason}): gateway ${outcome} after ${endedAt - startedAt} ms`)
          return outcome
        }).pipe(
          Effect.catchCause((cause) => Effect.as(Effect.logError(`Waking agent ${agentId} failed`, cause), "failed" as const)),
          Effect.flatMap((outcome) => Deferred.succeed(done, outcome)),
          // A user's command that takes the agent over (a restart, a delete) ends the wake: its waiters go on.
          Effect.ensuring(Effect.sync(() => waking.delete(agentId)).pipe(Effect.andThen(Deferred.succeed(done, "failed"))))
        )
        return Effect.as(FiberMap.run(fibers, agentId, attempt), done)
      })

    /** Wakes this node's sleeping agents whose scheduled task falls due soon (their `wakeAt` passed). */
    const wakeForTasks = Effect.gen(function*() {
      const due = yield* agents.dueToWake(node, new Date(yield* Clock.currentTimeMillis))
      for (const agent of due) yield* wake(agent.agentId, "task")
    })

    /**
     * Whether the agent sleeps. Its record is read only when its gateway is not up here, so a request for a running
     * agent (every proxied request and `/v0` call through `ready`) costs no query.
     */
    const sleeping = (agentId: string) =>
      Effect.gen(function*() {
        const state = yield* engine.status(agentId).pipe(Effect.map((status) => status.state), Effect.orElseSucceed(() => undefined))
        if (state === "running" || state === "starting") return false
        const row = yield* agents.byId(agentId)
        return Option.isSome(row) && row.value.status === "sleeping"
      })

    /** Waits up to `ms` for `deferred`; none when the time ran out. */
    const within = <A>(deferred: Deferred.Deferred<A>, ms: number) => Deferred.await(deferred).pipe(Effect.timeoutOption(Duration.millis(ms)))

    /**
     * For a request that needs the agent's gateway: counts as activity; wakes a sleeping agent (waiting for one being
     * put to sleep first); waits (at most ReadyWait) while it is starting, and refuses with GatewayStarting (503,
     * Retry-After) if it is still on its way up then. A gateway that is running, stopped or crashed is left to the
     * request, which fails as it would.
     */
    const ready = (agentId: string) =>
      Effect.gen(function*() {
        yield* touch(agentId)
        const beingPut = fallingAsleep.get(agentId)
        // Still being put to sleep (a long snapshot) after the whole wait: its gateway is stopped, so try again later.
        if (beingPut !== undefined && Option.isNone(yield* within(beingPut, readyWaitMs))) return yield* new Agent.GatewayStarting({ agentId })
        if (yield* sleeping(agentId)) {
          const woke = yield* within(yield* wake(agentId, "request"), readyWaitMs)
          if (Option.isNone(woke)) return yield* new Agent.GatewayStarting({ agentId })
          return
        }
        const underWay = waking.get(agentId)
        if (underWay !== undefined && Option.isNone(yield* within(underWay, readyWaitMs))) return yield* new Agent.GatewayStarting({ agentId })
        if (!(yield* starting(agentId))) return
        const deadline = (yield* Clock.currentTimeMillis) + readyWaitMs
        while (yield* starting(agentId)) {
          if ((yield* Clock.currentTimeMillis) >= deadline) return yield* new Agent.GatewayStarting({ agentId })
          yield* Effect.sleep("100 millis")
        }
      })

    /** Whether the agent's gateway runs on this node's engine now (false for one stopped, crashed, starting or not held here). */
    const isRunning = (agentId: string) =>
      engine.status(agentId).pipe(Effect.map((status) => status.state === "running"), Effect.orElseSucceed(() => false))

    return {
      node,
      launch, restart, whileStopped, applyChannels, rotateToken, adopt, remove, ready, isRunning,
      recover, resume, checkRunning, releaseForeign, watch,
      touch, opened, quietSince, sleep, wake, wakeForTasks,
      startAhead, runningAhead, discardAhead, agentsStarting
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
