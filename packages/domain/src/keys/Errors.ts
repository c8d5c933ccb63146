/** Why an API key command was refused. */
import { Schema } from "effect"

export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", { keyId: Schema.String }) {
  readonly status = 404
  override readonly message = "Key not found"
}

/** Key ids are random; a second issue under the same id is refused rather than overwriting the first key. */
export class KeyAlreadyExists extends Schema.TaggedError<KeyAlreadyExists>()("KeyAlreadyExists", { keyId: Schema.String }) {
  readonly status = 409
  override readonly message = "Key already exists"
}

/** A key with `maxUses` has authenticated as many requests as it may: the service refuses it as 401 (`exhausted`). */
export class KeyExhausted extends Schema.TaggedError<KeyExhausted>()("KeyExhausted", { keyId: Schema.String }) {
  readonly status = 401
  override readonly message = "Unauthorized"
}

/** A revoked key asked to be used: the service refuses it as 401 (`revoked`). */
export class KeyRevoked extends Schema.TaggedError<KeyRevoked>()("KeyRevoked", { keyId: Schema.String }) {
  readonly status = 401
  override readonly message = "Unauthorized"
}

export type ApiKeyError = KeyNotFound | KeyAlreadyExists | KeyExhausted | KeyRevoked
