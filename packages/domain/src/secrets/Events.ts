/**
 * What happens to a workspace secret (stream `secret-<id>`). A value is never in an event: only the ciphertext
 * sealed under the workspace's data key (`Sealed`), which opens only for this workspace, this secret and this value
 * version (they are its associated data).
 */
import { Schema } from "effect"

/** A value sealed with AES-256-GCM: base64 nonce and ciphertext (with its tag), and the data key that sealed it. */
export const Sealed = Schema.Struct({
  keyId: Schema.String,
  nonce: Schema.String,
  ciphertext: Schema.String
})
export type Sealed = typeof Sealed.Type

export class SecretCreated extends Schema.TaggedClass<SecretCreated>()("SecretCreated", {
  secretId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  sealed: Sealed,
  at: Schema.String
}) {}

/** The value was replaced; `version` is the new value's version (the first value is version 1). */
export class SecretValueChanged extends Schema.TaggedClass<SecretValueChanged>()("SecretValueChanged", {
  secretId: Schema.String,
  version: Schema.Int,
  sealed: Sealed,
  at: Schema.String
}) {}

export class SecretAttached extends Schema.TaggedClass<SecretAttached>()("SecretAttached", {
  secretId: Schema.String,
  agentId: Schema.String,
  /** The agent's name, so a refused delete can say which agents still use the secret. */
  agentName: Schema.String,
  at: Schema.String
}) {}

export class SecretDetached extends Schema.TaggedClass<SecretDetached>()("SecretDetached", {
  secretId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

export class SecretDeleted extends Schema.TaggedClass<SecretDeleted>()("SecretDeleted", {
  secretId: Schema.String,
  workspaceId: Schema.String,
  name: Schema.String,
  at: Schema.String
}) {}

export const SecretEvent = Schema.Union([SecretCreated, SecretValueChanged, SecretAttached, SecretDetached, SecretDeleted])
export type SecretEvent = typeof SecretEvent.Type
