/**
 * An API key: a JWT Cairn signed for one user of one workspace with a set of scopes. The key's stream
 * (`key-<id>`) records its issue and its revocation; a revoked key is refused even while its JWT is valid.
 */
import { Result, Schema } from "effect"

export const Scope = Schema.Literals(["org:files:read", "org:files:write", "org:agents"])
export type Scope = typeof Scope.Type

export class ApiKeyIssued extends Schema.TaggedClass<ApiKeyIssued>()("ApiKeyIssued", {
  keyId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  scopes: Schema.Array(Scope),
  expiresAt: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

export class ApiKeyRevoked extends Schema.TaggedClass<ApiKeyRevoked>()("ApiKeyRevoked", {
  keyId: Schema.String,
  at: Schema.String
}) {}

export const ApiKeyEvent = Schema.Union([ApiKeyIssued, ApiKeyRevoked])
export type ApiKeyEvent = typeof ApiKeyEvent.Type

export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", { keyId: Schema.String }) {
  readonly status = 404
  override get message() {
    return "Key not found"
  }
}

export type ApiKeyState =
  | { readonly _tag: "NoKey" }
  | { readonly _tag: "Active"; readonly issued: ApiKeyIssued }
  | { readonly _tag: "Revoked"; readonly issued: ApiKeyIssued }

export const initial: ApiKeyState = { _tag: "NoKey" }

export const evolve = (state: ApiKeyState, event: ApiKeyEvent): ApiKeyState => {
  switch (event._tag) {
    case "ApiKeyIssued":
      return { _tag: "Active", issued: event }
    case "ApiKeyRevoked":
      return state._tag === "Active" ? { _tag: "Revoked", issued: state.issued } : state
  }
}

export const stream = (keyId: string) => `key-${keyId}`

/** Revoking is idempotent: a key already revoked stays revoked and nothing is written. */
export const revoke = (state: ApiKeyState, keyId: string, at: string): Result.Result<ReadonlyArray<ApiKeyEvent>, KeyNotFound> => {
  switch (state._tag) {
    case "NoKey":
      return Result.fail(new KeyNotFound({ keyId }))
    case "Active":
      return Result.succeed([new ApiKeyRevoked({ keyId, at })])
    case "Revoked":
      return Result.succeed([])
  }
}
