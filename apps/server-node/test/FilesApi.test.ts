/**
 * The v3 files and signatures API end to end, as a user of the official pinata SDK meets it: a real server on
 * loopback with its embedded stores, workspaces and keys made with the admin CLI, a real viem wallet.
 */
import { domain, primaryType, types } from "@cairn/signatures"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CarReader } from "@ipld/car"
import { CID } from "multiformats/cid"
import { sha256 } from "multiformats/hashes/sha2"
import { PinataSDK } from "pinata"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { cli, serverFetch, startServer, type ServerProcess, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-files-"))
let server: ServerProcess
let env: { url: string; dataDir: string }
let workspaceId: string
let writer: string
let pinata: PinataSDK

const start = async () => {
  server = await startServer({ DATA_DIR: dataDir })
  await waitUntilServing(server)
  env = { url: server.url, dataDir }
}
const stop = async () => {
  server.child.kill("SIGTERM")
  assert.strictEqual(await server.exited, 0, server.output())
}
const sdk = (jwt: string) => new PinataSDK({ pinataJwt: jwt, pinataGateway: "127.0.0.1", endpointUrl: `${server.url}/v3`, uploadUrl: `${server.url}/v3` })
const newKey = (scopes: string, ...more: Array<string>) =>
  cli(env, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", scopes, ...more)
const call = (path: string, init: RequestInit & { token?: string } = {}) => serverFetch(server)(path, init)
const errorOf = async (response: Response) => ((await response.json()) as { error: string }).error

beforeAll(async () => {
  await start()
  workspaceId = cli(env, "workspace", "create", "--name", "Acme")
  writer = newKey("org:files:read,org:files:write")
  pinata = sdk(writer)
}, 120_000)

afterAll(async () => {
  if (server.child.exitCode === null) await stop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("the v3 API through the official pinata SDK", () => {
  it("answers testAuthentication at the SDK's endpoint", async () => {
    const answer = (await pinata.testAuthentication()) as unknown as { message: string }
    assert.match(answer.message, /Congratulations/)
  })

  it("uploads public and private files and returns every field the SDK reads", async () => {
    const uploaded = await pinata.upload.public.file(new File(["hello world\n"], "hello.txt", { type: "text/plain" }))
      .name("greeting").keyvalues({ env: "test" })
    assert.strictEqual(uploaded.cid, "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4")
    assert.deepInclude(uploaded, { name: "greeting", size: 12, number_of_files: 1, mime_type: "text/plain", network: "public", group_id: null, vectorized: false })
    assert.deepStrictEqual(uploaded.keyvalues, { env: "test" })
    assert.match(uploaded.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const v0 = await pinata.upload.private.file(new File(["hello world\n"], "hello.txt")).cidVersion("v0")
    assert.strictEqual(v0.cid, "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o")
    assert.strictEqual(v0.mime_type, "text/plain; charset=utf-8", "a file sent with no type is sniffed")
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89])
    assert.strictEqual((await pinata.upload.private.file(new File([png], "pixel", { type: "application/octet-stream" }))).mime_type, "image/png")
    assert.strictEqual(v0.network, "private")
    const got = await pinata.files.private.get(v0.id)
    assert.strictEqual(got.cid, v0.cid)
    // A private file is not visible on the public network, nor through the gateway.
    assert.strictEqual((await call(`/v3/files/public/${v0.id}`, { token: writer })).status, 404)
    const hidden = await call(`/ipfs/${v0.cid}`)
    assert.strictEqual(hidden.status, 404)
    assert.strictEqual(await errorOf(hidden), "Content not found")
    const gateway = await call(`/ipfs/${uploaded.cid}`)
    assert.strictEqual(gateway.status, 200)
    assert.strictEqual(await gateway.text(), "hello world\n")
    assert.match(gateway.headers.get("content-type")!, /^text\/plain/)
  })

  it("serves public content in the trustless gateway formats", async () => {
    const file = await pinata.upload.public.file(new File([`trustless ${Date.now()}`], "t.txt"))
    const raw = await call(`/ipfs/${file.cid}?format=raw`)
    assert.strictEqual(raw.headers.get("content-type"), "application/vnd.ipld.raw")
    const block = new Uint8Array(await raw.arrayBuffer())
    assert.deepStrictEqual((await sha256.digest(block)).bytes, CID.parse(file.cid).multihash.bytes)
    const car = await call(`/ipfs/${file.cid}`, { headers: { accept: "application/vnd.ipld.car" } })
    assert.match(car.headers.get("content-type")!, /^application\/vnd\.ipld\.car/)
    const reader = await CarReader.fromBytes(new Uint8Array(await car.arrayBuffer()))
    assert.deepStrictEqual((await reader.getRoots()).map(String), [file.cid])
    assert.isTrue(await reader.has(CID.parse(file.cid)))
    assert.strictEqual((await call("/ipfs/not-a-cid")).status, 400)
  })

  it("lists with filters and pages until next_page_token is empty", async () => {
    const names = ["alpha.txt", "beta.txt", "gamma.txt", "delta.txt", "epsilon.txt"]
    for (const [i, name] of names.entries()) {
      await pinata.upload.private.file(new File([`file ${i}`], name, { type: "text/plain" })).keyvalues({ batch: "list", parity: i % 2 === 0 ? "even" : "odd" })
    }
    const even = await pinata.files.private.list().keyvalues({ batch: "list", parity: "even" })
    assert.sameMembers(even.files.map((f) => f.name), ["alpha.txt", "gamma.txt", "epsilon.txt"])
    assert.strictEqual(even.next_page_token, "")
    const byName = await pinata.files.private.list().name("gamma")
    assert.deepStrictEqual(byName.files.map((f) => f.name), ["gamma.txt"])
    const all = await pinata.files.private.list().keyvalues({ batch: "list" }).limit(2).order("ASC").all()
    assert.deepStrictEqual(all.map((f) => f.name), names)
    const page = await pinata.files.private.list().keyvalues({ batch: "list" }).limit(2)
    assert.strictEqual(page.files.length, 2)
    assert.notStrictEqual(page.next_page_token, "")
    const byCid = await pinata.files.private.list().cid(all[0]!.cid)
    assert.deepStrictEqual(byCid.files.map((f) => f.id), [all[0]!.id])
    assert.deepStrictEqual((await pinata.files.private.list().mimeType("image/png")).files.map((f) => f.name), ["pixel"])
    assert.strictEqual((await pinata.files.private.list().mimeType("image/gif")).files.length, 0)
  })

  it("updates a file's name and key-values, then deletes it", async () => {
    const file = await pinata.upload.private.file(new File(["to change"], "old.txt"))
    const updated = await pinata.files.private.update({ id: file.id, name: "new.txt", keyvalues: { stage: "two" } })
    assert.strictEqual(updated.name, "new.txt")
    assert.deepStrictEqual(updated.keyvalues, { stage: "two" })
    const deleted = await pinata.files.private.delete([file.id])
    assert.deepStrictEqual(deleted, [{ id: file.id, status: "OK" }])
    assert.strictEqual((await call(`/v3/files/private/${file.id}`, { token: writer })).status, 404)
    const again = await pinata.files.private.delete([file.id])
    assert.notStrictEqual(again[0]!.status, "OK")
  })

  it("attaches a wallet's EIP-712 signature to a CID, serves it, and removes it", async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const file = await pinata.upload.public.file(new File([`signed ${Date.now()}`], "signed.txt"))
    const signature = await account.signTypedData({ domain, types, primaryType, message: { address: account.address, cid: file.cid, date: file.created_at } })
    const added = await pinata.signatures.public.add({ cid: file.cid, signature, address: account.address })
    assert.deepStrictEqual(added, { cid: file.cid, signature })
    assert.deepStrictEqual(await pinata.signatures.public.get(file.cid), { cid: file.cid, signature })
    assert.strictEqual((await call(`/ipfs/${file.cid}`)).headers.get("pinata-signature"), signature)
    const twice = await call(`/v3/files/public/signature/${file.cid}`, { method: "POST", token: writer, body: JSON.stringify({ signature, address: account.address }) })
    assert.strictEqual(twice.status, 409)
    assert.strictEqual(await pinata.signatures.public.delete(file.cid), "OK")
    const gone = await call(`/v3/files/public/signature/${file.cid}`, { token: writer })
    assert.strictEqual(gone.status, 404)
    assert.strictEqual(await errorOf(gone), "Signature not found")
  })

  it("refuses a signature that does not verify, and one over a CID the workspace does not own", async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const file = await pinata.upload.public.file(new File([`unsigned ${Date.now()}`], "u.txt"))
    const wrongDate = await account.signTypedData({ domain, types, primaryType, message: { address: account.address, cid: file.cid, date: "2020-01-01T00:00:00.000Z" } })
    const bad = await call(`/v3/files/public/signature/${file.cid}`, { method: "POST", token: writer, body: JSON.stringify({ signature: wrongDate, address: account.address }) })
    assert.strictEqual(bad.status, 400)
    assert.match(await errorOf(bad), /^Validation failed: /)
    const other = cli(env, "workspace", "create", "--name", "Other")
    const outsider = cli(env, "key", "create", "--workspace", other, "--user", "eve", "--scopes", "org:files:write,org:files:read")
    const good = await account.signTypedData({ domain, types, primaryType, message: { address: account.address, cid: file.cid, date: file.created_at } })
    // Sent as text/plain, as the SDK does when custom headers are set: still parsed as JSON.
    const notOwner = await call(`/v3/files/public/signature/${file.cid}`, { method: "POST", token: outsider, headers: { "content-type": "text/plain;charset=UTF-8" }, body: JSON.stringify({ signature: good, address: account.address }) })
    assert.strictEqual(notOwner.status, 403)
    // Another workspace can read a public signature once it exists: a lookup across the network.
    await pinata.signatures.public.add({ cid: file.cid, signature: good, address: account.address })
    assert.strictEqual((await call(`/v3/files/public/signature/${file.cid}`, { token: outsider })).status, 200)
  })

  it("uploads a file over 90 MiB through the resumable protocol", async () => {
    const size = 91 * 1024 * 1024 + 123
    const bytes = new Uint8Array(size)
    for (let i = 0; i < size; i += 4096) bytes[i] = (i / 4096) % 251
    const uploaded = await pinata.upload.public.file(new File([bytes], "big.bin", { type: "application/octet-stream" })).name("big")
    assert.strictEqual(uploaded.size, size)
    assert.strictEqual(uploaded.name, "big")
    const served = new Uint8Array(await (await call(`/ipfs/${uploaded.cid}`)).arrayBuffer())
    assert.strictEqual(createHash("sha256").update(served).digest("hex"), createHash("sha256").update(bytes).digest("hex"))
  }, 180_000)

  it("loses nothing across a restart", async () => {
    const before = await pinata.files.private.list().limit(1000)
    const signedFile = (await pinata.files.public.list().name("u.txt")).files[0]!
    await stop()
    await start()
    pinata = sdk(writer)
    const after = await pinata.files.private.list().limit(1000)
    assert.deepStrictEqual(after.files.map((f) => f.id), before.files.map((f) => f.id))
    assert.isDefined((await pinata.signatures.public.get(signedFile.cid)).signature)
  }, 120_000)
})

describe("authentication (spec section 5)", () => {
  it("answers 401 without a bearer token, with a forged one, an expired one or a revoked one", async () => {
    assert.strictEqual((await call("/v3/files/private")).status, 401)
    assert.strictEqual(await errorOf(await call("/v3/files/private")), "Unauthorized")
    assert.strictEqual((await call("/v3/files/private", { token: "not.a.jwt" })).status, 401)
    const [header, payload] = writer.split(".")
    assert.strictEqual((await call("/v3/files/private", { token: `${header}.${payload}.${"A".repeat(86)}` })).status, 401)
    // Long enough to be used while valid even when the CLI's process is slow to end on a busy machine.
    const expiring = newKey("org:files:read", "--expires", "15s")
    // Used once while valid, so a server that remembers verified tokens must still forget it at expiry.
    assert.strictEqual((await call("/v3/files/private", { token: expiring })).status, 200)
    const { exp } = JSON.parse(Buffer.from(expiring.split(".")[1]!, "base64url").toString()) as { exp: number }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now()) + 600))
    assert.strictEqual((await call("/v3/files/private", { token: expiring })).status, 401)
    const revoked = newKey("org:files:read")
    assert.strictEqual((await call("/v3/files/private", { token: revoked })).status, 200)
    const payloadJson = JSON.parse(Buffer.from(revoked.split(".")[1]!, "base64url").toString()) as { jti: string }
    cli(env, "key", "revoke", payloadJson.jti)
    assert.strictEqual((await call("/v3/files/private", { token: revoked })).status, 401)
  }, 180_000) // three CLI processes and a wait for expiry

  it("answers 403 to a valid key without the scope, and Missing userId to a key without a user", async () => {
    const reader = newKey("org:files:read")
    const upload = new FormData()
    upload.append("file", new Blob(["x"]), "x.txt")
    upload.append("network", "private")
    const refused = await call("/v3/files", { method: "POST", token: reader, body: upload })
    assert.strictEqual(refused.status, 403)
    const anonymous = cli(env, "key", "create", "--workspace", workspaceId, "--user", "", "--scopes", "org:files:read")
    const missing = await call("/v3/files/private", { token: anonymous })
    assert.strictEqual(missing.status, 401)
    assert.strictEqual(await errorOf(missing), "Missing userId")
  })

  it("does not show one workspace's files to another", async () => {
    const file = await pinata.upload.private.file(new File(["mine"], "mine.txt"))
    const other = cli(env, "workspace", "create", "--name", "Neighbour")
    const neighbour = cli(env, "key", "create", "--workspace", other, "--user", "bob", "--scopes", "org:files:read,org:files:write")
    assert.strictEqual((await call(`/v3/files/private/${file.id}`, { token: neighbour })).status, 404)
    assert.strictEqual((await call(`/v3/files/private/${file.id}`, { method: "DELETE", token: neighbour })).status, 404)
    assert.notInclude((await (await call("/v3/files/private?limit=1000", { token: neighbour })).text()), file.id)
  })
})

describe("bad input gets a 4xx with a clear message", () => {
  const expect400 = async (response: Response) => {
    assert.strictEqual(response.status, 400)
    assert.match(await errorOf(response), /^Validation failed: /)
  }

  it("on paths, queries and JSON bodies", async () => {
    await expect400(await call("/v3/files/intranet", { token: writer }))
    await expect400(await call("/v3/files/public/signature/not-a-cid", { token: writer }))
    await expect400(await call("/v3/files/private?limit=0", { token: writer }))
    await expect400(await call("/v3/files/private?order=SIDEWAYS", { token: writer }))
    await expect400(await call("/v3/files/private?pageToken=garbage", { token: writer }))
    await expect400(await call("/v3/files/private?cid=nope", { token: writer }))
    const file = await pinata.upload.private.file(new File(["body checks"], "b.txt"))
    await expect400(await call(`/v3/files/private/${file.id}`, { method: "PUT", token: writer, body: "{not json" }))
    await expect400(await call(`/v3/files/private/${file.id}`, { method: "PUT", token: writer, body: "{}" }))
    await expect400(await call(`/v3/files/private/${file.id}`, { method: "PUT", token: writer, body: JSON.stringify({ keyvalues: { n: 1 } }) }))
    const cid = file.cid
    await expect400(await call(`/v3/files/private/signature/${cid}`, { method: "POST", token: writer, body: JSON.stringify({ signature: "0x1234", address: "0x0000000000000000000000000000000000000001" }) }))
    await expect400(await call(`/v3/files/private/signature/${cid}`, { method: "POST", token: writer, body: JSON.stringify({ signature: `0x${"ab".repeat(65)}`, address: "ada" }) }))
    await expect400(await call(`/v3/files/private/signature/${cid}`, { method: "POST", token: writer, body: JSON.stringify({ signature: 42 }) }))
  })

  it("on uploads: missing file, bad key-values, truncated and oversized multipart", async () => {
    const form = (parts: Record<string, string | Blob>) => {
      const body = new FormData()
      for (const [k, v] of Object.entries(parts)) body.append(k, v)
      return body
    }
    await expect400(await call("/v3/files", { method: "POST", token: writer, body: form({ network: "private" }) }))
    await expect400(await call("/v3/files", { method: "POST", token: writer, body: form({ file: new Blob(["x"]), network: "private", keyvalues: "{nope" }) }))
    await expect400(await call("/v3/files", { method: "POST", token: writer, body: form({ file: new Blob(["x"]), network: "moon" }) }))
    const truncated = "--X\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhalf a file"
    await expect400(await call("/v3/files", { method: "POST", token: writer, headers: { "content-type": "multipart/form-data; boundary=X" }, body: truncated }))
    const oversized = await call("/v3/files", { method: "POST", token: writer, body: form({ file: new Blob([new Uint8Array(101 * 1024 * 1024)]), network: "private" }) })
    assert.strictEqual(oversized.status, 413)
    assert.strictEqual(await errorOf(oversized), "File too large")
  }, 60_000)

  it("on resumable uploads: bad length, bad metadata, wrong offset", async () => {
    await expect400(await call("/v3/files", { method: "POST", token: writer, headers: { "upload-length": "lots" } }))
    await expect400(await call("/v3/files", { method: "POST", token: writer, headers: { "upload-length": "10", "upload-metadata": "filename ***" } }))
    const created = await call("/v3/files", { method: "POST", token: writer, headers: { "upload-length": "10", "upload-metadata": `filename ${btoa("t.txt")},network ${btoa("private")}` } })
    assert.strictEqual(created.status, 201)
    const location = created.headers.get("location")!
    assert.match(location, /^http:\/\/127\.0\.0\.1:\d+\/v3\/files\/uploads\//)
    const wrong = await fetch(location, { method: "PATCH", headers: { authorization: `Bearer ${writer}`, "upload-offset": "3", "content-type": "application/offset+octet-stream" }, body: "abc" })
    assert.strictEqual(wrong.status, 409)
    const tooMuch = await fetch(location, { method: "PATCH", headers: { authorization: `Bearer ${writer}`, "upload-offset": "0", "content-type": "application/offset+octet-stream" }, body: "0123456789AB" })
    await expect400(tooMuch)
    const first = await fetch(location, { method: "PATCH", headers: { authorization: `Bearer ${writer}`, "upload-offset": "0", "content-type": "application/offset+octet-stream" }, body: "01234" })
    assert.strictEqual(first.status, 204)
    assert.strictEqual(first.headers.get("upload-offset"), "5")
    const last = await fetch(location, { method: "PATCH", headers: { authorization: `Bearer ${writer}`, "upload-offset": "5", "content-type": "application/offset+octet-stream" }, body: "56789" })
    assert.strictEqual(last.status, 204)
    const cid = last.headers.get("upload-cid")!
    const listed = await pinata.files.private.list().cid(cid)
    assert.strictEqual(listed.files[0]!.name, "t.txt")
  })

  it("on resumable uploads: takes one of two chunks sent at the same offset at once, and refuses the other", async () => {
    const created = await call("/v3/files", { method: "POST", token: writer, headers: { "upload-length": "8", "upload-metadata": `filename ${btoa("race.txt")}` } })
    const location = created.headers.get("location")!
    const patch = (body: string) =>
      fetch(location, { method: "PATCH", headers: { authorization: `Bearer ${writer}`, "upload-offset": "0", "content-type": "application/offset+octet-stream" }, body })
    const results = await Promise.all([patch("AAAA"), patch("BBBB")])
    assert.deepStrictEqual(results.map((r) => r.status).sort(), [204, 409])
    const status = await fetch(location, { headers: { authorization: `Bearer ${writer}` } })
    assert.strictEqual(status.headers.get("upload-offset"), "4")
  })

  it("sends the spec's headers on a 200", async () => {
    const response = await call("/v3/files/private", { token: writer })
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers.get("content-type"), "application/json; charset=utf-8")
    assert.match(response.headers.get("x-request-id")!, /^[0-9a-f-]{36}$/)
    assert.match(response.headers.get("strict-transport-security")!, /max-age=\d+; includeSubDomains/)
    assert.isNotNull(response.headers.get("content-length"))
    assert.isNotNull(response.headers.get("date"))
  })
})
