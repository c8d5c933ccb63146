/**
 * Who is calling (a verified API key's principal) and the documented refusals of access: 401 for anything wrong
 * with the credential, `Missing userId` for a key that names no user, 403 for a valid key without the scope.
 */
import { Schema } from "effect"

export interface Principal {
  readonly workspaceId: string
  readonly userId: string
  readonly keyId: string
  readonly scopes: ReadonlyArray<string>
}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  /** For logs only; the client is told nothing more than "Unauthorized". */
  reason: Schema.String
}) {
  readonly status = 401
  override readonly message = "Unauthorized"
}

export class MissingUserId extends Schema.TaggedError<MissingUserId>()("MissingUserId", {}) {
  readonly status = 401
  override readonly message = "Missing userId"
}

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", { scope: Schema.String }) {
  readonly status = 403
  override get message() {
    return `Forbidden: this key lacks the ${this.scope} scope`
  }
}
