/**
 * `/v0/secrets` and an agent's secrets: create, list, change a value, delete (409 while attached), attach to an
 * agent and detach. A value goes in and never comes out: responses carry names and times only.
 */
import { Secrets, type SecretView } from "@cairn/application"
import { Agent, Secret } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

// Fields are checked by the domain's rules, so a missing or empty one gets its documented `Validation failed`.
const CreateSecret = Schema.Struct({ name: Schema.optional(Schema.Unknown), value: Schema.optional(Schema.Unknown) })
const ChangeValue = Schema.Struct({ value: Schema.optional(Schema.Unknown) })
const AttachSecrets = Schema.Struct({
  secretIds: Schema.Array(Schema.String).pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(100)))
})

/** A secret as the routes answer it (and encode it: nothing else leaves, a value least of all). */
const SecretWire = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
const SecretListingWire = Schema.Struct({
  ...SecretWire.fields,
  agents: Schema.Array(Schema.Struct({ agentId: Schema.String, name: Schema.String }))
})

const toWire = (secret: SecretView) => ({
  id: secret.id,
  userId: secret.userId,
  name: secret.name,
  createdAt: secret.createdAt,
  updatedAt: secret.updatedAt
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route, agentRoute } = yield* Kit.make(router)
    const secrets = yield* Secrets

    yield* route("GET", "/v0/secrets", { summary: "List the workspace's secrets (names and times, never values)", response: { schema: Schema.Struct({ secrets: Schema.Array(SecretListingWire) }) } }, ({ principal }) =>
      Effect.map(secrets.list(principal), (list) => ({ secrets: list.map((s) => ({ ...toWire(s), agents: s.agents })) })))

    yield* route("POST", "/v0/secrets", { summary: "Create a secret", body: { schema: CreateSecret }, response: { status: 201, schema: Schema.Struct({ success: Schema.Boolean, secret: SecretWire }) }, errors: [new Secret.DuplicateSecretName({ name: "" }), new Secret.SecretsNotConfigured()] }, ({ principal, body }) =>
      Effect.gen(function*() {
        const input = yield* body(CreateSecret)
        const secret = yield* secrets.create(principal, { name: input.name, value: input.value })
        return Kit.created({ success: true, secret: toWire(secret) })
      }))

    yield* route("PUT", "/v0/secrets/:secretId", { summary: "Change a secret's value", body: { schema: ChangeValue }, response: { schema: Schema.Struct({ success: Schema.Boolean, secret: SecretWire }) }, errors: [new Secret.SecretNotFound({ secretId: "" }), new Secret.SecretChangedConcurrently({ secretId: "" }), new Secret.SecretsNotConfigured()] }, ({ principal, params, body }) =>
      Effect.gen(function*() {
        const input = yield* body(ChangeValue)
        const secret = yield* secrets.update(principal, params["secretId"] ?? "", { value: input.value })
        return { success: true, secret: toWire(secret) }
      }))

    yield* route("DELETE", "/v0/secrets/:secretId", { summary: "Delete a secret (refused while attached)", response: { schema: Kit.Done }, errors: [new Secret.SecretNotFound({ secretId: "" }), new Secret.SecretInUse({ secretId: "", agents: [] })] }, ({ principal, params }) =>
      Effect.as(secrets.remove(principal, params["secretId"] ?? ""), { success: true, message: "Secret deleted" }))

    yield* agentRoute("POST", "/v0/agents/:agentId/secrets", { summary: "Attach secrets to an agent", body: { schema: AttachSecrets }, response: { schema: Schema.Struct({ success: Schema.Boolean, attached: Schema.Int }) }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Secret.SecretNotFound({ secretId: "" }), new Secret.ConflictingSecrets({ provider: "", names: [] })] }, ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const { secretIds } = yield* body(AttachSecrets)
        return { success: true, attached: yield* secrets.attach(principal, agentId, secretIds) }
      }))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/secrets/:secretId", { summary: "Detach a secret from an agent", response: { schema: Kit.Done }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Secret.SecretNotFound({ secretId: "" })] }, ({ principal, agentId, params }) =>
      Effect.as(secrets.detach(principal, agentId, params["secretId"] ?? ""), { success: true, message: "Secret detached" }))
  })
)
