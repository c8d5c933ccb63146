/**
 * The legacy `@pinata/sdk` (2.x, from npm) against a real server on loopback: `testAuthentication`,
 * `pinFileToIPFS`, `pinFromFS`, `pinJSONToIPFS`, `pinByHash`, `pinList` with its filters, `hashMetadata` and `unpin`, with a
 * Cairn API key as its `pinataJWTKey`, and with a self-service key's `pinata_api_key`/`pinata_api_secret` pair. The SDK's base URL is fixed (`https://api.pinata.cloud`); its HTTP client (axios) honours the
 * conventional `https_proxy` variable, so with `https_proxy=http://<cairn>` every call reaches Cairn as an
 * absolute-form request (`GET https://api.pinata.cloud/data/pinList?…`), which Cairn routes by its path. On the
 * embedded stores, or Postgres under DATABASE_URL (as startServer passes it).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import { cli, freePort, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

// The package is CommonJS whose `module.exports` is the client class (its types say `export default`).
const PinataClient = createRequire(import.meta.url)("@pinata/sdk") as typeof import("@pinata/sdk").default
type PinataClient = InstanceType<typeof PinataClient>

const dataDir = mkdtempSync(join(tmpdir(), "cairn-legacy-sdk-"))
let server: ServerProcess
let pinata: PinataClient
let other: PinataClient
let jwt: string
let keysJwt: string
const proxyBefore = { https_proxy: process.env["https_proxy"], HTTPS_PROXY: process.env["HTTPS_PROXY"], no_proxy: process.env["no_proxy"], NO_PROXY: process.env["NO_PROXY"] }

const rawCid = async (content: string) => CID.create(1, raw.code, await sha256.digest(new TextEncoder().encode(content))).toString()

/** What the SDK's promise rejected with (its handleError gives the body's `error` string). */
const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    return error
  }
  assert.fail("expected the call to be refused")
}

/** A call straight to Cairn, for what the SDK refuses to send. */
const call = async (method: string, path: string, body?: string, key = jwt) => {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body })
  })
  return { status: response.status, body: await response.text() }
}

beforeAll(async () => {
  // The server pins by hash from its own gateway: a CID it serves is a source it can verify blocks from.
  const port = await freePort()
  server = await startServer({ DATA_DIR: dataDir, PORT: String(port), PIN_SOURCES: `http://127.0.0.1:${port}` })
  await waitUntilServing(server)
  const env = { url: server.url, dataDir }
  const workspaceId = cli(env, "workspace", "create", "--name", "Legacy")
  jwt = cli(env, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:files:read,org:files:write")
  keysJwt = cli(env, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:files:read,org:files:write,org:keys")
  const otherWorkspace = cli(env, "workspace", "create", "--name", "Other")
  const otherJwt = cli(env, "key", "create", "--workspace", otherWorkspace, "--user", "bob", "--scopes", "org:files:read,org:files:write")
  // Set after the server started, so only this process's HTTP client goes through it.
  process.env["https_proxy"] = server.url
  delete process.env["HTTPS_PROXY"]
  delete process.env["no_proxy"]
  delete process.env["NO_PROXY"]
  pinata = new PinataClient({ pinataJWTKey: jwt })
  other = new PinataClient({ pinataJWTKey: otherJwt })
}, 120_000)

afterAll(async () => {
  for (const [name, value] of Object.entries(proxyBefore)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  if (server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0, server.output())
  }
  rmSync(dataDir, { recursive: true, force: true })
})

/** One request with its target sent as written (an absolute-form one among them), its status and body. */
const sendTarget = (target: string, key = jwt) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(server.url, { path: target, headers: { authorization: `Bearer ${key}` }, agent: false }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString() }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end()
  })

describe("absolute-form request targets (what a client sends its proxy)", () => {
  it("are routed by their path and query, whatever host they name", async () => {
    const direct = await sendTarget("/data/testAuthentication")
    assert.strictEqual(direct.status, 200)
    assert.deepStrictEqual(await sendTarget("https://api.pinata.cloud/data/testAuthentication"), direct)
    assert.deepStrictEqual(await sendTarget("http://elsewhere.example:8080/data/testAuthentication"), direct)
    const listed = await sendTarget("https://api.pinata.cloud/v3/files/public?limit=1&order=ASC")
    assert.strictEqual(listed.status, 200)
    assert.property(JSON.parse(listed.body).data, "files")
    // Still authenticated as any request is, and a path no route serves is still 404.
    assert.strictEqual((await sendTarget("https://api.pinata.cloud/data/testAuthentication", "not-a-key")).status, 401)
    assert.strictEqual((await sendTarget("https://api.pinata.cloud/no/such/route")).status, 404)
    assert.strictEqual((await sendTarget("https://api.pinata.cloud")).status, 404)
  })
})

describe("the legacy @pinata/sdk against Cairn", () => {
  it("testAuthentication accepts a Cairn key and refuses a forged one", async () => {
    assert.deepStrictEqual(await pinata.testAuthentication(), { authenticated: true })
    const forged = new PinataClient({ pinataJWTKey: `${jwt.slice(0, -4)}AAAA` })
    const refused = await rejection(forged.testAuthentication())
    assert.isString(refused)
    assert.match(refused as string, /./)
  })

  it("pinFileToIPFS pins a stream under its name and key-values; the gateway serves it", async () => {
    const content = "hello from the legacy SDK\n"
    const pinned = await pinata.pinFileToIPFS(Readable.from([Buffer.from(content)]), {
      pinataMetadata: { name: "hello.txt", keyvalues: { kind: "greeting", rank: 3 } as never },
      pinataOptions: { cidVersion: 1 }
    })
    assert.strictEqual(pinned.IpfsHash, await rawCid(content))
    assert.strictEqual(pinned.PinSize, content.length)
    assert.deepStrictEqual((await pinata.pinList({ hashContains: pinned.IpfsHash })).rows[0]!.metadata, { name: "hello.txt", keyvalues: { kind: "greeting", rank: "3" } } as never)
    assert.strictEqual(new Date(pinned.Timestamp).toISOString(), pinned.Timestamp)
    const served = await fetch(`${server.url}/ipfs/${pinned.IpfsHash}`)
    assert.strictEqual(served.status, 200)
    assert.strictEqual(await served.text(), content)

    // Without options, Pinata's legacy default: CIDv0.
    const v0 = await pinata.pinFileToIPFS(Readable.from([Buffer.from("version zero\n")]), { pinataMetadata: { name: "zero.txt" } })
    assert.match(v0.IpfsHash, /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/)
    assert.strictEqual(await (await fetch(`${server.url}/ipfs/${v0.IpfsHash}`)).text(), "version zero\n")
  })

  it("pinFromFS pins a file, or a folder's files as one directory the gateway browses", async () => {
    const folder = join(dataDir, "..", `cairn-legacy-site-${process.pid}-${Date.now()}`)
    mkdirSync(folder)
    try {
      writeFileSync(join(folder, "index.html"), "<!doctype html><title>legacy</title>\n")
      writeFileSync(join(folder, "notes.txt"), "some notes\n")
      const site = await pinata.pinFromFS(folder, { pinataMetadata: { name: "legacy-site" }, pinataOptions: { cidVersion: 1 } })
      assert.deepInclude(site as unknown as Record<string, unknown>, { Name: "legacy-site", NumberOfFiles: 2, MimeType: "directory" })
      assert.strictEqual(await (await fetch(`${server.url}/ipfs/${site.IpfsHash}/notes.txt`)).text(), "some notes\n")
      const one = await pinata.pinFromFS(join(folder, "notes.txt"), { pinataOptions: { cidVersion: 1 } })
      assert.strictEqual(one.IpfsHash, await rawCid("some notes\n"))
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })

  it("pinJSONToIPFS pins a plain object, or pinataContent with its metadata and options", async () => {
    const plain = await pinata.pinJSONToIPFS({ hello: "world" })
    assert.match(plain.IpfsHash, /^Qm/)
    assert.deepStrictEqual(await (await fetch(`${server.url}/ipfs/${plain.IpfsHash}`)).json(), { hello: "world" })

    const document = { title: "Cairn", tags: ["a", "b"], n: 7 }
    const wrapped = await pinata.pinJSONToIPFS(document, {
      pinataMetadata: { name: "doc.json", keyvalues: { kind: "doc" } as never },
      pinataOptions: { cidVersion: 1 }
    })
    assert.strictEqual(wrapped.IpfsHash, await rawCid(JSON.stringify(document)))
    assert.strictEqual(wrapped.PinSize, JSON.stringify(document).length)
    const listed = await pinata.pinList({ hashContains: wrapped.IpfsHash })
    assert.strictEqual(listed.rows.length, 1)
    assert.deepInclude(listed.rows[0]!, { ipfs_pin_hash: wrapped.IpfsHash, date_unpinned: null })
    assert.deepStrictEqual(listed.rows[0]!.metadata, { name: "doc.json", keyvalues: { kind: "doc" } } as never)

    // What the SDK checks before sending, sent anyway: a JSON string is no document to pin.
    const refused = await call("POST", "/pinning/pinJSONToIPFS", JSON.stringify("just a string"))
    assert.strictEqual(refused.status, 400)
    assert.match(JSON.parse(refused.body).error, /^Validation failed: the body must be a JSON object/)
    const malformed = await call("POST", "/pinning/pinJSONToIPFS", "{not json")
    assert.strictEqual(malformed.status, 400)
  })

  it("pinList filters by hash, name, key-values with ops, dates, size and pages by offset", async () => {
    const pin = (name: string, keyvalues: Record<string, string | number>, text = `${name} ${JSON.stringify(keyvalues)}`) =>
      pinata.pinJSONToIPFS({ text }, { pinataMetadata: { name, keyvalues: keyvalues as never }, pinataOptions: { cidVersion: 1 } })
    const before = new Date().toISOString()
    const a = await pin("report-alpha", { project: "p1", score: 5 }, "a")
    const b = await pin("report-beta", { project: "p1", score: 12 }, "bb")
    const c = await pin("Summary", { project: "p2", score: 9 }, "ccc")
    const after = new Date().toISOString()

    const names = async (filters: Parameters<PinataClient["pinList"]>[0]) =>
      (await pinata.pinList(filters)).rows.map((row) => row.metadata.name)

    // Newest first; status all and pinned list the same live pins.
    assert.deepStrictEqual(await names({ pinStart: before, pinEnd: after }), ["Summary", "report-beta", "report-alpha"])
    assert.deepStrictEqual(await names({ status: "pinned", pinStart: before }), ["Summary", "report-beta", "report-alpha"])
    // Unpinned pins are not kept: none.
    assert.deepStrictEqual(await pinata.pinList({ status: "unpinned" }), { count: 0, rows: [] } as never)
    assert.deepStrictEqual(await names({ hashContains: b.IpfsHash.slice(10, 30) }), ["report-beta"])
    assert.deepStrictEqual(await names({ metadata: { name: "REPORT", keyvalues: {} } }), ["report-beta", "report-alpha"])
    const kv = (keyvalues: Record<string, { value: string | number; op: string; secondValue?: string | number }>) =>
      names({ pinStart: before, metadata: { keyvalues } as never })
    assert.deepStrictEqual(await kv({ project: { value: "p1", op: "eq" } }), ["report-beta", "report-alpha"])
    assert.deepStrictEqual(await kv({ project: { value: "p1", op: "ne" } }), ["Summary"])
    // Numbers compare as numbers: 12 > 9 though "12" < "9".
    assert.deepStrictEqual(await kv({ score: { value: 8, op: "gt" } }), ["Summary", "report-beta"])
    assert.deepStrictEqual(await kv({ score: { value: 5, op: "lte" } }), ["report-alpha"])
    assert.deepStrictEqual(await kv({ score: { value: 6, op: "between", secondValue: 10 } }), ["Summary"])
    assert.deepStrictEqual(await kv({ score: { value: 6, op: "notBetween", secondValue: 10 } }), ["report-beta", "report-alpha"])
    assert.deepStrictEqual(await kv({ project: { value: "p%", op: "like" }, score: { value: 10, op: "lt" } }), ["Summary", "report-alpha"])
    assert.deepStrictEqual(await kv({ project: { value: "P2", op: "iLike" } }), ["Summary"])
    assert.deepStrictEqual(await kv({ project: { value: "^p[12]$", op: "regexp" }, score: { value: 9, op: "gte" } }), ["Summary", "report-beta"])
    // Size: the three documents differ in length (c's is the longest).
    const sizes = [a, b, c].map((pinned) => pinned.PinSize)
    assert.deepStrictEqual(
      (await pinata.pinList({ pinStart: before, pinSizeMin: Math.max(...sizes) })).rows.map((row) => row.size),
      [Math.max(...sizes)]
    )
    // Pages by offset, with the count of all matches.
    const first = await pinata.pinList({ pinStart: before, pageLimit: 2 })
    const second = await pinata.pinList({ pinStart: before, pageLimit: 2, pageOffset: 2 })
    assert.strictEqual((first as unknown as { count: number }).count, 3)
    assert.deepStrictEqual([...first.rows, ...second.rows].map((row) => row.ipfs_pin_hash), [c.IpfsHash, b.IpfsHash, a.IpfsHash])
    // The SDK's iterator over pinList pages.
    const iterated: Array<string> = []
    for await (const row of pinata.getFilesByCount({ pinStart: before }, 2) as AsyncIterable<{ ipfs_pin_hash: string }>) iterated.push(row.ipfs_pin_hash)
    assert.deepStrictEqual(iterated, [c.IpfsHash, b.IpfsHash])
    // Another workspace sees none of them.
    assert.deepStrictEqual((await other.pinList({ pinStart: before })).rows, [])

    // Bad filters, as the SDK would not send them: 400 with a reason.
    for (const query of ["status=lost", "pageLimit=0", "pageLimit=1001", "pageOffset=-1", "pinStart=yesterday", "metadata[keyvalues]={bad", "metadata[keyvalues]={\"a\":{\"value\":1,\"op\":\"near\"}}", "metadata[keyvalues]={\"a\":{\"value\":1,\"op\":\"between\"}}"]) {
      const refused = await call("GET", `/data/pinList?${query}`)
      assert.strictEqual(refused.status, 400, query)
      assert.match(JSON.parse(refused.body).error, /^Validation failed: /, query)
    }
    // A pattern the database's regular expressions refuse, through the SDK.
    const badPattern = await rejection(pinata.pinList({ metadata: { keyvalues: { project: { value: "(", op: "regexp" } } } as never }))
    assert.match(String(badPattern), /^Validation failed: a metadata keyvalues regexp/)
  })

  it("hashMetadata renames a pin and merges its key-values (null removes one)", async () => {
    const pinned = await pinata.pinJSONToIPFS({ about: "metadata" }, {
      pinataMetadata: { name: "before.json", keyvalues: { keep: "yes", drop: "soon", change: "old" } as never },
      pinataOptions: { cidVersion: 1 }
    })
    assert.strictEqual(await pinata.hashMetadata(pinned.IpfsHash, { name: "after.json", keyvalues: { drop: null, change: "new", added: 1 } as never }), "OK")
    const [row] = (await pinata.pinList({ hashContains: pinned.IpfsHash })).rows
    assert.deepStrictEqual(row!.metadata, { name: "after.json", keyvalues: { keep: "yes", change: "new", added: "1" } } as never)
    // The v3 API reads the same file.
    const v3 = await call("GET", `/v3/files/public?cid=${pinned.IpfsHash}`)
    assert.deepInclude(JSON.parse(v3.body).data.files[0], { name: "after.json", keyvalues: { keep: "yes", change: "new", added: "1" } })

    // Another workspace has not pinned it: refused, nothing changed.
    assert.strictEqual(await rejection(other.hashMetadata(pinned.IpfsHash, { name: "stolen" })), "Current user has not pinned the provided hash")
    assert.strictEqual((await pinata.pinList({ hashContains: pinned.IpfsHash })).rows[0]!.metadata.name, "after.json")
    const noChange = await call("PUT", "/pinning/hashMetadata", JSON.stringify({ ipfsPinHash: pinned.IpfsHash }))
    assert.strictEqual(noChange.status, 400)
    const notCid = await call("PUT", "/pinning/hashMetadata", JSON.stringify({ ipfsPinHash: "not-a-cid", name: "x" }))
    assert.strictEqual(notCid.status, 400)
  })

  it("pinByHash queues a pin-by-CID job that ends pinned, and refuses a malformed CID", async () => {
    const content = "pinned again by its hash\n"
    const first = await pinata.pinFileToIPFS(Readable.from([Buffer.from(content)]), { pinataMetadata: { name: "first.txt" }, pinataOptions: { cidVersion: 1 } })
    const queued = await pinata.pinByHash(first.IpfsHash, { pinataMetadata: { name: "by-hash", keyvalues: { via: "pinByHash" } as never } })
    assert.deepInclude(queued, { ipfsHash: first.IpfsHash, name: "by-hash" })
    assert.include(["prechecking", "retrieving", "pinned"], queued.status)
    let status = queued.status
    for (let i = 0; i < 100 && status !== "pinned" && status !== "failed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const jobs = JSON.parse((await call("GET", `/v3/files/public/pin_by_cid?cid=${first.IpfsHash}`)).body) as { data: { jobs: Array<{ id: string; status: string; reason: string | null }> } }
      const job = jobs.data.jobs.find((entry) => entry.id === queued.id)!
      status = job.status
      assert.notStrictEqual(status, "failed", job.reason ?? "")
    }
    assert.strictEqual(status, "pinned")
    const rows = (await pinata.pinList({ hashContains: first.IpfsHash })).rows.map((row) => row.metadata.name).sort()
    assert.deepStrictEqual(rows, ["by-hash", "first.txt"])
    // The SDK checks the CID itself; sent anyway, Cairn refuses it too.
    const refused = await call("POST", "/pinning/pinByHash", JSON.stringify({ hashToPin: "not-a-cid" }))
    assert.strictEqual(refused.status, 400, refused.body)
  }, 60_000)

  it("takes a self-service key as its pinata_api_key and secret pair; a wrong secret or a revoked key is refused", async () => {
    const made = await call("POST", "/v3/pinata/keys", JSON.stringify({ keyName: "legacy pair", permissions: { admin: true } }), keysJwt)
    assert.strictEqual(made.status, 200, made.body)
    const pair = JSON.parse(made.body) as { JWT: string; pinata_api_key: string; pinata_api_secret: string }
    const paired = new PinataClient(pair.pinata_api_key, pair.pinata_api_secret)
    assert.deepStrictEqual(await paired.testAuthentication(), { authenticated: true })
    const pinned = await paired.pinJSONToIPFS({ via: "key pair" })
    assert.match(pinned.IpfsHash, /^Qm/)
    assert.isTrue((await pinata.pinList({ hashContains: pinned.IpfsHash })).rows.length > 0, "the pair's pin is the workspace's")

    const wrongSecret = new PinataClient(pair.pinata_api_key, `${pair.pinata_api_secret.slice(0, -2)}00`)
    assert.isDefined(await rejection(wrongSecret.testAuthentication()))
    const unknown = new PinataClient("no-such-key", pair.pinata_api_secret)
    assert.isDefined(await rejection(unknown.testAuthentication()))
    const raw = await fetch(`${server.url}/data/testAuthentication`, { headers: { pinata_api_key: pair.pinata_api_key, pinata_secret_api_key: "wrong" } })
    assert.strictEqual(raw.status, 401)

    assert.strictEqual((await call("PUT", `/v3/pinata/keys/${pair.pinata_api_key}`, undefined, keysJwt)).status, 200)
    assert.isDefined(await rejection(paired.testAuthentication()))
  })

  it("unpin removes every pin of the hash from the workspace; a second unpin is refused", async () => {
    const content = "to be unpinned\n"
    const options = { pinataMetadata: { name: "gone.txt" }, pinataOptions: { cidVersion: 1 as const } }
    const first = await pinata.pinFileToIPFS(Readable.from([Buffer.from(content)]), options)
    const second = await pinata.pinFileToIPFS(Readable.from([Buffer.from(content)]), options)
    assert.strictEqual(first.IpfsHash, second.IpfsHash)
    assert.strictEqual((await pinata.pinList({ hashContains: first.IpfsHash })).rows.length, 2)

    // Another workspace cannot unpin it.
    assert.strictEqual(await rejection(other.unpin(first.IpfsHash)), "Current user has not pinned the provided hash")
    assert.strictEqual(await pinata.unpin(first.IpfsHash), "OK")
    assert.deepStrictEqual((await pinata.pinList({ hashContains: first.IpfsHash })).rows, [])
    assert.strictEqual((await fetch(`${server.url}/ipfs/${first.IpfsHash}`)).status, 404)
    assert.strictEqual(await rejection(pinata.unpin(first.IpfsHash)), "Current user has not pinned the provided hash")
    const notCid = await call("DELETE", "/pinning/unpin/not-a-cid")
    assert.strictEqual(notCid.status, 400)
    assert.match(JSON.parse(notCid.body).error, /^Validation failed: /)
  })
})
