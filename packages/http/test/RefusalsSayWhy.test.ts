/**
 * What a client is told when Cairn refuses a request before any handler runs. A 401 keeps `error: "Unauthorized"`
 * and says why: `reason` in the body and RFC 6750's `WWW-Authenticate` challenge (docs/decisions/0021). A path Cairn
 * does not serve is a JSON 404 `Not found`; a path it serves with other methods is 405 `Method not allowed` with
 * an `Allow` header taken from the routes themselves.
 */
import { TokenSigner } from "@cairn/auth"
import { TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"

const api = TestRuntime.makeTestApi()
afterAll(api.dispose)

interface Refusal {
  readonly status: number
  readonly body: unknown
  readonly challenge: string | null
  readonly allow: string | null
}

const send = async (method: string, path: string, headers: Record<string, string> = {}): Promise<Refusal> => {
  const response = await api.web.handler(new Request(`http://cairn${path}`, { method, headers }))
  const text = await response.text()
  return {
    status: response.status,
    body: text === "" ? undefined : JSON.parse(text),
    challenge: response.headers.get("www-authenticate"),
    allow: response.headers.get("allow")
  }
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** A 401 with `reason`, and a challenge carrying the matching RFC 6750 error code. */
const assertRefused = (refusal: Refusal, reason: string, code: "invalid_token" | "invalid_request") => {
  assert.deepStrictEqual([refusal.status, refusal.body], [401, { error: "Unauthorized", reason }])
  assert.match(refusal.challenge ?? "", new RegExp(`^Bearer realm="cairn", error="${code}", error_description="[^"]+"$`))
}

/** A token for `claims`, signed by the server's own signer (so only what the test changes is wrong with it). */
const signed = (claims: { readonly workspaceId: string; readonly keyId: string }, expiresInSeconds?: number) =>
  api.runtime.runPromise(TokenSigner.use((signer) =>
    signer.issueApiKey(
      { userId: "ada", scopes: ["org:agents"], ...claims },
      expiresInSeconds === undefined ? {} : { expiresInSeconds }
    )
  ) as Effect.Effect<string>)

let workspaceId: string
let key: { readonly keyId: string; readonly token: string }

beforeAll(async () => {
  workspaceId = await api.workspace(5)
  key = await api.key(workspaceId)
}, 120_000)

describe("a refused credential", () => {
  it("without any credentials: reason missing-credentials, and a challenge without an error code", async () => {
    const refusal = await send("GET", "/v0/agents")
    assert.deepStrictEqual([refusal.status, refusal.body], [401, { error: "Unauthorized", reason: "missing-credentials" }])
    assert.strictEqual(refusal.challenge, `Bearer realm="cairn"`)
    assert.strictEqual((await send("GET", "/v3/files/public")).challenge, `Bearer realm="cairn"`)
  })

  it("an Authorization header of another scheme: not-bearer (invalid_request)", async () => {
    assertRefused(await send("GET", "/v0/agents", { authorization: "Basic YWRhOnNlY3JldA==" }), "not-bearer", "invalid_request")
  })

  it("a token that is not a JWT, or whose signature does not verify: malformed, bad-signature", async () => {
    assertRefused(await send("GET", "/v0/agents", bearer("not-a-jwt")), "malformed", "invalid_token")
    const [header, payload, signature] = key.token.split(".")
    const forged = `${header}.${payload}.${signature!.startsWith("A") ? "B" : "A"}${signature!.slice(1)}`
    assertRefused(await send("GET", "/v0/agents", bearer(forged)), "bad-signature", "invalid_token")
  })

  it("an expired, unknown, revoked or other workspace's key: expired, unknown-key, revoked, wrong-workspace", async () => {
    const expired = await send("GET", "/v0/agents", bearer(await signed({ workspaceId, keyId: key.keyId }, -60)))
    assertRefused(expired, "expired", "invalid_token")
    assert.include(expired.challenge, `error_description="The token has expired"`)
    const unknown = await signed({ workspaceId, keyId: crypto.randomUUID() })
    assertRefused(await send("GET", "/v0/agents", bearer(unknown)), "unknown-key", "invalid_token")
    const otherWorkspace = await api.workspace(1)
    const elsewhere = await signed({ workspaceId: otherWorkspace, keyId: key.keyId })
    assertRefused(await send("GET", "/v0/agents", bearer(elsewhere)), "wrong-workspace", "invalid_token")
    const revoked = await api.key(workspaceId)
    await api.request("POST", `/admin/keys/${revoked.keyId}/revoke`, TestRuntime.adminToken)
    assertRefused(await send("GET", "/v0/agents", bearer(revoked.token)), "revoked", "invalid_token")
  })

  it("an agent's rotated gateway token: stale-gateway-token; a wrong admin token: wrong-admin-token", async () => {
    const agentId = (await api.request("POST", "/v0/agents", key.token, { name: "refusals" })).body!["agent"].agentId as string
    const old = (await api.request("GET", `/v0/agents/${agentId}/gateway-token`, key.token)).body!["gatewayToken"] as string
    await api.request("POST", `/v0/agents/${agentId}/gateway-token/rotate`, key.token)
    assertRefused(await send("GET", `/v0/agents/${agentId}`, bearer(old)), "stale-gateway-token", "invalid_token")
    assertRefused(await send("DELETE", "/admin/workspaces/x", bearer("not-the-admin-token")), "wrong-admin-token", "invalid_token")
    const noAdmin = await send("POST", "/admin/workspaces")
    assert.deepStrictEqual([noAdmin.status, noAdmin.body, noAdmin.challenge], [401, { error: "Unauthorized", reason: "missing-credentials" }, `Bearer realm="cairn"`])
  })

  it("says nothing about the token or other keys", async () => {
    const refusal = await send("GET", "/v0/agents", bearer(await signed({ workspaceId, keyId: key.keyId }, -60)))
    const told = JSON.stringify(refusal.body) + (refusal.challenge ?? "")
    for (const secret of [key.keyId, workspaceId, key.token.split(".")[1]!]) assert.notInclude(told, secret)
  })
})

describe("a request no route takes", () => {
  it("on a path Cairn does not serve: 404 Not found, as JSON", async () => {
    for (const [method, path] of [["GET", "/nope"], ["GET", "/v0/agents/a/b/c/d"], ["POST", "/v3/nothing"], ["DELETE", "/"]] as const) {
      const refusal = await send(method, path)
      assert.deepStrictEqual([refusal.status, refusal.body, refusal.allow], [404, { error: "Not found" }, null], `${method} ${path}`)
    }
  })

  it("on a path Cairn serves with other methods: 405 Method not allowed, with the methods it serves in Allow", async () => {
    const cases = [
      ["DELETE", "/v0/agents", "GET, HEAD, POST"],
      ["PUT", "/ipfs/bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4", "GET, HEAD"],
      ["POST", "/readyz", "GET, HEAD"],
      ["PATCH", "/v0/agents/some-agent/config", "GET, HEAD, PUT"]
    ] as const
    for (const [method, path, allow] of cases) {
      const refusal = await send(method, path)
      assert.deepStrictEqual([refusal.status, refusal.body, refusal.allow], [405, { error: "Method not allowed" }, allow], `${method} ${path}`)
    }
  })
})
