/** Decides a secret command against the secret's state. Pure and total. */
import { Match, Result } from "effect"
import type { SecretCommand } from "./Commands.ts"
import { SecretAlreadyExists, SecretChangedConcurrently, type SecretError, SecretInUse, SecretNotFound } from "./Errors.ts"
import { SecretAttached, SecretCreated, SecretDeleted, SecretDetached, type SecretEvent, SecretValueChanged } from "./Events.ts"
import type { Secret, SecretState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<SecretEvent>, SecretError>

/** The secret as its workspace sees it; another workspace's secret, or a deleted one, is not found. */
export const visible = (state: SecretState, secretId: string, workspaceId: string): Result.Result<Secret, SecretNotFound> =>
  state._tag === "Active" && state.secret.workspaceId === workspaceId
    ? Result.succeed(state.secret)
    : Result.fail(new SecretNotFound({ secretId }))

export const decide = (command: SecretCommand, state: SecretState): Decision =>
  Match.valueTags(command, {
    CreateSecret: ({ _tag, ...fields }): Decision =>
      state._tag === "NoSecret"
        ? Result.succeed([new SecretCreated(fields)])
        : Result.fail(new SecretAlreadyExists({ secretId: fields.secretId })),
    ChangeSecretValue: ({ secretId, workspaceId, version, sealed, at }) =>
      Result.flatMap(visible(state, secretId, workspaceId), (secret): Decision =>
        version === secret.version + 1
          ? Result.succeed([new SecretValueChanged({ secretId, version, sealed, at })])
          : Result.fail(new SecretChangedConcurrently({ secretId }))),
    AttachSecret: ({ secretId, workspaceId, agentId, agentName, at }) =>
      Result.map(visible(state, secretId, workspaceId), (secret) =>
        secret.agents.has(agentId) ? [] : [new SecretAttached({ secretId, agentId, agentName, at })]),
    DetachSecret: ({ secretId, workspaceId, agentId, at }) =>
      Result.map(visible(state, secretId, workspaceId), (secret) =>
        secret.agents.has(agentId) ? [new SecretDetached({ secretId, agentId, at })] : []),
    DeleteSecret: ({ secretId, workspaceId, at }) =>
      Result.flatMap(visible(state, secretId, workspaceId), (secret): Decision =>
        secret.agents.size > 0
          ? Result.fail(new SecretInUse({ secretId, agents: [...secret.agents].map(([agentId, name]) => ({ agentId, name })) }))
          : Result.succeed([new SecretDeleted({ secretId, workspaceId, name: secret.name, at })]))
  })
