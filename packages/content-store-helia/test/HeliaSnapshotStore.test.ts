import { ContentStore, SnapshotStore, type TreeEntry } from "@cairn/content-store"
import { deterministicBytes, directoryTree, snapshotStoreContract } from "@cairn/content-store/testing"
import { HeliaContentStore, HeliaSnapshotStore } from "@cairn/content-store-helia"
import { assert, describe, it } from "@effect/vitest"
import { MemoryBlockstore } from "blockstore-core"
import { FsBlockstore } from "blockstore-fs"
import { Effect, Layer, Stream } from "effect"
import { importFile } from "ipfs-unixfs-importer"
import { fixedSize } from "ipfs-unixfs-importer/chunker"
import { balanced } from "ipfs-unixfs-importer/layout"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { blockSizeByReading } from "../src/snapshots/Blocks.ts"
import { KnownFiles, reuseFile } from "../src/snapshots/ReusedFile.ts"

/** A fresh data directory, removed with everything in it when the scope closes. */
const tempDataDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "cairn-snapshots-"))),
  (dataDir) => Effect.promise(() => fs.rm(dataDir, { recursive: true, force: true }))
)

snapshotStoreContract(
  "HeliaSnapshotStore on the filesystem",
  Layer.unwrap(Effect.map(tempDataDir, (dataDir) => HeliaSnapshotStore.layer({ dataDir })))
)

snapshotStoreContract("HeliaSnapshotStore in memory", HeliaSnapshotStore.layerMemory)

const text = (value: string) => new TextEncoder().encode(value)
const file = (filePath: string, mode: number, content: Uint8Array): TreeEntry => ({
  path: filePath,
  kind: "file",
  mode,
  source: { content: Stream.make(content) }
})

/** Every file under `directory`, recursively, as paths relative to it. */
const filesUnder = (directory: string) =>
  Effect.promise(async () => {
    const entries = await fs.readdir(directory, { recursive: true, withFileTypes: true }).catch(() => [])
    return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)))
  })

const tree: ReadonlyArray<TreeEntry> = [
  file("small.txt", 0o644, text("small\n")),
  file("run.sh", 0o755, text("#!/bin/sh\n")),
  file("big/default.bin", 0o644, deterministicBytes(1_048_576 + 10)),
  file("big/executable.bin", 0o700, deterministicBytes(2 * 1_048_576 + 20)),
  { path: "link", kind: "symlink", target: "small.txt" }
]

describe("HeliaSnapshotStore on the filesystem", () => {
  it.effect("keeps its blocks under <dataDir>/ipfs/snapshots, apart from the public and private files", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      yield* SnapshotStore.use((store) => store.importTree(tree)).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })))
      assert.isAbove((yield* filesUnder(path.join(dataDir, "ipfs", "snapshots"))).length, 0)
      assert.deepStrictEqual(yield* filesUnder(path.join(dataDir, "ipfs", "public")), [])
      assert.deepStrictEqual(yield* filesUnder(path.join(dataDir, "ipfs", "private")), [])
    }))

  it.effect("reuses files stored before a restart by CID (sizes and modes read from the blocks), to the same root", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const first = yield* SnapshotStore.use((store) => store.importTree(tree)).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })))
      const byCid = tree.map((entry): TreeEntry =>
        entry.kind === "file" ? { ...entry, source: { cid: first.files.get(entry.path)! } } : entry
      )
      const modeChanged = byCid.map((entry): TreeEntry => entry.kind === "file" ? { ...entry, mode: entry.mode === 0o644 ? 0o600 : 0o644 } : entry)
      const reopened = yield* SnapshotStore.use((store) =>
        Effect.all({ same: store.importTree(byCid), changed: store.importTree(modeChanged) })
      ).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })))
      assert.deepStrictEqual([reopened.same.cid, reopened.same.bytesImported], [first.cid, 0])
      const imported = yield* SnapshotStore.use((store) =>
        store.importTree(modeChanged.map((entry, i) => entry.kind === "file" ? { ...entry, source: (tree[i] as typeof entry).source } : entry))
      ).pipe(Effect.provide(HeliaSnapshotStore.layerMemory))
      assert.strictEqual(reopened.changed.cid, imported.cid)
    }))

  it.effect("fails with TreeSourceFailed when a file reused by CID lost its block", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const first = yield* SnapshotStore.use((store) => store.importTree(tree)).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })))
      yield* SnapshotStore.use((store) => store.collectGarbage([])).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })))
      assert.deepStrictEqual(yield* filesUnder(path.join(dataDir, "ipfs", "snapshots")), [])
      const failed = yield* SnapshotStore.use((store) =>
        Effect.flip(store.importTree([{ path: "small.txt", kind: "file", mode: 0o644, source: { cid: first.files.get("small.txt")! } }]))
      ).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })))
      assert.deepInclude(failed, { _tag: "TreeSourceFailed", path: "small.txt" })
    }))

  it.effect("fails readTree, cat and car with ContentNotFound, rather than waiting, when a block is lost", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      yield* Effect.gen(function*() {
        const store = yield* SnapshotStore
        const stored = yield* store.importTree(tree)
        const listing = yield* store.readTree(stored.cid)
        const cidOf = (entryPath: string) => CID.parse(listing.find((entry) => entry.path === entryPath)!.cid)
        const lost = [cidOf("big"), CID.createV1(raw.code, yield* Effect.promise(async () => sha256.digest(deterministicBytes(1_048_576))))]
        const blocks = new FsBlockstore(path.join(dataDir, "ipfs", "snapshots"))
        for (const cid of lost) yield* Effect.promise(() => blocks.delete(cid))
        const failures = [
          yield* Effect.flip(store.readTree(stored.cid)),
          yield* Effect.flip(Stream.runDrain(store.car(stored.cid))),
          yield* Effect.flip(Stream.runDrain(store.cat(stored.files.get("big/default.bin")!)))
        ]
        for (const failure of failures) assert.deepInclude(failure, { _tag: "ContentNotFound" })
      }).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })), Effect.timeout("10 seconds"))
    }))

  it.effect("does not rewrite a block it already holds", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const blocks = path.join(dataDir, "ipfs", "snapshots")
      const stats = Effect.flatMap(filesUnder(blocks), (files) =>
        Effect.promise(async () => new Map(await Promise.all(files.map(async (file) => [file, (await fs.stat(path.join(blocks, file))).ino] as const)))))
      yield* SnapshotStore.use((store) => store.importTree(tree)).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })))
      const before = yield* stats
      yield* SnapshotStore.use((store) => store.importTree(tree)).pipe(Effect.provide(HeliaSnapshotStore.layer({ dataDir })))
      // A rewrite renames a new file over the old one: a new inode.
      assert.deepStrictEqual(yield* stats, before)
    }))
})

describe("HeliaSnapshotStore trees", () => {
  it.effect("gives a plain tree the CID HeliaContentStore.addDirectory gives it, sharded or not", () =>
    Effect.gen(function*() {
      const sharded = Array.from({ length: 3000 }, (_, i) => ({
        path: `many/file-${String(i).padStart(4, "0")}-with-a-longer-name-to-pass-the-threshold.txt`,
        content: text(`file ${i}`)
      }))
      for (const files of [directoryTree, sharded]) {
        const added = yield* ContentStore.use((store) => store.addDirectory(files, { network: "private" })).pipe(
          Effect.provide(HeliaContentStore.layerMemory)
        )
        const stored = yield* SnapshotStore.use((store) =>
          store.importTree(files.map(({ path, content }) => file(path, 0o644, content)))
        ).pipe(Effect.provide(HeliaSnapshotStore.layerMemory))
        assert.strictEqual(stored.cid, added.cid)
      }
    }))

  it.effect("imports a file to the CID ipfs-unixfs-importer gives it, on either side of one chunk, with or without a mode", () =>
    Effect.gen(function*() {
      const settings = () => ({ cidVersion: 1 as const, rawLeaves: true, chunker: fixedSize({ chunkSize: 1_048_576 }), layout: balanced({ maxChildrenPerNode: 1024 }) })
      for (const size of [0, 10, 1_048_576, 1_048_577]) {
        const content = deterministicBytes(size)
        for (const mode of [0o644, 0o755]) {
          const expected = yield* Effect.promise(() => importFile(mode === 0o644 ? { content } : { content, mode }, new MemoryBlockstore(), settings()))
          const stored = yield* SnapshotStore.use((store) => store.importTree([file("f", mode, content)])).pipe(
            Effect.provide(HeliaSnapshotStore.layerMemory)
          )
          assert.strictEqual(stored.files.get("f"), expected.cid.toString(), `${size} bytes, mode ${mode.toString(8)}`)
        }
      }
    }))

  it.effect("re-encodes every dag-pb node of a deep file when its mode changes, as an import with that mode would", () =>
    Effect.promise(async () => {
      // 16-byte chunks and 2 links per node: a file of 100 bytes is four levels deep, with the mode in every node.
      const settings = () => ({ cidVersion: 1 as const, rawLeaves: true, chunker: fixedSize({ chunkSize: 16 }), layout: balanced({ maxChildrenPerNode: 2 }) })
      const content = deterministicBytes(100)
      const blocks = new MemoryBlockstore()
      const imported = async (mode: number) =>
        (await importFile(mode === 0o644 ? { content } : { content, mode }, blocks, settings())).cid
      const context = {
        blockstore: blocks,
        blockSize: blockSizeByReading(blocks),
        put: async (cid: CID, bytes: Uint8Array) => blocks.put(cid, bytes),
        known: new KnownFiles(),
        options: {}
      }
      for (const from of [0o644, 0o755, 0o600]) {
        for (const to of [0o644, 0o755, 0o600]) {
          const reused = await reuseFile(context, await imported(from), to)
          assert.strictEqual(reused.cid.toString(), (await imported(to)).toString(), `${from.toString(8)} → ${to.toString(8)}`)
        }
      }
    }))
})
