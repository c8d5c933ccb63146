/** Why a secret command was refused (service interface, section 7). */
import { Schema } from "effect"

/** An unknown secret, another workspace's, or a deleted one. */
export class SecretNotFound extends Schema.TaggedError<SecretNotFound>()("SecretNotFound", { secretId: Schema.String }) {
  readonly status = 404
  override readonly message = "Secret not found"
}

export class DuplicateSecretName extends Schema.TaggedError<DuplicateSecretName>()("DuplicateSecretName", { name: Schema.String }) {
  readonly status = 409
  override readonly message = "Duplicate secret name"
}

/** Secret ids are random; a second create under the same id is refused. */
export class SecretAlreadyExists extends Schema.TaggedError<SecretAlreadyExists>()("SecretAlreadyExists", { secretId: Schema.String }) {
  readonly status = 409
  override readonly message = "Secret already exists"
}

/** A secret still attached to agents cannot be deleted; the message names them. */
export class SecretInUse extends Schema.TaggedError<SecretInUse>()("SecretInUse", {
  secretId: Schema.String,
  agents: Schema.Array(Schema.Struct({ agentId: Schema.String, name: Schema.String }))
}) {
  readonly status = 409
  override get message() {
    return `Secret is attached to agents: ${this.agents.map((a) => `${a.name} (${a.agentId})`).join(", ")}; detach it first`
  }
  get details() {
    return { agents: this.agents }
  }
}

/** The value changed while this change was being sealed for the version before: the client should try again. */
export class SecretChangedConcurrently extends Schema.TaggedError<SecretChangedConcurrently>()("SecretChangedConcurrently", {
  secretId: Schema.String
}) {
  readonly status = 409
  override readonly message = "Secret was changed concurrently, try again"
}

/** Two credentials OpenClaw reads for one provider would end up on one agent. */
export class ConflictingSecrets extends Schema.TaggedError<ConflictingSecrets>()("ConflictingSecrets", {
  provider: Schema.String,
  names: Schema.Array(Schema.String)
}) {
  readonly status = 409
  override readonly message = "Conflicting secrets"
  get details() {
    return { conflict: { provider: this.provider, secrets: this.names } }
  }
}

/** No master key is provisioned, so nothing can be sealed; the rest of the service works. */
export class SecretsNotConfigured extends Schema.TaggedError<SecretsNotConfigured>()("SecretsNotConfigured", {}) {
  readonly status = 503
  override readonly message = "Secrets not configured"
}

export type SecretError = SecretNotFound | SecretAlreadyExists | SecretInUse | SecretChangedConcurrently
