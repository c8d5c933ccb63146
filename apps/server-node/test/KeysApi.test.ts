/**
 * Self-service API keys as a user of the official pinata SDK meets them: `keys.create` (Pinata's permissions mapped
 * onto Cairn's scopes, `maxUses`), `keys.list` with its filters and paging, `keys.revoke`, against a real server on
 * loopback with its embedded stores (or the PostgreSQL server DATABASE_URL names: CI runs the suite on both). A
 * created key uploads through the SDK; a revoked or spent one is 401; only a key that may manage keys manages them;
 * a secret is answered once and never listed or logged.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PinataSDK } from "pinata"
import { type ServerProcess, cli, cliResult, serverFetch, startServer, stopServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-keys-"))
let server: ServerProcess
let env: { url: string; dataDir: string }
let workspaceId: string
let admin: string
let pinata: PinataSDK
/** Every secret and JWT the server answered, to look for in its log at the end. */
const answered: Array<string> = []

const sdk = (jwt: string) => new PinataSDK({ pinataJwt: jwt, pinataGateway: "127.0.0.1", endpointUrl: `${server.url}/v3`, uploadUrl: `${server.url}/v3` })
const operatorKey = (workspace: string, scopes: string) => cli(env, "key", "create", "--workspace", workspace, "--user", "ada", "--scopes", scopes)

const call = (path: string, init: RequestInit & { token?: string } = {}) => serverFetch(server)(path, init)
const post = (path: string, body: unknown, token = admin) =>
  call(path, { method: "POST", token, headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) })

/** The status and body of a refused answer. */
const refusal = async (response: Response | Promise<Response>) => {
  const got = await response
  assert.match(got.headers.get("content-type") ?? "", /^application\/json/)
  return { status: got.status, body: (await got.json()) as Record<string, unknown> }
}

/** What the SDK threw: its status and message. */
const sdkFailure = async (promise: PromiseLike<unknown>) => {
  try {
    await promise
  } catch (error) {
    return { status: (error as { statusCode?: number }).statusCode, message: (error as Error).message }
  }
  return assert.fail("the SDK call was expected to fail")
}

/** Creates a key through the SDK, remembering what must never show up again. */
const createKey = async (options: Parameters<PinataSDK["keys"]["create"]>[0], as = pinata) => {
  const created = await as.keys.create(options)
  answered.push(created.JWT, created.pinata_api_secret)
  return created
}

const upload = (client: PinataSDK, content = `upload ${crypto.randomUUID()}`) => client.upload.public.file(new File([content], "k.txt", { type: "text/plain" }))

beforeAll(async () => {
  server = await startServer({ DATA_DIR: dataDir, ACCESS_LOG: "true" })
  await waitUntilServing(server)
  env = { url: server.url, dataDir }
  workspaceId = cli(env, "workspace", "create", "--name", "Keys")
  // Everything but the agents API: what `admin: true` gives is what the creating key may do.
  admin = operatorKey(workspaceId, "org:files:read,org:files:write,org:groups:read,org:groups:write,org:keys")
  pinata = sdk(admin)
}, 120_000)

afterAll(() => stopServer(server, dataDir))

describe("self-service keys through the official pinata SDK", () => {
  it("creates a key that uploads through the SDK, answering its JWT and key pair once", async () => {
    const created = await createKey({ keyName: "uploader", permissions: { endpoints: { pinning: { pinFileToIPFS: true, pinJSONToIPFS: true } } } })
    assert.match(created.JWT, /^[\w-]+\.[\w-]+\.[\w-]+$/)
    assert.match(created.pinata_api_key, /^[0-9a-f-]{36}$/)
    assert.match(created.pinata_api_secret, /^[0-9a-f]{64}$/)
    const uploader = sdk(created.JWT)
    const file = await upload(uploader, "uploaded with a self-service key")
    assert.strictEqual(file.cid, (await pinata.files.public.get(file.id)).cid)
    assert.strictEqual((file as unknown as { user_id: string }).user_id, "ada", "the key acts for the user of the key that made it")
    // pinFileToIPFS is a write: the key cannot list.
    assert.deepStrictEqual(await sdkFailure(uploader.files.public.list()), {
      status: 403,
      message: `Authentication failed: {"error":"Forbidden: this key lacks the org:files:read scope"}`
    })
  })

  it("maps Pinata's resources onto Cairn's scopes: write includes read, admin is what the creating key may do", async () => {
    const reader = await createKey({ keyName: "reader", permissions: { resources: ["org:files:read", "org:groups:write", "org:gateways:read"] } })
    const readerSdk = sdk(reader.JWT)
    assert.isArray((await readerSdk.files.public.list()).files)
    const group = await readerSdk.groups.public.create({ name: `made by a reader ${crypto.randomUUID()}` })
    assert.strictEqual((await readerSdk.groups.public.get({ groupId: group.id })).id, group.id)
    assert.strictEqual((await sdkFailure(upload(readerSdk))).status, 403)

    const superKey = await createKey({ keyName: "super", permissions: { admin: true } })
    const listed = (await pinata.keys.list().name("super")).find((k) => k.key === superKey.pinata_api_key)!
    assert.deepStrictEqual((listed.scopes as unknown as { resources: Array<string> }).resources, [
      "org:files:read",
      "org:files:write",
      "org:groups:read",
      "org:groups:write",
      "org:keys"
    ])
    assert.isTrue(listed.scopes.admin)
    // An admin key manages keys in turn.
    const grandchild = await createKey({ keyName: "grandchild", permissions: { resources: ["org:files:write"] } }, sdk(superKey.JWT))
    assert.isString((await upload(sdk(grandchild.JWT))).id)
  })

  it("never makes a key stronger than the one that asks (403), nor one that can do nothing (400)", async () => {
    assert.deepStrictEqual(await sdkFailure(pinata.keys.create({ keyName: "agents", permissions: { resources: ["org:agents" as never] } })), {
      status: 403,
      message: `Authentication failed: {"error":"Forbidden: this key lacks the org:agents scope"}`
    })
    const weak = sdk((await createKey({ keyName: "weak", permissions: { resources: ["org:files:read", "org:write"] } })).JWT)
    // It may manage keys (org:write), but not give them what it lacks.
    assert.strictEqual((await sdkFailure(weak.keys.create({ keyName: "stronger", permissions: { resources: ["org:files:write"] } }))).status, 403)
    const readOnly = await createKey({ keyName: "read only", permissions: { admin: true } }, weak)
    assert.strictEqual((await sdkFailure(upload(sdk(readOnly.JWT)))).status, 403)
    const nothing = await refusal(post("/v3/pinata/keys", { keyName: "nothing", permissions: { resources: ["org:analytics:read"] } }))
    assert.deepStrictEqual(nothing, { status: 400, body: { error: "Validation failed: permissions grant nothing Cairn has: give admin, resources or endpoints" } })
  })

  it("lets only a key that may manage keys create, list or revoke them", async () => {
    const filesOnly = sdk(operatorKey(workspaceId, "org:files:read,org:files:write"))
    const forbidden = `Authentication failed: {"error":"Forbidden: this key lacks the org:keys scope"}`
    assert.deepStrictEqual(await sdkFailure(filesOnly.keys.create({ keyName: "no", permissions: { admin: true } })), { status: 403, message: forbidden })
    assert.deepStrictEqual(await sdkFailure(filesOnly.keys.list()), { status: 403, message: forbidden })
    assert.deepStrictEqual(await filesOnly.keys.revoke([crypto.randomUUID()]).then((r) => r.map((x) => x.status)), [forbidden])
    assert.strictEqual((await call("/v3/pinata/keys")).status, 401)
  })

  it("revokes a key: it is 401 at once, listed as revoked, and revoking it again is still Revoked", async () => {
    const doomed = await createKey({ keyName: "doomed", permissions: { resources: ["org:files:write"] } })
    const doomedSdk = sdk(doomed.JWT)
    await upload(doomedSdk)
    assert.deepStrictEqual(await pinata.keys.revoke([doomed.pinata_api_key]), [{ key: doomed.pinata_api_key, status: "Revoked" }])
    assert.deepStrictEqual(await sdkFailure(upload(doomedSdk)), { status: 401, message: `Authentication failed: {"error":"Unauthorized","reason":"revoked"}` })
    const listed = (await pinata.keys.list().name("doomed"))[0]!
    assert.deepInclude(listed, { key: doomed.pinata_api_key, revoked: true })
    assert.deepStrictEqual(await pinata.keys.revoke([doomed.pinata_api_key]), [{ key: doomed.pinata_api_key, status: "Revoked" }])
    // An unknown key, and another workspace's, are not found.
    const elsewhere = cli(env, "workspace", "create", "--name", "Elsewhere")
    const theirs = await createKey({ keyName: "theirs", permissions: { admin: true } }, sdk(operatorKey(elsewhere, "org:files:read,org:keys")))
    const missing = crypto.randomUUID()
    assert.deepStrictEqual(await pinata.keys.revoke([missing, theirs.pinata_api_key]), [
      { key: missing, status: `HTTP error: {"error":"Key not found"}` },
      { key: theirs.pinata_api_key, status: `HTTP error: {"error":"Key not found"}` }
    ])
    assert.isArray((await sdk(theirs.JWT).files.public.list()).files, "the other workspace's key still works")
    // A key may revoke itself; then it is refused too.
    const self = await createKey({ keyName: "self", permissions: { admin: true } })
    assert.deepStrictEqual(await sdk(self.JWT).keys.revoke([self.pinata_api_key]), [{ key: self.pinata_api_key, status: "Revoked" }])
    assert.strictEqual((await sdkFailure(sdk(self.JWT).keys.list())).status, 401)
  })

  it("counts a limited key's uses and refuses it once they are spent (401 exhausted)", async () => {
    const limited = await createKey({ keyName: "twice", permissions: { resources: ["org:files:write"] }, maxUses: 2 })
    const limitedSdk = sdk(limited.JWT)
    await upload(limitedSdk)
    await upload(limitedSdk)
    assert.deepStrictEqual(await sdkFailure(upload(limitedSdk)), { status: 401, message: `Authentication failed: {"error":"Unauthorized","reason":"exhausted"}` })
    const spent = await refusal(call("/v3/data/testAuthentication", { token: limited.JWT }))
    assert.deepStrictEqual(spent, { status: 401, body: { error: "Unauthorized", reason: "exhausted" } })
    const listed = (await pinata.keys.list().name("twice"))[0]!
    assert.deepInclude(listed, { max_uses: 2, uses: 2, revoked: false })
    assert.include((await pinata.keys.list().limitedUse(true).exhausted(true)).map((k) => k.key), limited.pinata_api_key)
    assert.notInclude((await pinata.keys.list().limitedUse(true).exhausted(false)).map((k) => k.key), limited.pinata_api_key)
    // A limited key that may manage keys counts its own list calls too.
    const once = await createKey({ keyName: "once", permissions: { admin: true }, maxUses: 1 })
    assert.isArray(await sdk(once.JWT).keys.list())
    assert.strictEqual((await sdkFailure(sdk(once.JWT).keys.list())).status, 401)
  })

  it("lists the workspace's keys with Pinata's fields and filters, pages by offset, and never answers a secret", async () => {
    const tag = crypto.randomUUID().slice(0, 8)
    const made = []
    for (const i of [0, 1, 2]) made.push(await createKey({ keyName: `listed-${tag}-${i}`, permissions: { resources: ["org:files:read"] }, ...(i === 1 ? { maxUses: 5 } : {}) }))
    await pinata.keys.revoke([made[2]!.pinata_api_key])
    const byName = await pinata.keys.list().name(`LISTED-${tag}`)
    assert.deepStrictEqual(byName.map((k) => k.key), made.map((k) => k.pinata_api_key).reverse(), "newest first, the name matched as a substring")
    const first = byName.at(-1)!
    assert.deepStrictEqual({ ...first, createdAt: "", updatedAt: "" }, {
      id: made[0]!.pinata_api_key,
      name: `listed-${tag}-0`,
      key: made[0]!.pinata_api_key,
      max_uses: null,
      uses: 0,
      user_id: "ada",
      scopes: { admin: false, endpoints: { pinning: { pinFileToIPFS: false, pinJSONToIPFS: false } }, resources: ["org:files:read"] },
      revoked: false,
      createdAt: "",
      updatedAt: ""
    } as unknown as typeof first)
    assert.match(first.createdAt, /^\d{4}-\d\d-\d\dT/)
    assert.deepStrictEqual((await pinata.keys.list().name(`listed-${tag}`).revoked(true)).map((k) => k.key), [made[2]!.pinata_api_key])
    assert.deepStrictEqual((await pinata.keys.list().name(`listed-${tag}`).revoked(false)).map((k) => k.key), [made[1]!, made[0]!].map((k) => k.pinata_api_key))
    assert.deepStrictEqual((await pinata.keys.list().name(`listed-${tag}`).limitedUse(true)).map((k) => k.key), [made[1]!.pinata_api_key])
    assert.deepStrictEqual((await pinata.keys.list().name(`listed-${tag}`).offset(1)).map((k) => k.key), [made[1]!, made[0]!].map((k) => k.pinata_api_key))
    const raw = (await (await call(`/v3/pinata/keys?name=listed-${tag}`, { token: admin })).json()) as { count: number }
    assert.strictEqual(raw.count, 3)
    // The SDK's iterator pages by offset until a page is empty; the operator's keys are listed too.
    const all = []
    for await (const key of pinata.keys.list()) all.push(key)
    assert.includeMembers(all.map((k) => k.key), made.map((k) => k.pinata_api_key))
    assert.isAtLeast(all.filter((k) => k.name === "").length, 1, "the operator's keys have no name")
    const everything = JSON.stringify(all)
    for (const secret of answered) assert.notInclude(everything, secret)
    assert.notProperty(first, "secret")
  })

  it("refuses bad input with 400 and what was wrong, creating nothing", async () => {
    const before = (await call("/v3/pinata/keys", { token: admin }).then((r) => r.json()) as { count: number }).count
    const permissions = { admin: true }
    const cases: Array<[unknown, string]> = [
      [{ keyName: "  ", permissions }, "Validation failed: keyName must not be blank"],
      [{ keyName: "k".repeat(256), permissions }, "Validation failed: keyName must be at most 255 characters"],
      [{ keyName: "a\u0000b", permissions }, "Validation failed: the request body contains a NUL character"],
      [{ permissions }, `Validation failed: Missing key at ["keyName"]`],
      [{ keyName: "k" }, `Validation failed: Missing key at ["permissions"]`],
      [{ keyName: "k", permissions, maxUses: 0 }, "Validation failed: maxUses must be a whole number from 1 to 1000"],
      [{ keyName: "k", permissions, maxUses: 1.5 }, "Validation failed: maxUses must be a whole number from 1 to 1000"],
      [{ keyName: "k", permissions, maxUses: 1001 }, "Validation failed: maxUses must be a whole number from 1 to 1000"],
      [{ keyName: "k", permissions: { resources: ["org:everything"] } }, `Validation failed: permissions.resources: "org:everything" is not a resource permission`],
      [{ keyName: "k", permissions: {} }, "Validation failed: permissions grant nothing Cairn has: give admin, resources or endpoints"],
      ["{oops", "Validation failed: the request body is not valid JSON"]
    ]
    const got = await Promise.all(cases.map(async ([body]) => await refusal(post("/v3/pinata/keys", body))))
    assert.deepStrictEqual(got, cases.map(([, error]) => ({ status: 400, body: { error } })))
    for (const [query, error] of [["offset=-1", "offset must be a whole number"], ["revoked=maybe", "revoked must be true or false"], ["exhausted=1", "exhausted must be true or false"]]) {
      assert.deepStrictEqual(await refusal(call(`/v3/pinata/keys?${query}`, { token: admin })), { status: 400, body: { error: `Validation failed: ${error}` } })
    }
    const after = (await call("/v3/pinata/keys", { token: admin }).then((r) => r.json()) as { count: number }).count
    assert.strictEqual(after, before)
  })

  it("documents the keys routes in /openapi.json and logs no secret", async () => {
    const document = (await (await call("/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> }
    assert.sameMembers(Object.keys(document.paths["/v3/pinata/keys"] ?? {}), ["get", "post"])
    assert.sameMembers(Object.keys(document.paths["/v3/pinata/keys/{key}"] ?? {}), ["put"])
    assert.isAbove(answered.length, 10)
    const log = server.output()
    assert.include(log, "/v3/pinata/keys", "the access log is on")
    for (const secret of answered) assert.notInclude(log, secret)
  })
})

// Last: it stops the server (the CLI opens the embedded database itself).
describe("the read models", () => {
  it("are what a rebuild from the log gives: keys, their uses and revocations", async () => {
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0, server.output())
    for (const name of ["api-keys"]) {
      const checked = cliResult(env, "replay", name)
      assert.strictEqual(checked.status, 0, checked.stdout + checked.stderr)
      assert.include(checked.stdout, `${name}: equal`)
    }
  })
})
