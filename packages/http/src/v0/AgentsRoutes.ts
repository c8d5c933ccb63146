/**
 * `/v0/agents`: create, list, get, delete, restart, scripts retry, devices, platform and gateway tokens, and the
 * agent's history. A create whose gateway fails answers 500 `Gateway failed to start` with the agent.
 */
import {
  type AgentHistoryEntry,
  type AgentProvisioning,
  Agents,
  type AgentSecretView,
  type AgentSkillView,
  type AgentView,
  type AgentAt,
  AgentsAt,
  Secrets,
  Skills
} from "@cairn/application"
import { Agent, Secret, Skill, Template, Workspace } from "@cairn/domain"
import { Effect, Redacted, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { bearerToken, missingCredentials } from "../Authenticate.ts"
import { handled } from "../ErrorResponse.ts"
import { json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"
import { atDescription, AtQuery } from "./At.ts"
import * as Kit from "./Kit.ts"

/** The wire shape of an agent (Pinata's Agent object, without secrets), as the document describes it and the routes encode it. */
export const AgentWire = Schema.Struct({
  agentId: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  vibe: Schema.NullOr(Schema.String),
  emoji: Schema.NullOr(Schema.String),
  /** The model it answers with (`provider/model`), set in its runtime config; null: not set by Cairn. */
  model: Schema.NullOr(Schema.String),
  engine: Schema.String,
  engineVersion: Schema.String,
  createdAt: Schema.String,
  status: Agent.AgentStatus,
  /** When its workspace was last snapshotted, and that snapshot's CID (Pinata's fields); null: never. */
  lastSync: Schema.NullOr(Schema.String),
  snapshotCid: Schema.NullOr(Schema.String)
})

/** An agent as the API shows it; `engine` is the engine this node runs agents on. */
export const toWire = (agent: AgentView, engine: string): typeof AgentWire.Type => ({
  agentId: agent.agentId,
  userId: agent.userId,
  name: agent.name,
  description: agent.description,
  vibe: agent.vibe,
  emoji: agent.emoji,
  model: agent.model,
  engine,
  engineVersion: agent.engineVersion,
  createdAt: agent.createdAt,
  status: agent.status,
  lastSync: agent.snapshots?.lastSync ?? null,
  snapshotCid: agent.snapshots?.snapshotCid ?? null
})

/**
 * The wire shape of an agent on its way up: the phase (`installing_engine`, then `starting_gateway`) and how far it
 * is: seconds since it began, and while installing, the MB of the engine version on disk so far.
 */
export const ProvisioningWire = Schema.Struct({
  phase: Schema.Literals(["installing_engine", "starting_gateway"]),
  progress: Schema.Struct({
    engineVersion: Schema.String,
    elapsedSeconds: Schema.Int,
    installedMB: Schema.optionalKey(Schema.Number)
  })
})

export const provisioningToWire = (provisioning: AgentProvisioning): typeof ProvisioningWire.Type => ({
  phase: provisioning.phase,
  progress: {
    engineVersion: provisioning.version,
    elapsedSeconds: Math.floor(provisioning.elapsedMs / 1000),
    ...(provisioning.installedBytes === undefined ? {} : { installedMB: Math.round(provisioning.installedBytes / 1e5) / 10 })
  }
})

/** A skill as the agent holds it, on `GET /v0/agents/{agentId}`: its version and the library's newest. */
const HeldSkillWire = Schema.Struct({
  skillId: Schema.String,
  skillCid: Schema.String,
  name: Schema.String,
  description: Schema.String,
  version: Schema.NullOr(Schema.String),
  revision: Schema.Int,
  source: Skill.Source,
  slug: Schema.NullOr(Schema.String),
  attachedAt: Schema.String,
  updatedAt: Schema.String,
  latestCid: Schema.String,
  latestRevision: Schema.Int,
  latestVersion: Schema.NullOr(Schema.String),
  /** Who signed the version the agent holds (`/v3` signatures), if anyone. */
  signedBy: Schema.NullOr(Schema.String)
})
const heldSkillWire = (skill: AgentSkillView): typeof HeldSkillWire.Type => ({
  skillId: skill.skillId,
  skillCid: skill.skillCid,
  name: skill.name,
  description: skill.description,
  version: skill.version,
  revision: skill.revision,
  source: skill.source,
  slug: skill.slug,
  attachedAt: skill.attachedAt,
  updatedAt: skill.updatedAt,
  latestCid: skill.latestCid,
  latestRevision: skill.latestRevision,
  latestVersion: skill.latestVersion,
  signedBy: skill.signedBy
})

/**
 * A secret as the agent holds it: name, its value's version and times (never the value), and whether the running
 * gateway has its current value.
 */
const HeldSecretWire = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  version: Schema.Int,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  synced: Schema.Boolean
})
const heldSecretWire = (secret: AgentSecretView): typeof HeldSecretWire.Type => ({
  id: secret.id,
  name: secret.name,
  version: secret.version,
  createdAt: secret.createdAt,
  updatedAt: secret.updatedAt,
  synced: secret.synced
})

/**
 * The agent as it was at a point of the log (`?at=`), in the shape the route answers now: what the engine alone
 * knows (provisioning, this node's limits) is absent.
 */
export const detailAt = (found: AgentAt, engine: string): typeof AgentDetailWire.Type => ({
  agent: toWire(found.agent, engine),
  processStatus: found.agent.status,
  ...(found.agent.lastStop === undefined ? {} : { lastStop: found.agent.lastStop }),
  skills: found.skills.map(heldSkillWire),
  secrets: found.secrets.map(heldSecretWire)
})

/** The pairing requests an approve-all approved, by id. */
const ApprovedAllWire = Schema.Struct({ success: Schema.Boolean, approved: Schema.Array(Schema.String) })

/** Why and when the agent's gateway last stopped: `oom` when the OOM killer ended it at its memory cap. */
const LastStopWire = Schema.Struct({ reason: Schema.Literals(["crashed", "stopped", "oom"]), at: Schema.String })

/** What all of the agent's processes may use together on this node; null: not capped here. */
const LimitsWire = Schema.Struct({
  memoryBytes: Schema.NullOr(Schema.Number),
  cpus: Schema.NullOr(Schema.Number),
  pids: Schema.NullOr(Schema.Int),
  diskBytes: Schema.NullOr(Schema.Number)
})

/** While the agent sleeps: since when, and when Cairn wakes it for its next scheduled task (null: only on demand). */
const AsleepWire = Schema.Struct({ since: Schema.String, wakeAt: Schema.NullOr(Schema.String) })

/** While the agent is not running because its last start (or wake) failed: why (the gateway's last words), and when. */
const StartFailureWire = Schema.Struct({ reason: Schema.String, at: Schema.String })

export const AgentDetailWire = Schema.Struct({
  agent: AgentWire,
  processStatus: Agent.AgentStatus,
  lastStop: Schema.optionalKey(LastStopWire),
  asleep: Schema.optionalKey(AsleepWire),
  startFailure: Schema.optionalKey(StartFailureWire),
  limits: Schema.optionalKey(LimitsWire),
  provisioning: Schema.optionalKey(ProvisioningWire),
  skills: Schema.Array(HeldSkillWire),
  secrets: Schema.Array(HeldSecretWire)
})

/** A device that asked to pair with the agent's gateway (`pending`), or was allowed to (`paired`). */
const DeviceWire = Schema.Struct({ id: Schema.String, name: Schema.String, requestedAt: Schema.optionalKey(Schema.String) })
const DevicesWire = Schema.Struct({ pending: Schema.Array(DeviceWire), paired: Schema.Array(DeviceWire) })
type Device = { readonly id: string; readonly name: string; readonly requestedAt?: string }
const deviceWire = (device: Device): typeof DeviceWire.Type => ({
  id: device.id,
  name: device.name,
  ...(device.requestedAt === undefined ? {} : { requestedAt: device.requestedAt })
})

const PlatformTokenWire = Schema.Struct({ token: Schema.String, expiresAt: Schema.String })

/** One event of the agent's history: its stream (the agent's own, or what was done inside it) and place in it. */
export const HistoryEntryWire = Schema.Struct({
  stream: Schema.String,
  version: Schema.Int,
  /** Its place in the log (`transactionId:globalPosition`), which `?at=` takes. */
  position: Schema.String,
  type: Schema.String,
  at: Schema.String,
  actor: Schema.NullOr(Schema.String),
  data: Schema.Unknown
})
export const historyEntryWire = (entry: AgentHistoryEntry): typeof HistoryEntryWire.Type => ({
  stream: entry.stream,
  version: entry.version,
  position: entry.position,
  type: entry.type,
  at: entry.at,
  actor: entry.actor,
  data: entry.data
})

const CreateAgent = Schema.Struct({
  name: Schema.optional(Schema.Unknown),
  secretIds: Schema.optional(Schema.Array(Schema.String).pipe(Schema.check(Schema.isMaxLength(100)))),
  templateId: Schema.optional(Schema.String),
  description: Schema.optional(Schema.Unknown),
  vibe: Schema.optional(Schema.Unknown),
  emoji: Schema.optional(Schema.Unknown),
  model: Schema.optional(Schema.Unknown),
  fromSnapshot: Schema.optional(Schema.Unknown)
})
/** A change of name or profile: each field optional; `null` clears a profile field (checked by the domain). */
const ChangeProfile = Schema.Struct({
  name: Schema.optional(Schema.Unknown),
  description: Schema.optional(Schema.Unknown),
  vibe: Schema.optional(Schema.Unknown),
  emoji: Schema.optional(Schema.Unknown),
  model: Schema.optional(Schema.Unknown)
})
const Restart = Schema.Struct({ version: Schema.optional(Schema.String) })

const WhoAmIWire = Schema.Struct({ userId: Schema.String, agentId: Schema.String, workspaceId: Schema.String, expiresAt: Schema.String })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route, agentRoute } = yield* Kit.make(router)
    const agents = yield* Agents
    const wire = (agent: AgentView) => toWire(agent, agents.engine)
    const secrets = yield* Secrets
    const skills = yield* Skills
    const agentsAt = yield* AgentsAt

    yield* route("POST", "/v0/agents", {
      summary: "Create an agent",
      description: "`model` (`provider/model`, optional): the model it answers with, set in its runtime config (`agents.defaults.model.primary`) before its gateway first starts.",
      body: { schema: CreateAgent },
      response: { status: 201, schema: Schema.Struct({ success: Schema.Boolean, agent: AgentWire }) },
      errors: [
        new Workspace.AgentLimitReached({ limit: 1 }),
        new Agent.GatewayFailedToStart({ agentId: "", agent: null }),
        new Secret.ConflictingSecrets({ provider: "", names: [] }),
        new Template.TemplateNotFound({ template: "" })
      ]
    }, ({ principal, body }) =>
      Effect.gen(function*() {
        const input = yield* body(CreateAgent)
        const { agent, failed } = yield* agents.create(principal, {
          name: input.name,
          ...(input.secretIds === undefined ? {} : { secretIds: input.secretIds }),
          ...(input.templateId === undefined ? {} : { templateId: input.templateId }),
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(input.vibe === undefined ? {} : { vibe: input.vibe }),
          ...(input.emoji === undefined ? {} : { emoji: input.emoji }),
          ...(input.model === undefined ? {} : { model: input.model }),
          ...(input.fromSnapshot === undefined ? {} : { fromSnapshot: input.fromSnapshot })
        })
        if (failed) return yield* new Agent.GatewayFailedToStart({ agentId: agent.agentId, agent: wire(agent) })
        return Kit.created({ success: true, agent: wire(agent) })
      }))

    yield* route("GET", "/v0/agents", {
      summary: "List the workspace's agents",
      response: { schema: Schema.Struct({ agents: Schema.Array(AgentWire) }) }
    }, ({ principal }) => Effect.map(agents.list(principal), (list) => ({ agents: list.map(wire) })))

    yield* agentRoute("GET", "/v0/agents/:agentId", {
      summary: "Get an agent, with its skills and secrets (or as it was at a time or log position: `?at=`)",
      description: atDescription,
      query: AtQuery,
      response: { schema: AgentDetailWire },
      errors: [new Agent.AgentNotFound({ agentId: "" })]
    }, ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const at = Kit.query(request, "at")
        if (at !== null) {
          const found = yield* agentsAt.at(principal, agentId, at)
          return detailAt({ ...found, skills: yield* skills.withSigners(found.skills) }, agents.engine)
        }
        const agent = yield* agents.shown(principal.workspaceId, agentId)
        const provisioning = yield* agents.provisioning(agentId)
        return {
          agent: wire(agent),
          processStatus: agent.status,
          ...(agent.lastStop === undefined ? {} : { lastStop: agent.lastStop }),
          ...(agent.asleep === undefined ? {} : { asleep: agent.asleep }),
          ...(agent.startFailure === undefined ? {} : { startFailure: agent.startFailure }),
          ...(agents.agentLimits === undefined ? {} : { limits: agents.agentLimits }),
          // Only while the agent is on its way up; absent once it runs.
          ...(provisioning === undefined ? {} : { provisioning: provisioningToWire(provisioning) }),
          skills: (yield* skills.ofAgent(principal, agentId)).map(heldSkillWire),
          secrets: (yield* secrets.ofAgent(agentId)).map(heldSecretWire)
        } satisfies typeof AgentDetailWire.Type
      }))

    yield* agentRoute("PATCH", "/v0/agents/:agentId", {
      summary: "Change an agent's name, description, vibe, emoji or model",
      description: "Each field optional; a profile field set to `null` (or an empty string) is cleared. Recorded as `AgentProfileChanged` when anything differs. " +
        "`model` (`provider/model`) is applied to the agent's runtime config (`agents.defaults.model.primary`) at once; `null` removes it from there.",
      body: { schema: ChangeProfile },
      response: { schema: Schema.Struct({ success: Schema.Boolean, agent: AgentWire }) },
      errors: [new Agent.AgentNotFound({ agentId: "" })]
    }, ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const input = yield* body(ChangeProfile)
        const agent = yield* agents.changeProfile(principal, agentId, input)
        return { success: true, agent: wire(agent) }
      }))

    // The whole delete is the service's (a final snapshot, everything the agent held let go, its domains released).
    yield* agentRoute("DELETE", "/v0/agents/:agentId", {
      summary: "Delete an agent",
      response: { schema: Kit.Done },
      errors: [new Agent.AgentNotFound({ agentId: "" })]
    }, ({ principal, agentId }) => Effect.as(agents.remove(principal, agentId), { success: true, message: "Agent deleted" }))

    yield* agentRoute("POST", "/v0/agents/:agentId/restart", {
      summary: "Restart an agent's gateway, optionally on another engine version",
      body: { schema: Restart, optional: true },
      response: { schema: Schema.Struct({ success: Schema.Boolean, message: Schema.String, agent: AgentWire }) },
      errors: [new Agent.AgentNotFound({ agentId: "" }), new Agent.InvalidVersion({ version: "" }), new Agent.RestartFailed({ agentId: "" })]
    }, ({ principal, agentId, request, body }) =>
      Effect.gen(function*() {
        // The body is optional: an empty one restarts on the agent's own version.
        const { version } = (yield* request.text).trim() === "" ? {} : yield* body(Restart)
        const agent = yield* agents.restart(principal, agentId, version)
        return { success: true, message: "Agent restarted", agent: wire(agent) }
      }))

    yield* agentRoute("POST", "/v0/agents/:agentId/scripts/retry", {
      summary: "Relaunch the agent's build or start scripts",
      response: { schema: Kit.Done },
      errors: [new Agent.AgentNotFound({ agentId: "" }), new Agent.ScriptLaunchFailed({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.as(agents.retryScripts(principal, agentId), { success: true, message: "Scripts relaunched" }))

    yield* agentRoute("GET", "/v0/agents/:agentId/devices", {
      summary: "List the devices paired with the agent's gateway",
      response: { schema: DevicesWire },
      errors: [new Agent.AgentNotFound({ agentId: "" }), new Agent.CliError({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.map(agents.devices(principal, agentId), (devices): typeof DevicesWire.Type => ({
        pending: devices.pending.map(deviceWire),
        paired: devices.paired.map(deviceWire)
      })))

    const deviceErrors = [new Agent.AgentNotFound({ agentId: "" }), new Agent.DeviceNotFound({ agentId: "", id: "" }), new Agent.CliError({ agentId: "" })]

    yield* agentRoute("POST", "/v0/agents/:agentId/devices/approve-all", {
      summary: "Approve every device waiting to pair with the agent's gateway",
      response: { schema: ApprovedAllWire },
      errors: [new Agent.AgentNotFound({ agentId: "" }), new Agent.CliError({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.map(agents.approveAllPairings(principal, agentId), (approved) => ({ success: true, approved })))

    for (const answer of ["approve", "reject"] as const) {
      yield* agentRoute("POST", `/v0/agents/:agentId/devices/:requestId/${answer}`, {
        summary: answer === "approve"
          ? "Approve a device's request to pair with the agent's gateway (it may then connect, e.g. the Control UI in a browser)"
          : "Reject a device's request to pair with the agent's gateway",
        response: { schema: Kit.Done },
        errors: deviceErrors
      }, ({ principal, agentId, params }) =>
        Effect.as(agents.answerPairing(principal, agentId, params["requestId"] ?? "", answer), {
          success: true,
          message: answer === "approve" ? "Device approved" : "Pairing request rejected"
        }))
    }

    yield* agentRoute("DELETE", "/v0/agents/:agentId/devices/:deviceId", {
      summary: "Unpair a device from the agent's gateway (its token stops working there)",
      response: { schema: Kit.Done },
      errors: deviceErrors
    }, ({ principal, agentId, params }) =>
      Effect.as(agents.removeDevice(principal, agentId, params["deviceId"] ?? ""), { success: true, message: "Device removed" }))

    yield* agentRoute("POST", "/v0/agents/:agentId/platform/token", {
      summary: "Mint a platform JWT for the agent",
      response: { schema: PlatformTokenWire },
      errors: [new Agent.AgentNotFound({ agentId: "" }), new Agent.TokenGenerationFailed({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.map(agents.platformToken(principal, agentId), ({ token, expiresAt }): typeof PlatformTokenWire.Type => ({ token, expiresAt })))

    // The platform token's own route: who it acts as. Nothing but a platform token is taken here.
    yield* RouteCatalog.add(router, {
      method: "GET",
      path: "/v0/platform/whoami",
      summary: "Who a platform token acts as: its user, agent and workspace, and when it expires",
      auth: "platform",
      response: { schema: WhoAmIWire }
    }, (request) =>
      handled(Effect.gen(function*() {
        const token = bearerToken(request)
        if (token === undefined) return yield* missingCredentials(request)
        const { userId, agentId, workspaceId, expiresAt } = yield* agents.whoami(token)
        return json({ userId, agentId, workspaceId, expiresAt } satisfies typeof WhoAmIWire.Type)
      })))

    yield* agentRoute("GET", "/v0/agents/:agentId/gateway-token", {
      summary: "The agent's current gateway token",
      response: { schema: Schema.Struct({ gatewayToken: Schema.String }) },
      errors: [new Agent.AgentNotFound({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.map(agents.gatewayToken(principal, agentId), (token) => ({ gatewayToken: Redacted.value(token) })))

    yield* agentRoute("POST", "/v0/agents/:agentId/gateway-token/rotate", {
      summary: "Rotate the agent's gateway token (the old one stops working)",
      response: { schema: Schema.Struct({ success: Schema.Boolean, gatewayToken: Schema.String }) },
      errors: [new Agent.AgentNotFound({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.map(agents.rotateGatewayToken(principal, agentId), (token) => ({ success: true, gatewayToken: Redacted.value(token) })))

    yield* agentRoute("GET", "/v0/agents/:agentId/events", {
      summary: "The agent's history: every event, with its actor and time",
      response: { schema: Schema.Struct({ agentId: Schema.String, events: Schema.Array(HistoryEntryWire) }) },
      errors: [new Agent.AgentNotFound({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.map(agents.history(principal, agentId), (events) => ({ agentId, events: events.map(historyEntryWire) })))
  })
)
