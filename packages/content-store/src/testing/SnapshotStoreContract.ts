/**
 * The behaviour every SnapshotStore adapter must show, written once against the port: each adapter's test file calls
 * `snapshotStoreContract` with a layer. Root CIDs are pinned to what `ipfs add -r` gives for a plain tree (the
 * nested tree's vector, and ipfs-unixfs-importer with Kubo's settings for a sharded directory), and a tree's CAR is
 * read back with @helia/unixfs alone, so a tree any IPFS implementation could not read fails here.
 */
import { assert, describe, layer } from "@effect/vitest"
import { unixfs } from "@helia/unixfs"
import { CarReader } from "@ipld/car"
import { MemoryBlockstore } from "blockstore-core"
import { Effect, type Layer, Stream } from "effect"
import { importer } from "ipfs-unixfs-importer"
import { fixedSize } from "ipfs-unixfs-importer/chunker"
import { balanced } from "ipfs-unixfs-importer/layout"
import { equals } from "multiformats/bytes"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import type { DirectoryFile } from "../ContentStore.ts"
import { type Mode, SnapshotStore, type TreeDiffEntry, type TreeEntry, type TreeListing } from "../SnapshotStore.ts"
import { deterministicBytes, directoryTree, inOddChunks, kuboDirectoryVectors } from "./ContentStoreContract.ts"

const text = (value: string) => new TextEncoder().encode(value)


const file = (path: string, mode: Mode, content: Uint8Array): TreeEntry => ({
  path,
  kind: "file",
  mode,
  source: { content: inOddChunks(content) }
})
const reused = (path: string, mode: Mode, cid: string): TreeEntry => ({ path, kind: "file", mode, source: { cid } })
const directory = (path: string, mode: Mode): TreeEntry => ({ path, kind: "directory", mode })
const symlink = (path: string, target: string): TreeEntry => ({ path, kind: "symlink", target })

/** Bytes no earlier run stored: a store that keeps blocks between runs (a real Kubo node) cannot hold them already. */
const fresh = (label: string) => text(`${label} ${crypto.randomUUID()}\n`)
const concat = (...parts: ReadonlyArray<Uint8Array>) => {
  const all = new Uint8Array(parts.reduce((total, part) => total + part.length, 0))
  parts.reduce((offset, part) => (all.set(part, offset), offset + part.length), 0)
  return all
}

/** The raw leaves a CIDv1 import makes of `bytes`: one per 1 MiB chunk. */
const leavesOf = (bytes: Uint8Array) =>
  Effect.promise(async () => {
    const leaves: Array<string> = []
    for (let offset = 0; offset < bytes.length; offset += 1_048_576) {
      leaves.push(CID.createV1(raw.code, await sha256.digest(bytes.subarray(offset, offset + 1_048_576))).toString())
    }
    return leaves
  })

/**
 * What `ipfs add -r --wrap-with-directory --cid-version=1 --chunker=size-1048576` gives, by ipfs-unixfs-importer
 * alone: the root, and what kind of UnixFS node it is.
 */
const ipfsAddRecursive = (files: ReadonlyArray<DirectoryFile>) =>
  Effect.promise(async () => {
    const blocks = new MemoryBlockstore()
    const settings = {
      cidVersion: 1 as const,
      rawLeaves: true,
      chunker: fixedSize({ chunkSize: 1_048_576 }),
      layout: balanced({ maxChildrenPerNode: 1024 }),
      wrapWithDirectory: true
    }
    let root: CID | undefined
    for await (const entry of importer(files, blocks, settings)) if (entry.path === "") root = entry.cid
    const stat = await unixfs({ blockstore: blocks }).stat(root!)
    return { cid: root!.toString(), type: stat.unixfs?.type }
  })

const plainTree = kuboDirectoryVectors.find((vector) => vector.name === "a nested tree" && vector.cidVersion === 1)!
const emptyDirectory = kuboDirectoryVectors.find((vector) => vector.name === "an empty directory" && vector.cidVersion === 1)!

const script = text("#!/bin/sh\necho snapshot\n")
const bigFile = deterministicBytes(2 * 1_048_576 + 7)

/** Nested directories, an empty one, modes, both kinds of symlink and names beyond ASCII; given out of order. */
const richTree: ReadonlyArray<TreeEntry> = [
  file("ünïcödé/日本語.txt", 0o644, text("こんにちは\n")),
  file("bin/run.sh", 0o755, script),
  file("secrets/key.pem", 0o600, text("-----BEGIN KEY-----\n")),
  directory("private", 0o700),
  file("private/notes.txt", 0o644, text("private notes\n")),
  directory("empty", 0o750),
  symlink("links/relative", "../bin/run.sh"),
  symlink("links/absolute", "/etc/hostname"),
  file("ünïcödé/emoji 🎉.md", 0o644, text("party\n")),
  file("docs/big.bin", 0o755, bigFile),
  file("a/b/c/d/deep.txt", 0o644, text("deep\n"))
]

/** What `readTree` lists for `richTree` (CIDs aside): depth first, parents before children, siblings by name bytes. */
const richTreeListing: ReadonlyArray<Omit<TreeListing, "cid">> = [
  { path: "a", kind: "directory", mode: 0o755, size: 0 },
  { path: "a/b", kind: "directory", mode: 0o755, size: 0 },
  { path: "a/b/c", kind: "directory", mode: 0o755, size: 0 },
  { path: "a/b/c/d", kind: "directory", mode: 0o755, size: 0 },
  { path: "a/b/c/d/deep.txt", kind: "file", mode: 0o644, size: 5 },
  { path: "bin", kind: "directory", mode: 0o755, size: 0 },
  { path: "bin/run.sh", kind: "file", mode: 0o755, size: script.length },
  { path: "docs", kind: "directory", mode: 0o755, size: 0 },
  { path: "docs/big.bin", kind: "file", mode: 0o755, size: bigFile.length },
  { path: "empty", kind: "directory", mode: 0o750, size: 0 },
  { path: "links", kind: "directory", mode: 0o755, size: 0 },
  { path: "links/absolute", kind: "symlink", mode: 0o644, size: 0, target: "/etc/hostname" },
  { path: "links/relative", kind: "symlink", mode: 0o644, size: 0, target: "../bin/run.sh" },
  { path: "private", kind: "directory", mode: 0o700, size: 0 },
  { path: "private/notes.txt", kind: "file", mode: 0o644, size: 14 },
  { path: "secrets", kind: "directory", mode: 0o755, size: 0 },
  { path: "secrets/key.pem", kind: "file", mode: 0o600, size: 20 },
  { path: "ünïcödé", kind: "directory", mode: 0o755, size: 0 },
  { path: "ünïcödé/emoji 🎉.md", kind: "file", mode: 0o644, size: 6 },
  { path: "ünïcödé/日本語.txt", kind: "file", mode: 0o644, size: 16 }
]

const contentOf = (entries: ReadonlyArray<TreeEntry>, path: string) => {
  const entry = entries.find((entry) => entry.path === path)
  if (entry?.kind !== "file" || !("content" in entry.source)) return assert.fail(`${path} is no file given by content`)
  return Stream.mkUint8Array(entry.source.content)
}

const readCar = (car: Uint8Array) =>
  Effect.promise(async () => {
    const reader = await CarReader.fromBytes(car)
    const blocks = new MemoryBlockstore()
    for await (const block of reader.blocks()) await blocks.put(block.cid, block.bytes)
    return { roots: (await reader.getRoots()).map(String), blocks }
  })

interface Seen {
  readonly path: string
  readonly type: string
  readonly mode: number
  readonly bytes?: Uint8Array
  readonly target?: string
}

/** Every entry under `root` as @helia/unixfs sees it (ls, stat, cat), from nothing but `blocks`. */
const seenByHelia = (blocks: MemoryBlockstore, root: string) =>
  Effect.promise(async () => {
    const fs = unixfs({ blockstore: blocks })
    const seen: Array<Seen> = []
    const visit = async (cid: CID, prefix: string): Promise<void> => {
      for await (const entry of fs.ls(cid, { offline: true })) {
        const path = `${prefix}${entry.name}`
        const stat = await fs.stat(entry.cid, { offline: true })
        if (stat.type === "directory") {
          seen.push({ path, type: "directory", mode: stat.mode })
          await visit(entry.cid, `${path}/`)
        } else if (stat.unixfs?.type === "symlink") {
          seen.push({ path, type: "symlink", mode: stat.mode, target: new TextDecoder().decode(stat.unixfs.data) })
        } else {
          const pieces: Array<Uint8Array> = []
          for await (const piece of fs.cat(entry.cid, { offline: true })) pieces.push(piece)
          // A raw block stores no mode: UnixFS's default (@helia/unixfs 8.0.5 reports 0x644 for it, not 0o644).
          seen.push({ path, type: "file", mode: stat.type === "raw" ? 0o644 : stat.mode, bytes: concat(...pieces) })
        }
      }
    }
    await visit(CID.parse(root), "")
    return seen.sort((a, b) => a.path < b.path ? -1 : 1)
  })

export const snapshotStoreContract = <E>(adapter: string, store: Layer.Layer<SnapshotStore, E>) =>
  describe(`${adapter} honours the SnapshotStore contract`, () =>
    layer(store)((it) => {
      it.effect("stores a plain tree with the CID `ipfs add -r` gives it, and no files as the empty directory", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const entries = directoryTree.map(({ path, content }) => file(path, 0o644, content))
          const stored = yield* store.importTree(entries)
          assert.strictEqual(stored.cid, plainTree.cid)
          // Listing the implied directories with the default mode changes nothing.
          const withDirectories = yield* store.importTree([...entries, directory("docs", 0o755), directory("docs/notes", 0o755)])
          assert.strictEqual(withDirectories.cid, plainTree.cid)
          assert.strictEqual((yield* store.importTree([])).cid, emptyDirectory.cid)
        }))

      it.effect("reads back a tree with nested and empty directories, modes, symlinks and non-ASCII names", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const stored = yield* store.importTree(richTree)
          const listing = yield* store.readTree(stored.cid)
          assert.deepStrictEqual(listing.map(({ cid: _, ...entry }) => entry), richTreeListing)
          const files = listing.filter((entry) => entry.kind === "file")
          assert.deepStrictEqual(new Map(files.map((entry) => [entry.path, entry.cid])), stored.files)
          for (const entry of files) {
            const read = yield* Stream.mkUint8Array(store.cat(entry.cid))
            assert.isTrue(equals(read, yield* contentOf(richTree, entry.path)), `cat of ${entry.path} gave other bytes`)
          }
          assert.strictEqual(stored.bytesImported, files.reduce((total, entry) => total + entry.size, 0))
          assert.isTrue(yield* store.has(stored.cid))
        }))

      it.effect("stores an unchanged tree under the same CID, whether its files come by content or by CID", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const first = yield* store.importTree(richTree)
          const again = yield* store.importTree(richTree)
          const byCid = yield* store.importTree(richTree.map((entry) =>
            entry.kind === "file" ? reused(entry.path, entry.mode, first.files.get(entry.path)!) : entry
          ))
          assert.deepStrictEqual([again.cid, byCid.cid], [first.cid, first.cid])
          assert.deepStrictEqual(byCid.files, first.files)
          assert.strictEqual(byCid.bytesImported, 0)
        }))

      it.effect("reuses a file by CID under any mode, with the root an import of its content would give", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const modes = [0o644, 0o755, 0o600]
          const contents = { empty: new Uint8Array(0), small: text("one chunk\n"), "two chunks": deterministicBytes(1_048_576 + 3) }
          for (const [name, content] of Object.entries(contents)) {
            for (const from of modes) {
              const original = (yield* store.importTree([file("f", from, content)])).files.get("f")!
              for (const to of modes) {
                const label = `${name}, ${from.toString(8)} → ${to.toString(8)}`
                const byCid = yield* store.importTree([reused("f", to, original)])
                const byContent = yield* store.importTree([file("f", to, content)])
                assert.strictEqual(byCid.cid, byContent.cid, label)
                assert.deepStrictEqual(byCid.files, byContent.files, label)
                assert.strictEqual(byCid.bytesImported, 0, label)
                const [listed] = yield* store.readTree(byCid.cid)
                assert.deepInclude(listed, { path: "f", kind: "file", mode: to, size: content.length }, label)
                assert.isTrue(equals(yield* Stream.mkUint8Array(store.cat(listed!.cid)), content), label)
              }
            }
          }
        }))

      it.effect("counts only the content it imported, and names every file's CID", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const kept = yield* store.importTree([file("kept.txt", 0o644, text("kept\n"))])
          const changed = text("changed content\n")
          const added = bigFile
          const stored = yield* store.importTree([
            reused("kept.txt", 0o644, kept.files.get("kept.txt")!),
            file("changed.txt", 0o644, changed),
            file("new/added.bin", 0o755, added),
            symlink("link", "kept.txt")
          ])
          assert.strictEqual(stored.bytesImported, changed.length + added.length)
          assert.deepStrictEqual([...stored.files.keys()].sort(), ["changed.txt", "kept.txt", "new/added.bin"])
          assert.strictEqual(stored.files.get("kept.txt"), kept.files.get("kept.txt"))
          const listed = new Map((yield* store.readTree(stored.cid)).map((entry) => [entry.path, entry.cid]))
          for (const [path, cid] of stored.files) assert.strictEqual(listed.get(path), cid, path)
        }))

      it.effect("reads no tree it does not have (ContentNotFound), nor a file or symlink as one (NotADirectory)", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const digest = yield* Effect.promise(async () => sha256.digest(text("no tree was ever stored with this")))
          for (const cid of ["not-a-cid", CID.create(1, 0x70, digest).toString(), CID.createV1(raw.code, digest).toString()]) {
            assert.deepInclude(yield* Effect.flip(store.readTree(cid)), { _tag: "ContentNotFound", cid })
            assert.isFalse(yield* store.has(cid))
            assert.deepInclude(yield* Effect.flip(Stream.runDrain(store.car(cid))), { _tag: "ContentNotFound", cid })
            assert.deepInclude(yield* Effect.flip(Stream.runDrain(store.cat(cid))), { _tag: "ContentNotFound", cid })
          }
          const listing = yield* store.readTree((yield* store.importTree(richTree)).cid)
          for (const path of ["docs/big.bin", "bin/run.sh", "links/relative"]) {
            const cid = listing.find((entry) => entry.path === path)!.cid
            assert.deepInclude(yield* Effect.flip(store.readTree(cid)), { _tag: "NotADirectory", cid }, path)
          }
        }))

      it.effect("exports a tree as a CARv1 that @helia/unixfs alone reads back as the same files, modes and symlinks", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const stored = yield* store.importTree(richTree)
          const car = yield* readCar(yield* Stream.mkUint8Array(store.car(stored.cid)))
          assert.deepStrictEqual(car.roots, [stored.cid])
          const seen = yield* seenByHelia(car.blocks, stored.cid)
          const expected = yield* Effect.forEach(richTreeListing, (entry) =>
            Effect.gen(function*() {
              const { path, kind, mode } = entry
              if (kind === "directory") return { path, type: kind, mode }
              if (kind === "symlink") return { path, type: kind, mode, target: entry.target! }
              return { path, type: kind, mode, bytes: yield* contentOf(richTree, path) }
            }))
          assert.deepStrictEqual(seen, [...expected].sort((a, b) => a.path < b.path ? -1 : 1))
        }))

      it.effect("diffs two trees: files and symlinks added, removed and changed (content, mode, kind), with sizes", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const before = yield* store.importTree(richTree)
          const grown = concat(bigFile, text("more"))
          const after = yield* store.importTree([
            ...richTree.filter((entry) => !["bin/run.sh", "docs/big.bin", "private/notes.txt", "links/absolute", "a/b/c/d/deep.txt", "secrets/key.pem"].includes(entry.path)),
            file("bin/run.sh", 0o700, script),
            file("docs/big.bin", 0o755, grown),
            symlink("links/absolute", "/etc/hosts"),
            // A directory where a file was, and a file where a directory was.
            file("a", 0o644, text("a file now\n")),
            file("secrets/key.pem/inside", 0o644, text("inside\n")),
            file("new/one.txt", 0o644, text("one\n"))
          ])
          const diff = yield* store.diffTrees(before.cid, after.cid)
          const brief = (entry: TreeDiffEntry) => ({ path: entry.path, kind: entry.kind, size: entry.size, mode: entry.mode })
          assert.deepStrictEqual(diff.added.map(brief), [
            { path: "a", kind: "file", size: 11, mode: 0o644 },
            { path: "new/one.txt", kind: "file", size: 4, mode: 0o644 },
            { path: "secrets/key.pem/inside", kind: "file", size: 7, mode: 0o644 }
          ])
          assert.deepStrictEqual(diff.removed.map(brief), [
            { path: "a/b/c/d/deep.txt", kind: "file", size: 5, mode: 0o644 },
            { path: "private/notes.txt", kind: "file", size: 14, mode: 0o644 },
            { path: "secrets/key.pem", kind: "file", size: 20, mode: 0o600 }
          ])
          assert.deepStrictEqual(diff.changed.map(({ before, after }) => [brief(before), brief(after)]), [
            [{ path: "bin/run.sh", kind: "file", size: script.length, mode: 0o755 }, { path: "bin/run.sh", kind: "file", size: script.length, mode: 0o700 }],
            [{ path: "docs/big.bin", kind: "file", size: bigFile.length, mode: 0o755 }, { path: "docs/big.bin", kind: "file", size: grown.length, mode: 0o755 }],
            [{ path: "links/absolute", kind: "symlink", size: 0, mode: 0o644 }, { path: "links/absolute", kind: "symlink", size: 0, mode: 0o644 }]
          ])
          assert.strictEqual(diff.changed[2]!.after.target, "/etc/hosts")
          const listed = new Map((yield* store.readTree(after.cid)).map((entry) => [entry.path, entry.cid]))
          for (const entry of [...diff.added, ...diff.changed.map((change) => change.after)]) assert.strictEqual(entry.cid, listed.get(entry.path), entry.path)
          // The other way round, added and removed trade places; a tree against itself has no differences.
          const reverse = yield* store.diffTrees(after.cid, before.cid)
          assert.deepStrictEqual(reverse.added, diff.removed)
          assert.deepStrictEqual(reverse.removed, diff.added)
          assert.deepStrictEqual(yield* store.diffTrees(after.cid, after.cid), { added: [], removed: [], changed: [] })
          const digest = yield* Effect.promise(async () => sha256.digest(text("no tree was ever stored with this either")))
          const absent = CID.create(1, 0x70, digest).toString()
          assert.deepInclude(yield* Effect.flip(store.diffTrees(before.cid, absent)), { _tag: "ContentNotFound" })
          const fileCid = before.files.get("bin/run.sh")!
          assert.deepInclude(yield* Effect.flip(store.diffTrees(fileCid, before.cid)), { _tag: "NotADirectory", cid: fileCid })
        }))

      it.effect("collects garbage: keeps every block a live root reaches, shared ones too, and removes the rest", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          // Two big files share their first 1 MiB chunk: one leaf block in both trees.
          const sharedChunk = concat(fresh("shared chunk"), deterministicBytes(1_048_576)).subarray(0, 1_048_576)
          const droppedBig = concat(sharedChunk, fresh("dropped tail"), deterministicBytes(1_048_576))
          const keptBig = concat(sharedChunk, fresh("kept tail"))
          const shared = fresh("in both trees")
          const dropped = yield* store.importTree([
            file("shared.txt", 0o644, shared),
            file("big.bin", 0o644, droppedBig),
            file("only/dropped.txt", 0o644, fresh("only in the dropped tree"))
          ])
          const kept = yield* store.importTree([
            reused("shared.txt", 0o644, dropped.files.get("shared.txt")!),
            file("big.bin", 0o644, keptBig),
            file("kept.txt", 0o600, fresh("only in the kept tree"))
          ])
          const [sharedLeaf, ...droppedLeaves] = yield* leavesOf(droppedBig)
          const unknown = CID.createV1(raw.code, yield* Effect.promise(async () => sha256.digest(fresh("never stored")))).toString()

          const { blocksRemoved } = yield* store.collectGarbage([kept.cid, unknown, "not-a-cid"])
          // The dropped root, its `only` directory, dropped.txt, big.bin's root and its two unshared leaves at least.
          assert.isAtLeast(blocksRemoved, 6)
          for (const cid of [dropped.cid, dropped.files.get("big.bin")!, dropped.files.get("only/dropped.txt")!, ...droppedLeaves]) {
            assert.isFalse(yield* store.has(cid), `${cid} is still stored`)
          }
          for (const cid of [kept.cid, sharedLeaf!, ...kept.files.values()]) assert.isTrue(yield* store.has(cid), `${cid} was removed`)
          assert.strictEqual((yield* store.readTree(kept.cid)).length, 3)
          assert.isTrue(equals(yield* Stream.mkUint8Array(store.cat(kept.files.get("big.bin")!)), keptBig))
          assert.isTrue(equals(yield* Stream.mkUint8Array(store.cat(kept.files.get("shared.txt")!)), shared))

          yield* store.collectGarbage([])
          for (const cid of [kept.cid, sharedLeaf!, ...kept.files.values()]) assert.isFalse(yield* store.has(cid), `${cid} is still stored`)
        }))

      it.effect("fails with TreeSourceFailed, naming the file, when a content stream fails or a reused CID is not stored", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const vanished: TreeEntry = {
            path: "dir/vanished.txt",
            kind: "file",
            mode: 0o644,
            source: { content: Stream.concat(Stream.make(text("half a file")), Stream.fail(new Error("ENOENT: vanished"))) }
          }
          const failed = yield* Effect.flip(store.importTree([file("fine.txt", 0o644, text("fine\n")), vanished]))
          assert.deepInclude(failed, { _tag: "TreeSourceFailed", path: "dir/vanished.txt" })
          const digest = yield* Effect.promise(async () => sha256.digest(fresh("not in the store")))
          for (const cid of [CID.createV1(raw.code, digest).toString(), CID.create(1, 0x70, digest).toString(), "not-a-cid"]) {
            const missing = yield* Effect.flip(store.importTree([reused("gone.txt", 0o644, cid)]))
            assert.deepInclude(missing, { _tag: "TreeSourceFailed", path: "gone.txt" }, cid)
          }
        }))

      it.effect("refuses a bad path before reading any content: InvalidDirectoryPath", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          let read = false
          const watched: TreeEntry = {
            path: "fine.txt",
            kind: "file",
            mode: 0o644,
            source: { content: Stream.fromEffect(Effect.sync(() => (read = true, text("fine")))) }
          }
          const x = text("x")
          const bad: ReadonlyArray<readonly [ReadonlyArray<TreeEntry>, string]> = [
            [[file("", 0o644, x)], ""],
            [[file("/etc/passwd", 0o644, x)], "/etc/passwd"],
            [[file("a/../../b", 0o644, x)], "a/../../b"],
            [[symlink("a//b", "x")], "a//b"],
            [[file("a\\b", 0o644, x)], "a\\b"],
            [[file("a.txt", 0o644, x), symlink("a.txt", "b")], "a.txt"],
            [[file("a", 0o644, x), file("a/b", 0o644, x)], "a"],
            [[directory("a", 0o755), file("a", 0o644, x)], "a"],
            [[file("a", 0o644, x), directory("a/b", 0o755)], "a"],
            [[symlink("l", "x"), file("l/x", 0o644, x)], "l"],
            [[directory("d", 0o755), directory("d", 0o700)], "d"],
            [[directory("../up", 0o755)], "../up"]
          ]
          for (const [entries, path] of bad) {
            const refused = yield* Effect.flip(store.importTree([watched, ...entries]))
            assert.deepInclude(refused, { _tag: "InvalidDirectoryPath", path }, JSON.stringify(entries.map((entry) => entry.path)))
          }
          assert.isFalse(read, "content was read for a tree that was refused")
        }))

      it.effect("stores a directory of 5,000 entries as a HAMT shard, as `ipfs add -r` does, and reads it back", () =>
        Effect.gen(function*() {
          const store = yield* SnapshotStore
          const names = Array.from({ length: 5000 }, (_, i) => `entry-${String(i).padStart(4, "0")}-with-a-name-long-enough-to-shard.txt`)
          const files = names.map((name, i) => ({ path: name, content: text(`entry ${i}\n`) }))
          const flat = yield* store.importTree(files.map(({ path, content }) => file(path, 0o644, content)))
          assert.deepStrictEqual(yield* ipfsAddRecursive(files), { cid: flat.cid, type: "hamt-sharded-directory" })

          // The same entries one level down, in a directory with a mode: a shard keeps its mode in its root.
          const nested = yield* store.importTree([
            directory("big", 0o700),
            ...names.map((name) => reused(`big/${name}`, 0o644, flat.files.get(name)!)),
            file("small.txt", 0o644, text("small\n"))
          ])
          const listing = yield* store.readTree(nested.cid)
          assert.deepStrictEqual(listing.slice(0, 1).map(({ cid: _, ...entry }) => entry), [
            { path: "big", kind: "directory", mode: 0o700, size: 0 }
          ])
          assert.deepStrictEqual(listing.slice(1, -1).map((entry) => entry.path), names.map((name) => `big/${name}`))
          assert.deepStrictEqual(listing.slice(1, -1).map((entry) => entry.cid), names.map((name) => flat.files.get(name)))
          assert.deepInclude(listing.at(-1), { path: "small.txt", kind: "file", size: 6 })
        }))
    }))
