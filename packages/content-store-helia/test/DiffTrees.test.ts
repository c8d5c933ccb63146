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

  it.effect("diffs inside HAMT-sharded directories, and passes over an unchanged sharded one unread", () =>
    Effect.gen(function*() {
      const { store, counting, read } = countingStore()
      const snapshots = yield* HeliaSnapshotStore.make(store)
      // Names long enough that 2,500 links pass the 256 KiB a directory is sharded at.
      const name = (index: number) => `${"n".repeat(90)}-${String(index).padStart(5, "0")}.txt`
      const many = (folder: string, count: number, changed?: number) =>
        Array.from({ length: count }, (_, index) => file(`${folder}/${name(index)}`, text(index === changed ? "changed\n" : `${folder} ${index}\n`)))
      const before = yield* snapshots.importTree([...many("sharded", 2500), ...many("untouched", 2500)])
      const after = yield* snapshots.importTree([...many("sharded", 2500, 1234), ...many("untouched", 2500), file(`sharded/${name(9999)}`, text("new\n"))])
      const listing = yield* snapshots.readTree(before.cid)
      const untouched = yield* blocksUnder(store, listing.find((entry) => entry.path === "untouched")!.cid)
      const sharded = yield* blocksUnder(store, listing.find((entry) => entry.path === "sharded")!.cid)
      assert.isAbove(untouched.size, 2500 + 1, "untouched/ is a HAMT shard of several blocks")

      read.length = 0
      const diff = yield* Effect.promise(() => diffTrees(counting, CID.parse(before.cid), CID.parse(after.cid), {}))
      assert.deepStrictEqual(diff.added.map(({ path, size }) => ({ path, size })), [{ path: `sharded/${name(9999)}`, size: 4 }])
      assert.deepStrictEqual(diff.removed, [])
      assert.deepStrictEqual(diff.changed.map(({ before, after }) => [after.path, before.size, after.size]), [[`sharded/${name(1234)}`, 13, 8]])
      assert.isFalse(read.some((key) => untouched.has(key)), "a block of the unchanged untouched/ shard was read")
      // The two roots and both sides' shard nodes of sharded/ (no file: they are raw leaves).
      const shardNodes = [...sharded].filter((key) => read.includes(key)).length
      // Both roots, both sharded/ shard roots, and the few sub-shards on the way to the changed and added names: not
      // the old shard's hundreds of nodes (the exporter's listing would read them all).
      assert.isAtMost(shardNodes, 4, `read ${shardNodes} of the old shard's ${sharded.size - 2500} nodes`)
      assert.isAtMost(read.length, 10, `read ${read.length} blocks`)

      // Many changes across the shard's buckets: the same as comparing the two full listings.
      const mutated = yield* snapshots.importTree([
        ...many("sharded", 2500).filter((_, index) => index % 83 !== 0).map((entry, index) => index % 71 === 0 ? file(entry.path, text(`mutated ${index}\n`)) : entry),
        ...Array.from({ length: 40 }, (_, index) => file(`sharded/${name(20_000 + index)}`, text(`${index}\n`))),
        ...many("untouched", 2500)
      ])
      const naive = yield* Effect.all([snapshots.readTree(before.cid), snapshots.readTree(mutated.cid)]).pipe(Effect.map(([x, y]) => {
        const leaves = (listing: typeof x) => new Map(listing.filter((entry) => entry.kind !== "directory").map((entry) => [entry.path, entry] as const))
        const [old, now] = [leaves(x), leaves(y)]
        return {
          added: [...now.keys()].filter((path) => !old.has(path)).sort(),
          removed: [...old.keys()].filter((path) => !now.has(path)).sort(),
          changed: [...now.keys()].filter((path) => old.has(path) && old.get(path)!.cid !== now.get(path)!.cid).sort()
        }
      }))
      const walked = yield* Effect.promise(() => diffTrees(store, CID.parse(before.cid), CID.parse(mutated.cid), {}))
      assert.deepStrictEqual({
        added: walked.added.map(({ path }) => path),
        removed: walked.removed.map(({ path }) => path),
        changed: walked.changed.map(({ after }) => after.path)
      }, naive)
      assert.deepStrictEqual([naive.added.length, naive.removed.length, naive.changed.length], [40, 31, 35])

      // A directory that crossed the shard threshold (flat before, sharded after) is compared entry by entry.
      const flat = yield* snapshots.importTree([...many("sharded", 10), ...many("untouched", 2500)])
      const grown = yield* Effect.promise(() => diffTrees(store, CID.parse(flat.cid), CID.parse(before.cid), {}))
      assert.deepStrictEqual(grown.added.map(({ path }) => path), many("sharded", 2500).slice(10).map(({ path }) => path))
      assert.deepStrictEqual([grown.removed, grown.changed], [[], []])
    }), 60_000)

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
