/**
 * Hosted agents: create (a quota slot on the workspace's stream and the agent's first event in one append),
 * list, get, delete, restart, devices, script relaunch, gateway and platform tokens, and the agent's history.
 * The gateway itself is driven by the AgentEngine port, in the background by the AgentSupervisor; outcomes come
 * back as events. A create waits a moment for the gateway, so a gateway that fails at once is reported
 * (`Gateway failed to start`) with the agent.
 */
import { AgentEngine, EngineVersion } from "@cairn/agent-engine"
import { GatewayTokens, TokenSigner } from "@cairn/auth"
import { Agent, AgentErrors, Workspace } from "@cairn/domain"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { Context, Deferred, type Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "./Access.ts"
import * as AgentRecords from "./AgentRecords.ts"
import { AgentSupervisor } from "./AgentSupervisor.ts"
import { encoder, load, now } from "./EventCodec.ts"

const encodeAgent = encoder(Agent.AgentEvent)
const encodeWorkspace = encoder(Workspace.WorkspaceEvent)

export type AgentView = AgentRecords.AgentView

export interface AgentHistoryEntry {
  readonly type: string
  readonly at: string
  readonly actor: string | null
  readonly version: number
  readonly data: unknown
}

/** How long a create waits for the gateway before answering `starting`. */
export const CreateWait = Context.Reference<Duration.Input>("cairn/Agents/CreateWait", { defaultValue: () => "1 second" })

// Agent ids are short lowercase slugs, as Pinata's are (x0i33jye).
const newAgentId = () => {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
  const bytes = crypto.getRandomValues(new Uint8Array(8))
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("")
}

export class Agents extends Context.Service<Agents>()("cairn/Agents", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const engine = yield* AgentEngine
    const gatewayTokens = yield* GatewayTokens.GatewayTokens
    const signer = yield* TokenSigner
    const supervisor = yield* AgentSupervisor
    const records = AgentRecords.make(store, sql)
    const appendAgent = records.append
    const loadAgent = records.load

    /** The agent, if the caller's workspace has it. */
    const visible = (workspaceId: string, agentId: string) =>
      records.row(agentId).pipe(Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new Agent.AgentNotFound({ agentId })),
        onSome: (agent) => agent.workspaceId === workspaceId ? Effect.succeed(agent) : Effect.fail(new Agent.AgentNotFound({ agentId }))
      })))

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
        const created = new Agent.AgentCreated({ agentId, workspaceId: principal.workspaceId, userId: principal.userId, name, engineVersion, node: supervisor.node, at })
        const appended = yield* store.append([
          { stream: workspaceStream, expected: ExpectedVersion.Exact(version), events: slot.map((e) => encodeWorkspace(e, { actor: principal.userId })) },
          { stream: Agent.stream(agentId), expected: ExpectedVersion.NoStream, events: [encodeAgent(created, { actor: principal.userId })] }
        ]).pipe(Effect.as(true), Effect.catchTag("WrongExpectedVersion", () => Effect.succeed(false)))
        if (appended) break
        if (attempt > 100) return yield* Effect.die(new Error("agent quota: too much contention"))
      }
      const outcome = yield* supervisor.launch(agentId, engineVersion, 0)
      const waited = yield* Deferred.await(outcome).pipe(Effect.timeoutOption(yield* CreateWait))
      const agent = yield* visible(principal.workspaceId, agentId)
      if (Option.isSome(waited) && waited.value === "failed") return { agent, failed: true as const }
      return { agent, failed: false as const }
    })

    const list = (principal: Principal) =>
      sql<AgentRecords.AgentRow>`SELECT * FROM cairn_agents WHERE workspace_id = ${principal.workspaceId} ORDER BY created_at, id`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map(AgentRecords.toView))
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
      yield* supervisor.forget(agentId)
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
            ? supervisor.started(agentId, status.version)
            : Effect.void
        ),
        Effect.ignore,
        Effect.andThen(Effect.fail(new AgentErrors.InvalidVersion({ version })))
      )
      yield* appendAgent(agentId, [new Agent.AgentRestartRequested({ agentId, engineVersion: version, at: yield* now })], principal.userId)
      yield* supervisor.takeOver(agentId)
      yield* engine.restart(agentId, requested === undefined ? {} : { version: requested }).pipe(
        Effect.catchTags({
          InvalidVersion: () => refused,
          DowngradeRefused: () => refused,
          AgentNotProvisioned: () =>
            supervisor.provision(agentId, version, agent.tokenGeneration).pipe(
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
              Effect.andThen(agent.recovering ? supervisor.recover(agentId) : Effect.void)
            )
            : Effect.void
        )
      )
      yield* supervisor.started(agentId, version)
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
      records.row(agentId).pipe(Effect.map(Option.flatMap((agent) =>
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

    return {
      create, list, get: visible, remove, restart, devices, retryScripts, gatewayToken, rotateGatewayToken,
      gatewayPrincipal, platformToken, history
    }
  })
}) {
  /** The service with its supervisor, which it provides too (the server resumes and watches through it). */
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provideMerge(AgentSupervisor.layer))
}
