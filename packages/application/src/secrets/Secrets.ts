/**
 * Workspace secrets: create (the value sealed before anything is stored, the name claimed on its reservation stream
 * in the same append), list, change the value, delete (refused while attached), attach to agents and detach (each
 * decided on the agent's stream, where conflicting credentials are refused, and on every secret's own stream,
 * where a delete checks it), and what an agent's gateway gets at its start. A value is plaintext only inside
 * `Redacted`, between the request and the vault, and between the vault and the engine.
 */
import { Agent, Reservation, Secret } from "@cairn/domain"
import { Context, Effect, Layer, type Redacted, Result } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { CommandHandler, decision, type Loaded } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as SecretsTable from "../readmodels/SecretsTable.ts"
import { SecretVault } from "./SecretVault.ts"

export type { AgentSecretView, SecretListing, SecretView } from "../readmodels/SecretsTable.ts"

/** What an agent's gateway is started with: its secrets as variables, and which value versions those were. */
export interface Delivery {
  readonly environment: Readonly<Record<string, Redacted.Redacted<string>>>
  readonly delivered: ReadonlyArray<Agent.DeliveredSecret>
}

const view = (secret: Secret.Secret): SecretsTable.SecretView => ({
  id: secret.secretId,
  userId: secret.userId,
  name: secret.name,
  createdAt: secret.createdAt,
  updatedAt: secret.updatedAt
})

const activeSecret = (state: Secret.SecretState) => (state as Extract<Secret.SecretState, { _tag: "Active" }>).secret

export class Secrets extends Context.Service<Secrets>()("cairn/Secrets", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const vault = yield* SecretVault
    const table = SecretsTable.queries(yield* SqlClient.SqlClient)

    /** The secret as the caller's workspace sees it, as just loaded. */
    const loadVisible = (workspaceId: string, secretId: string) =>
      Effect.gen(function*() {
        const loaded = yield* commands.load(Secret.decider, Secret.stream(secretId))
        const secret = yield* Effect.fromResult(Secret.visible(loaded.state, secretId, workspaceId))
        return { loaded, secret }
      })

    const create = Effect.fn("Secrets.create")(function*(principal: Principal, input: { readonly name: unknown; readonly value: unknown }) {
      const name = yield* Effect.fromResult(Secret.validateName(input.name))
      const value = yield* Effect.fromResult(Secret.validateValue(input.value))
      const { workspaceId, userId } = principal
      const secretId = crypto.randomUUID()
      // Sealed first: without a master key nothing is stored (503), and no plaintext ever reaches the log.
      const sealed = yield* vault.seal(workspaceId, secretId, 1, value)
      const at = yield* now
      const [, { state }] = yield* commands.executeAll([
        decision(Reservation.decider, Secret.nameReservation(workspaceId, name), new Reservation.ClaimReservation({ owner: secretId, at })),
        decision(Secret.decider, Secret.stream(secretId), new Secret.CreateSecret({ secretId, workspaceId, userId, name, sealed, at }))
      ], { actor: userId }).pipe(Effect.catchTag("ReservationTaken", () => Effect.fail(new Secret.DuplicateSecretName({ name }))))
      return view(activeSecret(state))
    })

    const list = (principal: Principal) => table.inWorkspace(principal.workspaceId)

    const update = Effect.fn("Secrets.update")(function*(principal: Principal, secretId: string, input: { readonly value: unknown }) {
      const value = yield* Effect.fromResult(Secret.validateValue(input.value))
      const { loaded, secret } = yield* loadVisible(principal.workspaceId, secretId)
      const version = secret.version + 1
      const sealed = yield* vault.seal(principal.workspaceId, secretId, version, value)
      const command = new Secret.ChangeSecretValue({ secretId, workspaceId: principal.workspaceId, version, sealed, at: yield* now })
      const { state } = yield* commands.execute(Secret.decider, Secret.stream(secretId), command, { actor: principal.userId }, loaded)
      return view(activeSecret(state))
    })

    const remove = Effect.fn("Secrets.remove")(function*(principal: Principal, secretId: string) {
      const { workspaceId, userId } = principal
      const { loaded, secret } = yield* loadVisible(workspaceId, secretId)
      const at = yield* now
      yield* commands.executeAll([
        decision(Secret.decider, Secret.stream(secretId), new Secret.DeleteSecret({ secretId, workspaceId, at }), loaded),
        decision(Reservation.decider, Secret.nameReservation(workspaceId, secret.name), new Reservation.ReleaseReservation({ owner: secretId, at }))
      ], { actor: userId })
    })

    /**
     * The decisions that attach `secretIds` to an agent on the secrets' side, and the secrets as the agent will hold
     * them. Unknown or foreign ids are 404 `Secret not found`. Used by attach and by an agent's create.
     */
    const attachments = (workspaceId: string, agentId: string, agentName: string, secretIds: ReadonlyArray<string>, at: string) =>
      Effect.gen(function*() {
        const unique = [...new Set(secretIds)]
        const secrets = yield* Effect.forEach(unique, (secretId) => loadVisible(workspaceId, secretId))
        return {
          secrets: secrets.map(({ secret }): Agent.AttachedSecret => ({ secretId: secret.secretId, name: secret.name })),
          decisions: secrets.map(({ secret, loaded }) =>
            decision(Secret.decider, Secret.stream(secret.secretId), new Secret.AttachSecret({ secretId: secret.secretId, workspaceId, agentId, agentName, at }), loaded)
          )
        }
      })

    const liveAgent = (loaded: Loaded<Agent.AgentState>, agentId: string, workspaceId: string) => Effect.fromResult(Agent.visible(loaded.state, agentId, workspaceId))

    const attach = Effect.fn("Secrets.attach")(function*(principal: Principal, agentId: string, secretIds: ReadonlyArray<string>) {
      const { workspaceId, userId } = principal
      const at = yield* now
      yield* commands.executePlan(Effect.gen(function*() {
        const loaded = yield* commands.load(Agent.decider, Agent.stream(agentId))
        const agent = yield* liveAgent(loaded, agentId, workspaceId)
        const { secrets, decisions } = yield* attachments(workspaceId, agentId, agent.name, secretIds, at)
        return [decision(Agent.decider, Agent.stream(agentId), new Agent.AttachSecrets({ agentId, workspaceId, secrets, at }), loaded), ...decisions]
      }), { actor: userId })
      return new Set(secretIds).size
    })

    const detach = Effect.fn("Secrets.detach")(function*(principal: Principal, agentId: string, secretId: string) {
      const { workspaceId, userId } = principal
      const at = yield* now
      yield* commands.executePlan(Effect.gen(function*() {
        const agent = yield* commands.load(Agent.decider, Agent.stream(agentId))
        yield* liveAgent(agent, agentId, workspaceId)
        const { loaded } = yield* loadVisible(workspaceId, secretId)
        return [
          decision(Agent.decider, Agent.stream(agentId), new Agent.DetachSecret({ agentId, workspaceId, secretId, at }), agent),
          decision(Secret.decider, Secret.stream(secretId), new Secret.DetachSecret({ secretId, workspaceId, agentId, at }), loaded)
        ]
      }), { actor: userId })
    })

    /** The decisions that let go of every secret an agent holds, for its deletion. */
    const releaseAll = (agent: Agent.Agent, at: string) =>
      [...agent.secrets.keys()].map((secretId) =>
        decision(Secret.decider, Secret.stream(secretId), new Secret.DetachSecret({ secretId, workspaceId: agent.workspaceId, agentId: agent.agentId, at }))
      )

    const ofAgent = (agentId: string) => table.ofAgent(agentId)

    /** The agent's secrets, opened, for its gateway's next start. A value that does not open stops the start. */
    const deliveryFor = (agent: Agent.Agent) =>
      Effect.gen(function*() {
        const environment: Record<string, Redacted.Redacted<string>> = {}
        const delivered: Array<Agent.DeliveredSecret> = []
        for (const secretId of agent.secrets.keys()) {
          const { state } = yield* commands.load(Secret.decider, Secret.stream(secretId))
          const secret = Result.getOrUndefined(Secret.visible(state, secretId, agent.workspaceId))
          if (secret === undefined) continue
          environment[secret.name] = yield* vault.open(agent.workspaceId, secretId, secret.version, secret.sealed)
          delivered.push({ secretId, version: secret.version })
        }
        return { environment, delivered } satisfies Delivery
      })

    return { configured: vault.configured, create, list, update, remove, attachments, attach, detach, releaseAll, ofAgent, deliveryFor }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
