/**
 * LeafWriter's failures: a leaf that cannot be written (its directory gone, a full disk) fails the next write and
 * the end as rejected promises, which the upload route turns into a 503, never as a throw (a 500).
 */
import { LeafWriter } from "@cairn/content-store/node"
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

describe("LeafWriter", () => {
  it("reports a failed leaf write through the promises it returns, not by throwing", async () => {
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), "cairn-leaf-writer-"))
    await fs.rm(directory, { recursive: true })
    const writer = new LeafWriter(directory, 4)
    // Full leaves until the writer asks to wait for the oldest one's write (which failed) before the next piece.
    let oldest: Promise<void> | undefined
    for (let leaves = 0; oldest === undefined && leaves < 16; leaves++) {
      assert.doesNotThrow(() => {
        oldest = writer.write(new Uint8Array(4))
      })
    }
    assert.isDefined(oldest)
    await oldest
    let later: Promise<void> | undefined
    assert.doesNotThrow(() => {
      later = writer.write(new Uint8Array(1))
    })
    assert.isDefined(later)
    const refused = await later!.then(() => undefined, (cause: unknown) => cause)
    assert.strictEqual((refused as NodeJS.ErrnoException).code, "ENOENT")
    const ended = await writer.end().then(() => undefined, (cause: unknown) => cause)
    assert.strictEqual((ended as NodeJS.ErrnoException).code, "ENOENT")
  })
})
