/**
 * What can be asked of an API key: issue it (an operator, or a key allowed to manage keys; the service picks the id
 * and the expiry, and proves the workspace exists in the same append), use it once (a key with a use limit), and
 * revoke it.
 */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { ApiKeyIssued } from "./Events.ts"

/** The key is recorded as it is issued: the command has the event's fields. */
export class IssueApiKey extends Schema.TaggedClass<IssueApiKey>()("IssueApiKey", fieldsOf(ApiKeyIssued.fields)) {}

/**
 * Revoking is idempotent: a key already revoked stays revoked and nothing is recorded. A workspace's key revokes
 * only that workspace's keys (`workspaceId`: another's is not found); the operator revokes any.
 */
export class RevokeApiKey extends Schema.TaggedClass<RevokeApiKey>()("RevokeApiKey", {
  keyId: Schema.String,
  workspaceId: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

/** Counts one request against a key's `maxUses`: refused once they are spent, or once the key is revoked. */
export class UseApiKey extends Schema.TaggedClass<UseApiKey>()("UseApiKey", {
  keyId: Schema.String,
  at: Schema.String
}) {}

export const ApiKeyCommand = Schema.Union([IssueApiKey, UseApiKey, RevokeApiKey])
export type ApiKeyCommand = typeof ApiKeyCommand.Type
