/**
 * Folder uploads through the real routes: `POST /v3/files` with several `file` parts (or one whose filename is a
 * path), and Pinata's legacy `POST /pinning/pinFileToIPFS` that the SDK's `fileArray` posts to. The folder is one
 * UnixFS directory with Kubo's CID, recorded as one file of mime type `directory`. Runs on PGlite, and on a fresh
 * Postgres database when DATABASE_URL is set.
 */
import { ContentStore, type DirectoryEntry } from "@cairn/content-store"
import { directoryTree, kuboDirectoryVectors } from "@cairn/content-store/testing"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Stream } from "effect"

const api = TestRuntime.makeTestApi()
const { request, workspace, key, runtime, web } = api
afterAll(api.dispose)

const encoder = new TextEncoder()
const text = (value: string) => encoder.encode(value)

interface Part {
  readonly name: string
  /** Sent exactly as given inside the quotes of `filename="…"`. */
  readonly filename?: string
  readonly content: Uint8Array | string
  readonly type?: string
}

/** A multipart body written byte by byte, so filenames reach the server exactly as a client wrote them. */
const multipart = (parts: ReadonlyArray<Part>) => {
  const boundary = `test-${crypto.randomUUID()}`
  const chunks: Array<Uint8Array> = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`
    const type = part.filename === undefined ? "" : `Content-Type: ${part.type ?? "application/octet-stream"}\r\n`
    chunks.push(text(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`))
    chunks.push(typeof part.content === "string" ? text(part.content) : part.content, text("\r\n"))
  }
  chunks.push(text(`--${boundary}--\r\n`))
  const body = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0))
  chunks.reduce((offset, chunk) => (body.set(chunk, offset), offset + chunk.length), 0)
  return { body, contentType: `multipart/form-data; boundary=${boundary}` }
}

const post = async (path: string, token: string | undefined, parts: ReadonlyArray<Part>) => {
  const { body, contentType } = multipart(parts)
  const response = await web.handler(new Request(`http://cairn${path}`, {
    method: "POST",
    headers: { "content-type": contentType, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body
  }))
  return TestRuntime.replyOf(response)
}

const files = (entries: ReadonlyArray<{ readonly path: string; readonly content: Uint8Array | string }>, prefix = ""): Array<Part> =>
  entries.map((entry) => ({ name: "file", filename: `${prefix}${entry.path}`, content: entry.content }))

const walk = (cid: string, network: "public" | "private" = "public") =>
  runtime.runPromise(ContentStore.use((store) => store.walk(cid, network)))
const cat = (cid: string, network: "public" | "private" = "public") =>
  runtime.runPromise(ContentStore.use((store) => Stream.mkUint8Array(store.cat(cid, network)))).then((bytes) => new TextDecoder().decode(bytes))
const filesOf = (entries: ReadonlyArray<DirectoryEntry>) => entries.filter((entry) => entry.kind === "file").map((entry) => entry.path)

const { expectError } = ApiKit

const treeBytes = directoryTree.reduce((sum, file) => sum + file.content.length, 0)
const treeCid = (cidVersion: 0 | 1) => kuboDirectoryVectors.find((v) => v.files === directoryTree && v.cidVersion === cidVersion)!.cid

let writer: string
let reader: string
/** A group of the workspace on each network, for uploads that name one. */
let privateGroup: string
let publicGroup: string

beforeAll(async () => {
  const workspaceId = await workspace(1)
  writer = (await key(workspaceId, ["org:files:read", "org:files:write"])).token
  reader = (await key(workspaceId, ["org:files:read"])).token
  const grouper = (await key(workspaceId, ["org:groups:write"])).token
  privateGroup = (await request("POST", "/v3/groups/private", grouper, { name: "folders" })).body!["data"].id
  publicGroup = (await request("POST", "/v3/groups/public", grouper, { name: "pins" })).body!["data"].id
}, 120_000)

describe("POST /v3/files with a folder", () => {
  it("stores the SDK's <folder>/<name> parts as the folder's contents, with Kubo's CID, named after the folder", async () => {
    const uploaded = await post("/v3/files", writer, [...files(directoryTree, "tree/"), { name: "network", content: "public" }])
    assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))
    const file = uploaded.body!["data"]
    assert.deepInclude(file, {
      cid: treeCid(1),
      name: "tree",
      size: treeBytes,
      number_of_files: 4,
      mime_type: "directory",
      network: "public",
      group_id: null
    })
    const entries = await walk(file.cid)
    assert.deepStrictEqual(filesOf(entries), ["docs/big.bin", "docs/notes/todo.txt", "docs/readme.md", "hello.txt"])
    assert.strictEqual(await cat(entries.find((entry) => entry.path === "docs/readme.md")!.cid), "# Cairn\n")
    const got = await request("GET", `/v3/files/public/${file.id}`, reader)
    assert.deepInclude(got.body!["data"], { cid: treeCid(1), mime_type: "directory", number_of_files: 4 })
    const listed = await request("GET", "/v3/files/public?mimeType=directory", reader)
    assert.include(listed.body!["data"].files.map((f: { id: string }) => f.id), file.id)
  })

  it("keeps paths with no common folder as they are, and takes the name field, key-values, group and CID version", async () => {
    const uploaded = await post("/v3/files", writer, [
      ...files([{ path: "a.txt", content: "a" }, { path: "b/c.txt", content: "c" }]),
      { name: "network", content: "private" },
      { name: "name", content: "my folder" },
      { name: "keyvalues", content: JSON.stringify({ kind: "site" }) },
      { name: "group_id", content: privateGroup },
      { name: "cid_version", content: "v0" }
    ])
    assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))
    const file = uploaded.body!["data"]
    assert.deepInclude(file, { name: "my folder", size: 2, number_of_files: 2, mime_type: "directory", network: "private", group_id: privateGroup })
    assert.deepStrictEqual(file.keyvalues, { kind: "site" })
    assert.match(file.cid, /^Qm/)
    assert.deepStrictEqual(filesOf(await walk(file.cid, "private")), ["a.txt", "b/c.txt"])
  })

  it("gives the v0 tree Kubo's v0 CID", async () => {
    const uploaded = await post("/v3/files", writer, [...files(directoryTree, "tree/"), { name: "network", content: "public" }, { name: "cid_version", content: "v0" }])
    assert.strictEqual(uploaded.body!["data"].cid, treeCid(0))
  })

  it("treats one part whose filename is a path as a folder of that one file", async () => {
    const uploaded = await post("/v3/files", writer, [...files([{ path: "site/index.html", content: "<p>hi</p>" }]), { name: "network", content: "public" }])
    const file = uploaded.body!["data"]
    assert.deepInclude(file, { name: "site", number_of_files: 1, mime_type: "directory", size: 9 })
    assert.deepStrictEqual(filesOf(await walk(file.cid)), ["index.html"])
  })

  it("still stores one part with a plain filename as a file", async () => {
    const uploaded = await post("/v3/files", writer, [...files([{ path: "plain.txt", content: "just a file" }]), { name: "network", content: "public" }])
    assert.deepInclude(uploaded.body!["data"], { name: "plain.txt", number_of_files: 1, mime_type: "text/plain; charset=utf-8" })
  })

  it("refuses paths that climb, are absolute, have empty segments, backslashes or NUL, repeat or clash: 400 Validation failed", async () => {
    const refusals: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["../etc/passwd", "../etc/shadow"], `file path "../etc/passwd" has a . or .. segment`],
      [["site/../../escape.txt", "site/ok.txt"], `file path "site/../../escape.txt" has a . or .. segment`],
      [["site/./a.txt", "site/b.txt"], `file path "site/./a.txt" has a . or .. segment`],
      [["/etc/passwd", "b.txt"], `file path "/etc/passwd" is absolute`],
      [["C:/Windows/a.txt", "b.txt"], `file path "C:/Windows/a.txt" starts with a drive letter`],
      [["site//a.txt", "b.txt"], `file path "site//a.txt" has an empty segment`],
      [["site/", "b.txt"], `file path "site/" has an empty segment`],
      [["site\\..\\..\\a.txt", "b.txt"], `file path "site\\\\..\\\\..\\\\a.txt" contains a backslash`],
      [["site/a.txt", "site/a.txt"], `file path "site/a.txt" is given twice`],
      [["site/a", "site/a/b.txt"], `file path "site/a" is both a file and a directory`]
    ]
    for (const [paths, detail] of refusals) {
      // Sent as browsers send filenames: only `"`, CR and LF are escaped (none here), a backslash goes as it is.
      const parts = paths.map((path) => ({ name: "file", filename: path, content: "x" }))
      const refused = await post("/v3/files", writer, [...parts, { name: "network", content: "public" }])
      expectError(refused, 400, `Validation failed: ${detail}`)
    }
    // A NUL in a part's header is refused by the multipart reader before any path is looked at.
    const nul = await post("/v3/files", writer, [...files([{ path: "site/a\u0000.txt", content: "x" }, { path: "b.txt", content: "x" }])])
    assert.strictEqual(nul.status, 400)
    assert.match(nul.body!["error"], /^Validation failed: /)
    const listed = await request("GET", "/v3/files/public?name=escape", reader)
    assert.strictEqual(listed.body!["data"].files.length, 0)
  })

  it("refuses a folder whose files together pass the upload limit: 413 File too large", async () => {
    // Each file and the whole body are within their caps; only the files' total is over 100 MiB.
    const half = new Uint8Array(50 * 1024 * 1024 + 1024)
    const refused = await post("/v3/files", writer, [...files([{ path: "big/one.bin", content: half }, { path: "big/two.bin", content: half }]), {
      name: "network",
      content: "public"
    }])
    expectError(refused, 413, "File too large")
  }, 60_000)

  it("needs the write scope", async () => {
    expectError(await post("/v3/files", undefined, files([{ path: "a/b.txt", content: "b" }])), 401, "Unauthorized", { reason: "missing-credentials" })
    const forbidden = await post("/v3/files", reader, files([{ path: "a/b.txt", content: "b" }]))
    assert.strictEqual(forbidden.status, 403)
  })
})

describe("POST /pinning/pinFileToIPFS (the SDK's fileArray)", () => {
  const sdkForm = (folder: string, entries: ReadonlyArray<{ path: string; content: string | Uint8Array }>, options: object = { cidVersion: 1 }) => [
    ...files(entries, `${folder}/`),
    { name: "pinataMetadata", content: JSON.stringify({ name: folder, keyvalues: { env: "test" } }) },
    { name: "pinataOptions", content: JSON.stringify(options) }
  ]

  it("pins the folder's contents on the public network and answers in the flat legacy shape", async () => {
    const pinned = await post("/pinning/pinFileToIPFS", writer, sdkForm("tree", directoryTree))
    assert.strictEqual(pinned.status, 200, JSON.stringify(pinned.body))
    const body = pinned.body!
    assert.deepStrictEqual(Object.keys(body).sort(), [
      "GroupId", "ID", "IpfsHash", "Keyvalues", "MimeType", "Name", "NumberOfFiles", "PinSize", "Timestamp", "isDuplicate"
    ])
    assert.deepInclude(body, {
      IpfsHash: treeCid(1),
      Name: "tree",
      PinSize: treeBytes,
      NumberOfFiles: 4,
      MimeType: "directory",
      GroupId: null,
      Keyvalues: { env: "test" }
    })
    assert.match(body["Timestamp"], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const got = await request("GET", `/v3/files/public/${body["ID"]}`, reader)
    assert.deepInclude(got.body!["data"], { cid: treeCid(1), network: "public", mime_type: "directory" })
  })

  it("takes the group, defaults to CIDv0 as Pinata's legacy API does, and wraps the folder when asked", async () => {
    const v0 = await post("/pinning/pinFileToIPFS", writer, sdkForm("tree", directoryTree, { groupId: publicGroup }))
    assert.deepInclude(v0.body!, { IpfsHash: treeCid(0), GroupId: publicGroup })
    const wrapped = await post("/pinning/pinFileToIPFS", writer, sdkForm("site", [{ path: "index.html", content: "<p>hi</p>" }], { cidVersion: 1, wrapWithDirectory: true }))
    assert.deepInclude(wrapped.body!, { Name: "site", NumberOfFiles: 1, MimeType: "directory" })
    assert.deepStrictEqual((await walk(wrapped.body!["IpfsHash"])).map((entry) => entry.path), ["site", "site/index.html"])
  })

  it("pins a single file with a plain filename as a file", async () => {
    const pinned = await post("/pinning/pinFileToIPFS", writer, [{ name: "file", filename: "hello.txt", content: "hello world\n", type: "text/plain" }])
    assert.deepInclude(pinned.body!, { IpfsHash: "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", Name: "hello.txt", NumberOfFiles: 1, MimeType: "text/plain", PinSize: 12 })
  })

  it("refuses traversal, bad metadata, no file and no key", async () => {
    expectError(
      await post("/pinning/pinFileToIPFS", writer, sdkForm("..", [{ path: "a.txt", content: "a" }, { path: "b.txt", content: "b" }])),
      400,
      `Validation failed: file path "../a.txt" has a . or .. segment`
    )
    expectError(
      await post("/pinning/pinFileToIPFS", writer, [...files([{ path: "a/b.txt", content: "b" }]), { name: "pinataOptions", content: "{\"cidVersion\":2}" }]),
      400,
      "Validation failed: pinataOptions must be JSON {groupId, cidVersion: 0 or 1, wrapWithDirectory}"
    )
    expectError(
      await post("/pinning/pinFileToIPFS", writer, [...files([{ path: "a/b.txt", content: "b" }]), { name: "pinataMetadata", content: "{\"keyvalues\":{\"n\":{\"nested\":1}}}" }]),
      400,
      "Validation failed: pinataMetadata must be JSON {name, keyvalues} with string, number or boolean key-values"
    )
    expectError(await post("/pinning/pinFileToIPFS", writer, [{ name: "pinataMetadata", content: "{}" }]), 400, "Validation failed: a file part named \"file\" is required")
    expectError(await post("/pinning/pinFileToIPFS", undefined, files([{ path: "a/b.txt", content: "b" }])), 401, "Unauthorized", { reason: "missing-credentials" })
  })
})
