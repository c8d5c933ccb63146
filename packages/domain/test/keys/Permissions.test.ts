import { ApiKey } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

const scopes = (permissions: ApiKey.Permissions) => Result.map(ApiKey.requested(permissions), (r) => r.scopes)
const refusal = (permissions: ApiKey.Permissions) =>
  Result.match(ApiKey.requested(permissions), { onSuccess: () => "", onFailure: (e) => e.message })

describe("Pinata's key permissions as Cairn's scopes", () => {
  it("maps resources, a write including its read, and Pinata's org:write to managing keys", () => {
    assert.deepStrictEqual(scopes({ resources: ["org:files:read"] }), Result.succeed(["org:files:read"]))
    assert.deepStrictEqual(scopes({ resources: ["org:files:write"] }), Result.succeed(["org:files:read", "org:files:write"]))
    assert.deepStrictEqual(scopes({ resources: ["org:groups:write", "org:files:read"] }), Result.succeed(["org:files:read", "org:groups:read", "org:groups:write"]))
    assert.deepStrictEqual(scopes({ resources: ["org:write"] }), Result.succeed(["org:keys"]))
    // Cairn's own scope names are taken as they are; what Cairn does not have grants nothing.
    assert.deepStrictEqual(scopes({ resources: ["org:agents", "org:gateways:write", "org:analytics:read", "org:read"] }), Result.succeed(["org:agents"]))
  })

  it("maps the legacy endpoints: pinning writes to org:files:write, listings to org:files:read", () => {
    assert.deepStrictEqual(scopes({ endpoints: { pinning: { pinFileToIPFS: true } } }), Result.succeed(["org:files:write"]))
    assert.deepStrictEqual(scopes({ endpoints: { pinning: { unpin: true, pinJSONToIPFS: false } } }), Result.succeed(["org:files:write"]))
    assert.deepStrictEqual(scopes({ endpoints: { data: { pinList: true }, pinning: { pinJobs: true } } }), Result.succeed(["org:files:read"]))
    assert.deepStrictEqual(scopes({ endpoints: { pinning: { pinByHash: true }, data: { userPinnedDataTotal: true } } }), Result.succeed(["org:files:read", "org:files:write"]))
  })

  it("asks for everything the creator may do with admin, and refuses what grants nothing or is unknown", () => {
    assert.deepStrictEqual(ApiKey.requested({ admin: true }), Result.succeed({ admin: true, scopes: [] }))
    assert.strictEqual(refusal({}), "Validation failed: permissions grant nothing Cairn has: give admin, resources or endpoints")
    assert.strictEqual(refusal({ admin: false, endpoints: { pinning: { pinFileToIPFS: false } } }), "Validation failed: permissions grant nothing Cairn has: give admin, resources or endpoints")
    assert.strictEqual(refusal({ resources: ["org:files:delete"] }), `Validation failed: permissions.resources: "org:files:delete" is not a resource permission`)
  })

  it("reports a key's pinning endpoints from its scopes, and checks names and use limits", () => {
    assert.deepStrictEqual(ApiKey.pinningOf(["org:files:write"]), { pinFileToIPFS: true, pinJSONToIPFS: true })
    assert.deepStrictEqual(ApiKey.pinningOf(["org:files:read"]), { pinFileToIPFS: false, pinJSONToIPFS: false })
    assert.deepStrictEqual(ApiKey.validateKeyName("uploader"), Result.succeed("uploader"))
    assert.isTrue(Result.isFailure(ApiKey.validateKeyName("")))
    assert.isTrue(Result.isFailure(ApiKey.validateKeyName("x".repeat(256))))
    assert.deepStrictEqual(ApiKey.validateMaxUses(1000), Result.succeed(1000))
    for (const bad of [0, -1, 1.5, 1001, Number.NaN]) assert.isTrue(Result.isFailure(ApiKey.validateMaxUses(bad)))
  })
})
