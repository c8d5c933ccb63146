/**
 * API keys: issuing one (a JWT for a user of an existing workspace: by the operator, or by a key allowed to manage
 * keys, `org:keys`, through `/v3/pinata/keys`), listing a workspace's keys, revoking one, and turning a presented
 * token into a principal. Issuing decides the key's first event together with a check on the workspace's stream,
 * in one append, so a key can never name a workspace that does not exist (404 Workspace not found). A key with a
 * use limit (`maxUses`) counts each request it authenticates on its stream, which refuses it once they are spent.
 */
import { type ApiKeyClaims, TokenSigner } from "@cairn/auth"
import { ApiKey, Workspace } from "@cairn/domain"
import type { EventStoreUnavailable } from "@cairn/event-store"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Forbidden, MissingUserId, type Principal, Unauthorized } from "../Access.ts"
import { CommandHandler, decision, type TooMuchContention } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as ApiKeysTable from "../readmodels/ApiKeysTable.ts"

export type { KeyView } from "../readmodels/ApiKeysTable.ts"

/** A key made through `/v3/pinata/keys`: its name, Pinata's permissions, and an optional use limit. */
export interface SelfServiceKey {
  readonly keyName: string
  readonly permissions: ApiKey.Permissions
  readonly maxUses?: number
}

/** The filters of `/v3/pinata/keys`' list, and where its page starts. */
export type KeyListQuery = Omit<ApiKeysTable.PageQuery, "workspaceId" | "limit">

/** How many keys one page of the list holds. */
export const keysPerPage = 100

const hex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
const fromHex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16))
/** Equal bytes, in a time that does not depend on where they differ. */
const sameBytes = (a: Uint8Array, b: Uint8Array) => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!
  return difference === 0
}

export class ApiKeys extends Context.Service<ApiKeys>()("cairn/ApiKeys", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const keys = ApiKeysTable.queries(yield* SqlClient.SqlClient)
    const signer = yield* TokenSigner

    /** Records a key's issue (its workspace required in the same append) and signs its JWT. */
    const issue = Effect.fnUntraced(function*(fields: Omit<ApiKey.IssueApiKey, "_tag" | "keyId" | "at" | "expiresAt">, expiresInSeconds: number | undefined, actor: string) {
      const keyId = crypto.randomUUID()
      // One reading of the clock, so the recorded expiry and the issue time agree.
      const millis = yield* Clock.currentTimeMillis
      const expiresAt = expiresInSeconds === undefined ? null : new Date(millis + expiresInSeconds * 1000).toISOString()
      const at = new Date(millis).toISOString()
      const { workspaceId, userId, scopes } = fields
      yield* commands.executeAll([
        decision(Workspace.decider, Workspace.stream(workspaceId), new Workspace.RequireWorkspace({ workspaceId })),
        decision(ApiKey.decider, ApiKey.stream(keyId), new ApiKey.IssueApiKey({ ...fields, keyId, expiresAt, at }))
      ], { actor })
      const token = yield* signer.issueApiKey({ userId, workspaceId, keyId, scopes }, expiresInSeconds === undefined ? {} : { expiresInSeconds })
      return { keyId, token }
    })

    /** The operator's issue (the admin API and CLI). */
    const create = Effect.fn("ApiKeys.create")(function*(input: {
      readonly workspaceId: string
      readonly userId: string
      readonly scopes: ReadonlyArray<ApiKey.Scope>
      readonly expiresInSeconds?: number
    }) {
      const { workspaceId, userId, scopes } = input
      return yield* issue({ workspaceId, userId, scopes }, input.expiresInSeconds, "admin")
    })

    /**
     * A key made by a key that may manage keys (`org:keys`, which its route asks for), for the same workspace and
     * user, with Pinata's permissions as Cairn's scopes (`ApiKey.requested`): `admin` gives everything the creating
     * key may do, and a scope the creating key lacks is refused (403), so no key can make a stronger one. Answers the
     * JWT and the `pinata_api_key`/`pinata_api_secret` pair once; only the secret's SHA-256 is kept.
     */
    const createSelfService = Effect.fn("ApiKeys.createSelfService")(function*(principal: Principal, input: SelfServiceKey) {
      const name = yield* Effect.fromResult(ApiKey.validateKeyName(input.keyName))
      const maxUses = input.maxUses === undefined ? undefined : yield* Effect.fromResult(ApiKey.validateMaxUses(input.maxUses))
      const requested = yield* Effect.fromResult(ApiKey.requested(input.permissions))
      const missing = requested.scopes.find((scope) => !principal.scopes.includes(scope))
      if (missing !== undefined) return yield* new Forbidden({ scope: missing })
      const granted = requested.admin
        ? ApiKey.Scope.literals.filter((scope) => principal.scopes.includes(scope))
        : requested.scopes
      const secret = hex(crypto.getRandomValues(new Uint8Array(32)))
      const secretHash = hex(new Uint8Array(yield* Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)))))
      const { keyId, token } = yield* issue({
        workspaceId: principal.workspaceId,
        userId: principal.userId,
        scopes: granted,
        name,
        ...(maxUses === undefined ? {} : { maxUses }),
        secretHash,
        issuedBy: principal.keyId
      }, undefined, principal.userId)
      return { JWT: token, pinata_api_key: keyId, pinata_api_secret: secret }
    })

    /** A page of the caller's workspace's keys (any key of it, the operator's too), and how many match in all. */
    const list = Effect.fn("ApiKeys.list")(function*(principal: Principal, query: KeyListQuery) {
      return yield* keys.page({ ...query, workspaceId: principal.workspaceId, limit: keysPerPage })
    })

    /** Revokes a key of the caller's workspace (404 Key not found for any other); revoking it again succeeds. */
    const revokeInWorkspace = Effect.fn("ApiKeys.revokeInWorkspace")(function*(principal: Principal, keyId: string) {
      const command = new ApiKey.RevokeApiKey({ keyId, workspaceId: principal.workspaceId, at: yield* now })
      yield* commands.execute(ApiKey.decider, ApiKey.stream(keyId), command, { actor: principal.userId })
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

    /**
     * Counts a request against a limited key's `maxUses` on its stream: refused once they are spent (or the key was
     * revoked meanwhile), as the 401 of a key that is no longer good.
     */
    const use = (keyId: string, actor: string): Effect.Effect<void, Unauthorized | TooMuchContention | EventStoreUnavailable> =>
      Effect.flatMap(now, (at) =>
        commands.execute(ApiKey.decider, ApiKey.stream(keyId), new ApiKey.UseApiKey({ keyId, at }), { actor }).pipe(
          Effect.asVoid,
          Effect.catchTags({
            KeyExhausted: () => Effect.fail(new Unauthorized({ reason: "exhausted" })),
            KeyRevoked: () => Effect.fail(new Unauthorized({ reason: "revoked" })),
            KeyNotFound: () => Effect.fail(new Unauthorized({ reason: "unknown-key" })),
            KeyAlreadyExists: Effect.die
          })
        ))

    /** The rules a verified token's key must pass, in this order: known, not revoked, of the token's workspace, with a user. */
    const standsFor = (claims: ApiKeyClaims, standing: Option.Option<ApiKeysTable.KeyStanding>): Effect.Effect<Principal, Unauthorized | MissingUserId> => {
      if (Option.isNone(standing)) return Effect.fail(new Unauthorized({ reason: "unknown-key" }))
      if (standing.value.revoked) return Effect.fail(new Unauthorized({ reason: "revoked" }))
      if (standing.value.workspaceId !== claims.workspaceId) return Effect.fail(new Unauthorized({ reason: "wrong-workspace" }))
      if (claims.userId === "") return Effect.fail(new MissingUserId())
      return Effect.succeed({ workspaceId: claims.workspaceId, userId: claims.userId, keyId: claims.keyId, scopes: claims.scopes })
    }

    /**
     * A request's key admitted: the rules above, and, for a key with a use limit, a use left (this request is
     * counted on the key's stream).
     */
    const admit = (
      claims: ApiKeyClaims,
      standing: Option.Option<ApiKeysTable.KeyStanding>
    ): Effect.Effect<Principal, Unauthorized | MissingUserId | TooMuchContention | EventStoreUnavailable> =>
      Option.isSome(standing) && standing.value.limited
        ? Effect.flatMap(standsFor(claims, standing), (principal) => Effect.as(use(claims.keyId, claims.userId), principal))
        : standsFor(claims, standing)

    /** A presented bearer token as a principal: a valid signature, a known and unrevoked key, its own workspace. */
    // Every authenticated request's path: a chain of flatMaps rather than a generator.
    const authenticate = (token: string): Effect.Effect<Principal, Unauthorized | MissingUserId | TooMuchContention | EventStoreUnavailable> =>
      Effect.flatMap(verify(token), (claims) => Effect.flatMap(keys.standing(claims.keyId), (standing) => admit(claims, standing)))

    /**
     * The principal of claims already verified elsewhere (a signed URL's grant names the key that signed it): its
     * key's standing read now, so a revoked key's signed URLs stop working with it. A URL's use is not the key's own
     * request: it counts nothing against the key's `maxUses`.
     */
    const admitClaims = (claims: ApiKeyClaims): Effect.Effect<Principal, Unauthorized | MissingUserId> =>
      Effect.flatMap(keys.standing(claims.keyId), (standing) => standsFor(claims, standing))

    /**
     * A self-service key presented as its pair (`pinata_api_key`, `pinata_secret_api_key`: the legacy SDK's way), as a
     * principal: the secret's SHA-256 equal to the one recorded (compared in constant time), not expired, then the same
     * standing and use count as a JWT. Keys made without a secret (the operator's) have no pair.
     */
    const authenticatePair = (keyId: string, secret: string) =>
      Effect.gen(function*() {
        const found = yield* keys.pair(keyId)
        if (Option.isNone(found)) return yield* new Unauthorized({ reason: "unknown-key" })
        const presented = new Uint8Array(yield* Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret))))
        if (!sameBytes(presented, fromHex(found.value.secretHash))) return yield* new Unauthorized({ reason: "bad-signature" })
        if (found.value.expiresAt !== null && found.value.expiresAt.getTime() <= (yield* Clock.currentTimeMillis)) {
          return yield* new Unauthorized({ reason: "expired" })
        }
        return yield* admit(found.value.claims, yield* keys.standing(keyId))
      })

    return { create, createSelfService, list, revoke, revokeInWorkspace, authenticate, authenticatePair, verify, admit, admitClaims }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
