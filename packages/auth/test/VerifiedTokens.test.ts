import { VerifiedTokens } from "@cairn/auth"
import { assert, describe, it } from "@effect/vitest"

const claims = (keyId: string) => ({ userId: "u", workspaceId: "w", keyId, scopes: ["org:files:read"] })

describe("the memo of verified tokens", () => {
  it("forgets a token at its expiry", () => {
    const memo = VerifiedTokens.make()
    memo.remember("t", claims("k"), 2_000)
    assert.deepStrictEqual(memo.get("t", 1_999), claims("k"))
    assert.isUndefined(memo.get("t", 2_000))
    assert.isUndefined(memo.get("t", 1_000), "an expired entry is gone for good")
  })

  it("keeps at most its capacity, dropping the oldest", () => {
    const memo = VerifiedTokens.make(2)
    memo.remember("a", claims("a"), Infinity)
    memo.remember("b", claims("b"), Infinity)
    memo.remember("c", claims("c"), Infinity)
    assert.isUndefined(memo.get("a", 0))
    assert.deepStrictEqual([memo.get("b", 0)?.keyId, memo.get("c", 0)?.keyId], ["b", "c"])
  })

  it("knows only tokens it was given, by their exact text", () => {
    const memo = VerifiedTokens.make()
    memo.remember("header.payload.signature", claims("k"), Infinity)
    assert.isUndefined(memo.get("header.payload.signaturX", 0))
  })
})
