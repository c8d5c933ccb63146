/**
 * What an administrator can ask of an API key: issue it (the service picks the id and the expiry, and proves the
 * workspace exists in the same append) and revoke it.
 */
import { Schema } from "effect"
import { Scope } from "./Events.ts"

export class IssueApiKey extends Schema.TaggedClass<IssueApiKey>()("IssueApiKey", {
  keyId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  scopes: Schema.Array(Scope),
  /** When the key's JWT expires, or null for a key that does not. */
  expiresAt: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

/** Revoking is idempotent: a key already revoked stays revoked and nothing is recorded. */
export class RevokeApiKey extends Schema.TaggedClass<RevokeApiKey>()("RevokeApiKey", {
  keyId: Schema.String,
  at: Schema.String
}) {}

export const ApiKeyCommand = Schema.Union([IssueApiKey, RevokeApiKey])
export type ApiKeyCommand = typeof ApiKeyCommand.Type
