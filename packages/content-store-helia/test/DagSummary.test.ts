/**
 * `dagSummary` (what a pin by CID records: a folder's files and bytes, counted from the blocks it fetched) agrees with
 * what the store's own walk of the stored folder counts, for a folder tree, a HAMT-sharded folder and a large file.
 */
import { ContentStore, dagSummary } from "@cairn/content-store"
import { deterministicBytes, directoryTree, shardedFolder } from "@cairn/content-store/testing"
import { HeliaContentStore } from "@cairn/content-store-helia"
import { assert, describe, layer } from "@effect/vitest"
import { CarReader } from "@ipld/car"
import { Effect, Stream } from "effect"

const blocksOf = (cid: string) =>
  Effect.gen(function*() {
    const store = yield* ContentStore
    const car = yield* Stream.mkUint8Array(store.car(cid, "public"))
    return yield* Effect.promise(async () => {
      const reader = await CarReader.fromBytes(car)
      const blocks: Array<{ cid: string; bytes: Uint8Array }> = []
      for await (const block of reader.blocks()) blocks.push({ cid: block.cid.toString(), bytes: block.bytes })
      return blocks
    })
  })

layer(HeliaContentStore.layerMemory)("dagSummary", (it) => {
  describe("counts what the store's walk counts", () => {
    for (const [name, files] of [["a folder tree", directoryTree], ["a HAMT-sharded folder", shardedFolder]] as const) {
      it.effect(name, () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          const { cid } = yield* store.addDirectory(files, { network: "public" })
          const walked = (yield* store.walk(cid, "public")).filter((entry) => entry.kind === "file")
          assert.deepStrictEqual(dagSummary(cid, yield* blocksOf(cid)), {
            kind: "directory",
            files: walked.length,
            size: walked.reduce((total, entry) => total + entry.size, 0)
          })
          assert.strictEqual(walked.length, files.length)
        }))
    }

    it.effect("a file of several leaves", () =>
      Effect.gen(function*() {
        const store = yield* ContentStore
        const bytes = deterministicBytes(3 * 1024 * 1024 + 7)
        const { cid } = yield* store.add(Stream.make(bytes), { network: "public" })
        assert.deepStrictEqual(dagSummary(cid, yield* blocksOf(cid)), { kind: "file", files: 1, size: bytes.byteLength })
      }))
  })
})
