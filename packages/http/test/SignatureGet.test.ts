/**
 * `GET /v3/files/{network}/signature/{cid}` reads the caller's key standing and the signature in one database round
 * trip (docs/performance.md, bench:http). What a client is told must not change with it: the same refusals as every
 * authenticated route, in the same order (the token, the key's standing, the scope, then the path, then the
 * signature), and the same answer headers.
 */
import { TokenSigner } from "@cairn/auth"
import { TestRuntime } from "@cairn/runtime/testing"
import { domain, primaryType, types } from "@cairn/signatures"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { base58btc } from "multiformats/bases/base58"
import { CID } from "multiformats/cid"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

const api = TestRuntime.makeTestApi()
afterAll(api.dispose)

interface Answer {
  readonly status: number
  readonly body: unknown
  readonly headers: Headers
}

const get = async (path: string, token?: string, headers: Record<string, string> = {}): Promise<Answer> => {
  const response = await api.web.handler(new Request(`http://cairn${path}`, {
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers }
  }))
  return { status: response.status, body: JSON.parse(await response.text()), headers: response.headers }
}
const refused = (answer: Answer, reason: string) =>
  assert.deepStrictEqual([answer.status, answer.body], [401, { error: "Unauthorized", reason }], reason)

/** A token for `claims`, signed by the server's own signer (so only what the test changes is wrong with it). */
const signed = (claims: { readonly workspaceId: string; readonly keyId: string }, expiresInSeconds?: number) =>
  api.runtime.runPromise(TokenSigner.use((signer) =>
    signer.issueApiKey(
      { userId: "ada", scopes: ["org:files:read"], ...claims },
      expiresInSeconds === undefined ? {} : { expiresInSeconds }
    )
  ) as Effect.Effect<string>)

const account = privateKeyToAccount(generatePrivateKey())
let workspaceId: string
let owner: { readonly keyId: string; readonly token: string }
let neighbour: string
let publicCid: string
let publicSignature: string
let privateCid: string
let privateSignature: string
let unsigned: string

/** Uploads a file and signs it, through the API; its CID and signature. */
const uploadSigned = async (network: "public" | "private", content: string) => {
  const form = new FormData()
  form.append("file", new Blob([content]), "signed.txt")
  form.append("network", network)
  const uploaded = await api.web.handler(new Request("http://cairn/v3/files", {
    method: "POST",
    headers: { authorization: `Bearer ${owner.token}` },
    body: form
  }))
  const file = (await uploaded.json() as { data: { cid: string; created_at: string } }).data
  const signature = await account.signTypedData({ domain, types, primaryType, message: { address: account.address, cid: file.cid, date: file.created_at } })
  const added = await api.request("POST", `/v3/files/${network}/signature/${file.cid}`, owner.token, { signature, address: account.address })
  assert.strictEqual(added.status, 200, JSON.stringify(added.body))
  return { cid: file.cid, signature }
}

beforeAll(async () => {
  workspaceId = await api.workspace(1)
  owner = await api.key(workspaceId, ["org:files:read", "org:files:write"])
  neighbour = (await api.key(await api.workspace(1), ["org:files:read"])).token
  ;({ cid: publicCid, signature: publicSignature } = await uploadSigned("public", `public ${crypto.randomUUID()}`))
  ;({ cid: privateCid, signature: privateSignature } = await uploadSigned("private", `private ${crypto.randomUUID()}`))
  unsigned = (await uploadUnsigned()).cid
}, 120_000)

/** A file no one signed. */
const uploadUnsigned = async () => {
  const form = new FormData()
  form.append("file", new Blob([`unsigned ${crypto.randomUUID()}`]), "u.txt")
  form.append("network", "public")
  const uploaded = await api.web.handler(new Request("http://cairn/v3/files", { method: "POST", headers: { authorization: `Bearer ${owner.token}` }, body: form }))
  return (await uploaded.json() as { data: { cid: string } }).data
}

describe("a signature GET", () => {
  it("answers the signature as JSON, with HSTS and a request id", async () => {
    const answer = await get(`/v3/files/public/signature/${publicCid}`, owner.token, { "x-request-id": "sig-get-1" })
    assert.deepStrictEqual([answer.status, answer.body], [200, { data: { cid: publicCid, signature: publicSignature } }])
    assert.strictEqual(answer.headers.get("content-type"), "application/json; charset=utf-8")
    assert.strictEqual(answer.headers.get("strict-transport-security"), "max-age=31536000; includeSubDomains")
    assert.strictEqual(answer.headers.get("x-request-id"), "sig-get-1")
  })

  it("answers under the canonical CID when the path names it in another base", async () => {
    const other = CID.parse(publicCid).toString(base58btc)
    assert.notStrictEqual(other, publicCid)
    const answer = await get(`/v3/files/public/signature/${other}`, owner.token)
    assert.deepStrictEqual([answer.status, answer.body], [200, { data: { cid: publicCid, signature: publicSignature } }])
  })

  it("shows a public signature to any workspace, a private one only to its own", async () => {
    assert.strictEqual((await get(`/v3/files/public/signature/${publicCid}`, neighbour)).status, 200)
    const own = await get(`/v3/files/private/signature/${privateCid}`, owner.token)
    assert.deepStrictEqual([own.status, own.body], [200, { data: { cid: privateCid, signature: privateSignature } }])
    for (const [path, token] of [[`/v3/files/private/signature/${privateCid}`, neighbour], [`/v3/files/public/signature/${privateCid}`, owner.token], [`/v3/files/public/signature/${unsigned}`, owner.token]] as const) {
      const answer = await get(path, token)
      assert.deepStrictEqual([answer.status, answer.body], [404, { error: "Signature not found" }], path)
    }
  })

  it("refuses a missing, malformed, expired, unknown, revoked or other workspace's key with 401 and why", async () => {
    const path = `/v3/files/public/signature/${publicCid}`
    refused(await get(path), "missing-credentials")
    refused(await get(path, undefined, { authorization: "Basic YWRhOnNlY3JldA==" }), "not-bearer")
    refused(await get(path, "not-a-jwt"), "malformed")
    refused(await get(path, await signed({ workspaceId, keyId: owner.keyId }, -60)), "expired")
    refused(await get(path, await signed({ workspaceId, keyId: crypto.randomUUID() })), "unknown-key")
    refused(await get(path, await signed({ workspaceId: await api.workspace(1), keyId: owner.keyId })), "wrong-workspace")
    const revoked = await api.key(workspaceId, ["org:files:read"])
    assert.strictEqual((await get(path, revoked.token)).status, 200)
    await api.request("POST", `/admin/keys/${revoked.keyId}/revoke`, TestRuntime.adminToken)
    refused(await get(path, revoked.token), "revoked")
    const anonymous = await api.key(workspaceId, ["org:files:read"], "")
    const missing = await get(path, anonymous.token)
    assert.deepStrictEqual([missing.status, missing.body], [401, { error: "Missing userId" }])
  })

  it("checks the key's standing before its scope, and both before the path", async () => {
    const writeOnly = await api.key(workspaceId, ["org:files:write"])
    const forbidden = await get(`/v3/files/public/signature/${publicCid}`, writeOnly.token)
    assert.deepStrictEqual([forbidden.status, forbidden.body], [403, { error: "Forbidden: this key lacks the org:files:read scope" }])
    assert.strictEqual((await get("/v3/files/public/signature/not-a-cid", writeOnly.token)).status, 403)
    await api.request("POST", `/admin/keys/${writeOnly.keyId}/revoke`, TestRuntime.adminToken)
    refused(await get(`/v3/files/public/signature/${publicCid}`, writeOnly.token), "revoked")
    refused(await get("/v3/files/public/signature/not-a-cid", writeOnly.token), "revoked")
    refused(await get(`/v3/files/intranet/signature/${publicCid}`, await signed({ workspaceId, keyId: crypto.randomUUID() })), "unknown-key")
  })

  it("answers 400 to a path that is not a network and a CID, once the key is good", async () => {
    for (const path of ["/v3/files/public/signature/not-a-cid", `/v3/files/intranet/signature/${publicCid}`]) {
      const answer = await get(path, owner.token)
      assert.strictEqual(answer.status, 400, path)
      assert.match((answer.body as { error: string }).error, /^Validation failed: /, path)
    }
  })
})
