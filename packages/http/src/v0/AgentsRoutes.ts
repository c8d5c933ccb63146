/**
 * `/v0/agents`: create, list, get, delete, restart, scripts retry, devices, platform and gateway tokens, and the
 * agent's history. A create whose gateway fails answers 500 `Gateway failed to start` with the agent.
 */
import { Agents, type AgentView, Domains, Secrets, Skills, Snapshots } from "@cairn/application"
import { Agent } from "@cairn/domain"
import { Effect, Redacted, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

/** The wire shape of an agent (Pinata's Agent object, without secrets). */
export const toWire = (agent: AgentView) => ({
  agentId: agent.agentId,
  userId: agent.userId,
  name: agent.name,
  description: null,
  vibe: null,
  emoji: null,
  engine: "openclaw",
  engineVersion: agent.engineVersion,
  createdAt: agent.createdAt,
  status: agent.status
})

const CreateAgent = Schema.Struct({
  name: Schema.optional(Schema.Unknown),
  secretIds: Schema.optional(Schema.Array(Schema.String).pipe(Schema.check(Schema.isMaxLength(100)))),
  templateId: Schema.optional(Schema.String)
})
const Restart = Schema.Struct({ version: Schema.optional(Schema.String) })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route, agentRoute } = yield* Kit.make(router)
    const agents = yield* Agents
    const snapshots = yield* Snapshots
    const secrets = yield* Secrets
    const skills = yield* Skills
    const domains = yield* Domains

    yield* route("POST", "/v0/agents", ({ principal, body }) =>
      Effect.gen(function*() {
        const input = yield* body(CreateAgent)
        const { agent, failed } = yield* agents.create(principal, {
          name: input.name,
          ...(input.secretIds === undefined ? {} : { secretIds: input.secretIds }),
          ...(input.templateId === undefined ? {} : { templateId: input.templateId })
        })
        if (failed) return yield* new Agent.GatewayFailedToStart({ agentId: agent.agentId, agent: toWire(agent) })
        return Kit.created({ success: true, agent: toWire(agent) })
      }))

    yield* route("GET", "/v0/agents", ({ principal }) => Effect.map(agents.list(principal), (list) => ({ agents: list.map(toWire) })))

    yield* agentRoute("GET", "/v0/agents/:agentId", ({ principal, agentId }) =>
      Effect.gen(function*() {
        const agent = yield* agents.get(principal.workspaceId, agentId)
        return {
          agent: toWire(agent),
          processStatus: agent.status,
          skills: yield* skills.ofAgent(principal, agentId),
          secrets: yield* secrets.ofAgent(agentId)
        }
      }))

    // The workspace's last state is kept as a snapshot for the deleted agents' grace period; its domains go.
    yield* agentRoute("DELETE", "/v0/agents/:agentId", ({ principal, agentId }) =>
      snapshots.beforeDelete(principal, agentId).pipe(
        Effect.andThen(agents.remove(principal, agentId)),
        Effect.andThen(domains.afterAgentDeleted(agentId, principal.userId)),
        Effect.as({ success: true, message: "Agent deleted" })
      ))

    yield* agentRoute("POST", "/v0/agents/:agentId/restart", ({ principal, agentId, request, body }) =>
      Effect.gen(function*() {
        // The body is optional: an empty one restarts on the agent's own version.
        const { version } = (yield* request.text).trim() === "" ? {} : yield* body(Restart)
        const agent = yield* agents.restart(principal, agentId, version)
        return { success: true, message: "Agent restarted", agent: toWire(agent) }
      }))

    yield* agentRoute("POST", "/v0/agents/:agentId/scripts/retry", ({ principal, agentId }) =>
      Effect.as(agents.retryScripts(principal, agentId), { success: true, message: "Scripts relaunched" }))

    yield* agentRoute("GET", "/v0/agents/:agentId/devices", ({ principal, agentId }) => agents.devices(principal, agentId))

    yield* agentRoute("POST", "/v0/agents/:agentId/platform/token", ({ principal, agentId }) => agents.platformToken(principal, agentId))

    yield* agentRoute("GET", "/v0/agents/:agentId/gateway-token", ({ principal, agentId }) =>
      Effect.map(agents.gatewayToken(principal, agentId), (token) => ({ gatewayToken: Redacted.value(token) })))

    yield* agentRoute("POST", "/v0/agents/:agentId/gateway-token/rotate", ({ principal, agentId }) =>
      Effect.map(agents.rotateGatewayToken(principal, agentId), (token) => ({ success: true, gatewayToken: Redacted.value(token) })))

    yield* agentRoute("GET", "/v0/agents/:agentId/events", ({ principal, agentId }) =>
      Effect.map(agents.history(principal, agentId), (events) => ({ agentId, events })))
  })
)
