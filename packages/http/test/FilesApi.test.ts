/**
 * Files in an agent's workspace through the real routes on the simulated engine: uploads into `uploads/` (strict
 * names and base64, the size limit decided while the body streams in), reading files back as raw bytes, every
 * documented refusal, gateway-token access, and the audit trail (name, size and hash; never the content).
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createHash } from "node:crypto"

// Small limits, so that the largest bodies stay quick to build.
const limits = { uploadMaxBytes: 1024 * 1024, fileReadMaxBytes: 64 * 1024 }
const { web, request, workspace, key, dispose } = TestRuntime.makeTestApi({ workspaceLimits: limits })

const { expectError } = ApiKit
const { waitForStatus } = ApiKit.make(request)

const base64 = (bytes: Uint8Array | string) => Buffer.from(typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes).toString("base64")

let owner: string
let agentId: string
const upload = (body: unknown, token = owner, id = agentId) => request("POST", `/v0/agents/${id}/files/upload`, token, body)
/** A file read raw: status, headers and bytes. */
const read = async (path: string | undefined, token = owner, id = agentId) => {
  const query = path === undefined ? "" : `?path=${encodeURIComponent(path)}`
  const response = await web.handler(new Request(`http://cairn/v0/agents/${id}/files${query}`, { headers: { authorization: `Bearer ${token}` } }))
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}
const readError = async (path: string | undefined, token = owner, id = agentId): Promise<TestRuntime.Reply> => {
  const got = await read(path, token, id)
  const contentType = got.headers.get("content-type") ?? undefined
  assert.match(contentType ?? "", /^application\/json/)
  return { status: got.status, body: JSON.parse(new TextDecoder().decode(got.bytes)), contentType }
}

beforeAll(async () => {
  owner = (await key(await workspace(10))).token
  const created = await request("POST", "/v0/agents", owner, { name: "files" })
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  agentId = created.body!["agent"].agentId
  await waitForStatus(owner, agentId, "running")
}, 120_000)

afterAll(dispose)

describe("file upload", () => {
  it("writes uploads/<filename> and answers its path, name and size; the file reads back byte for byte", async () => {
    const uploaded = await upload({ filename: "notes.txt", contentBase64: base64("hello, agent\n") })
    assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))
    assert.deepStrictEqual(uploaded.body, { path: "uploads/notes.txt", filename: "notes.txt", size: 13 })
    const got = await read("uploads/notes.txt")
    assert.strictEqual(got.status, 200)
    assert.strictEqual(new TextDecoder().decode(got.bytes), "hello, agent\n")
    assert.strictEqual(got.headers.get("content-type"), "text/plain; charset=utf-8")
    assert.strictEqual(got.headers.get("x-content-type-options"), "nosniff")
    assert.match(got.headers.get("content-security-policy") ?? "", /sandbox/)
    assert.strictEqual(got.headers.get("content-disposition"), `inline; filename="notes.txt"; filename*=UTF-8''notes.txt`)

    // A second upload of the same name replaces the file.
    assert.strictEqual((await upload({ filename: "notes.txt", contentBase64: base64("v2") })).body!["size"], 2)
    assert.strictEqual(new TextDecoder().decode((await read("uploads/notes.txt")).bytes), "v2")
  })

  it("keeps binary content, empty files and names in any script exactly", async () => {
    const bytes = crypto.getRandomValues(new Uint8Array(50_000))
    assert.deepStrictEqual((await upload({ filename: "blob.bin", contentBase64: base64(bytes) })).body, { path: "uploads/blob.bin", filename: "blob.bin", size: 50_000 })
    const got = await read("uploads/blob.bin")
    assert.deepStrictEqual(got.bytes, bytes)
    assert.strictEqual(got.headers.get("content-type"), "application/octet-stream")
    assert.deepStrictEqual((await upload({ filename: "empty", contentBase64: "" })).body, { path: "uploads/empty", filename: "empty", size: 0 })
    assert.strictEqual((await read("uploads/empty")).bytes.length, 0)
    const name = "données – 報告.md"
    assert.strictEqual((await upload({ filename: name, contentBase64: base64("# r\n") })).body!["path"], `uploads/${name}`)
    const unicode = await read(`uploads/${name}`)
    assert.strictEqual(unicode.headers.get("content-type"), "text/markdown; charset=utf-8")
    assert.strictEqual(unicode.headers.get("content-disposition"), `inline; filename="donn_es _ __.md"; filename*=UTF-8''${encodeURIComponent(name)}`)
  })

  it("400 for an empty, missing or path-like filename", async () => {
    const content = base64("x")
    expectError(await upload({ contentBase64: content }), 400, "Validation failed: filename is required")
    expectError(await upload({ filename: "", contentBase64: content }), 400, "Validation failed: filename is required")
    expectError(await upload({ filename: 7, contentBase64: content }), 400, "Validation failed: filename must be a string")
    const refused: Array<[string, string]> = [
      ["a/b.txt", "must not contain / or \\"],
      ["../escape.txt", "must not contain / or \\"],
      ["..\\escape.txt", "must not contain / or \\"],
      ["..", "must not be . or .."],
      [".", "must not be . or .."],
      ["a..b", "must not contain .."],
      ["nul\u0000.txt", "must not contain control characters"],
      ["line\nbreak.txt", "must not contain control characters"],
      ["C:evil.txt", "must not start with a drive letter (C:)"],
      ["x".repeat(256), "must be at most 255 bytes"]
    ]
    for (const [filename, why] of refused) {
      expectError(await upload({ filename, contentBase64: content }), 400, `Validation failed: filename ${why}`)
    }
  })

  it("400 for content that is not strict base64", async () => {
    expectError(await upload({ filename: "a.txt" }), 400, "Validation failed: contentBase64 is required")
    expectError(await upload({ filename: "a.txt", contentBase64: 12 }), 400, "Validation failed: contentBase64 must be a string")
    const refused: Array<[string, string]> = [
      ["data:text/plain;base64,aGVsbG8=", "must be plain base64, without a data: URL prefix"],
      ["aGVs bG8=", "must not contain whitespace or line breaks"],
      ["aGVsbG8=\n", "must not contain whitespace or line breaks"],
      ["aGVsbG8", "must be padded with = to a multiple of 4 characters"],
      ["aG=sbG8=", "has padding (=) before its end"],
      ["aGVs-G8_", "has a character outside the base64 alphabet at offset 4"],
      ["AB==", "has non-zero bits in its padding (not canonical base64)"]
    ]
    for (const [contentBase64, why] of refused) {
      expectError(await upload({ filename: "a.txt", contentBase64 }), 400, `Validation failed: contentBase64 ${why}`)
    }
    expectError(await upload("not an object"), 400, "Validation failed: Expected object")
    // Nothing was written by a refused upload.
    expectError(await readError("uploads/a.txt"), 404, "File not found")
  })

  it("413 File too large past the limit on the decoded content; the limit itself is fine", async () => {
    const atLimit = new Uint8Array(limits.uploadMaxBytes).fill(7)
    assert.strictEqual((await upload({ filename: "at-limit.bin", contentBase64: base64(atLimit) })).body!["size"], limits.uploadMaxBytes)
    const over = new Uint8Array(limits.uploadMaxBytes + 1).fill(7)
    expectError(await upload({ filename: "over.bin", contentBase64: base64(over) }), 413, "File too large")
    expectError(await readError("uploads/over.bin"), 404, "File not found")
  })

  it("413 File too large for a streamed body, decided while reading: a 64 MiB body is never read whole", async () => {
    const total = 64 * 1024 * 1024
    const chunk = new TextEncoder().encode("A".repeat(64 * 1024))
    let pulled = 0
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const head = new TextEncoder().encode(`{"filename":"huge.bin","contentBase64":"`)
        pulled += head.length
        controller.enqueue(head)
      },
      pull: (controller) => {
        if (pulled >= total) return controller.close()
        pulled += chunk.length
        controller.enqueue(chunk)
      }
    })
    const response = await web.handler(new Request(`http://cairn/v0/agents/${agentId}/files/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
      body,
      duplex: "half"
    } as RequestInit))
    assert.strictEqual(response.status, 413)
    assert.deepStrictEqual(await response.json(), { error: "File too large" })
    // It stopped reading a little past the limit (its base64 and the JSON around it), far from the whole body.
    assert.isBelow(pulled, 4 * 1024 * 1024, `read ${pulled} bytes`)
    assert.isAbove(pulled, limits.uploadMaxBytes, "it read up to the limit: the refusal came from counting")
    // And it keeps answering.
    assert.strictEqual((await upload({ filename: "after.txt", contentBase64: base64("ok") })).status, 200)
  })

  it("413 at once for a body whose Content-Length is over the limit", async () => {
    let pulled = 0
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        pulled += 1024
        controller.enqueue(new Uint8Array(1024).fill(65))
      }
    })
    const response = await web.handler(new Request(`http://cairn/v0/agents/${agentId}/files/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner}`, "content-length": String(1024 * 1024 * 1024) },
      body,
      duplex: "half"
    } as RequestInit))
    assert.strictEqual(response.status, 413)
    assert.isBelow(pulled, 1024 * 1024)
  })

  it("404 for an unknown agent or another workspace's, 401 without credentials; the gateway token works", async () => {
    const body = { filename: "x.txt", contentBase64: base64("x") }
    expectError(await upload(body, owner, "nosuchagent"), 404, "Agent not found")
    const stranger = (await key(await workspace(1))).token
    expectError(await upload(body, stranger), 404, "Agent not found")
    assert.strictEqual((await request("POST", `/v0/agents/${agentId}/files/upload`, undefined, body)).status, 401)
    const gatewayToken = (await request("GET", `/v0/agents/${agentId}/gateway-token`, owner)).body!["gatewayToken"] as string
    assert.deepStrictEqual((await upload({ filename: "gw.txt", contentBase64: base64("gw") }, gatewayToken)).body, { path: "uploads/gw.txt", filename: "gw.txt", size: 2 })
  })

  it("is recorded with its name, size and SHA-256 and who uploaded it, never its content", async () => {
    const stranger = (await key(await workspace(1), ["org:agents"], "grace")).token
    const id = (await request("POST", "/v0/agents", stranger, { name: "audited" })).body!["agent"].agentId as string
    const content = "content-only-marker-5be9 ".repeat(4)
    assert.strictEqual((await upload({ filename: "secret-plan.txt", contentBase64: base64(content) }, stranger, id)).status, 200)
    expectError(await upload({ filename: "../x", contentBase64: base64(content) }, stranger, id), 400, "Validation failed: filename must not contain / or \\")
    const trail = await request("GET", `/v0/agents/${id}/events`, stranger)
    const uploads = (trail.body!["events"] as Array<{ type: string; actor: string; stream: string; data: Record<string, unknown> }>)
      .filter((e) => e.stream === `uploads-${id}`)
    assert.deepStrictEqual(uploads.map((e) => [e.type, e.actor]), [["WorkspaceFileUploaded", "grace"]])
    const data = uploads[0]!.data
    assert.deepInclude(data, {
      agentId: id,
      filename: "secret-plan.txt",
      path: "uploads/secret-plan.txt",
      size: content.length,
      sha256: createHash("sha256").update(content).digest("hex")
    })
    const text = JSON.stringify(trail.body)
    assert.notInclude(text, "content-only-marker-5be9")
    assert.notInclude(text, base64(content))
  })
})

describe("file read", () => {
  it("types files by extension, and sniffs the others", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
    await upload({ filename: "image.png", contentBase64: base64(png) })
    await upload({ filename: "data.json", contentBase64: base64("{\"a\":1}") })
    await upload({ filename: "page.html", contentBase64: base64("<script>alert(1)</script>") })
    await upload({ filename: "README", contentBase64: base64("plain words\n") })
    await upload({ filename: "unnamed-image", contentBase64: base64(png) })
    const typeOf = async (path: string) => (await read(path)).headers.get("content-type")
    assert.strictEqual(await typeOf("uploads/image.png"), "image/png")
    assert.strictEqual(await typeOf("uploads/data.json"), "application/json")
    assert.strictEqual(await typeOf("uploads/README"), "text/plain; charset=utf-8")
    assert.strictEqual(await typeOf("uploads/unnamed-image"), "image/png")
    // HTML is served as HTML, but sandboxed: it never runs as a page of the API's origin.
    const html = await read("uploads/page.html")
    assert.strictEqual(html.headers.get("content-type"), "text/html; charset=utf-8")
    assert.match(html.headers.get("content-security-policy") ?? "", /^sandbox/)
    // Paths are tidied: `./` and doubled slashes name the same file.
    assert.strictEqual(new TextDecoder().decode((await read("./uploads//README")).bytes), "plain words\n")
  })

  it("404 File not found for a missing file or a directory", async () => {
    expectError(await readError("uploads/nothing-here.txt"), 404, "File not found")
    expectError(await readError("uploads"), 404, "File not found")
    expectError(await readError("no/such/dir/file"), 404, "File not found")
  })

  it("413 File too large past the read cap", async () => {
    await upload({ filename: "big.bin", contentBase64: base64(new Uint8Array(limits.fileReadMaxBytes + 1)) })
    expectError(await readError("uploads/big.bin"), 413, "File too large")
    await upload({ filename: "cap.bin", contentBase64: base64(new Uint8Array(limits.fileReadMaxBytes)) })
    assert.strictEqual((await read("uploads/cap.bin")).bytes.length, limits.fileReadMaxBytes)
  })

  it("400 for a missing, absolute or climbing path", async () => {
    expectError(await readError(undefined), 400, "Validation failed: path is required")
    expectError(await readError(""), 400, "Validation failed: path is required")
    expectError(await readError("/etc/passwd"), 400, "Validation failed: path must be relative to the workspace")
    expectError(await readError("C:/Windows/win.ini"), 400, "Validation failed: path must be relative to the workspace")
    expectError(await readError("../secrets.key"), 400, "Validation failed: path must not contain .. (it stays inside the workspace)")
    expectError(await readError("uploads/../../other/file"), 400, "Validation failed: path must not contain .. (it stays inside the workspace)")
    expectError(await readError("uploads\\notes.txt"), 400, "Validation failed: path must use / as separator, not \\")
  })

  it("404 for an unknown agent or another workspace's, 401 without credentials; the gateway token works as ?token=", async () => {
    expectError(await readError("uploads/notes.txt", owner, "nosuchagent"), 404, "Agent not found")
    const stranger = (await key(await workspace(1))).token
    expectError(await readError("uploads/notes.txt", stranger), 404, "Agent not found")
    assert.strictEqual((await web.handler(new Request(`http://cairn/v0/agents/${agentId}/files?path=uploads/notes.txt`))).status, 401)
    const gatewayToken = (await request("GET", `/v0/agents/${agentId}/gateway-token`, owner)).body!["gatewayToken"] as string
    const viaQuery = await web.handler(new Request(`http://cairn/v0/agents/${agentId}/files?path=uploads/notes.txt&token=${gatewayToken}`))
    assert.strictEqual(viaQuery.status, 200)
    assert.strictEqual(await viaQuery.text(), "v2")
  })
})
