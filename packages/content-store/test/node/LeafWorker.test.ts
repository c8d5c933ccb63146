/**
 * The leaves' worker: a leaf handed over by transfer is hashed and written in a worker thread and its buffer comes
 * back; a buffer that cannot be transferred is hashed on the main thread's side with the same result; a failed write
 * keeps its error code; and a process that hashed a leaf still ends on its own (an idle worker holds nothing).
 */
import { hashAndWriteLeaf } from "@cairn/content-store/node"
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash("sha256").update(bytes).digest())

const directory = () => fs.mkdtemp(path.join(os.tmpdir(), "cairn-leaf-worker-"))

describe("hashAndWriteLeaf", () => {
  it("hashes and writes a leaf's first bytes in a worker, and gives its buffer back", async () => {
    const dir = await directory()
    const buffer = Buffer.allocUnsafeSlow(64 * 1024)
    randomBytes(buffer.byteLength).copy(buffer)
    const expected = Buffer.from(buffer.subarray(0, 40_000))
    const written = await hashAndWriteLeaf(path.join(dir, "0"), buffer, 40_000)
    // Transferred: the buffer given is emptied, and the same memory comes back whole.
    assert.strictEqual(buffer.byteLength, 0)
    assert.strictEqual(written.buffer.byteLength, 64 * 1024)
    assert.deepStrictEqual(written.sha256, sha256(expected))
    assert.deepStrictEqual(await fs.readFile(path.join(dir, "0")), expected)
    await fs.rm(dir, { recursive: true })
  })

  it("hashes a buffer that shares its memory where it is, with the same result", async () => {
    const dir = await directory()
    const shared = Buffer.from("a leaf inside a larger allocation")
    const leaf = shared.subarray(2, 20)
    const expected = Buffer.from(leaf.subarray(0, 10))
    const written = await hashAndWriteLeaf(path.join(dir, "0"), leaf, 10)
    assert.strictEqual(written.buffer, leaf)
    assert.deepStrictEqual(written.sha256, sha256(expected))
    assert.deepStrictEqual(await fs.readFile(path.join(dir, "0")), expected)
    await fs.rm(dir, { recursive: true })
  })

  it("fails with the write's error code, and the next leaf is written as usual", async () => {
    const dir = await directory()
    await fs.writeFile(path.join(dir, "taken"), "")
    const refused = await hashAndWriteLeaf(path.join(dir, "taken"), Buffer.allocUnsafeSlow(16), 16).then(() => undefined, (cause: unknown) => cause)
    assert.strictEqual((refused as NodeJS.ErrnoException).code, "EEXIST")
    const missing = await hashAndWriteLeaf(path.join(dir, "gone", "0"), Buffer.allocUnsafeSlow(16), 16).then(() => undefined, (cause: unknown) => cause)
    assert.strictEqual((missing as NodeJS.ErrnoException).code, "ENOENT")
    const written = await hashAndWriteLeaf(path.join(dir, "1"), Buffer.alloc(8, 1), 8)
    assert.deepStrictEqual(written.sha256, sha256(Buffer.alloc(8, 1)))
    await fs.rm(dir, { recursive: true })
  })

  it("lets a process end once its leaves are written", async () => {
    const dir = await directory()
    const module = fileURLToPath(new URL("../../src/node/LeafWorker.ts", import.meta.url))
    const script = `import { hashAndWriteLeaf } from ${JSON.stringify(module)}
const written = await hashAndWriteLeaf(${JSON.stringify(path.join(dir, "0"))}, Buffer.allocUnsafeSlow(1024), 1024)
console.log(Buffer.from(written.sha256).toString("hex"))`
    // A worker still held would keep the child running into the timeout (and an unheld pending leaf would end it
    // with exit code 13 before the hash is printed).
    const printed = execFileSync(process.execPath, ["--input-type=module", "-e", script], { timeout: 20_000, encoding: "utf8" })
    assert.strictEqual(printed.trim(), Buffer.from(sha256(await fs.readFile(path.join(dir, "0")))).toString("hex"))
    await fs.rm(dir, { recursive: true })
  })
})
