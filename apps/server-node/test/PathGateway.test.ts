/**
 * The path gateway as a Pinata user meets it: a static site uploaded with the official SDK's
 * `upload.public.fileArray` and opened through `/ipfs/<cid>/`, a HAMT-sharded folder, and a large file read in
 * ranges, against a real server on loopback. Requests are sent with `node:http` exactly as written, so `..`,
 * `%2e%2e` and `%2F` reach the server as a client could send them (fetch would tidy them first). Runs on the
 * embedded content store, and on Kubo too when KUBO_API_URL names a node.
 */
import { deterministicBytes, shardedFolder } from "@cairn/content-store/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as dagPb from "@ipld/dag-pb"
import { UnixFS } from "ipfs-unixfs"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PinataSDK } from "pinata"
import { cli, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

interface Reply {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

/** A small site as a browser's folder picker gives it: each File knows its path under the picked folder. */
const site: Record<string, string> = {
  "site/index.html": "<!doctype html><title>Cairn</title><link rel=stylesheet href=sub/file.css><h1>Hello</h1>\n",
  "site/sub/file.css": "h1 { color: teal }\n",
  "site/sub/a&b <c>.txt": "an awkward name\n",
  "site/sub/README": "plain words, no extension\n",
  "site/sub/page": "<!doctype html><script>alert(document.cookie)</script>\n"
}
const picked = (files: Record<string, string | Uint8Array>) =>
  Object.entries(files).map(([path, content]) => {
    const file = new File([content as BlobPart], path.split("/").at(-1)!)
    Object.defineProperty(file, "webkitRelativePath", { value: path })
    return file
  })
const rawCid = async (content: string | Uint8Array) =>
  CID.create(1, raw.code, await sha256.digest(typeof content === "string" ? new TextEncoder().encode(content) : content)).toString()

const MiB = 1_048_576
const big = deterministicBytes(3 * MiB + 12_345)

const stores = [
  { name: "the embedded store", env: {} },
  ...(process.env["KUBO_API_URL"] === undefined ? [] : [{ name: "Kubo", env: { KUBO_API_URL: process.env["KUBO_API_URL"] } }])
]

describe.each(stores)("the path gateway on $name", ({ env: storeEnv }) => {
  const dataDir = mkdtempSync(join(tmpdir(), "cairn-pathgw-"))
  let server: ServerProcess
  let pinata: PinataSDK
  let jwt: string
  let siteCid: string
  let bigCid: string

  /** One request, sent as written (no URL normalisation), its body read whole. */
  const send = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    new Promise<Reply>((resolve, reject) => {
      const request = http.request(server.url, { path, method, headers, agent: false }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }))
        response.on("error", reject)
      })
      request.on("error", reject)
      request.end()
    })
  const errorOf = (reply: Reply) => (JSON.parse(reply.body.toString()) as { error: string }).error

  beforeAll(async () => {
    server = await startServer({ DATA_DIR: dataDir, ...storeEnv })
    await waitUntilServing(server)
    const env = { url: server.url, dataDir }
    const workspaceId = cli(env, "workspace", "create", "--name", "Sites")
    jwt = cli(env, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:files:read,org:files:write")
    pinata = new PinataSDK({
      pinataJwt: jwt,
      pinataGateway: "127.0.0.1",
      endpointUrl: `${server.url}/v3`,
      uploadUrl: `${server.url}/v3`,
      legacyUploadUrl: `${server.url}/pinning/pinFileToIPFS`
    })
    siteCid = (await pinata.upload.public.fileArray(picked(site)).name("site")).cid
    bigCid = (await pinata.upload.public.file(new File([big], "big.bin"))).cid
  }, 120_000)

  afterAll(async () => {
    if (server.child.exitCode === null) {
      server.child.kill("SIGTERM")
      assert.strictEqual(await server.exited, 0, server.output())
    }
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("opens a site uploaded with fileArray at /ipfs/<cid>/: its index.html, then its stylesheet by relative path", async () => {
    const page = await send(`/ipfs/${siteCid}/`)
    assert.strictEqual(page.status, 200, page.body.toString())
    assert.strictEqual(page.body.toString(), site["site/index.html"])
    assert.strictEqual(page.headers["content-type"], "text/html; charset=utf-8")
    assert.strictEqual(page.headers["etag"], `"${await rawCid(site["site/index.html"]!)}"`)
    assert.strictEqual(page.headers["cache-control"], "public, max-age=29030400, immutable")
    assert.strictEqual(page.headers["x-content-type-options"], "nosniff")
    const policy = String(page.headers["content-security-policy"])
    assert.match(policy, /^sandbox /)
    assert.include(policy, "allow-scripts")
    assert.notInclude(policy, "allow-same-origin", "a page from a CID must not share Cairn's origin")
    const css = await send(`/ipfs/${siteCid}/sub/file.css`)
    assert.strictEqual(css.status, 200)
    assert.strictEqual(css.body.toString(), site["site/sub/file.css"])
    assert.strictEqual(css.headers["content-type"], "text/css; charset=utf-8")
    assert.strictEqual(css.headers["etag"], `"${await rawCid(site["site/sub/file.css"]!)}"`)
    assert.strictEqual(css.headers["x-ipfs-path"], `/ipfs/${siteCid}/sub/file.css`)
  })

  it("redirects a folder's URL without its trailing slash to the one with it (301), keeping the query", async () => {
    const root = await send(`/ipfs/${siteCid}`)
    assert.strictEqual(root.status, 301)
    assert.strictEqual(root.headers["location"], `/ipfs/${siteCid}/`)
    const sub = await send(`/ipfs/${siteCid}/sub?filename=x`)
    assert.strictEqual(sub.status, 301)
    assert.strictEqual(sub.headers["location"], `/ipfs/${siteCid}/sub/?filename=x`)
  })

  it("lists a folder without index.html: names escaped, links encoded, sizes, a link up", async () => {
    const listing = await send(`/ipfs/${siteCid}/sub/`)
    assert.strictEqual(listing.status, 200)
    assert.strictEqual(listing.headers["content-type"], "text/html; charset=utf-8")
    assert.match(String(listing.headers["content-security-policy"]), /^sandbox; default-src 'none'/)
    const html = listing.body.toString()
    assert.include(html, `<a href="a%26b%20%3Cc%3E.txt">a&amp;b &lt;c&gt;.txt</a>`)
    assert.notInclude(html, "<c>")
    assert.include(html, `<a href="file.css">file.css</a>`)
    assert.include(html, `<a href="../">../</a>`)
    assert.include(html, "19 B")
    assert.include(html, await rawCid(site["site/sub/file.css"]!))
    const awkward = await send(`/ipfs/${siteCid}/sub/a%26b%20%3Cc%3E.txt`)
    assert.strictEqual(awkward.body.toString(), "an awkward name\n")
    assert.notInclude((await send(`/ipfs/${siteCid}/sub/`)).body.toString(), `href="../../`)
  })

  it("types a file by its extension, else sniffs it safely: text stays text, HTML without an extension is not HTML", async () => {
    const readme = await send(`/ipfs/${siteCid}/sub/README`)
    assert.strictEqual(readme.headers["content-type"], "text/plain; charset=utf-8")
    const page = await send(`/ipfs/${siteCid}/sub/page`)
    assert.strictEqual(page.headers["content-type"], "text/plain; charset=utf-8")
    assert.strictEqual(page.headers["x-content-type-options"], "nosniff")
    const binary = await send(`/ipfs/${bigCid}`)
    assert.strictEqual(binary.headers["content-type"], "application/octet-stream")
  })

  it("answers 404 Content not found for a path with nothing at it, and for a name under a file", async () => {
    for (const path of [`/ipfs/${siteCid}/nope.txt`, `/ipfs/${siteCid}/sub/missing/`, `/ipfs/${siteCid}/sub/file.css/deeper`, `/ipfs/${bigCid}/x`]) {
      const reply = await send(path)
      assert.strictEqual(reply.status, 404, path)
      assert.strictEqual(errorOf(reply), "Content not found")
    }
  })

  it("refuses a path that climbs or hides a slash, however it is spelled, with 400", async () => {
    const refused: ReadonlyArray<readonly [string, RegExp]> = [
      [`/ipfs/${siteCid}/../${bigCid}`, /^Validation failed: the path has a "\.\." segment/],
      [`/ipfs/${siteCid}/sub/../../x`, /^Validation failed: the path has a "\.\." segment/],
      [`/ipfs/${siteCid}/%2e%2e/x`, /^Validation failed: the path has a "%2e%2e" segment/],
      [`/ipfs/${siteCid}/sub/%2E%2E/index.html`, /^Validation failed: the path has a "%2E%2E" segment/],
      [`/ipfs/${siteCid}/./index.html`, /^Validation failed: the path has a "\." segment/],
      [`/ipfs/${siteCid}/sub%2Ffile.css`, /^Validation failed: the path segment "sub%2Ffile\.css" holds an encoded slash/],
      [`/ipfs/${siteCid}/sub%2f..%2f..%2fx`, /^Validation failed: the path segment "sub%2f\.\.%2f\.\.%2fx" holds an encoded slash/]
    ]
    for (const [path, error] of refused) {
      const reply = await send(path)
      assert.strictEqual(reply.status, 400, path)
      assert.match(errorOf(reply), error, path)
    }
  })

  it("serves one range (206), a suffix and an open end; 416 past the end; the whole file for several ranges", async () => {
    const middle = await send(`/ipfs/${bigCid}`, { range: `bytes=${MiB - 10}-${MiB + 9}` })
    assert.strictEqual(middle.status, 206)
    assert.strictEqual(middle.headers["content-range"], `bytes ${MiB - 10}-${MiB + 9}/${big.length}`)
    assert.strictEqual(middle.headers["content-length"], "20")
    assert.isTrue(middle.body.equals(big.subarray(MiB - 10, MiB + 10)))
    assert.strictEqual(middle.headers["etag"], `"${bigCid}"`)
    const suffix = await send(`/ipfs/${bigCid}`, { range: "bytes=-7" })
    assert.strictEqual(suffix.status, 206)
    assert.isTrue(suffix.body.equals(big.subarray(big.length - 7)))
    const open = await send(`/ipfs/${bigCid}`, { range: `bytes=${2 * MiB}-` })
    assert.strictEqual(open.headers["content-range"], `bytes ${2 * MiB}-${big.length - 1}/${big.length}`)
    assert.isTrue(open.body.equals(big.subarray(2 * MiB)))
    const past = await send(`/ipfs/${bigCid}`, { range: `bytes=${big.length}-` })
    assert.strictEqual(past.status, 416)
    assert.strictEqual(past.headers["content-range"], `bytes */${big.length}`)
    assert.strictEqual(errorOf(past), "Range not satisfiable")
    const several = await send(`/ipfs/${bigCid}`, { range: "bytes=0-1,5-6" })
    assert.strictEqual(several.status, 200)
    assert.strictEqual(several.body.length, big.length)
    const stale = await send(`/ipfs/${bigCid}`, { range: "bytes=0-9", "if-range": "\"bafkreiother\"" })
    assert.strictEqual(stale.status, 200)
    const current = await send(`/ipfs/${bigCid}`, { range: "bytes=0-9", "if-range": `"${bigCid}"` })
    assert.strictEqual(current.status, 206)
    const css = await send(`/ipfs/${siteCid}/sub/file.css`, { range: "bytes=0-1" })
    assert.strictEqual(css.status, 206)
    assert.strictEqual(css.body.toString(), "h1")
  })

  it("answers HEAD with the headers of GET and no body", async () => {
    const head = await send(`/ipfs/${bigCid}`, {}, "HEAD")
    assert.strictEqual(head.status, 200)
    assert.strictEqual(head.headers["content-length"], String(big.length))
    assert.strictEqual(head.headers["accept-ranges"], "bytes")
    assert.strictEqual(head.headers["etag"], `"${bigCid}"`)
    assert.strictEqual(head.body.length, 0)
    const ranged = await send(`/ipfs/${bigCid}`, { range: "bytes=10-19" }, "HEAD")
    assert.strictEqual(ranged.status, 206)
    assert.strictEqual(ranged.headers["content-length"], "10")
    const folder = await send(`/ipfs/${siteCid}/`, {}, "HEAD")
    assert.strictEqual(folder.status, 200)
    assert.strictEqual(folder.headers["content-type"], "text/html; charset=utf-8")
    assert.strictEqual(folder.body.length, 0)
  })

  it("answers 304 when If-None-Match names the CID the path ends at", async () => {
    for (const tag of [`"${bigCid}"`, `W/"${bigCid}"`, `"other", "${bigCid}"`, "*"]) {
      const reply = await send(`/ipfs/${bigCid}`, { "if-none-match": tag })
      assert.strictEqual(reply.status, 304, tag)
      assert.strictEqual(reply.body.length, 0)
      assert.strictEqual(reply.headers["etag"], `"${bigCid}"`)
      assert.strictEqual(reply.headers["cache-control"], "public, max-age=29030400, immutable")
    }
    const cssTag = `"${await rawCid(site["site/sub/file.css"]!)}"`
    assert.strictEqual((await send(`/ipfs/${siteCid}/sub/file.css`, { "if-none-match": cssTag })).status, 304)
    assert.strictEqual((await send(`/ipfs/${siteCid}/sub/file.css`, { "if-none-match": `"${siteCid}"` })).status, 200)
    const listing = await send(`/ipfs/${siteCid}/sub/`)
    assert.strictEqual((await send(`/ipfs/${siteCid}/sub/`, { "if-none-match": listing.headers["etag"]! })).status, 304)
  })

  it("names the file with ?filename= (inline) and offers it with ?download=true (attachment)", async () => {
    const named = await send(`/ipfs/${bigCid}?filename=report.pdf`)
    assert.strictEqual(named.headers["content-disposition"], `inline; filename="report.pdf"; filename*=UTF-8''report.pdf`)
    assert.strictEqual(named.headers["content-type"], "application/pdf")
    const download = await send(`/ipfs/${siteCid}/sub/file.css?download=true`)
    assert.strictEqual(download.headers["content-disposition"], `attachment; filename="file.css"; filename*=UTF-8''file.css`)
    const unnamed = await send(`/ipfs/${bigCid}?download=true`, {}, "HEAD")
    assert.strictEqual(unnamed.headers["content-disposition"], `attachment; filename="${bigCid}"; filename*=UTF-8''${bigCid}`)
    const awkward = await send(`/ipfs/${bigCid}?download=true&filename=${encodeURIComponent("rëport \"q\"\r\nx.txt")}`, {}, "HEAD")
    assert.strictEqual(awkward.headers["content-disposition"], `attachment; filename="r_port _q___x.txt"; filename*=UTF-8''r%C3%ABport%20%22q%22%0D%0Ax.txt`)
    assert.strictEqual((await send(`/ipfs/${bigCid}`)).headers["content-disposition"], undefined)
  })

  it("keeps the trustless formats: a folder's CAR and a path's raw block", async () => {
    const car = await send(`/ipfs/${siteCid}?format=car`)
    assert.strictEqual(car.status, 200)
    assert.match(car.headers["content-type"]!, /^application\/vnd\.ipld\.car/)
    const block = await send(`/ipfs/${siteCid}/sub/file.css`, { accept: "application/vnd.ipld.raw" })
    assert.strictEqual(block.headers["content-type"], "application/vnd.ipld.raw")
    assert.strictEqual(block.body.toString(), site["site/sub/file.css"])
  })

  it("resolves names in a HAMT-sharded folder and lists it whole", async () => {
    const files = Object.fromEntries(shardedFolder.map((file) => [`many/${file.path}`, file.content]))
    const { cid } = await pinata.upload.public.fileArray(picked(files)).name("many")
    const root = dagPb.decode((await send(`/ipfs/${cid}?format=raw`)).body)
    assert.strictEqual(UnixFS.unmarshal(root.Data!).type, "hamt-sharded-directory")
    for (const file of [shardedFolder[3]!, shardedFolder[1000]!]) {
      const reply = await send(`/ipfs/${cid}/${encodeURIComponent(file.path)}`)
      assert.strictEqual(reply.status, 200, file.path)
      assert.isTrue(reply.body.equals(file.content))
    }
    assert.strictEqual((await send(`/ipfs/${cid}/0000-missing.txt`)).status, 404)
    const listing = (await send(`/ipfs/${cid}/`)).body.toString()
    assert.include(listing, `<p>${shardedFolder.length} entries</p>`)
    assert.include(listing, `href="${shardedFolder[1199]!.path}"`)
  }, 60_000)

  it("keeps private content out of reach, at its CID and under it, but to a key of its workspace (private, not cached)", async () => {
    // The SDK uploads folders to the public network only; a private one goes to /v3/files as the SDK's .url() sends it.
    const form = new FormData()
    for (const file of picked({ "secret/index.html": "<p>private</p>", "secret/a.txt": "a" })) form.append("file", file, file.webkitRelativePath)
    form.append("network", "private")
    const uploaded = await fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${jwt}` }, body: form })
    assert.strictEqual(uploaded.status, 200, await uploaded.clone().text())
    const { cid, network } = ((await uploaded.json()) as { data: { cid: string; network: string } }).data
    assert.strictEqual(network, "private")
    for (const path of [`/ipfs/${cid}`, `/ipfs/${cid}/`, `/ipfs/${cid}/index.html`, `/ipfs/${cid}/a.txt`, `/files/${cid}/a.txt`]) {
      const reply = await send(path)
      assert.strictEqual(reply.status, 404, path)
      assert.strictEqual(errorOf(reply), "Content not found")
    }
    // Private access (the private links helper's PrivateAccess) holds under a path too.
    const owner = { authorization: `Bearer ${jwt}` }
    const file = await send(`/files/${cid}/a.txt`, owner)
    assert.strictEqual(file.status, 200)
    assert.strictEqual(file.body.toString(), "a")
    assert.strictEqual(file.headers["cache-control"], "private")
    assert.strictEqual(file.headers["referrer-policy"], "no-referrer")
    const page = await send(`/ipfs/${cid}/`, owner)
    assert.strictEqual(page.body.toString(), "<p>private</p>")
    assert.strictEqual(page.headers["cache-control"], "private")
  })
})
