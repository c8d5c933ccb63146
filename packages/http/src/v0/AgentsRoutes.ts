/**
 * `/v0`: the agents control plane. Every route takes an API key with the `org:agents` scope; an agent's own
 * routes (`/v0/agents/{agentId}/…`) also take that agent's current gateway token. Errors are `{error}` with the
 * exact strings of the service interface (section 7); a create whose gateway fails answers 500 with the agent.
 */
import { Agents, type AgentView, ApiKeys, EventCodec, type Principal, Unauthorized, Workspaces } from "@cairn/application"
import { AgentErrors, Issue } from "@cairn/domain"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { Effect, Option, Redacted, Schema } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { bearerToken, requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { json } from "../Respond.ts"

const scope = "org:agents"
const encodeIssue = EventCodec.encoder(Issue.IssueEvent)

const gatewayTokenOf = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  new URL(request.url, "http://cairn").searchParams.get("token") ??
    /(?:^|;\s*)gw_token=([^;]+)/.exec(request.headers["cookie"] ?? "")?.[1] ??
    undefined

/** The wire shape of an agent (Pinata's Agent object, without secrets). */
const toWire = (agent: AgentView) => ({
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

const CreateAgent = Schema.Struct({ name: Schema.optional(Schema.Unknown) })
const Restart = Schema.Struct({ version: Schema.optional(Schema.String) })
const FileIssue = Schema.Struct({
  title: Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  body: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxLength(20_000))))
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const agents = yield* Agents
    const workspaces = yield* Workspaces
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient

    /**
     * An API key with the agents scope; or, on an agent's own routes, its current gateway token, which may also
     * come as `?token=` or the `gw_token` cookie (as on Pinata's per-agent host).
     */
    const authorize = (request: HttpServerRequest.HttpServerRequest, agentId?: string) =>
      Effect.gen(function*() {
        const token = bearerToken(request) ?? (agentId === undefined ? undefined : gatewayTokenOf(request))
        if (token === undefined) return yield* new Unauthorized({ reason: "no bearer token" })
        if (agentId !== undefined && token.startsWith("gw_")) {
          const principal = yield* agents.gatewayPrincipal(agentId, token)
          if (Option.isNone(principal)) return yield* new Unauthorized({ reason: "not this agent's current gateway token" })
          return principal.value
        }
        return yield* requireScope(keys, request, scope)
      })

    const agentRoute = (
      method: "GET" | "POST" | "DELETE",
      path: `/${string}`,
      handle: (principal: Principal, agentId: string, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<unknown, unknown>
    ) =>
      router.add(method, path, (request) =>
        handled(Effect.gen(function*() {
          const { agentId = "" } = yield* HttpRouter.params
          const principal = yield* authorize(request, agentId)
          return json(yield* handle(principal, agentId, request))
        })))

    yield* router.add("POST", "/v0/agents", (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* authorize(request)
        const input = yield* Body.json(request, CreateAgent)
        const { agent, failed } = yield* agents.create(principal, { name: input.name })
        if (failed) return json({ error: new AgentErrors.GatewayFailedToStart({ agentId: agent.agentId }).message, agent: toWire(agent) }, 500)
        return json({ success: true, agent: toWire(agent) }, 201)
      })))

    yield* router.add("GET", "/v0/agents", (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* authorize(request)
        return json({ agents: (yield* agents.list(principal)).map(toWire) })
      })))

    yield* agentRoute("GET", "/v0/agents/:agentId", (principal, agentId) =>
      Effect.map(agents.get(principal.workspaceId, agentId), (agent) => ({
        agent: toWire(agent),
        processStatus: agent.status,
        skills: [],
        secrets: []
      })))

    yield* agentRoute("DELETE", "/v0/agents/:agentId", (principal, agentId) =>
      Effect.as(agents.remove(principal, agentId), { success: true, message: "Agent deleted" }))

    yield* agentRoute("POST", "/v0/agents/:agentId/restart", (principal, agentId, request) =>
      Effect.gen(function*() {
        const text = yield* request.text
        const { version } = text.trim() === "" ? {} : yield* Body.json(request, Restart)
        const agent = yield* agents.restart(principal, agentId, version)
        return { success: true, message: "Agent restarted", agent: toWire(agent) }
      }))

    yield* agentRoute("POST", "/v0/agents/:agentId/scripts/retry", (principal, agentId) =>
      Effect.as(agents.retryScripts(principal, agentId), { success: true, message: "Scripts relaunched" }))

    yield* agentRoute("GET", "/v0/agents/:agentId/devices", (principal, agentId) => agents.devices(principal, agentId))

    yield* agentRoute("POST", "/v0/agents/:agentId/platform/token", (principal, agentId) => agents.platformToken(principal, agentId))

    yield* agentRoute("GET", "/v0/agents/:agentId/gateway-token", (principal, agentId) =>
      Effect.map(agents.gatewayToken(principal, agentId), (token) => ({ gatewayToken: Redacted.value(token) })))

    yield* agentRoute("POST", "/v0/agents/:agentId/gateway-token/rotate", (principal, agentId) =>
      Effect.map(agents.rotateGatewayToken(principal, agentId), (token) => ({ success: true, gatewayToken: Redacted.value(token) })))

    yield* agentRoute("GET", "/v0/agents/:agentId/events", (principal, agentId) =>
      Effect.map(agents.history(principal, agentId), (events) => ({ agentId, events })))

    // Issues: only internal accounts may see that they exist.
    const internalOnly = (principal: Principal) =>
      workspaces.get(principal.workspaceId).pipe(
        Effect.flatMap((workspace) => Option.isSome(workspace) && workspace.value.internal ? Effect.void : Effect.fail(new AgentErrors.IssuesNotAvailable()))
      )

    yield* router.add("GET", "/v0/issues", (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* authorize(request)
        yield* internalOnly(principal)
        const rows = yield* sql<{ id: string; title: string; body: string; user_id: string; created_at: Date }>`
          SELECT id, title, body, user_id, created_at FROM cairn_issues WHERE workspace_id = ${principal.workspaceId} ORDER BY created_at`.pipe(Effect.orDie)
        return json({ issues: rows.map((r) => ({ id: r.id, title: r.title, body: r.body, userId: r.user_id, createdAt: r.created_at.toISOString() })) })
      })))

    yield* router.add("POST", "/v0/issues", (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* authorize(request)
        yield* internalOnly(principal)
        const input = yield* Body.json(request, FileIssue)
        const issueId = crypto.randomUUID()
        const at = yield* EventCodec.now
        const filed = new Issue.IssueFiled({ issueId, workspaceId: principal.workspaceId, userId: principal.userId, title: input.title, body: input.body ?? "", at })
        yield* store.append([{ stream: Issue.stream(issueId), expected: ExpectedVersion.NoStream, events: [encodeIssue(filed, { actor: principal.userId })] }])
        return json({ success: true, issue: { id: issueId, title: filed.title, body: filed.body, createdAt: at } }, 201)
      })))
  })
)
