/**
 * The behaviour every ContentStore adapter must show, written once against the port. Each adapter's test file calls
 * `contentStoreContract` with a layer; an adapter is done when the whole suite passes on it. CIDs are pinned to what
 * Kubo gives for the same bytes (files, and directory trees), so an adapter that chunks or lays out content
 * differently fails here.
 */
import { assert, describe, layer } from "@effect/vitest"
import { CarReader } from "@ipld/car"
import * as dagPb from "@ipld/dag-pb"
import { MemoryBlockstore } from "blockstore-core"
import { Effect, type Layer, Stream } from "effect"
import { UnixFS } from "ipfs-unixfs"
import { exporter } from "ipfs-unixfs-exporter"
import { equals } from "multiformats/bytes"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { ContentStore, type DirectoryEntry, type DirectoryFile, type Network } from "../ContentStore.ts"
import { heldContent } from "../HeldPieces.ts"
import { LeafWriter, stagedContent } from "../node/LeafWriter.ts"
import type { StagedLeaves } from "../StagedLeaves.ts"

/** `length` pseudo-random bytes (xorshift32): the same on every run and machine, and no two 1 MiB chunks alike. */
export const deterministicBytes = (length: number): Uint8Array<ArrayBuffer> => {
  const bytes = new Uint8Array(length)
  let x = 0x2545f491
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    bytes[i] = x & 0xff
  }
  return bytes
}

/** The bytes as a stream of unevenly sized chunks, so the importer's 1 MiB boundaries fall inside them. */
export const inOddChunks = (bytes: Uint8Array): Stream.Stream<Uint8Array> => {
  const sizes = [1, 4093, 65_537, 7, 131_071, 12_289]
  const chunks: Array<Uint8Array> = []
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length]!
    chunks.push(bytes.subarray(offset, offset + size))
    offset += size
  }
  return Stream.fromIterable(chunks)
}

const text = (value: string) => new TextEncoder().encode(value)

export interface KuboVector {
  readonly name: string
  readonly content: Uint8Array
  readonly cidVersion: 0 | 1
  /** What `ipfs add --cid-version=<v> --chunker=size-1048576` (raw leaves for v1 only) prints for the content. */
  readonly cid: string
}

const empty = new Uint8Array(0)
const helloWorld = text("hello world\n")
/** Three 1 MiB chunks and a short fourth: a dag-pb root linking four leaves. */
const multiChunk = deterministicBytes(3 * 1_048_576 + 12_345)

// Where the CIDs come from. A single-chunk CIDv1 file is one raw block, so its CID is CIDv1(raw, sha2-256(content));
// the empty one is the well-known `bafkreihdwdce…`. `QmbFMke1…` and `QmT78zSu…` are the well-known CIDv0s that
// `ipfs add` prints for an empty file and for `hello world\n`. The multi-chunk CIDs were computed with
// ipfs-unixfs-importer 17.1.1 (fixed 1 MiB chunks, raw leaves for v1 only, balanced layout of 1024 links per node),
// apart from any adapter. test/testing/ContentStoreContract.test.ts rebuilds every one by hand from the UnixFS spec.
export const kuboVectors: ReadonlyArray<KuboVector> = [
  { name: "an empty file", content: empty, cidVersion: 1, cid: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku" },
  { name: "an empty file", content: empty, cidVersion: 0, cid: "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH" },
  { name: "hello world", content: helloWorld, cidVersion: 1, cid: "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4" },
  { name: "hello world", content: helloWorld, cidVersion: 0, cid: "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" },
  { name: "a 3 MiB file", content: multiChunk, cidVersion: 1, cid: "bafybeihrc3432zf4l7ybaaizmoit5vxuiri23ppawoxidht22n4teuajke" },
  { name: "a 3 MiB file", content: multiChunk, cidVersion: 0, cid: "QmWxSZCQ5MWWiK89akzJc4M3c2cLiPHjT3gNxPRkUkXpmv" }
]

export interface KuboDirectoryVector {
  readonly name: string
  readonly files: ReadonlyArray<DirectoryFile>
  readonly cidVersion: 0 | 1
  /** What `ipfs add -r --wrap-with-directory --cid-version=<v> --chunker=size-1048576` prints last for the tree. */
  readonly cid: string
}

/**
 * Three small files two directories deep, and a two-chunk file (a dag-pb file node inside a directory, so the
 * directory links' cumulative sizes are pinned too). Given out of order: the store lays the tree out by name.
 */
export const directoryTree: ReadonlyArray<DirectoryFile> = [
  { path: "hello.txt", content: helloWorld },
  { path: "docs/readme.md", content: text("# Cairn\n") },
  { path: "docs/notes/todo.txt", content: text("walk the tree\n") },
  { path: "docs/big.bin", content: deterministicBytes(1_048_576 + 100) }
]

/** What `walk` lists for `directoryTree`: depth first, parents before children, siblings by name (CIDs aside). */
export const directoryTreeWalk: ReadonlyArray<Omit<DirectoryEntry, "cid">> = [
  { path: "docs", kind: "directory", size: 0 },
  { path: "docs/big.bin", kind: "file", size: 1_048_576 + 100 },
  { path: "docs/notes", kind: "directory", size: 0 },
  { path: "docs/notes/todo.txt", kind: "file", size: 14 },
  { path: "docs/readme.md", kind: "file", size: 8 },
  { path: "hello.txt", kind: "file", size: 12 }
]

// Where the directory CIDs come from. The empty directory's are the well-known ones Kubo prints for an empty
// folder (`QmUNLLsP…`, `bafybeiczssc…`). The tree's were computed with ipfs-unixfs-importer 17.1.1 (Kubo's
// settings as for files, `wrapWithDirectory: true`), apart from any adapter; no Kubo binary was at hand.
// test/testing/DirectoryVectors.test.ts rebuilds every one by hand from the UnixFS and dag-pb specs.
export const kuboDirectoryVectors: ReadonlyArray<KuboDirectoryVector> = [
  { name: "an empty directory", files: [], cidVersion: 1, cid: "bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354" },
  { name: "an empty directory", files: [], cidVersion: 0, cid: "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn" },
  { name: "a nested tree", files: directoryTree, cidVersion: 1, cid: "bafybeig73wgy5v3h3d5yjor6tgmjl7sshe3piakdfkpxghgjflkatofxse" },
  { name: "a nested tree", files: directoryTree, cidVersion: 0, cid: "QmfR5PruKvWXhFPRtWUrn6kD628BvvzCHWtpwt36TTps9F" }
]

/**
 * A folder with enough entries to be a HAMT shard: Kubo (and the importer with its settings) shards a directory whose
 * links pass 256 KiB, estimated as each name's bytes plus its CID's (36 for a CIDv1 raw leaf). 1,200 names of 214
 * bytes are about 300 KiB.
 */
export const shardedFolder: ReadonlyArray<DirectoryFile> = Array.from({ length: 1200 }, (_, i) => ({
  path: `${String(i).padStart(4, "0")}-${"n".repeat(200)}.txt`,
  content: text(`entry ${i}\n`)
}))

export interface ContractOptions {
  /** False when both networks are one store (a single Kubo node under test): the separation test is skipped. */
  readonly networksAreSeparate?: boolean
}

// CIDv1 vectors leave `cidVersion` out, so the default is tested too.
const add = (network: Network, vector: KuboVector) =>
  ContentStore.use((store) =>
    store.add(inOddChunks(vector.content), vector.cidVersion === 1 ? { network } : { network, cidVersion: 0 })
  )

/** The bytes staged as raw leaves in a temporary directory (removed with the scope), given in uneven pieces. */
const staged = (bytes: Uint8Array) =>
  Effect.gen(function*() {
    const directory = yield* Effect.acquireRelease(
      Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "cairn-staged-"))),
      (directory) => Effect.promise(() => fs.rm(directory, { recursive: true, force: true }))
    )
    return yield* Effect.promise(async (): Promise<StagedLeaves> => {
      const writer = new LeafWriter(directory)
      const sizes = [65_536, 1, 300_000, 7]
      for (let at = 0, i = 0; at < bytes.length; i++) {
        const piece = bytes.subarray(at, at + sizes[i % sizes.length]!)
        at += piece.length
        await writer.write(piece)
      }
      return writer.end()
    })
  })

const hashesTo = (bytes: Uint8Array, cid: CID) =>
  Effect.promise(async () => equals((await sha256.digest(bytes)).bytes, cid.multihash.bytes))

/** The store answers as if it had never seen `cid` on `network`. */
const assertAbsent = (cid: string, network: Network) =>
  Effect.gen(function*() {
    const store = yield* ContentStore
    assert.isFalse(yield* store.has(cid, network), `has ${cid} on ${network}`)
    const failures = [
      yield* Effect.flip(Stream.runDrain(store.cat(cid, network))),
      yield* Effect.flip(store.block(cid, network)),
      yield* Effect.flip(Stream.runDrain(store.car(cid, network)))
    ]
    for (const failure of failures) assert.deepInclude(failure, { _tag: "ContentNotFound", cid, network })
  })

const readCar = (car: Uint8Array) =>
  Effect.promise(async () => {
    const reader = await CarReader.fromBytes(car)
    const blocks: Array<{ readonly cid: CID; readonly bytes: Uint8Array }> = []
    for await (const block of reader.blocks()) blocks.push(block)
    return { version: reader.version, roots: (await reader.getRoots()).map(String), blocks }
  })

/** The file under `root`, read back from nothing but `blocks`: it fails if the DAG misses any block. */
const fileFrom = (root: string, blocks: ReadonlyArray<{ readonly cid: CID; readonly bytes: Uint8Array }>) =>
  Effect.gen(function*() {
    const store = new MemoryBlockstore()
    for (const { cid, bytes } of blocks) yield* Effect.promise(async () => store.put(cid, bytes))
    const entry = yield* Effect.promise(() => exporter(root, store))
    if (entry.type !== "file" && entry.type !== "raw") return assert.fail(`${root} is a ${entry.type}, not a file`)
    return yield* Stream.mkUint8Array(Stream.fromAsyncIterable(entry.content(), (cause) => cause))
  })

/** dag-pb's multicodec code (directories and multi-block files). */
const dagPbCode = dagPb.code

export const contentStoreContract = <E>(
  adapter: string,
  store: Layer.Layer<ContentStore, E>,
  options: ContractOptions = {}
) =>
  describe(`${adapter} honours the ContentStore contract`, () =>
    layer(store)((it) => {
      for (const vector of kuboVectors) {
        it.effect(`adds ${vector.name} as ${vector.cid}, as Kubo does, and reads the same bytes back`, () =>
          Effect.gen(function*() {
            const store = yield* ContentStore
            const added = yield* add("public", vector)
            assert.deepStrictEqual(added, { cid: vector.cid, size: vector.content.length })
            const read = yield* Stream.mkUint8Array(store.cat(added.cid, "public"))
            assert.isTrue(equals(read, vector.content), `cat ${added.cid} gave ${read.length} other bytes`)
          }))
      }

      for (const vector of kuboVectors) {
        it.effect(`adds ${vector.name} held in memory as uneven pieces (heldContent) as ${vector.cid}`, () =>
          Effect.gen(function*() {
            const store = yield* ContentStore
            const pieces: Array<Uint8Array> = []
            const sizes = [65_536, 1, 300_000, 7]
            for (let at = 0, i = 0; at < vector.content.length; i++) {
              const piece = vector.content.subarray(at, at + sizes[i % sizes.length]!)
              at += piece.length
              pieces.push(piece)
            }
            const content = heldContent({ pieces, size: vector.content.length })
            const added = yield* store.add(content, vector.cidVersion === 1 ? { network: "public" } : { network: "public", cidVersion: 0 })
            assert.deepStrictEqual(added, { cid: vector.cid, size: vector.content.length })
            const read = yield* Stream.mkUint8Array(store.cat(added.cid, "public"))
            assert.isTrue(equals(read, vector.content), `cat ${added.cid} gave ${read.length} other bytes`)
          }))
      }

      for (const vector of kuboVectors) {
        it.effect(`adds ${vector.name} staged as raw leaves (LeafWriter) as ${vector.cid}`, () =>
          Effect.gen(function*() {
            const store = yield* ContentStore
            const content = stagedContent(yield* staged(vector.content))
            const added = yield* store.add(content, vector.cidVersion === 1 ? { network: "public" } : { network: "public", cidVersion: 0 })
            assert.deepStrictEqual(added, { cid: vector.cid, size: vector.content.length })
            const read = yield* Stream.mkUint8Array(store.cat(added.cid, "public"))
            assert.isTrue(equals(read, vector.content), `cat ${added.cid} gave ${read.length} other bytes`)
          }).pipe(Effect.scoped))
      }

      it.effect.runIf(options.networksAreSeparate ?? true)("keeps each network's content out of the other", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          for (const [network, other] of [["private", "public"], ["public", "private"]] as const) {
            const { cid } = yield* store.add(Stream.make(text(`only ever added to the ${network} network`)), { network })
            assert.isTrue(yield* store.has(cid, network))
            yield* assertAbsent(cid, other)
          }
        }))

      it.effect("returns a file's root block, whose sha2-256 digest is the CID's multihash", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          for (const vector of kuboVectors) {
            const cid = CID.parse((yield* add("public", vector)).cid)
            const block = yield* store.block(cid.toString(), "public")
            assert.isTrue(yield* hashesTo(block, cid), `the block of ${cid} does not hash to it`)
            if (cid.code === raw.code) assert.isTrue(equals(block, vector.content), `${cid} is not its content`)
          }
        }))

      it.effect("exports a file as a CARv1 rooted at its CID that holds every block of its DAG", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          for (const vector of kuboVectors) {
            const { cid } = yield* add("public", vector)
            const car = yield* readCar(yield* Stream.mkUint8Array(store.car(cid, "public")))
            assert.strictEqual(car.version, 1)
            assert.deepStrictEqual(car.roots, [cid])
            for (const block of car.blocks) {
              assert.isTrue(yield* hashesTo(block.bytes, block.cid), `block ${block.cid} does not hash to its CID`)
            }
            assert.isTrue(equals(yield* fileFrom(cid, car.blocks), vector.content), `the CAR of ${cid} is not the file`)
          }
        }))

      it.effect("stores a DAG's blocks given one by one (putBlocks, a pin by CID), which then read back as the file", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          for (const vector of kuboVectors) {
            const { cid } = yield* add("public", vector)
            const car = yield* readCar(yield* Stream.mkUint8Array(store.car(cid, "public")))
            yield* store.putBlocks(cid, car.blocks.map((block) => ({ cid: block.cid.toString(), bytes: block.bytes })), "private")
            assert.isTrue(yield* store.has(cid, "private"))
            assert.isTrue(equals(yield* Stream.mkUint8Array(store.cat(cid, "private")), vector.content), `${cid} put block by block is not the file`)
          }
        }))

      for (const vector of kuboDirectoryVectors) {
        it.effect(`adds ${vector.name} as CIDv${vector.cidVersion} ${vector.cid}, as \`ipfs add -r --wrap-with-directory\` does`, () =>
          Effect.gen(function*() {
            const store = yield* ContentStore
            const options = vector.cidVersion === 1 ? { network: "public" as const } : { network: "public" as const, cidVersion: 0 as const }
            const added = yield* store.addDirectory(vector.files, options)
            const size = vector.files.reduce((total, file) => total + file.content.length, 0)
            assert.deepStrictEqual(added, { cid: vector.cid, size })
            assert.isTrue(yield* store.has(added.cid, "public"))
          }))
      }

      it.effect("walks a directory depth first, parents before children, and each file's CID reads back its bytes", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          for (const cidVersion of [1, 0] as const) {
            const { cid } = yield* store.addDirectory(directoryTree, { network: "private", cidVersion })
            const entries = yield* store.walk(cid, "private")
            assert.deepStrictEqual(entries.map(({ cid: _, ...entry }) => entry), directoryTreeWalk)
            for (const entry of entries) {
              assert.strictEqual(CID.parse(entry.cid).version, cidVersion, `${entry.path} is CIDv${cidVersion}`)
              if (entry.kind !== "file") continue
              const read = yield* Stream.mkUint8Array(store.cat(entry.cid, "private"))
              const given = directoryTree.find((file) => file.path === entry.path)!.content
              assert.isTrue(equals(read, given), `cat of ${entry.path} (${entry.cid}) gave other bytes`)
            }
            const subdirectory = entries.find((entry) => entry.path === "docs/notes")!
            assert.deepStrictEqual(
              (yield* store.walk(subdirectory.cid, "private")).map((entry) => [entry.path, entry.kind]),
              [["todo.txt", "file"]]
            )
          }
          const empty = yield* store.addDirectory([], { network: "private" })
          assert.deepStrictEqual(yield* store.walk(empty.cid, "private"), [])
        }))

      it.effect("refuses to walk a file: NotADirectory", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          for (const vector of kuboVectors) {
            const { cid } = yield* add("public", vector)
            assert.deepInclude(yield* Effect.flip(store.walk(cid, "public")), { _tag: "NotADirectory", cid })
          }
        }))

      it.effect("walks nothing it does not have: ContentNotFound for a malformed or unknown CID", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          const digest = yield* Effect.promise(async () => sha256.digest(text("no directory was ever added with this")))
          const unknown = CID.create(1, dagPbCode, digest).toString()
          for (const cid of ["not-a-cid", unknown]) {
            assert.deepInclude(yield* Effect.flip(store.walk(cid, "public")), { _tag: "ContentNotFound", cid, network: "public" })
          }
        }))

      it.effect.runIf(options.networksAreSeparate ?? true)("keeps a directory to the network it was added to", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          const { cid } = yield* store.addDirectory([{ path: "only/private.txt", content: text("private tree") }], { network: "private" })
          assert.strictEqual((yield* store.walk(cid, "private")).length, 2)
          assert.deepInclude(yield* Effect.flip(store.walk(cid, "public")), { _tag: "ContentNotFound", cid, network: "public" })
        }))

      it.effect("refuses a path that is empty, absolute, climbs, is unsafe elsewhere, is doubled or is both file and directory", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          const bad: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
            [[""], ""],
            [["/etc/passwd"], "/etc/passwd"],
            [["a/../../b"], "a/../../b"],
            [["./a"], "./a"],
            [["a//b"], "a//b"],
            [["a/"], "a/"],
            [["a\\b"], "a\\b"],
            [["a\0b"], "a\0b"],
            [["a\nb"], "a\nb"],
            [["C:/x"], "C:/x"],
            [["x".repeat(256)], "x".repeat(256)],
            [["a.txt", "a.txt"], "a.txt"],
            [["a", "a/b"], "a"],
            [["a/b", "a"], "a"]
          ]
          for (const [paths, path] of bad) {
            const files = paths.map((path) => ({ path, content: text("x") }))
            const refused = yield* Effect.flip(store.addDirectory(files, { network: "public" }))
            assert.deepInclude(refused, { _tag: "InvalidDirectoryPath", path }, JSON.stringify(paths))
          }
        }))

      it.effect("reads a range of a file, only those bytes, and cuts a range past the end at the end", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          for (const vector of kuboVectors) {
            const { cid } = yield* add("public", vector)
            const size = vector.content.length
            const ranges: ReadonlyArray<{ readonly offset: number; readonly length?: number }> = [
              { offset: 0 },
              { offset: 0, length: 10 },
              { offset: 1_048_576 - 5, length: 10 },
              { offset: 1_048_576, length: 1_048_576 },
              { offset: 1_048_576 + 17, length: 2 * 1_048_576 },
              { offset: Math.max(size - 3, 0) },
              { offset: 5, length: 0 },
              { offset: size, length: 5 },
              { offset: size + 10 }
            ]
            for (const range of ranges) {
              const read = yield* Stream.mkUint8Array(store.cat(cid, "public", range))
              const end = range.length === undefined ? size : Math.min(size, range.offset + range.length)
              const expected = vector.content.subarray(Math.min(range.offset, size), Math.max(end, Math.min(range.offset, size)))
              assert.isTrue(equals(read, expected), `${vector.name} v${vector.cidVersion} ${JSON.stringify(range)}: ${read.length} bytes, not ${expected.length}`)
            }
          }
        }))

      it.effect("resolves a path down a directory tree to what is there, with its CID and a file's size", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          for (const cidVersion of [1, 0] as const) {
            const { cid } = yield* store.addDirectory(directoryTree, { network: "public", cidVersion })
            const walked = yield* store.walk(cid, "public")
            const cidOf = (path: string) => walked.find((entry) => entry.path === path)!.cid
            assert.deepStrictEqual(yield* store.resolve(cid, [], "public"), { cid, kind: "directory", size: 0 })
            assert.deepStrictEqual(yield* store.resolve(cid, ["docs"], "public"), { cid: cidOf("docs"), kind: "directory", size: 0 })
            assert.deepStrictEqual(yield* store.resolve(cid, ["docs", "notes", "todo.txt"], "public"), { cid: cidOf("docs/notes/todo.txt"), kind: "file", size: 14 })
            assert.deepStrictEqual(yield* store.resolve(cid, ["docs", "big.bin"], "public"), { cid: cidOf("docs/big.bin"), kind: "file", size: 1_048_576 + 100 })
            assert.deepStrictEqual(yield* store.resolve(cidOf("hello.txt"), [], "public"), { cid: cidOf("hello.txt"), kind: "file", size: 12 })
            for (const path of [["missing"], ["docs", "notes", "missing.txt"], ["hello.txt", "below-a-file"], ["docs", "big.bin", "x"], ["Docs"]]) {
              assert.deepInclude(yield* Effect.flip(store.resolve(cid, path, "public")), { _tag: "PathNotFound", cid, path: path.join("/") })
            }
          }
          const digest = yield* Effect.promise(async () => sha256.digest(text("no tree was ever added with this")))
          for (const cid of ["not-a-cid", CID.create(1, dagPbCode, digest).toString()]) {
            assert.deepInclude(yield* Effect.flip(store.resolve(cid, ["docs"], "public")), { _tag: "ContentNotFound", cid, network: "public" })
            assert.deepInclude(yield* Effect.flip(store.resolve(cid, [], "public")), { _tag: "ContentNotFound", cid, network: "public" })
          }
        }))

      it.effect("lists one directory's entries in name order, with kinds and sizes; a file is NotADirectory", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          const { cid } = yield* store.addDirectory(directoryTree, { network: "public" })
          const walked = yield* store.walk(cid, "public")
          const cidOf = (path: string) => walked.find((entry) => entry.path === path)!.cid
          assert.deepStrictEqual(yield* store.list(cid, "public"), [
            { name: "docs", cid: cidOf("docs"), kind: "directory", size: 0 },
            { name: "hello.txt", cid: cidOf("hello.txt"), kind: "file", size: 12 }
          ])
          assert.deepStrictEqual((yield* store.list(cidOf("docs"), "public")).map(({ name, kind, size }) => [name, kind, size]), [
            ["big.bin", "file", 1_048_576 + 100],
            ["notes", "directory", 0],
            ["readme.md", "file", 8]
          ])
          assert.deepInclude(yield* Effect.flip(store.list(cidOf("hello.txt"), "public")), { _tag: "NotADirectory", cid: cidOf("hello.txt") })
          assert.deepStrictEqual(yield* store.list((yield* store.addDirectory([], { network: "public" })).cid, "public"), [])
          assert.deepInclude(yield* Effect.flip(store.list("not-a-cid", "public")), { _tag: "ContentNotFound", cid: "not-a-cid" })
        }))

      it.effect("resolves names in, and lists, a HAMT-sharded directory", () =>
        Effect.gen(function*() {
          const store = yield* ContentStore
          const { cid } = yield* store.addDirectory(shardedFolder, { network: "public" })
          const root = dagPb.decode(yield* store.block(cid, "public"))
          assert.strictEqual(UnixFS.unmarshal(root.Data!).type, "hamt-sharded-directory", "the folder is not sharded")
          for (const index of [0, 1, 599, 1199]) {
            const file = shardedFolder[index]!
            const found = yield* store.resolve(cid, [file.path], "public")
            assert.deepInclude(found, { kind: "file", size: file.content.length })
            assert.isTrue(equals(yield* Stream.mkUint8Array(store.cat(found.cid, "public")), file.content), file.path)
          }
          const missing = `${"9".repeat(4)}-not-there.txt`
          assert.deepInclude(yield* Effect.flip(store.resolve(cid, [missing], "public")), { _tag: "PathNotFound", cid, path: missing })
          const listed = yield* store.list(cid, "public")
          assert.deepStrictEqual(listed.map((link) => link.name), shardedFolder.map((file) => file.path))
          assert.isTrue(listed.every((link) => link.kind === "file" && link.size === shardedFolder.find((f) => f.path === link.name)!.content.length))
        }))

      it.effect("treats a malformed or unknown CID as content it does not have", () =>
        Effect.gen(function*() {
          const digest = yield* Effect.promise(async () => sha256.digest(text("never added by the contract")))
          const unknown = CID.create(1, raw.code, digest).toString()
          for (const cid of ["not-a-cid", unknown]) {
            yield* assertAbsent(cid, "public")
            yield* assertAbsent(cid, "private")
          }
        }))
    }))
