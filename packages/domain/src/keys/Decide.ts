/** Decides an API key command: a key is issued once, and revoked at most once. Pure and total. */
import { Match, Result } from "effect"
import type { ApiKeyCommand } from "./Commands.ts"
import { type ApiKeyError, KeyAlreadyExists, KeyNotFound } from "./Errors.ts"
import { type ApiKeyEvent, ApiKeyIssued, ApiKeyRevoked } from "./Events.ts"
import type { ApiKeyState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<ApiKeyEvent>, ApiKeyError>

export const decide = (command: ApiKeyCommand, state: ApiKeyState): Decision =>
  Match.valueTags(command, {
    IssueApiKey: ({ _tag, ...fields }): Decision =>
      state._tag === "NoKey"
        ? Result.succeed([new ApiKeyIssued(fields)])
        : Result.fail(new KeyAlreadyExists({ keyId: fields.keyId })),
    RevokeApiKey: ({ _tag, ...fields }): Decision =>
      Match.valueTags(state, {
        NoKey: (): Decision => Result.fail(new KeyNotFound({ keyId: fields.keyId })),
        Active: (): Decision => Result.succeed([new ApiKeyRevoked(fields)]),
        Revoked: (): Decision => Result.succeed([])
      })
  })
