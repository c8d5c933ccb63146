/**
 * `POST /v3/files` of a file past the in-memory limit (4 MiB): the part is staged as raw leaves while it streams in,
 * before the fields (the pinata SDK's order). The CID is the one the importer gives the same bytes with the same
 * settings (CIDv1 from the staged leaves as they are, CIDv0 through a read-back), the bytes read back, the type is
 * sniffed from the staged start, and the staging directory keeps nothing once the request is answered.
 */
import { ContentStore } from "@cairn/content-store"
import { deterministicBytes } from "@cairn/content-store/testing"
import { TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Stream } from "effect"
import { equals } from "multiformats/bytes"
import * as fs from "node:fs"
import * as path from "node:path"

const api = TestRuntime.makeTestApi()
const { workspace, key, runtime, web } = api
afterAll(api.dispose)

// The routes' DATA_DIR: unset in tests, so the default.
const stagingRoot = path.resolve("./data/staging")
const staged = () => new Set(fs.existsSync(stagingRoot) ? fs.readdirSync(stagingRoot) : [])

const text = (value: string) => new TextEncoder().encode(value)

/** The file part first, then the fields, as the pinata SDK sends them. */
const post = async (token: string, content: Uint8Array, fields: Record<string, string>, type = "application/octet-stream") => {
  const boundary = `test-${crypto.randomUUID()}`
  const body = Buffer.concat([
    text(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: ${type}\r\n\r\n`),
    content,
    text("\r\n"),
    ...Object.entries(fields).map(([name, value]) => text(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)),
    text(`--${boundary}--\r\n`)
  ])
  const response = await web.handler(new Request("http://cairn/v3/files", {
    method: "POST",
    headers: { "content-type": `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${token}` },
    body
  }))
  return { status: response.status, body: JSON.parse(await response.text()) as Record<string, any> }
}

const imported = (content: Uint8Array, cidVersion: 0 | 1) =>
  runtime.runPromise(ContentStore.use((store) => store.add(Stream.make(content), { network: "private", cidVersion })))
const cat = (cid: string) =>
  runtime.runPromise(ContentStore.use((store) => Stream.mkUint8Array(store.cat(cid, "public"))))

let writer: string

beforeAll(async () => {
  writer = (await key(await workspace(1), ["org:files:read", "org:files:write"])).token
}, 120_000)

describe("POST /v3/files past the in-memory limit", () => {
  for (const cidVersion of [1, 0] as const) {
    it(`stores 6 MiB + 7 bytes with the importer's CIDv${cidVersion}, reads them back, and leaves no staged leaves`, async () => {
      const content = deterministicBytes(6 * 1_048_576 + 7)
      content[0] = cidVersion // not the bytes of the other case
      const before = staged()
      const uploaded = await post(writer, content, { network: "public", cid_version: `v${cidVersion}` })
      assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))
      const expected = await imported(content, cidVersion)
      assert.deepInclude(uploaded.body["data"], { cid: expected.cid, size: content.length, network: "public" })
      assert.isTrue(equals(await cat(expected.cid), content))
      assert.deepStrictEqual([...staged()].filter((name) => !before.has(name)), [])
    })
  }

  it("sniffs a generic part's type from the staged start", async () => {
    const content = deterministicBytes(5 * 1_048_576)
    content.set([0x1f, 0x8b, 0x08], 0) // gzip's magic
    const uploaded = await post(writer, content, { network: "public" })
    assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))
    assert.strictEqual(uploaded.body["data"].mime_type, "application/gzip")
  })
})
