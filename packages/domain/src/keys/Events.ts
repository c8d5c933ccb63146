/**
 * What happens to an API key (stream `key-<id>`): it is issued to one user of one workspace with a set of scopes,
 * and may be revoked. These are stored: their schemas only ever grow optional fields.
 */
import { Schema } from "effect"

/**
 * What a key may do: read or change files (and signatures), read or change groups, the `/v0` agents API, and manage
 * the workspace's API keys (`/v3/pinata/keys`).
 */
export const Scope = Schema.Literals(["org:files:read", "org:files:write", "org:groups:read", "org:groups:write", "org:agents", "org:keys"])
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
