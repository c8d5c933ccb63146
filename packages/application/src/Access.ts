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

/**
 * Why a credential was refused. Clients get it as `reason` beside `error: "Unauthorized"`, and as a sentence in
 * the `error_description` of `WWW-Authenticate` (docs/decisions/0021-unauthorized-says-why-and-unknown-routes.md).
 * It says what is wrong with the credential the client itself sent, never anything about other keys, workspaces or
 * agents.
 */
export const UnauthorizedReason = Schema.Literals([
  "missing-credentials",
  "not-bearer",
  "malformed",
  "bad-signature",
  "wrong-issuer",
  "missing-claims",
  "expired",
  "unknown-key",
  "revoked",
  "exhausted",
  "wrong-workspace",
  "stale-gateway-token",
  "wrong-admin-token",
  "wrong-agent",
  "other-workspace",
  "missing-scope",
  "cross-origin-cookie"
])
export type UnauthorizedReason = typeof UnauthorizedReason.Type

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  /** One of UnauthorizedReason wherever Cairn refuses a credential it verifies (a free-form string is allowed). */
  reason: Schema.String
}) {
  /** One sentence per reason, for people reading the response. */
  static readonly descriptions: Readonly<Record<UnauthorizedReason, string>> = {
    "missing-credentials": "No credentials: send Authorization: Bearer <API key>",
    "not-bearer": "The Authorization header is not of the form Bearer <token>",
    malformed: "The token is not a well-formed JWT",
    "bad-signature": "The token's signature does not verify",
    "wrong-issuer": "The token was issued by someone else",
    "missing-claims": "The token lacks the claims of an API key",
    expired: "The token has expired",
    "unknown-key": "The token names an API key this service does not know",
    revoked: "The API key has been revoked",
    exhausted: "The API key has been used as many times as it may (maxUses)",
    "wrong-workspace": "The token is not valid for the workspace it names",
    "stale-gateway-token": "Not this agent's current gateway token (it may have been rotated)",
    "wrong-admin-token": "Not the admin token",
    "wrong-agent": "A platform token is good for its own agent's routes only",
    "other-workspace": "The API key is of another workspace than the agent's",
    "missing-scope": "The API key lacks the org:agents scope the agent's host needs",
    "cross-origin-cookie": "The gw_token cookie is not taken on a request another site's page made: send the token as a bearer"
  }
  readonly status = 401
  override readonly message = "Unauthorized"
  get details() {
    return { reason: this.reason }
  }
  get description(): string {
    return Unauthorized.descriptions[this.reason as UnauthorizedReason] ?? "The credentials were refused"
  }
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
