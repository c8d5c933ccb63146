import { Secret } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const secretId = "s1"
const sealed = (n: number) => ({ keyId: "dk-1", nonce: `nonce-${n}`, ciphertext: `ciphertext-${n}` })
const created = new Secret.SecretCreated({ secretId, workspaceId: "w", userId: "u", name: "ANTHROPIC_API_KEY", sealed: sealed(1), at })
const attached = new Secret.SecretAttached({ secretId, agentId: "a1", agentName: "helper", at })
const change = (version: number, workspaceId = "w") => new Secret.ChangeSecretValue({ secretId, workspaceId, version, sealed: sealed(version), at })

describe("a secret", () => {
  it("is created once, sealed, at version 1", () => {
    const create = new Secret.CreateSecret({ secretId, workspaceId: "w", userId: "u", name: "ANTHROPIC_API_KEY", sealed: sealed(1), at })
    given(Secret.decider).when(create).then([created])
    given(Secret.decider, [created]).when(create).thenFails(new Secret.SecretAlreadyExists({ secretId }))
    const state = given(Secret.decider, [created]).when(change(2)).state()
    assert.isTrue(Result.isSuccess(state) && state.success._tag === "Active" && state.success.secret.version === 2)
  })

  it("takes a new value only as the next version, so a ciphertext is bound to the version it was sealed for", () => {
    given(Secret.decider, [created]).when(change(2)).then([new Secret.SecretValueChanged({ secretId, version: 2, sealed: sealed(2), at })])
    given(Secret.decider, [created]).when(change(3)).thenFails(new Secret.SecretChangedConcurrently({ secretId }))
    given(Secret.decider, [created, new Secret.SecretValueChanged({ secretId, version: 2, sealed: sealed(2), at })]).when(change(2))
      .thenFails(new Secret.SecretChangedConcurrently({ secretId }))
  })

  it("is not found by another workspace, nor once deleted", () => {
    const deleted = new Secret.SecretDeleted({ secretId, workspaceId: "w", name: "ANTHROPIC_API_KEY", at })
    given(Secret.decider, [created]).when(change(2, "other")).thenFails(new Secret.SecretNotFound({ secretId }))
    given(Secret.decider, [created, deleted]).when(change(2)).thenFails(new Secret.SecretNotFound({ secretId }))
    given(Secret.decider).when(new Secret.DeleteSecret({ secretId, workspaceId: "w", at })).thenFails(new Secret.SecretNotFound({ secretId }))
  })

  it("cannot be deleted while attached: 409 naming the agents", () => {
    const refusal = given(Secret.decider, [created, attached]).when(new Secret.DeleteSecret({ secretId, workspaceId: "w", at }))
    refusal.thenFails(new Secret.SecretInUse({ secretId, agents: [{ agentId: "a1", name: "helper" }] }))
    const error = Result.getFailure(refusal.decision)
    assert.isTrue(error._tag === "Some" && error.value.status === 409 && error.value.message.includes("helper (a1)"))
    const detached = new Secret.SecretDetached({ secretId, agentId: "a1", at })
    given(Secret.decider, [created, attached, detached]).when(new Secret.DeleteSecret({ secretId, workspaceId: "w", at }))
      .then([new Secret.SecretDeleted({ secretId, workspaceId: "w", name: "ANTHROPIC_API_KEY", at })])
  })

  it("records an attachment or a detachment once", () => {
    const attach = new Secret.AttachSecret({ secretId, workspaceId: "w", agentId: "a1", agentName: "helper", at })
    given(Secret.decider, [created]).when(attach).then([attached])
    given(Secret.decider, [created, attached]).when(attach).then([])
    given(Secret.decider, [created]).when(new Secret.DetachSecret({ secretId, workspaceId: "w", agentId: "a1", at })).then([])
  })
})

describe("a secret's name and value", () => {
  it("must be an environment variable name of at most 128 characters, not one the engine sets", () => {
    for (const good of ["ANTHROPIC_API_KEY", "_x", "a1", "X".repeat(128)]) assert.isTrue(Result.isSuccess(Secret.validateName(good)), good)
    for (const bad of [undefined, "", "1ABC", "A-B", "A B", "é", "X".repeat(129), "PATH", "HOME", "OPENCLAW_GATEWAY_TOKEN", "CAIRN_X"]) {
      const error = Result.getFailure(Secret.validateName(bad))
      assert.isTrue(error._tag === "Some" && error.value.message.startsWith("Validation failed: "), String(bad))
    }
  })

  it("must hold 1 byte to 64 KiB, and a refusal never quotes it", () => {
    assert.isTrue(Result.isSuccess(Secret.validateValue("x".repeat(64 * 1024))))
    for (const bad of [undefined, "", "x".repeat(64 * 1024 + 1), "é".repeat(32 * 1024 + 1)]) {
      const error = Result.getFailure(Secret.validateValue(bad))
      assert.isTrue(error._tag === "Some" && !error.value.message.includes("xxxx") && !error.value.message.includes("éé"), String(bad).slice(0, 10))
    }
  })
})

describe("conflicting credentials", () => {
  it("are two of OpenClaw's candidates for one provider, named in its precedence order", () => {
    assert.deepStrictEqual(Secret.conflictAmong(["OPENAI_API_KEY", "CODEX_API_KEY"]), { provider: "openai", names: ["CODEX_API_KEY", "OPENAI_API_KEY"] })
    assert.deepStrictEqual(Secret.conflictAmong(["GOOGLE_API_KEY", "GEMINI_API_KEY"])?.provider, "google")
    assert.deepStrictEqual(Secret.conflictAmong(["HF_TOKEN", "HUGGINGFACE_HUB_TOKEN"])?.provider, "huggingface")
    assert.strictEqual(Secret.conflictAmong(["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "MY_TOKEN"]), undefined)
  })
})
