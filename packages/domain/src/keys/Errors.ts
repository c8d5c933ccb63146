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

export type ApiKeyError = KeyNotFound | KeyAlreadyExists
