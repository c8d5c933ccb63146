/**
 * Hosted agents: create (a quota slot on the workspace's stream and the agent's first event in one append),
 * list, get, delete, restart, devices, script relaunch, gateway and platform tokens, and the agent's history.
 * The gateway itself is driven by the AgentEngine port; its outcomes come back as events. A create waits a
 * moment for the gateway, so a gateway that fails at once is reported (`Gateway failed to start`) with the agent.
 */
import { AgentEngine, EngineVersion } from "@cairn/agent-engine"
import { GatewayTokens, TokenSigner } from "@cairn/auth"
import { Agent, AgentErrors, Workspace } from "@cairn/domain"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { Clock, Context, Deferred, Duration, Effect, FiberMap, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "./Access.ts"
import { encoder, load, now } from "./EventCodec.ts"

const encodeAgent = encoder(Agent.AgentEvent)
const encodeWorkspace = encoder(Workspace.WorkspaceEvent)

export interface AgentView extends Agent.Agent {}

export interface AgentHistoryEntry {
  readonly type: string
  readonly at: string
  readonly actor: string | null
  readonly version: number
  readonly data: unknown
}

/** How long a create waits for the gateway before answering `starting`. */
export const CreateWait = Context.Reference<Duration.Input>("cairn/Agents/CreateWait", { defaultValue: () => "1 second" })

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

// Agent ids are short lowercase slugs, as Pinata's are (x0i33jye).
const newAgentId = () => {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
  const bytes = crypto.getRandomValues(new Uint8Array(8))
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("")
}

interface AgentRow {
  readonly id: string
  readonly workspace_id: string
  readonly user_id: string
  readonly name: string
  readonly engine_version: string
  readonly status: Agent.AgentStatus
  readonly token_generation: number
  readonly recovering: boolean
  readonly node: string | null
  readonly created_at: Date
}

const toView = (row: AgentRow): AgentView => ({
  agentId: row.id,
  workspaceId: row.workspace_id,
  userId: row.user_id,
  name: row.name,
  engineVersion: row.engine_version,
  status: row.status,
  tokenGeneration: row.token_generation,
  recovering: row.recovering,
  node: row.node,
  createdAt: row.created_at.toISOString()
})

export class Agents extends Context.Service<Agents>()("cairn/Agents", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const engine = yield* AgentEngine
    const gatewayTokens = yield* GatewayTokens.GatewayTokens
    const signer = yield* TokenSigner
    // One supervising fiber per agent; they live as long as the service, and a new launch replaces the old one.
    const launches = yield* FiberMap.make<string>()
    const node = yield* AgentsNode
    /** The agents this node supervises; agents recorded before nodes were named count as everyone's. */
    const mine = sql`(node = ${node} OR node IS NULL)`

    const appendAgent = (agentId: string, events: ReadonlyArray<Agent.AgentEvent>, actor: string, expected = ExpectedVersion.StreamExists) =>
      store.append([{ stream: Agent.stream(agentId), expected, events: events.map((e) => encodeAgent(e, { actor })) }])

    const loadAgent = (agentId: string) => load(store, Agent.stream(agentId), Agent.AgentEvent, Agent.initial, Agent.evolve)

    const row = (agentId: string) =>
      sql<AgentRow>`SELECT * FROM cairn_agents WHERE id = ${agentId}`.pipe(Effect.orDie, Effect.map(([r]) => Option.fromNullishOr(r).pipe(Option.map(toView))))

    /** The agent, if the caller's workspace has it. */
    const visible = (workspaceId: string, agentId: string) =>
      row(agentId).pipe(Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new Agent.AgentNotFound({ agentId })),
        onSome: (agent) => agent.workspaceId === workspaceId ? Effect.succeed(agent) : Effect.fail(new Agent.AgentNotFound({ agentId }))
      })))

    /** Provisions and starts the gateway, and records the outcome as the agent's next event. */
    /** Agents whose gateway this node's engine holds, so a delete or a move decided on another node reaches it. */
    const hosted = new Set<string>()
    const provision = (agentId: string, version: string, generation: number) =>
      Effect.andThen(
        Effect.sync(() => void hosted.add(agentId)),
        engine.provision(agentId, { version, gatewayToken: gatewayTokens.tokenFor(agentId, generation) })
      )

    const startGateway = (agentId: string, version: string, generation: number) =>
      Effect.gen(function*() {
        yield* provision(agentId, version, generation)
        yield* engine.start(agentId)
        yield* appendAgent(agentId, [new Agent.AgentStarted({ agentId, engineVersion: version, node, at: yield* now })], "engine")
        return "running" as const
      }).pipe(
        Effect.catch((error) =>
          Effect.gen(function*() {
            const logTail = (error as { logTail?: string }).logTail ?? String((error as { message?: string }).message ?? error)
            yield* Effect.logWarning(`Agent ${agentId} failed to start`, logTail)
            yield* appendAgent(agentId, [new Agent.AgentFailedToStart({ agentId, logTail, at: yield* now })], "engine").pipe(Effect.ignore)
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
        yield* FiberMap.run(launches, agentId, Effect.flatMap(startGateway(agentId, version, generation), (o) => Deferred.succeed(outcome, o)))
        return outcome
      })

    /** Recent crashes per agent, so a crash loop backs off further each time round. */
    const crashes = new Map<string, { readonly count: number; readonly at: number }>()

    /**
     * Brings a crashed agent back: waits (longer after each failed attempt and each recent crash), starts it, and
     * keeps trying until it runs. Runs in the background; a delete or a restart by the user takes its place.
     */
    const recover = (agentId: string) =>
      Effect.gen(function*() {
        const backoff = yield* CrashBackoff
        const millis = (input: Duration.Input) => Duration.toMillis(Duration.fromInputUnsafe(input))
        const policy = { initialMs: millis(backoff.initial), maxMs: millis(backoff.max) }
        const nowMs = yield* Clock.currentTimeMillis
        const previous = crashes.get(agentId)
        const recentCrashes = previous !== undefined && nowMs - previous.at < millis(backoff.stableAfter) ? previous.count + 1 : 0
        crashes.set(agentId, { count: recentCrashes, at: nowMs })
        const attempts = Effect.gen(function*() {
          for (let attempt = 0;; attempt++) {
            const delayMs = Agent.recoveryDelay(policy, recentCrashes, attempt)
            yield* appendAgent(agentId, [new Agent.AgentRecoveryScheduled({ agentId, attempt, delayMs, at: yield* now })], "supervisor")
            yield* Effect.sleep(Duration.millis(delayMs))
            const agent = yield* row(agentId)
            if (Option.isNone(agent)) return
            yield* appendAgent(agentId, [new Agent.AgentRestartRequested({ agentId, engineVersion: agent.value.engineVersion, at: yield* now })], "supervisor")
            if ((yield* startGateway(agentId, agent.value.engineVersion, agent.value.tokenGeneration)) === "running") return
          }
        }).pipe(
          // An agent deleted meanwhile has no stream to append to: recovery ends there.
          Effect.catchTag("WrongExpectedVersion", () => Effect.void),
          Effect.catchCause((cause) => Effect.logError(`Recovery of agent ${agentId} stopped`, cause))
        )
        yield* FiberMap.run(launches, agentId, attempts)
      })

    const create = Effect.fn("Agents.create")(function*(principal: Principal, input: { readonly name: unknown }) {
      const name = yield* Effect.fromResult(Agent.validateName(input.name))
      const versions = yield* engine.listVersions
      const engineVersion = versions[versions.length - 1]!
      const agentId = newAgentId()
      const workspaceStream = Workspace.stream(principal.workspaceId)
      // The quota is decided on the workspace's stream at its exact version: concurrent creates conflict and
      // decide again, so a workspace never gets more agents than its limit.
      for (let attempt = 0;; attempt++) {
        const { state, version } = yield* load(store, workspaceStream, Workspace.WorkspaceEvent, Workspace.initial, Workspace.evolve)
        const at = yield* now
        const slot = yield* Effect.fromResult(Workspace.takeAgentSlot(state, { workspaceId: principal.workspaceId, agentId, at }))
        const created = new Agent.AgentCreated({ agentId, workspaceId: principal.workspaceId, userId: principal.userId, name, engineVersion, node, at })
        const appended = yield* store.append([
          { stream: workspaceStream, expected: ExpectedVersion.Exact(version), events: slot.map((e) => encodeWorkspace(e, { actor: principal.userId })) },
          { stream: Agent.stream(agentId), expected: ExpectedVersion.NoStream, events: [encodeAgent(created, { actor: principal.userId })] }
        ]).pipe(Effect.as(true), Effect.catchTag("WrongExpectedVersion", () => Effect.succeed(false)))
        if (appended) break
        if (attempt > 100) return yield* Effect.die(new Error("agent quota: too much contention"))
      }
      const outcome = yield* launch(agentId, engineVersion, 0)
      const waited = yield* Deferred.await(outcome).pipe(Effect.timeoutOption(yield* CreateWait))
      const agent = yield* visible(principal.workspaceId, agentId)
      if (Option.isSome(waited) && waited.value === "failed") return { agent, failed: true as const }
      return { agent, failed: false as const }
    })

    const list = (principal: Principal) =>
      sql<AgentRow>`SELECT * FROM cairn_agents WHERE workspace_id = ${principal.workspaceId} ORDER BY created_at, id`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map(toView))
      )

    const remove = Effect.fn("Agents.remove")(function*(principal: Principal, agentId: string) {
      const { state, version } = yield* loadAgent(agentId)
      yield* Effect.fromResult(Agent.visible(state, agentId, principal.workspaceId))
      const at = yield* now
      yield* store.append([
        { stream: Agent.stream(agentId), expected: ExpectedVersion.Exact(version), events: [encodeAgent(new Agent.AgentDeleted({ agentId, at }), { actor: principal.userId })] },
        {
          stream: Workspace.stream(principal.workspaceId),
          expected: ExpectedVersion.Any,
          events: [encodeWorkspace(new Workspace.AgentSlotReleased({ workspaceId: principal.workspaceId, agentId, at }), { actor: principal.userId })]
        }
      ]).pipe(Effect.catchTag("WrongExpectedVersion", () => Effect.fail(new Agent.AgentNotFound({ agentId }))))
      yield* FiberMap.remove(launches, agentId)
      crashes.delete(agentId)
      hosted.delete(agentId)
      yield* engine.destroy(agentId)
    })

    const restart = Effect.fn("Agents.restart")(function*(principal: Principal, agentId: string, requested: string | undefined) {
      const agent = yield* visible(principal.workspaceId, agentId)
      const versions = yield* engine.listVersions
      // Engine state migrates one way only, so an older version is as invalid as one that does not exist.
      if (requested !== undefined && (!versions.includes(requested) || EngineVersion.isOlder(requested, agent.engineVersion))) {
        return yield* new AgentErrors.InvalidVersion({ version: requested })
      }
      const version = requested ?? agent.engineVersion
      /** The engine refused before stopping anything: the gateway runs on as it was. */
      const refused = engine.status(agentId).pipe(
        Effect.flatMap((status) =>
          status.state === "running"
            ? Effect.flatMap(now, (at) => appendAgent(agentId, [new Agent.AgentStarted({ agentId, engineVersion: status.version, node, at })], "engine"))
            : Effect.void
        ),
        Effect.ignore,
        Effect.andThen(Effect.fail(new AgentErrors.InvalidVersion({ version })))
      )
      yield* appendAgent(agentId, [new Agent.AgentRestartRequested({ agentId, engineVersion: version, at: yield* now })], principal.userId)
      yield* FiberMap.remove(launches, agentId)
      yield* engine.restart(agentId, requested === undefined ? {} : { version: requested }).pipe(
        Effect.catchTags({
          InvalidVersion: () => refused,
          DowngradeRefused: () => refused,
          AgentNotProvisioned: () =>
            provision(agentId, version, agent.tokenGeneration).pipe(
              Effect.andThen(engine.start(agentId)),
              Effect.mapError(() => new AgentErrors.RestartFailed({ agentId }))
            ),
          RestartFailed: () => Effect.fail(new AgentErrors.RestartFailed({ agentId }))
        }),
        Effect.tapError((error) =>
          error._tag === "RestartFailed"
            ? Effect.flatMap(now, (at) => appendAgent(agentId, [new Agent.AgentFailedToStart({ agentId, logTail: "restart failed", at })], "engine")).pipe(
              Effect.ignore,
              // A crashed agent stays in the supervisor's hands: this was one more attempt, not the last.
              Effect.andThen(agent.recovering ? recover(agentId) : Effect.void)
            )
            : Effect.void
        )
      )
      yield* appendAgent(agentId, [new Agent.AgentStarted({ agentId, engineVersion: version, node, at: yield* now })], "engine")
      return yield* visible(principal.workspaceId, agentId)
    })

    const devices = (principal: Principal, agentId: string) =>
      visible(principal.workspaceId, agentId).pipe(
        Effect.andThen(engine.listDevices(agentId).pipe(Effect.mapError(() => new AgentErrors.CliError({ agentId }))))
      )

    const retryScripts = (principal: Principal, agentId: string) =>
      visible(principal.workspaceId, agentId).pipe(
        Effect.andThen(engine.relaunchScripts(agentId).pipe(Effect.mapError(() => new AgentErrors.ScriptLaunchFailed({ agentId }))))
      )

    const gatewayToken = (principal: Principal, agentId: string) =>
      Effect.map(visible(principal.workspaceId, agentId), (agent) => gatewayTokens.tokenFor(agentId, agent.tokenGeneration))

    const rotateGatewayToken = Effect.fn("Agents.rotateGatewayToken")(function*(principal: Principal, agentId: string) {
      const { state, version } = yield* loadAgent(agentId)
      const agent = yield* Effect.fromResult(Agent.visible(state, agentId, principal.workspaceId))
      const generation = agent.tokenGeneration + 1
      yield* appendAgent(agentId, [new Agent.GatewayTokenRotated({ agentId, generation, at: yield* now })], principal.userId, ExpectedVersion.Exact(version))
      const token = gatewayTokens.tokenFor(agentId, generation)
      yield* engine.rotateGatewayToken(agentId, token).pipe(Effect.catchTag("AgentNotProvisioned", () => Effect.void))
      return token
    })

    /** Whether a presented gateway token is this agent's current one (a rotated token no longer is). */
    const gatewayPrincipal = (agentId: string, token: string) =>
      row(agentId).pipe(Effect.map(Option.flatMap((agent) =>
        gatewayTokens.matches(agentId, agent.tokenGeneration, token)
          ? Option.some<Principal>({ workspaceId: agent.workspaceId, userId: agent.userId, keyId: `gateway:${agentId}`, scopes: ["org:agents"] })
          : Option.none()
      )))

    const platformToken = (principal: Principal, agentId: string) =>
      visible(principal.workspaceId, agentId).pipe(
        Effect.andThen((agent) =>
          signer.issuePlatformToken({ agentId, workspaceId: agent.workspaceId, userId: agent.userId }).pipe(
            Effect.catchCause(() => Effect.fail(new AgentErrors.TokenGenerationFailed({ agentId })))
          )
        )
      )

    const history = (principal: Principal, agentId: string) =>
      visible(principal.workspaceId, agentId).pipe(
        Effect.andThen(store.readStream(Agent.stream(agentId))),
        Effect.map((events) => events.map((e): AgentHistoryEntry => ({
          type: e.type,
          at: e.recordedAt.toISOString(),
          actor: e.metadata.actor ?? null,
          version: e.version,
          data: e.data
        })))
      )

    /**
     * After a restart of Cairn, every live agent's gateway is started again (gateways do not outlive Cairn), and
     * agents that were recovering from a crash go on recovering. Agents whose last start failed stay as they are.
     */
    const resume = Effect.gen(function*() {
      const rows = yield* sql<AgentRow>`SELECT * FROM cairn_agents WHERE (status <> 'not_running' OR recovering) AND ${mine}`.pipe(Effect.orDie)
      for (const agent of rows.map(toView)) {
        if (agent.recovering) {
          yield* recover(agent.agentId)
          continue
        }
        yield* appendAgent(agent.agentId, [new Agent.AgentRestartRequested({ agentId: agent.agentId, engineVersion: agent.engineVersion, at: yield* now })], "supervisor").pipe(Effect.ignore)
        yield* launch(agent.agentId, agent.engineVersion, agent.tokenGeneration)
      }
      if (rows.length > 0) yield* Effect.logInfo(`Resumed supervision of ${rows.length} agent(s)`)
    })

    /**
     * One pass of the watch: a running gateway the engine reports crashed (or gone) is recorded `not_running`, and
     * recovered in the background.
     */
    const checkRunning = Effect.gen(function*() {
      const rows = yield* sql<AgentRow>`SELECT * FROM cairn_agents WHERE status = 'running' AND ${mine}`.pipe(Effect.orDie)
      for (const agent of rows) {
        const state = yield* engine.status(agent.id).pipe(
          Effect.map((status) => status.state),
          Effect.catchTag("AgentNotProvisioned", () => Effect.succeed("crashed" as const))
        )
        // Only a crash counts: a gateway is briefly stopped while a restart or a token rotation replaces it.
        if (state !== "crashed") continue
        // Recorded only if the agent is still running as last read: a restart or a delete since then wins.
        const { state: current, version } = yield* loadAgent(agent.id)
        if (current._tag !== "Live" || current.agent.status !== "running") continue
        yield* Effect.logWarning(`Agent ${agent.id}'s gateway crashed`)
        const recorded = yield* appendAgent(agent.id, [new Agent.AgentStopped({ agentId: agent.id, reason: "crashed", at: yield* now })], "supervisor", ExpectedVersion.Exact(version)).pipe(
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
          yield* FiberMap.remove(launches, agentId)
          yield* engine.destroy(agentId)
        } else if (owner !== null && owner !== node) {
          yield* Effect.logInfo(`Agent ${agentId} now runs on node ${owner}: stopping its gateway here`)
          yield* FiberMap.remove(launches, agentId)
          yield* engine.stop(agentId).pipe(Effect.ignore)
        } else {
          continue
        }
        hosted.delete(agentId)
        crashes.delete(agentId)
      }
    })

    /** Watches running gateways for as long as it runs. */
    const watch = Effect.gen(function*() {
      const interval = yield* WatchInterval
      yield* checkRunning.pipe(
        Effect.andThen(releaseForeign),
        Effect.catchCause((cause) => Effect.logError("Agent watch failed", cause)),
        Effect.andThen(Effect.sleep(interval)),
        Effect.forever
      )
    })

    return {
      create, list, get: visible, remove, restart, devices, retryScripts, gatewayToken, rotateGatewayToken,
      gatewayPrincipal, platformToken, history, resume, checkRunning, releaseForeign, watch
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
