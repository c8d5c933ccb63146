/**
 * What an administrator can ask of an API key: issue it (the service picks the id and the expiry, and proves the
 * workspace exists in the same append) and revoke it.
 */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { ApiKeyIssued } from "./Events.ts"

/** The key is recorded as it is issued: the command has the event's fields. */
export class IssueApiKey extends Schema.TaggedClass<IssueApiKey>()("IssueApiKey", fieldsOf(ApiKeyIssued.fields)) {}

/** Revoking is idempotent: a key already revoked stays revoked and nothing is recorded. */
export class RevokeApiKey extends Schema.TaggedClass<RevokeApiKey>()("RevokeApiKey", {
  keyId: Schema.String,
  at: Schema.String
}) {}

export const ApiKeyCommand = Schema.Union([IssueApiKey, RevokeApiKey])
export type ApiKeyCommand = typeof ApiKeyCommand.Type
