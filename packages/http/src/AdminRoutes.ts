/**
 * The operator API behind the admin token (`Authorization: Bearer <token>`; the token is `ADMIN_TOKEN` or the
 * file the server writes into DATA_DIR at first start). The admin CLI is its client: create and delete workspaces,
 * issue and revoke API keys, rotate the secrets master key, read an agent's or a file's audit trail.
 */
import { Agents, AgentsAt, ApiKeys, AuditLog, fileAuditTrail, SecretVault, Unauthorized, Workspaces } from "@cairn/application"
import { Skills, Templates } from "@cairn/application"
import { AdminToken } from "@cairn/auth"
import { Agent, ApiKey, File, Template, Workspace } from "@cairn/domain"
import { ValidationFailed } from "@cairn/domain"
import { EventStore } from "@cairn/event-store"
import { Effect, Schema } from "effect"
import * as Base64 from "effect/encoding/Base64"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { bearerToken, missingCredentials } from "./Authenticate.ts"
import * as Body from "./Body.ts"
import { handled } from "./ErrorResponse.ts"
import { data, json } from "./Respond.ts"
import * as AdminWire from "./AdminWire.ts"
import * as RouteCatalog from "./RouteCatalog.ts"
import { toWire as templateToWire } from "./v0/TemplatesRoutes.ts"
import { detailAt } from "./v0/AgentsRoutes.ts"
import { atDescription } from "./v0/At.ts"

const NullEnvelope = Schema.Struct({ data: Schema.Null })

const CreateWorkspace = Schema.Struct({
  name: Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  plan: Schema.optional(Workspace.Plan),
  agentLimit: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 100_000 })))),
  internal: Schema.optional(Schema.Boolean)
})

const CreateKey = Schema.Struct({
  workspaceId: Schema.String.pipe(Schema.check(Schema.isMinLength(1))),
  userId: Schema.String,
  scopes: Schema.Array(ApiKey.Scope).pipe(Schema.check(Schema.isMinLength(1))),
  expiresInSeconds: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isGreaterThan(0))))
})

/** A public template from a folder the CLI read (files, base64), a repository, or a stored folder's CID. */
const PublishTemplate = Schema.Struct({
  files: Schema.optional(
    Schema.Array(Schema.Struct({ path: Schema.String, contentBase64: Schema.String })).pipe(Schema.check(Schema.isMaxLength(1000)))
  ),
  gitUrl: Schema.optional(Schema.String),
  branch: Schema.optional(Schema.String),
  ref: Schema.optional(Schema.String),
  path: Schema.optional(Schema.String),
  templateCid: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  slug: Schema.optional(Schema.String),
  featured: Schema.optional(Schema.Boolean)
})

/** The one folder a publish names, its files' bytes decoded. */
const templateSource = (input: typeof PublishTemplate.Type) =>
  Effect.gen(function*() {
    const given = [input.files, input.gitUrl, input.templateCid].filter((x) => x !== undefined).length
    if (given !== 1) return yield* new ValidationFailed({ detail: "give exactly one of files, gitUrl and templateCid" })
    if (input.files !== undefined) {
      const files = yield* Effect.forEach(input.files, (file) =>
        Effect.mapError(
          Effect.fromResult(Base64.decode(file.contentBase64)),
          () => new ValidationFailed({ detail: `files: the content of ${file.path} is not base64` })
        ).pipe(Effect.map((content) => ({ path: file.path, content }))))
      return { _tag: "Files" as const, files }
    }
    if (input.gitUrl !== undefined) {
      return { _tag: "Git" as const, git: { gitUrl: input.gitUrl, branch: input.branch, ref: input.ref, path: input.path } }
    }
    return { _tag: "Cid" as const, templateCid: input.templateCid ?? "" }
  })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const admin = yield* AdminToken.AdminToken
    const workspaces = yield* Workspaces
    const keys = yield* ApiKeys
    const agents = yield* Agents
    const agentsAt = yield* AgentsAt
    const skills = yield* Skills
    const vault = yield* SecretVault
    const templates = yield* Templates
    const store = yield* EventStore
    const auditLog = yield* AuditLog

    const asAdmin = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const token = bearerToken(request)
        if (token === undefined) return yield* missingCredentials(request)
        if (!(yield* admin.verify(token))) return yield* new Unauthorized({ reason: "wrong-admin-token" })
      })

    yield* RouteCatalog.add(router, { method: "POST", path: "/admin/workspaces", summary: "Create a workspace", auth: "admin", body: { schema: CreateWorkspace }, response: { status: 201, schema: AdminWire.WorkspaceCreated } }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const input = yield* Body.json(request, CreateWorkspace)
        const plan = input.plan ?? "free"
        const id = yield* workspaces.create({
          name: input.name,
          plan,
          internal: input.internal ?? false,
          ...(input.agentLimit === undefined ? {} : { agentLimit: input.agentLimit })
        })
        return data((yield* workspaces.get(id)).pipe((w) => (w._tag === "Some" ? w.value : { id })), 201)
      })))

    // Crypto-shredding: the workspace's secrets become unreadable for good, wherever their ciphertexts are.
    yield* RouteCatalog.add(router, { method: "DELETE", path: "/admin/workspaces/:workspaceId", summary: "Delete a workspace (its secrets are crypto-shredded)", auth: "admin", response: { schema: NullEnvelope }, errors: [new Workspace.WorkspaceNotFound({ workspaceId: "" }), new Workspace.WorkspaceHasAgents({ agents: 1 })] }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { workspaceId = "" } = yield* HttpRouter.params
        yield* workspaces.remove(workspaceId)
        return json({ data: null })
      })))

    // Rewraps every workspace data key under the current master key (a new one, where the key file is Cairn's).
    yield* RouteCatalog.add(router, { method: "POST", path: "/admin/secrets/rotate-master-key", summary: "Rewrap every workspace data key under the current master key", auth: "admin", response: { schema: AdminWire.MasterKeyRotated }, errors: AdminWire.rotateMasterKeyErrors }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        return data(yield* vault.rotateMasterKey)
      })))

    yield* RouteCatalog.add(router, { method: "POST", path: "/admin/keys", summary: "Issue an API key", auth: "admin", body: { schema: CreateKey }, response: { status: 201, schema: AdminWire.KeyIssued }, errors: [new Workspace.WorkspaceNotFound({ workspaceId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const input = yield* Body.json(request, CreateKey)
        const created = yield* keys.create({
          workspaceId: input.workspaceId,
          userId: input.userId,
          scopes: input.scopes,
          ...(input.expiresInSeconds === undefined ? {} : { expiresInSeconds: input.expiresInSeconds })
        })
        return data(created, 201)
      })))

    // The audit trail of one agent, whatever its workspace: every event with its actor and time.
    yield* RouteCatalog.add(router, { method: "GET", path: "/admin/agents/:agentId/events", summary: "An agent's audit trail, whatever its workspace", auth: "admin", response: { schema: AdminWire.AuditTrail }, errors: [new Agent.AgentNotFound({ agentId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { agentId = "" } = yield* HttpRouter.params
        const events = yield* agents.auditTrail(agentId)
        return data(events.map((e) => ({ stream: e.stream, version: e.version, position: e.position, type: e.type, at: e.at, actor: e.actor, data: e.data })))
      })))

    // Time travel for the operator: the agent at a point, whatever its workspace (a deleted agent's too, before its delete).
    yield* RouteCatalog.add(router, { method: "GET", path: "/admin/agents/:agentId", summary: "An agent as it was at a time or log position (`?at=`, required), whatever its workspace", description: atDescription, auth: "admin", query: Schema.Struct({ at: Schema.String }), response: { schema: AdminWire.AgentAt }, errors: [new Agent.AgentNotFound({ agentId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { agentId = "" } = yield* HttpRouter.params
        const at = new URL(request.url, "http://cairn").searchParams.get("at")
        if (at === null) return yield* new ValidationFailed({ detail: "at is required: an ISO time or a log position transactionId:globalPosition" })
        const point = yield* Effect.fromResult(agentsAt.parsePoint(at))
        const found = yield* agentsAt.anywhere(agentId, point)
        return data({
          ...detailAt({ ...found, skills: yield* skills.withSigners(found.skills) }, agents.engine),
          workspaceId: found.agent.workspaceId,
          domains: found.domains,
          channels: found.channels,
          tasks: found.tasks,
          config: found.config
        })
      })))

    // The audit trail of a file by its CID (every file of it, in every workspace, and the CID's signatures) or id.
    yield* RouteCatalog.add(router, { method: "GET", path: "/admin/files/:cid/events", summary: "A file's audit trail (by CID or file id), whatever its workspace", auth: "admin", response: { schema: AdminWire.AuditTrail }, errors: [new File.FileNotFound({ fileId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { cid = "" } = yield* HttpRouter.params
        const events = yield* fileAuditTrail(cid).pipe(Effect.provideService(EventStore, store))
        return data(events.map((e) => ({ stream: e.stream, version: e.version, position: e.position, type: e.type, at: e.at, actor: e.actor, data: e.data })))
      })))

    yield* RouteCatalog.add(router, { method: "POST", path: "/admin/audit/verify", summary: "Check the whole log against its seals: every event's hash, every block's root, link and signature", description: "Reads the log again from its start (docs/audit-proofs.md). `ok: false` names the first broken link in `broken`: its block, the event to blame (position, stream, version) when there is one, and the check that failed. `unsealed`: events recorded since the last block (the sealer seals them within seconds), checked by a later run.", auth: "admin", response: { schema: AdminWire.LogVerified } }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        return data(yield* auditLog.verify)
      })))

    yield* RouteCatalog.add(router, { method: "POST", path: "/admin/keys/:keyId/revoke", summary: "Revoke an API key", auth: "admin", response: { schema: NullEnvelope }, errors: [new ApiKey.KeyNotFound({ keyId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { keyId = "" } = yield* HttpRouter.params
        yield* keys.revoke(keyId)
        return json({ data: null })
      })))

    // A public template (featured with `featured: true`); the same slug again publishes its next version.
    yield* RouteCatalog.add(router, { method: "POST", path: "/admin/templates", summary: "Publish a public template (the same slug again publishes its next version)", auth: "admin", body: { schema: PublishTemplate }, response: { status: 201, schema: AdminWire.TemplatePublished }, otherResponses: [{ status: 200, schema: AdminWire.TemplatePublished, description: "The slug's next version (or the same folder again)" }], errors: [new Template.InvalidTemplate({ errors: [] }), new Template.DuplicateTemplateSlug({ slug: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const input = yield* Body.json(request, PublishTemplate)
        const source = yield* templateSource(input)
        const { template, created, changed } = yield* templates.publishAsAdmin(source, { name: input.name, slug: input.slug, featured: input.featured })
        return data({ template: templateToWire(template), created, changed }, created ? 201 : 200)
      })))

    // Archives any template, whoever published it.
    yield* RouteCatalog.add(router, { method: "DELETE", path: "/admin/templates/:templateId", summary: "Archive any template", auth: "admin", response: { schema: NullEnvelope }, errors: [new Template.TemplateNotFound({ template: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { templateId = "" } = yield* HttpRouter.params
        yield* templates.archiveAsAdmin(templateId)
        return json({ data: null })
      })))
  })
)
