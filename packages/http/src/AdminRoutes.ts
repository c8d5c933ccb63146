/**
 * The operator API behind the admin token (`Authorization: Bearer <token>`; the token is `ADMIN_TOKEN` or the
 * file the server writes into DATA_DIR at first start). The admin CLI is its client: create and delete workspaces,
 * issue and revoke API keys, rotate the secrets master key.
 */
import { Agents, ApiKeys, SecretVault, Unauthorized, Workspaces } from "@cairn/application"
import { Templates } from "@cairn/application"
import { AdminToken } from "@cairn/auth"
import { ApiKey, Workspace } from "@cairn/domain"
import { ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import * as Base64 from "effect/encoding/Base64"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { bearerToken } from "./Authenticate.ts"
import * as Body from "./Body.ts"
import { handled } from "./ErrorResponse.ts"
import { data, json } from "./Respond.ts"
import { toWire as templateToWire } from "./v0/TemplatesRoutes.ts"

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
    const vault = yield* SecretVault
    const templates = yield* Templates

    const asAdmin = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const token = bearerToken(request)
        if (token === undefined || !(yield* admin.verify(token))) return yield* new Unauthorized({ reason: "not the admin token" })
      })

    yield* router.add("POST", "/admin/workspaces", (request) =>
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
    yield* router.add("DELETE", "/admin/workspaces/:workspaceId", (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { workspaceId = "" } = yield* HttpRouter.params
        yield* workspaces.remove(workspaceId)
        return json({ data: null })
      })))

    // Rewraps every workspace data key under the current master key (a new one, where the key file is Cairn's).
    yield* router.add("POST", "/admin/secrets/rotate-master-key", (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        return data(yield* vault.rotateMasterKey)
      })))

    yield* router.add("POST", "/admin/keys", (request) =>
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
    yield* router.add("GET", "/admin/agents/:agentId/events", (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { agentId = "" } = yield* HttpRouter.params
        const events = yield* agents.auditTrail(agentId)
        return data(events.map((e) => ({ stream: e.stream, version: e.version, type: e.type, at: e.at, actor: e.actor, data: e.data })))
      })))

    yield* router.add("POST", "/admin/keys/:keyId/revoke", (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { keyId = "" } = yield* HttpRouter.params
        yield* keys.revoke(keyId)
        return json({ data: null })
      })))

    // A public template (featured with `featured: true`); the same slug again publishes its next version.
    yield* router.add("POST", "/admin/templates", (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const input = yield* Body.json(request, PublishTemplate)
        const source = yield* templateSource(input)
        const { template, created, changed } = yield* templates.publishAsAdmin(source, { name: input.name, slug: input.slug, featured: input.featured })
        return data({ template: templateToWire(template), created, changed }, created ? 201 : 200)
      })))

    // Archives any template, whoever published it.
    yield* router.add("DELETE", "/admin/templates/:templateId", (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { templateId = "" } = yield* HttpRouter.params
        yield* templates.archiveAsAdmin(templateId)
        return json({ data: null })
      })))
  })
)
