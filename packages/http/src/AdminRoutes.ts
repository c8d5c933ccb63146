/**
 * The operator API behind the admin token (`Authorization: Bearer <token>`; the token is `ADMIN_TOKEN` or the
 * file the server writes into DATA_DIR at first start). The admin CLI is its client: create and delete workspaces,
 * issue and revoke API keys, rotate the secrets master key.
 */
import { Agents, ApiKeys, SecretVault, Unauthorized, Workspaces } from "@cairn/application"
import { AdminToken } from "@cairn/auth"
import { ApiKey, Workspace } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { bearerToken } from "./Authenticate.ts"
import * as Body from "./Body.ts"
import { handled } from "./ErrorResponse.ts"
import { data, json } from "./Respond.ts"

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

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const admin = yield* AdminToken.AdminToken
    const workspaces = yield* Workspaces
    const keys = yield* ApiKeys
    const agents = yield* Agents
    const vault = yield* SecretVault

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
        return data(events.map((e) => ({ version: e.version, type: e.type, at: e.at, actor: e.actor, data: e.data })))
      })))

    yield* router.add("POST", "/admin/keys/:keyId/revoke", (request) =>
      handled(Effect.gen(function*() {
        yield* asAdmin(request)
        const { keyId = "" } = yield* HttpRouter.params
        yield* keys.revoke(keyId)
        return json({ data: null })
      })))
  })
)
