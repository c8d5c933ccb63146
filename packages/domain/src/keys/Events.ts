/**
 * What happens to an API key (stream `key-<id>`): it is issued to one user of one workspace with a set of scopes,
 * used (only a key with a use limit records its uses), and may be revoked. These are stored: their schemas only
 * ever grow optional fields.
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
  at: Schema.String,
  /** The name a key made through `/v3/pinata/keys` was given (`keyName`). */
  name: Schema.optional(Schema.String),
  /** How many requests the key may authenticate (`maxUses`); unlimited when absent. */
  maxUses: Schema.optional(Schema.Int),
  /**
   * The SHA-256 (hex) of the `pinata_api_secret` a key made through `/v3/pinata/keys` was given with it; the
   * secret itself is answered once and kept nowhere.
   */
  secretHash: Schema.optional(Schema.String),
  /** The key that made this one through `/v3/pinata/keys`; absent for a key the operator issued. */
  issuedBy: Schema.optional(Schema.String)
}) {}

/** The key authenticated one request: recorded only for a key with `maxUses`, to count against it. */
export class ApiKeyUsed extends Schema.TaggedClass<ApiKeyUsed>()("ApiKeyUsed", {
  keyId: Schema.String,
  at: Schema.String
}) {}

export class ApiKeyRevoked extends Schema.TaggedClass<ApiKeyRevoked>()("ApiKeyRevoked", {
  keyId: Schema.String,
  at: Schema.String
}) {}

export const ApiKeyEvent = Schema.Union([ApiKeyIssued, ApiKeyUsed, ApiKeyRevoked])
export type ApiKeyEvent = typeof ApiKeyEvent.Type
