/**
 * Decides an API key command: a key is issued once, used at most `maxUses` times when it has a limit, and revoked
 * at most once. Pure and total.
 */
import { Match, Result } from "effect"
import type { ApiKeyCommand } from "./Commands.ts"
import { type ApiKeyError, KeyAlreadyExists, KeyExhausted, KeyNotFound, KeyRevoked } from "./Errors.ts"
import { type ApiKeyEvent, ApiKeyIssued, ApiKeyRevoked, ApiKeyUsed } from "./Events.ts"
import type { ApiKeyState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<ApiKeyEvent>, ApiKeyError>

export const decide = (command: ApiKeyCommand, state: ApiKeyState): Decision =>
  Match.valueTags(command, {
    IssueApiKey: ({ _tag, ...fields }): Decision =>
      state._tag === "NoKey"
        ? Result.succeed([new ApiKeyIssued(fields)])
        : Result.fail(new KeyAlreadyExists({ keyId: fields.keyId })),
    UseApiKey: ({ keyId, at }): Decision =>
      Match.valueTags(state, {
        NoKey: (): Decision => Result.fail(new KeyNotFound({ keyId })),
        Active: ({ issued, uses }): Decision =>
          issued.maxUses !== undefined && uses >= issued.maxUses
            ? Result.fail(new KeyExhausted({ keyId }))
            : Result.succeed([new ApiKeyUsed({ keyId, at })]),
        Revoked: (): Decision => Result.fail(new KeyRevoked({ keyId }))
      }),
    RevokeApiKey: ({ keyId, workspaceId, at }): Decision =>
      state._tag === "NoKey" || (workspaceId !== undefined && state.issued.workspaceId !== workspaceId)
        ? Result.fail(new KeyNotFound({ keyId }))
        : state._tag === "Active"
        ? Result.succeed([new ApiKeyRevoked({ keyId, at })])
        : Result.succeed([])
  })
