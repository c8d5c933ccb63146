/**
 * Signs and verifies the JWTs Cairn issues (API keys, platform tokens an agent acts with for an hour, and the grants
 * signed URLs carry) with an asymmetric key pair; the public keys are published as a JWKS at
 * `/.well-known/jwks.json`. Every node of one installation holds the same key (`CAIRN_SIGNING_KEY`), so what one
 * node signs, every node verifies. Revocation is not this module's concern: the application checks the key's id
 * against its revocation read model.
 */
import { Context, type Effect, Schema } from "effect"

export interface ApiKeyClaims {
  /** The user the key acts for (`sub`). */
  readonly userId: string
  readonly workspaceId: string
  /** The key's own id (`jti`), what revocation names. */
  readonly keyId: string
  readonly scopes: ReadonlyArray<string>
}

export interface IssueOptions {
  /** Seconds from now; no expiry when omitted. */
  readonly expiresInSeconds?: number
}

/** Why a token was not accepted; every reason maps to 401 at the HTTP layer. */
export class InvalidToken extends Schema.TaggedError<InvalidToken>()("InvalidToken", {
  reason: Schema.Literals(["malformed", "bad-signature", "expired", "wrong-issuer", "missing-claims"])
}) {
  override get message() {
    return `Invalid token: ${this.reason}`
  }
}

export interface Jwks {
  readonly keys: ReadonlyArray<Record<string, unknown>>
}

/** What a platform token says: an agent acting for its user in its workspace, for one hour. */
export interface PlatformClaims {
  readonly agentId: string
  readonly workspaceId: string
  readonly userId: string
}

export interface VerifiedPlatformToken extends PlatformClaims {
  /** ISO 8601. */
  readonly expiresAt: string
}

/**
 * What a signed URL grants, for whom, and until when: a private access link (`download`) or a presigned upload
 * (`upload`). A grant of one purpose never verifies as the other's, nor as an API key.
 */
export interface Grant {
  readonly purpose: "download" | "upload"
  /** Unique to this grant (`jti`): what a single use is recorded against. */
  readonly grantId: string
  readonly workspaceId: string
  readonly userId: string
  /** The API key that signed it, whose standing is checked again at every use. */
  readonly keyId: string
  /** Seconds since the epoch: when it was signed (`iat`) and when it stops working (`exp`). */
  readonly issuedAt: number
  readonly expiresAt: number
  /** What it allows, as the application defines it (a JSON object). */
  readonly terms: Readonly<Record<string, unknown>>
}

export class TokenSigner extends Context.Service<TokenSigner, {
  readonly issueApiKey: (claims: ApiKeyClaims, options?: IssueOptions) => Effect.Effect<string>
  /** A one-hour platform JWT (scope `platform`) an agent exchanges its gateway token for. */
  readonly issuePlatformToken: (claims: PlatformClaims) => Effect.Effect<{ readonly token: string; readonly expiresAt: string }>
  /**
   * The claims of a valid API key. A token with a valid signature but no user (`sub`) fails with
   * `missing-claims` only when the workspace or key id is missing; a missing user yields `userId: ""` so the
   * caller can answer `Missing userId`.
   */
  readonly verifyApiKey: (token: string) => Effect.Effect<ApiKeyClaims, InvalidToken>
  /**
   * The claims of a valid platform token, and when it expires. Any other token (an API key among them) fails with
   * `missing-claims`.
   */
  readonly verifyPlatformToken: (token: string) => Effect.Effect<VerifiedPlatformToken, InvalidToken>
  /** A signed URL's grant as a compact JWT. */
  readonly issueGrant: (grant: Grant) => Effect.Effect<string>
  /**
   * The grant a token carries, if it is one of this purpose, signed by one of our keys and not expired (by the
   * effect clock). A token of another purpose, or any other token, fails with `missing-claims`.
   */
  readonly verifyGrant: (token: string, purpose: Grant["purpose"]) => Effect.Effect<Grant, InvalidToken>
  /**
   * A compact JWS (ES256, `typ: cairn-seal`) over `payload`, by the active key: how a block of the log is sealed
   * (docs/audit-proofs.md). Anyone with the JWKS verifies it.
   */
  readonly signSeal: (payload: string) => Effect.Effect<string>
  /** The payload of a seal signed by one of our keys (the active one or a kept previous one). */
  readonly verifySeal: (jws: string) => Effect.Effect<string, InvalidToken>
  readonly jwks: Effect.Effect<Jwks>
}>()("cairn/TokenSigner") {}
