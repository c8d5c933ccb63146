/**
 * Hosted agents, the user's side: create (the workspace's quota slot and the agent's first event decided and
 * appended together), list, get, delete, restart, devices, script relaunch, gateway and platform tokens, and the
 * agent's history. Every change to a gateway goes through its owner (gateway/Gateway.ts), and outcomes come back as
 * events. A create waits a moment for the gateway, so a gateway that fails at once is reported (`Gateway failed to
 * start`) with the agent. A delete is the whole use case, whoever calls it (the HTTP API or a program embedding
 * Cairn): the workspace's final snapshot, then the agent and everything it held let go in one append (its quota slot,
 * secrets, skills, channels, domains and their names), then its gateway and home removed.
 */
import { AgentEngine, type AgentNotProvisioned, type EngineCliError, GatewayLogs, type LogChunk, type Provisioning, type UnknownDevice } from "@cairn/agent-engine"
import { GatewayTokens, TokenSigner } from "@cairn/auth"
import { Agent, AgentDevices, AuditStreams, canonical, Channel, Domain, Reservation, Secret, Skill, Snapshot, ValidationFailed, Workspace } from "@cairn/domain"
import { EventStore, type EventStoreUnavailable } from "@cairn/event-store"
import { historyOf } from "../History.ts"
import { Context, Deferred, type Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { type Principal, Unauthorized } from "../Access.ts"
import { Domains } from "../domains/Domains.ts"
import { Gateway } from "../gateway/Gateway.ts"
import { CommandHandler, decision, type TooMuchContention } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import { newAgentId } from "./AgentIds.ts"
import { AgentPool } from "./AgentPool.ts"
import * as AgentModel from "../gateway/AgentModel.ts"
import * as AgentsTable from "../readmodels/AgentsTable.ts"
import { Secrets } from "../secrets/Secrets.ts"
import { Snapshots } from "../snapshots/Snapshots.ts"
import { Skills } from "../skills/Skills.ts"
import { Templates } from "../templates/Templates.ts"

export type AgentView = AgentsTable.AgentView
/** What the engine is doing to bring an agent up (AgentEngine's `provisioning`). */
export type AgentProvisioning = Provisioning

/** How long a create waits for the gateway before answering `starting`. */
export const CreateWait = Context.Reference<Duration.Input>("cairn/Agents/CreateWait", { defaultValue: () => "1 second" })

/** The agent a decision left alive (user commands only succeed on live agents). */
const liveAgent = (state: Agent.AgentState) => (state as Extract<Agent.AgentState, { _tag: "Live" }>).agent

export class Agents extends Context.Service<Agents>()("cairn/Agents", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const store = yield* EventStore
    const agents = AgentsTable.queries(yield* SqlClient.SqlClient)
    const engine = yield* AgentEngine
    const gatewayTokens = yield* GatewayTokens.GatewayTokens
    const signer = yield* TokenSigner
    const gateway = yield* Gateway
    const snapshots = yield* Snapshots
    const domains = yield* Domains
    const secrets = yield* Secrets
    const skills = yield* Skills
    const templates = yield* Templates
    const pool = yield* AgentPool

    /** The agent, if the caller's workspace has it. */
    const get = agents.visibleIn
    /** `get`, with what the API shows of it besides (its latest snapshot). */
    const shown = agents.shownIn

    /** The agent as its own stream has it now: what a response right after a command shows. */
    const current = (agentId: string) => Effect.map(commands.load(Agent.decider, Agent.stream(agentId)), ({ state }) => liveAgent(state))

    /**
     * What a template brings to a new agent: its name (unless one is given), its skills (brought into the library
     * when missing), its files, and the secrets it requires.
     */
    const fromTemplate = (principal: Principal, templateId: string) =>
      Effect.gen(function*() {
        const { template, manifest, files } = yield* templates.materialize(principal, templateId)
        const skillCids = yield* skills.forTemplate(principal, template.includedSkills)
        const required = template.requiredSecrets.filter((s) => s.required).map((s) => s.name)
        return { template, name: manifest.agent.name, files, skillCids, required }
      })

    /**
     * What a fork starts from: the snapshot (a CID of one of the workspace's agents' kept snapshots, a deleted
     * agent's too within its grace period) and that agent as it was (its name, model and skills).
     */
    const forkOf = (principal: Principal, fromSnapshot: unknown) =>
      Effect.gen(function*() {
        const snapshotCid = typeof fromSnapshot === "string" ? Option.getOrUndefined(canonical(fromSnapshot)) : undefined
        if (snapshotCid === undefined) return yield* new ValidationFailed({ detail: "fromSnapshot must be a snapshot's CID" })
        const sourceId = yield* snapshots.forkSource(principal, snapshotCid)
        const { state } = yield* commands.load(Agent.decider, Agent.stream(sourceId))
        if (state._tag === "NoAgent") return yield* new Snapshot.SnapshotNotFound({ snapshotCid })
        return { snapshotCid, sourceId, source: state.agent }
      })

    const create = Effect.fn("Agents.create")(function*(
      principal: Principal,
      input: {
        readonly name: unknown
        readonly secretIds?: ReadonlyArray<string>
        readonly templateId?: string
        readonly description?: unknown
        readonly vibe?: unknown
        readonly emoji?: unknown
        readonly model?: unknown
        readonly fromSnapshot?: unknown
      }
    ) {
      if (input.templateId !== undefined && input.fromSnapshot !== undefined) {
        return yield* new ValidationFailed({ detail: "give templateId or fromSnapshot, not both" })
      }
      const template = input.templateId === undefined ? undefined : yield* fromTemplate(principal, input.templateId)
      const fork = input.fromSnapshot === undefined ? undefined : yield* forkOf(principal, input.fromSnapshot)
      const name = yield* Effect.fromResult(Agent.validateName(input.name ?? template?.name ?? fork?.source.name))
      const profile = yield* Effect.fromResult(Agent.validateProfile(input))
      // At creation, a cleared field is one not given.
      const given = Object.fromEntries(Object.entries(profile).filter(([, value]) => value !== null)) as { description?: string; vibe?: string; emoji?: string }
      const model = input.model === undefined || input.model === null
        ? fork?.source.model ?? undefined
        : yield* Effect.fromResult(AgentModel.validateModel(input.model))
      const versions = yield* engine.listVersions
      const engineVersion = versions[versions.length - 1]!
      const at = yield* now
      const { workspaceId, userId } = principal
      // A gateway started ahead serves only a create that gives it nothing it must have had from its start: no
      // secrets (its environment), no template or fork (its workspace, its skills).
      const pooled = template === undefined && fork === undefined && (input.secretIds ?? []).length === 0
        ? yield* pool.take(workspaceId, engineVersion)
        : Option.none()
      const agentId = Option.isSome(pooled) ? pooled.value.agentId : newAgentId()
      // Recorded with the agent's first events; a pooled gateway goes back to the pool if anything here refuses the
      // create. Not cut short by a caller that goes away: once the append is made, the gateway is the agent's.
      yield* Effect.gen(function*() {
        // Secrets named at creation are attached in the same append, with the same checks as an attach.
        const attaching = yield* secrets.attachments(workspaceId, agentId, name, input.secretIds ?? [], at)
        const missing = template?.required.find((required) => !attaching.secrets.some((s) => s.name === required))
        if (missing !== undefined) return yield* new ValidationFailed({ detail: `missing required secret ${missing}` })
        const skillCids = template?.skillCids ?? [...fork?.source.skills.values() ?? []].map((skill) => skill.cid)
        const withSkills = skillCids.length === 0 ? { skills: [], decisions: [] } : yield* skills.attachments(workspaceId, agentId, name, skillCids, at)
        const forked = fork === undefined ? undefined : yield* snapshots.forkDecision(fork.sourceId, fork.snapshotCid, agentId, at)
        // The quota is decided on the workspace's stream in the same append as the agent's first event: concurrent
        // creates conflict and decide again, so a workspace never gets more agents than its limit.
        yield* commands.executeAll([
          decision(Workspace.decider, Workspace.stream(workspaceId), new Workspace.TakeAgentSlot({ workspaceId, agentId, at })),
          decision(Agent.decider, Agent.stream(agentId), new Agent.CreateAgent({
            agentId, workspaceId, userId, name, engineVersion, node: gateway.node, secrets: attaching.secrets, ...given,
            ...(model === undefined ? {} : { model }),
            ...(withSkills.skills.length === 0 ? {} : { skills: withSkills.skills }),
            ...(template === undefined ? {} : {
              template: { templateId: template.template.templateId, slug: template.template.slug, snapshotCid: template.template.snapshotCid }
            }),
            ...(fork === undefined ? {} : { fromSnapshot: { agentId: fork.sourceId, snapshotCid: fork.snapshotCid } }),
            ...(Option.isSome(pooled) ? { fromPool: { reservedAt: pooled.value.reservedAt } } : {}),
            at
          })),
          ...attaching.decisions,
          ...withSkills.decisions,
          // The source's history shows the fork too, in the same append.
          ...(forked === undefined ? [] : [forked]),
          ...(Option.isSome(pooled) ? [pooled.value.decision] : [])
        ], { actor: userId })
      }).pipe(Effect.onError(() => Option.isSome(pooled) ? pooled.value.giveBack : Effect.void), Effect.uninterruptible)
      // A template's files, or the forked snapshot, are in the workspace before the gateway first starts (its skills
      // are installed then).
      const outcome = yield* gateway.launch(
        agentId,
        engineVersion,
        0,
        template !== undefined ? { files: template.files } : fork !== undefined ? { prepare: snapshots.restoreInto(agentId, fork.snapshotCid) } : {}
      )
      const waited = yield* Deferred.await(outcome).pipe(Effect.timeoutOption(yield* CreateWait))
      const agent = yield* current(agentId)
      return { agent, failed: Option.isSome(waited) && waited.value === "failed" }
    })

    const list = (principal: Principal) => agents.inWorkspace(principal.workspaceId)

    /**
     * Changes the agent's name, profile or model; fields absent stay as they are, `null` clears one. A model changed
     * is applied to the gateway's runtime config at once (AgentModel.ts); should that fail, its next start applies
     * it. The agent as it is then.
     */
    const changeProfile = Effect.fn("Agents.changeProfile")(function*(
      principal: Principal,
      agentId: string,
      input: { readonly name?: unknown; readonly description?: unknown; readonly vibe?: unknown; readonly emoji?: unknown; readonly model?: unknown }
    ) {
      yield* get(principal.workspaceId, agentId)
      const name = input.name === undefined ? undefined : yield* Effect.fromResult(Agent.validateName(input.name))
      const profile = yield* Effect.fromResult(Agent.validateProfile(input))
      const model = input.model === undefined || input.model === null ? input.model : yield* Effect.fromResult(AgentModel.validateModel(input.model))
      const command = new Agent.ChangeAgentProfile({
        agentId,
        workspaceId: principal.workspaceId,
        ...(name === undefined ? {} : { name }),
        ...profile,
        ...(model === undefined ? {} : { model }),
        at: yield* now
      })
      const { events } = yield* commands.execute(Agent.decider, Agent.stream(agentId), command, { actor: principal.userId })
      // A model given is applied even when it is the recorded one (the config may have been edited since); a model
      // cleared only when it was set.
      const cleared = model === null && events.some((event) => event._tag === "AgentProfileChanged" && event.model === null)
      if (typeof model === "string" || cleared) {
        // A gateway on its way up takes the config from its file as it starts: the write waits for it, as config
        // writes do; should it still be starting then, the write is tried all the same.
        yield* gateway.ready(agentId).pipe(Effect.catchTag("GatewayStarting", () => Effect.void))
        yield* AgentModel.apply(engine, agentId, model).pipe(
          Effect.catch((error) => Effect.logWarning(`Agent ${agentId}: model ${model} not applied to its runtime config yet`, error))
        )
      }
      return yield* shown(principal.workspaceId, agentId)
    })

    /** The agent and everything it held, let go in one append; planned again if any of it changes meanwhile. */
    const release = (principal: Principal, agentId: string): Effect.Effect<
      unknown,
      | Agent.AgentError | Workspace.WorkspaceError | Secret.SecretError | Skill.SkillError | Domain.DomainError | Reservation.ReservationTaken
      | TooMuchContention | EventStoreUnavailable
    > =>
      commands.executePlan(Effect.gen(function*() {
        const { workspaceId } = principal
        const at = yield* now
        const loaded = yield* commands.load(Agent.decider, Agent.stream(agentId))
        const agent = yield* Effect.fromResult(Agent.visible(loaded.state, agentId, workspaceId))
        return [
          decision(Agent.decider, Agent.stream(agentId), new Agent.DeleteAgent({ agentId, workspaceId, at }), loaded),
          decision(Workspace.decider, Workspace.stream(workspaceId), new Workspace.ReleaseAgentSlot({ workspaceId, agentId, at })),
          // Its secrets are let go in the same append, so they can be deleted afterwards.
          ...secrets.releaseAll(agent, at),
          ...skills.releaseAll(agent, at),
          // Its channels go too, so their sealed tokens are no longer delivered to anything.
          decision(Channel.deletion, Channel.stream(agentId), new Channel.RemoveAllChannels({ agentId, at })),
          // And its domains, their names free for anyone once the delete answers.
          ...(yield* domains.releaseAll(agentId, at))
        ]
      }), { actor: principal.userId })

    const remove = Effect.fn("Agents.remove")(function*(principal: Principal, agentId: string) {
      yield* get(principal.workspaceId, agentId)
      // The workspace's last state is kept as a snapshot for the deleted agents' grace period.
      yield* snapshots.beforeDelete(principal, agentId)
      yield* release(principal, agentId)
      yield* gateway.remove(agentId)
    })

    /** Restarts the agent's gateway (optionally onto another engine version) through its owner. */
    const restart = (principal: Principal, agentId: string, requested: string | undefined) =>
      get(principal.workspaceId, agentId).pipe(
        Effect.andThen(gateway.restart(principal, agentId, requested)),
        // As the API shows it: the restart is recorded in the tables already, which add its latest snapshot.
        Effect.andThen(shown(principal.workspaceId, agentId))
      )

    const devices = (principal: Principal, agentId: string) =>
      get(principal.workspaceId, agentId).pipe(
        Effect.andThen(gateway.ready(agentId)),
        Effect.andThen(engine.listDevices(agentId).pipe(Effect.mapError(() => new Agent.CliError({ agentId }))))
      )

    /** A device's or pairing request's id as a gateway gives them; anything else is no device of its. */
    const isDeviceId = (id: string) => /^[A-Za-z0-9._:-]{1,200}$/.test(id)

    const deviceFailure = (agentId: string, id: string) => (error: EngineCliError | UnknownDevice | AgentNotProvisioned) =>
      error._tag === "UnknownDevice" ? new Agent.DeviceNotFound({ agentId, id }) : new Agent.CliError({ agentId })

    /** Records what was done to a device, once the gateway did it (stream `devices-<agentId>`, the agent's trail). */
    const recordDevice = (principal: Principal, agentId: string, deviceId: string, action: AgentDevices.RecordDeviceAction["action"]) =>
      Effect.flatMap(now, (at) =>
        commands.record(AgentDevices.decider, AgentDevices.stream(agentId), new AgentDevices.RecordDeviceAction({ agentId, workspaceId: principal.workspaceId, deviceId, at, action }), { actor: principal.userId }))

    /** Approves (pairs) or rejects a device's request to pair with the agent's gateway, once the gateway is up. */
    const answerPairing = Effect.fn("Agents.answerPairing")(function*(principal: Principal, agentId: string, requestId: string, answer: "approve" | "reject") {
      yield* get(principal.workspaceId, agentId)
      if (!isDeviceId(requestId)) return yield* new Agent.DeviceNotFound({ agentId, id: requestId })
      yield* gateway.ready(agentId)
      yield* engine.answerPairing(agentId, requestId, answer).pipe(Effect.mapError(deviceFailure(agentId, requestId)))
      yield* recordDevice(principal, agentId, requestId, answer === "approve" ? "approved" : "rejected")
    })

    /** Approves every pending pairing request; the ids approved (one answered meanwhile is left out). */
    const approveAllPairings = Effect.fn("Agents.approveAllPairings")(function*(principal: Principal, agentId: string) {
      const { pending } = yield* devices(principal, agentId)
      const approved: Array<string> = []
      for (const device of pending) {
        const done = yield* engine.answerPairing(agentId, device.id, "approve").pipe(
          Effect.as(true),
          Effect.catchTag("UnknownDevice", () => Effect.succeed(false)),
          Effect.mapError(deviceFailure(agentId, device.id))
        )
        if (!done) continue
        yield* recordDevice(principal, agentId, device.id, "approved")
        approved.push(device.id)
      }
      return approved
    })

    /** Unpairs a device from the agent's gateway: its own token stops working there. */
    const removeDevice = Effect.fn("Agents.removeDevice")(function*(principal: Principal, agentId: string, deviceId: string) {
      yield* get(principal.workspaceId, agentId)
      if (!isDeviceId(deviceId)) return yield* new Agent.DeviceNotFound({ agentId, id: deviceId })
      yield* gateway.ready(agentId)
      yield* engine.removeDevice(agentId, deviceId).pipe(Effect.mapError(deviceFailure(agentId, deviceId)))
      yield* recordDevice(principal, agentId, deviceId, "removed")
    })

    /**
     * The gateway's last `lines` lines (a query's text: 100 when absent; from `least` to 1000), read from its log, so a
     * stopped or crashed gateway's are there too. An agent this node never provisioned has none yet.
     */
    const recentLogs = (principal: Principal, agentId: string, lines: string | null, least = 1) =>
      Effect.gen(function*() {
        const count = lines === null ? 100 : Number(lines)
        if (!Number.isInteger(count) || count < least || count > GatewayLogs.maxLogLines) {
          return yield* new ValidationFailed({ detail: `lines must be a whole number from ${least} to ${GatewayLogs.maxLogLines}` })
        }
        yield* get(principal.workspaceId, agentId)
        return yield* readLogs(agentId, { lines: count })
      })

    /** What the gateway logged after `cursor` (of an earlier read): a follower's next read. */
    const logsAfter = (principal: Principal, agentId: string, cursor: number) =>
      get(principal.workspaceId, agentId).pipe(Effect.andThen(readLogs(agentId, { after: cursor })))

    const readLogs = (agentId: string, request: GatewayLogs.LogRequest) =>
      engine.readLogs(agentId, request).pipe(
        Effect.catchTag("AgentNotProvisioned", () => Effect.succeed<LogChunk>({ entries: [], cursor: 0 }))
      )

    const retryScripts = (principal: Principal, agentId: string) =>
      get(principal.workspaceId, agentId).pipe(
        Effect.andThen(engine.relaunchScripts(agentId).pipe(Effect.mapError(() => new Agent.ScriptLaunchFailed({ agentId }))))
      )

    const gatewayToken = (principal: Principal, agentId: string) =>
      Effect.map(get(principal.workspaceId, agentId), (agent) => gatewayTokens.tokenFor(agentId, agent.tokenGeneration))

    const rotateGatewayToken = Effect.fn("Agents.rotateGatewayToken")(function*(principal: Principal, agentId: string) {
      const command = new Agent.RotateGatewayToken({ agentId, workspaceId: principal.workspaceId, at: yield* now })
      const { state } = yield* commands.execute(Agent.decider, Agent.stream(agentId), command, { actor: principal.userId })
      const token = gatewayTokens.tokenFor(agentId, liveAgent(state).tokenGeneration)
      yield* gateway.rotateToken(agentId, token)
      return token
    })

    /** Whether a presented gateway token is this agent's current one (a rotated token no longer is). */
    const gatewayPrincipal = (agentId: string, token: string) =>
      agents.byId(agentId).pipe(Effect.map(Option.flatMap((agent) =>
        gatewayTokens.matches(agentId, agent.tokenGeneration, token)
          ? Option.some<Principal>({ workspaceId: agent.workspaceId, userId: agent.userId, keyId: `gateway:${agentId}`, scopes: ["org:agents"] })
          : Option.none()
      )))

    /**
     * A platform token acting on an agent's routes: good for its own agent only, while that agent lives in the
     * token's workspace; it acts as the agent's user there, as the agent's gateway token does.
     */
    const platformPrincipal = (agentId: string, token: string) =>
      Effect.gen(function*() {
        const claims = yield* signer.verifyPlatformToken(token).pipe(Effect.mapError((e) => new Unauthorized({ reason: e.reason })))
        if (claims.agentId !== agentId) return yield* new Unauthorized({ reason: "wrong-agent" })
        yield* get(claims.workspaceId, agentId).pipe(Effect.mapError(() => new Unauthorized({ reason: "wrong-agent" })))
        return { workspaceId: claims.workspaceId, userId: claims.userId, keyId: `platform:${agentId}`, scopes: ["org:agents"] } satisfies Principal
      })

    /** Who a platform token says it is, for `GET /v0/platform/whoami`: its agent must still live. */
    const whoami = (token: string) =>
      Effect.gen(function*() {
        const claims = yield* signer.verifyPlatformToken(token).pipe(Effect.mapError((e) => new Unauthorized({ reason: e.reason })))
        yield* get(claims.workspaceId, claims.agentId).pipe(Effect.mapError(() => new Unauthorized({ reason: "wrong-agent" })))
        return claims
      })

    const platformToken = (principal: Principal, agentId: string) =>
      get(principal.workspaceId, agentId).pipe(
        Effect.andThen((agent) =>
          signer.issuePlatformToken({ agentId, workspaceId: agent.workspaceId, userId: agent.userId }).pipe(
            Effect.catchCause(() => Effect.fail(new Agent.TokenGenerationFailed({ agentId })))
          )
        )
      )

    /**
     * Every event of the agent with its actor and time, whatever its workspace: the operator's audit trail. It is the
     * agent's own stream and the streams of what was done inside the agent (AuditStreams lists them all), merged in
     * log order; `version` is the event's place in its own `stream`.
     */
    const auditTrail = (agentId: string) =>
      Effect.forEach(AuditStreams.auditStreams(agentId), (stream) => store.readStream(stream), { concurrency: "unbounded" }).pipe(
        Effect.flatMap(([own = [], ...others]) =>
          own.length === 0 ? Effect.fail(new Agent.AgentNotFound({ agentId })) : Effect.succeed([...own, ...others.flat()])
        ),
        Effect.map(historyOf)
      )

    /** The agent's history, as its workspace sees it. */
    const history = (principal: Principal, agentId: string) => get(principal.workspaceId, agentId).pipe(Effect.andThen(auditTrail(agentId)))

    /**
     * What this node's engine is doing to bring the agent up (installing its engine version, starting its gateway),
     * or undefined (running, stopped, or on another node). Runtime state of the engine, never an event.
     */
    const provisioning = (agentId: string) => engine.provisioning(agentId)

    return {
      /** The engine this node runs agents on, which agents report (`openclaw`, or `simulated`). */
      engine: engine.name,
      /** What each agent's processes may use together on this node (decision 0042); absent where nothing caps them. */
      agentLimits: engine.agentLimits,
      create, list, get, shown, changeProfile, remove, restart, devices, answerPairing, approveAllPairings, removeDevice, recentLogs, logsAfter, retryScripts, gatewayToken, rotateGatewayToken,
      gatewayPrincipal, platformPrincipal, whoami, platformToken, history, auditTrail, provisioning
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
