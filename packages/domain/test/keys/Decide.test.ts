import { ApiKey } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const keyId = "k1"
const fields = { keyId, workspaceId: "w1", userId: "u1", scopes: ["org:files:read" as const], expiresAt: null, at }
const issued = new ApiKey.ApiKeyIssued(fields)
const revoked = new ApiKey.ApiKeyRevoked({ keyId, at })
const revoke = new ApiKey.RevokeApiKey({ keyId, at })

describe("an API key", () => {
  it("is issued once, and a second issue under its id is refused", () => {
    given(ApiKey.decider).when(new ApiKey.IssueApiKey(fields)).then([issued])
    given(ApiKey.decider, [issued]).when(new ApiKey.IssueApiKey(fields)).thenFails(new ApiKey.KeyAlreadyExists({ keyId }))
  })

  it("is revoked once: revoking it again records nothing", () => {
    given(ApiKey.decider, [issued]).when(revoke).then([revoked])
    given(ApiKey.decider, [issued, revoked]).when(revoke).then([])
    const state = given(ApiKey.decider, [issued]).when(revoke).state()
    assert.isTrue(Result.isSuccess(state) && state.success._tag === "Revoked" && state.success.issued.keyId === keyId)
  })

  it("that was never issued cannot be revoked: 404 Key not found", () => {
    const refused = given(ApiKey.decider).when(revoke)
    refused.thenFails(new ApiKey.KeyNotFound({ keyId }))
    const error = Result.getFailure(refused.decision)
    assert.isTrue(error._tag === "Some" && error.value.status === 404 && error.value.message === "Key not found")
  })

  it("is revoked by its own workspace only: another workspace's revoke finds no key", () => {
    given(ApiKey.decider, [issued]).when(new ApiKey.RevokeApiKey({ keyId, workspaceId: "w1", at })).then([revoked])
    given(ApiKey.decider, [issued]).when(new ApiKey.RevokeApiKey({ keyId, workspaceId: "w2", at })).thenFails(new ApiKey.KeyNotFound({ keyId }))
    given(ApiKey.decider, [issued, revoked]).when(new ApiKey.RevokeApiKey({ keyId, workspaceId: "w2", at })).thenFails(new ApiKey.KeyNotFound({ keyId }))
  })

  it("with maxUses counts its uses and is refused once they are spent, or once it is revoked", () => {
    const limited = new ApiKey.ApiKeyIssued({ ...fields, maxUses: 2, name: "twice" })
    const used = new ApiKey.ApiKeyUsed({ keyId, at })
    const use = new ApiKey.UseApiKey({ keyId, at })
    given(ApiKey.decider, [limited]).when(use).then([used])
    given(ApiKey.decider, [limited, used]).when(use).then([used])
    given(ApiKey.decider, [limited, used, used]).when(use).thenFails(new ApiKey.KeyExhausted({ keyId }))
    given(ApiKey.decider, [limited, used, revoked]).when(use).thenFails(new ApiKey.KeyRevoked({ keyId }))
    given(ApiKey.decider).when(use).thenFails(new ApiKey.KeyNotFound({ keyId }))
    const state = given(ApiKey.decider, [limited, used]).when(revoke).state()
    assert.isTrue(Result.isSuccess(state) && state.success._tag === "Revoked" && state.success.uses === 1)
  })
})
