/**
 * What HeliaContentStore reads from its blockstore to serve a range, a path or a listing: a store that records every
 * block it hands out shows that a range reads the nodes on the way down and the leaves that hold its bytes, nothing
 * else (the UnixFS blocksizes let the walk skip every other subtree); that a whole read reads each block once, a
 * few ahead of its consumer at most; and that a name in a HAMT shard costs the shard's blocks on the way to it.
 */
import { deterministicBytes, shardedFolder } from "@cairn/content-store/testing"
import { HeliaContentStore } from "@cairn/content-store-helia"
import { assert, describe, it } from "@effect/vitest"
import { MemoryBlockstore } from "blockstore-core"
import { Effect, Stream } from "effect"
import { importer } from "ipfs-unixfs-importer"
import { fixedSize } from "ipfs-unixfs-importer/chunker"
import { balanced } from "ipfs-unixfs-importer/layout"
import { equals } from "multiformats/bytes"
import type { CID } from "multiformats/cid"

const MiB = 1_048_576

/** A blockstore that records the CID of every block it is asked for. */
class CountingBlockstore extends MemoryBlockstore {
  readonly reads: Array<string> = []
  override get(key: CID, options?: Parameters<MemoryBlockstore["get"]>[1]) {
    this.reads.push(key.toString())
    return super.get(key, options)
  }
}

const setUp = Effect.gen(function*() {
  const blocks = new CountingBlockstore()
  const store = yield* HeliaContentStore.make({ public: blocks, private: new MemoryBlockstore() })
  return { blocks, store }
})

describe("HeliaContentStore reads only the blocks it needs", () => {
  it.effect("reads 1 MiB from the middle of a 20 MiB file as the root and the one or two leaves holding it", () =>
    Effect.gen(function*() {
      const { blocks, store } = yield* setUp
      const content = deterministicBytes(20 * MiB + 12_345)
      const { cid } = yield* store.add(Stream.make(content), { network: "public" })
      const leaves = 21

      blocks.reads.length = 0
      const aligned = yield* Stream.mkUint8Array(store.cat(cid, "public", { offset: 10 * MiB, length: MiB }))
      assert.isTrue(equals(aligned, content.subarray(10 * MiB, 11 * MiB)))
      assert.strictEqual(blocks.reads.length, 2, `an aligned MiB read ${blocks.reads.join(", ")}`)
      assert.strictEqual(blocks.reads[0], cid)

      blocks.reads.length = 0
      const straddling = yield* Stream.mkUint8Array(store.cat(cid, "public", { offset: 10 * MiB + 1000, length: MiB }))
      assert.isTrue(equals(straddling, content.subarray(10 * MiB + 1000, 11 * MiB + 1000)))
      assert.strictEqual(blocks.reads.length, 3, `a MiB across two leaves read ${blocks.reads.join(", ")}`)

      blocks.reads.length = 0
      const whole = yield* Stream.mkUint8Array(store.cat(cid, "public"))
      assert.isTrue(equals(whole, content))
      assert.strictEqual(blocks.reads.length, 1 + leaves, "a whole read reads each block once")
      assert.strictEqual(new Set(blocks.reads).size, 1 + leaves)

      blocks.reads.length = 0
      yield* Stream.runDrain(Stream.take(store.cat(cid, "public"), 1))
      assert.isAtMost(blocks.reads.length, 1 + 4 + 1, "a consumer that stops early stops the reads ahead")
    }))

  it.effect("skips whole subtrees of a deep file: a range in one leaf reads one node per level and that leaf", () =>
    Effect.gen(function*() {
      const { blocks, store } = yield* setUp
      const chunk = 64 * 1024
      const content = deterministicBytes(32 * chunk)
      // 32 leaves under nodes of at most 4 children: leaves, 8 nodes, 2 nodes, the root.
      const cid = yield* Effect.promise(async () => {
        let root = ""
        for await (const entry of importer([{ content }], blocks, {
          cidVersion: 1,
          rawLeaves: true,
          chunker: fixedSize({ chunkSize: chunk }),
          layout: balanced({ maxChildrenPerNode: 4 })
        })) root = entry.cid.toString()
        return root
      })

      for (const leaf of [0, 13, 31]) {
        blocks.reads.length = 0
        const read = yield* Stream.mkUint8Array(store.cat(cid, "public", { offset: leaf * chunk + 100, length: 1000 }))
        assert.isTrue(equals(read, content.subarray(leaf * chunk + 100, leaf * chunk + 1100)))
        assert.strictEqual(blocks.reads.length, 4, `leaf ${leaf}: ${blocks.reads.join(", ")}`)
      }
      blocks.reads.length = 0
      const across = yield* Stream.mkUint8Array(store.cat(cid, "public", { offset: 16 * chunk - 10, length: 20 }))
      assert.isTrue(equals(across, content.subarray(16 * chunk - 10, 16 * chunk + 10)))
      // The root, both halves' nodes and one node under each, and the two leaves.
      assert.strictEqual(blocks.reads.length, 7, blocks.reads.join(", "))
    }))

  it.effect("finds a name in a HAMT shard through the shard's blocks on the way, not the whole folder", () =>
    Effect.gen(function*() {
      const { blocks, store } = yield* setUp
      const { cid } = yield* store.addDirectory(shardedFolder, { network: "public" })
      const stored = yield* Effect.promise(async () => {
        let count = 0
        for await (const _ of blocks.getAll()) count++
        return count
      })
      for (const file of [shardedFolder[7]!, shardedFolder[1100]!]) {
        blocks.reads.length = 0
        const found = yield* store.resolve(cid, [file.path], "public")
        assert.strictEqual(found.kind, "file")
        // The root shard, a sub-shard or two, and the file's own block (read to say what it is).
        assert.isAtMost(blocks.reads.length, 4, `${blocks.reads.length} of ${stored} blocks read`)
      }
    }))
})
