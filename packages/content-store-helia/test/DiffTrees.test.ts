import type { TreeEntry } from "@cairn/content-store"
import { deterministicBytes } from "@cairn/content-store/testing"
import { HeliaSnapshotStore } from "@cairn/content-store-helia"
import { assert, describe, it } from "@effect/vitest"
import { MemoryBlockstore } from "blockstore-core"
import { Effect, Stream } from "effect"
import type { Blockstore } from "interface-blockstore"
import { CID } from "multiformats/cid"
import { blockKey } from "../src/snapshots/Blocks.ts"
import { dagBlocks } from "../src/snapshots/DagBlocks.ts"
import { diffTrees } from "../src/snapshots/DiffTrees.ts"

const text = (value: string) => new TextEncoder().encode(value)
const file = (path: string, content: Uint8Array, mode = 0o644): TreeEntry => ({ path, kind: "file", mode, source: { content: Stream.make(content) } })

/** A memory blockstore that records the key of every block read from it. */
const countingStore = () => {
  const store = new MemoryBlockstore()
  const read: Array<string> = []
  const counting = Object.assign(Object.create(store) as Blockstore, {
    get: (cid: CID, options?: object) => {
      read.push(blockKey(cid))
      return store.get(cid, options)
    }
  })
  return { store, counting, read }
}

/** Every block of the DAG under `root`, by key. */
const blocksUnder = (store: MemoryBlockstore, root: string) =>
  Effect.promise(async () => {
    const keys = new Set<string>()
    for await (const { cid } of dagBlocks(store, CID.parse(root), {})) keys.add(blockKey(cid))
    return keys
  })

describe("diffTrees", () => {
  it.effect("reads neither an unchanged subtree nor an unchanged file: only the directories on a changed path and the changed entries' nodes", () =>
    Effect.gen(function*() {
      const { store, counting, read } = countingStore()
      const snapshots = yield* HeliaSnapshotStore.make(store)
      // A big unchanged directory (many files, a multi-block file, nested folders) beside a small changed one.
      const unchanged = [
        ...Array.from({ length: 200 }, (_, index) => file(`vendor/lib/module-${index}.js`, text(`export default ${index}\n`))),
        file("vendor/big.bin", deterministicBytes(3 * 1_048_576 + 1)),
        file("notes/unchanged.md", deterministicBytes(2 * 1_048_576 + 5))
      ]
      const before = yield* snapshots.importTree([...unchanged, file("notes/todo.md", text("one\n"))])
      const after = yield* snapshots.importTree([...unchanged, file("notes/todo.md", text("one\ntwo\n")), file("notes/new.md", text("new\n"))])
      const listing = yield* snapshots.readTree(before.cid)
      const vendor = listing.find((entry) => entry.path === "vendor")!.cid
      const untouched = yield* blocksUnder(store, vendor)
      const unchangedFile = yield* blocksUnder(store, before.files.get("notes/unchanged.md")!)

      read.length = 0
      const diff = yield* Effect.promise(() => diffTrees(counting, CID.parse(before.cid), CID.parse(after.cid), {}))
      assert.deepStrictEqual(diff.added.map(({ path, size }) => ({ path, size })), [{ path: "notes/new.md", size: 4 }])
      assert.deepStrictEqual(diff.removed, [])
      assert.deepStrictEqual(diff.changed.map(({ before, after }) => [before.path, before.size, after.size]), [["notes/todo.md", 4, 8]])
      // Both roots and both `notes` directories; the small changed and added files are raw leaves, sized by their links.
      assert.strictEqual(read.length, 4, `read ${read.length} blocks`)
      assert.isTrue(untouched.size > 200)
      assert.isFalse(read.some((key) => untouched.has(key)), "a block of the unchanged vendor/ subtree was read")
      assert.isFalse(read.some((key) => unchangedFile.has(key)), "a block of the unchanged file was read")
    }))

  it.effect("reads a changed multi-block file's root node only, never its content", () =>
    Effect.gen(function*() {
      const { store, counting, read } = countingStore()
      const snapshots = yield* HeliaSnapshotStore.make(store)
      const before = yield* snapshots.importTree([file("data.bin", deterministicBytes(2 * 1_048_576))])
      const after = yield* snapshots.importTree([file("data.bin", deterministicBytes(3 * 1_048_576))])
      read.length = 0
      const diff = yield* Effect.promise(() => diffTrees(counting, CID.parse(before.cid), CID.parse(after.cid), {}))
      assert.deepStrictEqual(diff.changed.map(({ before, after }) => [before.size, after.size]), [[2 * 1_048_576, 3 * 1_048_576]])
      // Two roots and the two files' root nodes.
      assert.strictEqual(read.length, 4)
    }))
})
