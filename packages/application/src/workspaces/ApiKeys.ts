/**
 * API keys: issuing one (a JWT for a user of an existing workspace), revoking it, and turning a presented token
 * into a principal. Issuing decides the key's first event together with a check on the workspace's stream, in one
 * append, so a key can never name a workspace that does not exist (404 Workspace not found).
 */
import { type ApiKeyClaims, TokenSigner } from "@cairn/auth"
import { ApiKey, Workspace } from "@cairn/domain"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { MissingUserId, type Principal, Unauthorized } from "../Access.ts"
import { CommandHandler, decision } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as ApiKeysTable from "../readmodels/ApiKeysTable.ts"

export class ApiKeys extends Context.Service<ApiKeys>()("cairn/ApiKeys", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const keys = ApiKeysTable.queries(yield* SqlClient.SqlClient)
    const signer = yield* TokenSigner

    const create = Effect.fn("ApiKeys.create")(function*(input: {
      readonly workspaceId: string
      readonly userId: string
      readonly scopes: ReadonlyArray<ApiKey.Scope>
      readonly expiresInSeconds?: number
    }) {
      const { workspaceId, userId, scopes } = input
      const keyId = crypto.randomUUID()
      // One reading of the clock, so the recorded expiry and the issue time agree.
      const millis = yield* Clock.currentTimeMillis
      const expiresAt = input.expiresInSeconds === undefined ? null : new Date(millis + input.expiresInSeconds * 1000).toISOString()
      const at = new Date(millis).toISOString()
      yield* commands.executeAll([
        decision(Workspace.decider, Workspace.stream(workspaceId), new Workspace.RequireWorkspace({ workspaceId })),
        decision(ApiKey.decider, ApiKey.stream(keyId), new ApiKey.IssueApiKey({ keyId, workspaceId, userId, scopes, expiresAt, at }))
      ], { actor: "admin" })
      const token = yield* signer.issueApiKey(
        { userId, workspaceId, keyId, scopes },
        input.expiresInSeconds === undefined ? {} : { expiresInSeconds: input.expiresInSeconds }
      )
      return { keyId, token }
    })

    /** Revokes the key; revoking a revoked key again succeeds and records nothing. */
    const revoke = Effect.fn("ApiKeys.revoke")(function*(keyId: string) {
      yield* commands.execute(ApiKey.decider, ApiKey.stream(keyId), new ApiKey.RevokeApiKey({ keyId, at: yield* now }), { actor: "admin" })
    })

    /**
     * The in-process half of authentication: the token's signature (remembered once verified), issuer and expiry.
     * Its key's standing still has to be read and `admit`ted.
     */
    const verify = (token: string): Effect.Effect<ApiKeyClaims, Unauthorized> =>
      Effect.mapError(signer.verifyApiKey(token), (e) => new Unauthorized({ reason: e.reason }))

    /** The rules a verified token's key must pass, in this order: known, not revoked, of the token's workspace. */
    const admit = (claims: ApiKeyClaims, standing: Option.Option<ApiKeysTable.KeyStanding>): Effect.Effect<Principal, Unauthorized | MissingUserId> => {
      if (Option.isNone(standing)) return Effect.fail(new Unauthorized({ reason: "unknown-key" }))
      if (standing.value.revoked) return Effect.fail(new Unauthorized({ reason: "revoked" }))
      if (standing.value.workspaceId !== claims.workspaceId) return Effect.fail(new Unauthorized({ reason: "wrong-workspace" }))
      if (claims.userId === "") return Effect.fail(new MissingUserId())
      return Effect.succeed({ workspaceId: claims.workspaceId, userId: claims.userId, keyId: claims.keyId, scopes: claims.scopes })
    }

    /** A presented bearer token as a principal: a valid signature, a known and unrevoked key, its own workspace. */
    // Every authenticated request's path: a chain of flatMaps rather than a generator.
    const authenticate = (token: string): Effect.Effect<Principal, Unauthorized | MissingUserId> =>
      Effect.flatMap(verify(token), (claims) => Effect.flatMap(keys.standing(claims.keyId), (standing) => admit(claims, standing)))

    /**
     * The principal of claims already verified elsewhere (a signed URL's grant names the key that signed it): its
     * key's standing read now and admitted, so a revoked key's signed URLs stop working with it.
     */
    const admitClaims = (claims: ApiKeyClaims): Effect.Effect<Principal, Unauthorized | MissingUserId> =>
      Effect.flatMap(keys.standing(claims.keyId), (standing) => admit(claims, standing))

    return { create, revoke, authenticate, verify, admit, admitClaims }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
