import { HmacGatewayTokens, JoseTokenSigner } from "@cairn/auth/node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as jose from "jose"

const tokens = HmacGatewayTokens.make(Redacted.make("k".repeat(43)))

describe("gateway tokens", () => {
  it("match their agent at their generation only", () => {
    const token = Redacted.value(tokens.tokenFor("agent1", 0))
    assert.match(token, /^gw_[A-Za-z0-9_-]{43}$/)
    assert.isTrue(tokens.matches("agent1", 0, token))
    assert.isFalse(tokens.matches("agent1", 1, token), "a rotated token stops working")
    assert.isFalse(tokens.matches("agent2", 0, token), "one agent's token does not open another")
    assert.isFalse(tokens.matches("agent1", 0, token.slice(0, -1)))
  })

  it("depend on the server secret", () => {
    const other = HmacGatewayTokens.make(Redacted.make("x".repeat(43)))
    assert.notStrictEqual(Redacted.value(other.tokenFor("agent1", 0)), Redacted.value(tokens.tokenFor("agent1", 0)))
  })
})

describe("platform tokens", () => {
  it.effect("are one-hour JWTs naming the agent, its user and workspace", () =>
    Effect.gen(function*() {
      const keys = yield* JoseTokenSigner.generate
      const signer = yield* JoseTokenSigner.make(keys)
      const { token, expiresAt } = yield* signer.issuePlatformToken({ agentId: "a1", workspaceId: "w1", userId: "u1" })
      const claims = jose.decodeJwt(token)
      assert.deepInclude(claims, { sub: "u1", aid: "a1", wid: "w1", iss: "cairn" })
      assert.deepStrictEqual(claims["scp"], ["platform"])
      assert.strictEqual(claims.exp! - claims.iat!, 3600)
      assert.strictEqual(new Date(claims.exp! * 1000).toISOString(), expiresAt)
    }))
})
