/**
 * Folder uploads as a user of the official pinata SDK makes them: `upload.public.fileArray(files)` to the legacy
 * `pinFileToIPFS` (the SDK's `legacyUploadUrl`), and the same through `.url()` to `/v3/files`, against a real
 * server on loopback. The folder comes back as the CID Kubo gives the folder's contents, and its CAR from the
 * gateway holds every file.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CarReader } from "@ipld/car"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import { PinataSDK } from "pinata"
import { type ServerProcess, cli, startServer, stopServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-folders-"))
let server: ServerProcess
let pinata: PinataSDK

/** A site as a browser's folder picker gives it: each File knows its path under the picked folder. */
const site = {
  "site/index.html": "<!doctype html><title>Cairn</title>\n",
  "site/css/style.css": "body { margin: 0 }\n",
  "site/js/app.js": "console.log('hi')\n"
}
const picked = () =>
  Object.entries(site).map(([path, content]) => {
    const file = new File([content], path.split("/").at(-1)!, { type: "text/plain" })
    Object.defineProperty(file, "webkitRelativePath", { value: path })
    return file
  })

// What `ipfs add -r --wrap-with-directory --cid-version=1 --chunker=size-1048576` gives the folder's contents
// (index.html, css/style.css, js/app.js). Computed with ipfs-unixfs-importer 17.1.1 with Kubo's settings and
// checked against a tree built by hand from the UnixFS spec (as content-store's DirectoryVectors.test.ts does).
const siteCid = "bafybeidypg463tna5fsbtocz3uvifa6kuhhnmo5i53kp4t2ubxuojc5kji"

/** The CIDs of the blocks in the gateway's CAR of `cid`. */
const carBlocks = async (cid: string) => {
  const response = await fetch(`${server.url}/ipfs/${cid}?format=car`)
  assert.strictEqual(response.status, 200, await response.clone().text())
  const reader = await CarReader.fromBytes(new Uint8Array(await response.arrayBuffer()))
  assert.deepStrictEqual((await reader.getRoots()).map(String), [cid])
  const cids: Array<string> = []
  for await (const block of reader.blocks()) cids.push(block.cid.toString())
  return cids
}
/** A small file's CIDv1: one raw block. */
const rawCid = async (content: string) => CID.create(1, raw.code, await sha256.digest(new TextEncoder().encode(content))).toString()

beforeAll(async () => {
  server = await startServer({ DATA_DIR: dataDir })
  await waitUntilServing(server)
  const env = { url: server.url, dataDir }
  const workspaceId = cli(env, "workspace", "create", "--name", "Folders")
  const jwt = cli(env, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:files:read,org:files:write")
  pinata = new PinataSDK({
    pinataJwt: jwt,
    pinataGateway: "127.0.0.1",
    endpointUrl: `${server.url}/v3`,
    uploadUrl: `${server.url}/v3`,
    legacyUploadUrl: `${server.url}/pinning/pinFileToIPFS`
  })
}, 120_000)

afterAll(() => stopServer(server, dataDir))

describe("folder uploads through the official pinata SDK", () => {
  it("fileArray pins a picked folder's contents as one directory, with Kubo's CID", async () => {
    const uploaded = await pinata.upload.public.fileArray(picked()).name("site").keyvalues({ kind: "site" })
    assert.deepInclude(uploaded, { cid: siteCid, name: "site", number_of_files: 3, mime_type: "directory", network: "public", group_id: null })
    assert.strictEqual(uploaded.size, Object.values(site).join("").length)
    assert.deepStrictEqual(uploaded.keyvalues, { kind: "site" })
    const blocks = await carBlocks(uploaded.cid)
    for (const content of Object.values(site)) assert.include(blocks, await rawCid(content))
    const listed = await pinata.files.public.list().cid(siteCid)
    assert.deepInclude(listed.files.map((f) => [f.id, f.mime_type, f.number_of_files]), [uploaded.id, "directory", 3])
  })

  it("fileArray of plain files puts them under the SDK's folder name, which is the record's name", async () => {
    const files = [new File(["one"], "one.txt"), new File(["two"], "two.txt")]
    const uploaded = await pinata.upload.public.fileArray(files)
    assert.deepInclude(uploaded, { name: "folder_from_sdk", number_of_files: 2, mime_type: "directory", size: 6 })
    const blocks = await carBlocks(uploaded.cid)
    for (const content of ["one", "two"]) assert.include(blocks, await rawCid(content))
  })

  it("fileArray with .url() posts the folder to /v3/files and gets the same directory", async () => {
    const uploaded = await pinata.upload.public.fileArray(picked()).name("site").url(`${server.url}/v3/files`)
    assert.deepInclude(uploaded, { cid: siteCid, name: "site", number_of_files: 3, mime_type: "directory", network: "public" })
  })

  it("a path that climbs out of the folder is refused, and the SDK reports the server's message", async () => {
    const escaping = new File(["x"], "x.txt")
    Object.defineProperty(escaping, "webkitRelativePath", { value: "site/../../x.txt" })
    const error = await pinata.upload.public.fileArray([escaping, ...picked()]).then(() => undefined, (e: Error) => e)
    assert.match(String(error?.message), /Validation failed: file path \\"site\/\.\.\/\.\.\/x\.txt\\" has a \. or \.\. segment/)
  })
})
