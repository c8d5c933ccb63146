/**
 * API keys: issuing one (a JWT for a user of an existing workspace), revoking it, and turning a presented token
 * into a principal. Issuing appends to the key's stream and asserts the workspace's stream exists in the same
 * transaction, so a key can never name a workspace that does not exist.
 */
import { TokenSigner } from "@cairn/auth"
import { ApiKey, Workspace } from "@cairn/domain"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { MissingUserId, type Principal, Unauthorized } from "./Access.ts"
import { encoder, load, now } from "./EventCodec.ts"

const encode = encoder(ApiKey.ApiKeyEvent)

export class ApiKeys extends Context.Service<ApiKeys>()("cairn/ApiKeys", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const signer = yield* TokenSigner

    const create = Effect.fn("ApiKeys.create")(function*(input: {
      readonly workspaceId: string
      readonly userId: string
      readonly scopes: ReadonlyArray<ApiKey.Scope>
      readonly expiresInSeconds?: number
    }) {
      const keyId = crypto.randomUUID()
      const now = yield* Clock.currentTimeMillis
      const expiresAt = input.expiresInSeconds === undefined ? null : new Date(now + input.expiresInSeconds * 1000).toISOString()
      const issued = new ApiKey.ApiKeyIssued({
        keyId,
        workspaceId: input.workspaceId,
        userId: input.userId,
        scopes: input.scopes,
        expiresAt,
        at: new Date(now).toISOString()
      })
      yield* store.append([
        { stream: Workspace.stream(input.workspaceId), expected: ExpectedVersion.StreamExists, events: [] },
        { stream: ApiKey.stream(keyId), expected: ExpectedVersion.NoStream, events: [encode(issued, { actor: "admin" })] }
      ]).pipe(
        Effect.catchTag("WrongExpectedVersion", (e) =>
          e.stream === Workspace.stream(input.workspaceId)
            ? Effect.fail(new Workspace.WorkspaceNotFound({ workspaceId: input.workspaceId }))
            : Effect.die(e))
      )
      const token = yield* signer.issueApiKey(
        { userId: input.userId, workspaceId: input.workspaceId, keyId, scopes: input.scopes },
        input.expiresInSeconds === undefined ? {} : { expiresInSeconds: input.expiresInSeconds }
      )
      return { keyId, token }
    })

    const revoke = Effect.fn("ApiKeys.revoke")(function*(keyId: string) {
      const { state, version } = yield* load(store, ApiKey.stream(keyId), ApiKey.ApiKeyEvent, ApiKey.initial, ApiKey.evolve)
      const at = yield* now
      const events = yield* Effect.fromResult(ApiKey.revoke(state, keyId, at))
      if (events.length === 0) return
      yield* store.append([{ stream: ApiKey.stream(keyId), expected: ExpectedVersion.Exact(version), events: events.map((e) => encode(e, { actor: "admin" })) }])
    })

    /** A presented bearer token as a principal: a valid signature, a known and unrevoked key, its own workspace. */
    const authenticate = (token: string): Effect.Effect<Principal, Unauthorized | MissingUserId> =>
      Effect.gen(function*() {
        const claims = yield* signer.verifyApiKey(token).pipe(
          Effect.mapError((e) => new Unauthorized({ reason: e.reason }))
        )
        const [key] = yield* sql<{ workspace_id: string; revoked_at: Date | null }>`
          SELECT workspace_id, revoked_at FROM cairn_api_keys WHERE key_id = ${claims.keyId}`.pipe(Effect.orDie)
        if (key === undefined) return yield* new Unauthorized({ reason: "unknown key" })
        if (key.revoked_at !== null) return yield* new Unauthorized({ reason: "revoked" })
        if (key.workspace_id !== claims.workspaceId) return yield* new Unauthorized({ reason: "workspace mismatch" })
        if (claims.userId === "") return yield* new MissingUserId()
        return { workspaceId: claims.workspaceId, userId: claims.userId, keyId: claims.keyId, scopes: claims.scopes }
      })

    return { create, revoke, authenticate }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
