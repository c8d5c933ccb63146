import { deterministicBytes } from "@cairn/content-store/testing"
import { LeafWriter } from "@cairn/content-store/node"
import { unixfs } from "@helia/unixfs"
import { assert, describe, it } from "@effect/vitest"
import { MemoryBlockstore } from "blockstore-core"
import { Effect } from "effect"
import { fixedSize } from "ipfs-unixfs-importer/chunker"
import { balanced } from "ipfs-unixfs-importer/layout"
import { equals } from "multiformats/bytes"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { FsBlocks } from "../src/FsBlocks.ts"
import { importStagedLeaves } from "../src/StagedImport.ts"

const mib = 1_048_576

const tempDirectory = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "cairn-staged-import-"))),
  (directory) => Effect.promise(() => fs.rm(directory, { recursive: true, force: true }))
)

/** Stages `bytes` in pieces of 64 KiB + 3 (never on a leaf boundary) and imports the leaves into `blockstore`. */
const stageAndImport = (bytes: Uint8Array, blockstore: MemoryBlockstore | FsBlocks, chunkBytes: number, maxChildrenPerNode: number) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    return yield* Effect.promise(async () => {
      const writer = new LeafWriter(directory, chunkBytes)
      for (let at = 0; at < bytes.length; at += 65_539) await writer.write(bytes.subarray(at, at + 65_539))
      const staged = await writer.end()
      const options = { cidVersion: 1 as const, rawLeaves: true, chunker: fixedSize({ chunkSize: chunkBytes }), layout: balanced({ maxChildrenPerNode }) }
      const root = await importStagedLeaves(staged, blockstore, options, new AbortController().signal)
      // Every leaf was moved or copied into the store: nothing is left to read back.
      return { root, staged, left: await fs.readdir(directory) }
    })
  })

/** The CID @helia/unixfs's own import gives, and the bytes it reads back for `root` from `blockstore`. */
const viaImporter = (bytes: Uint8Array, chunkBytes: number, maxChildrenPerNode: number) =>
  unixfs({ blockstore: new MemoryBlockstore() }).addBytes(bytes, {
    cidVersion: 1,
    rawLeaves: true,
    chunker: fixedSize({ chunkSize: chunkBytes }),
    layout: balanced({ maxChildrenPerNode })
  })

const readBack = async (blockstore: MemoryBlockstore | FsBlocks, root: Parameters<ReturnType<typeof unixfs>["cat"]>[0]) => {
  const pieces: Array<Uint8Array> = []
  for await (const piece of unixfs({ blockstore }).cat(root, { offline: true })) pieces.push(piece)
  return Buffer.concat(pieces)
}

describe("Staged raw leaves imported without reading them back", () => {
  const cases: ReadonlyArray<readonly [string, number, number, number]> = [
    ["empty", 0, mib, 1024],
    ["1 byte", 1, mib, 1024],
    ["1 MiB - 1", mib - 1, mib, 1024],
    ["1 MiB", mib, mib, 1024],
    ["1 MiB + 1", mib + 1, mib, 1024],
    ["5 MiB + 7", 5 * mib + 7, mib, 1024],
    // Three levels: 1 KiB leaves, 4 links per node.
    ["70 KiB + 5 in 1 KiB leaves, 4 links per node", 70 * 1024 + 5, 1024, 4]
  ]
  for (const [name, size, chunkBytes, maxChildren] of cases) {
    it.effect(`gives ${name} the CID the importer gives, on the filesystem and in memory`, () =>
      Effect.gen(function*() {
        const bytes = deterministicBytes(size)
        const expected = yield* Effect.promise(() => viaImporter(bytes, chunkBytes, maxChildren))
        const onDisk = new FsBlocks(yield* tempDirectory)
        yield* Effect.promise(() => onDisk.open())
        for (const blockstore of [onDisk, new MemoryBlockstore()]) {
          const { root, staged, left } = yield* stageAndImport(bytes, blockstore, chunkBytes, maxChildren)
          assert.strictEqual(root.toString(), expected.toString())
          assert.strictEqual(staged.size, size)
          assert.deepStrictEqual(left, blockstore instanceof FsBlocks ? [] : staged.leaves.map((_, i) => String(i)).sort())
          assert.isTrue(equals(yield* Effect.promise(() => readBack(blockstore, root)), bytes), `${root} does not read back`)
        }
      }).pipe(Effect.scoped))
  }
})
