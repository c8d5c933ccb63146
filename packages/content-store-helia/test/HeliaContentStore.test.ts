import { ContentStore, heldContent, heldStart } from "@cairn/content-store"
import { contentStoreContract, deterministicBytes } from "@cairn/content-store/testing"
import { HeliaContentStore } from "@cairn/content-store-helia"
import { assert, describe, it } from "@effect/vitest"
import { MemoryBlockstore } from "blockstore-core"
import { FsBlockstore } from "blockstore-fs"
import { Effect, Layer, Stream } from "effect"
import { importer } from "ipfs-unixfs-importer"
import { balanced } from "ipfs-unixfs-importer/layout"
import { fixedSize } from "ipfs-unixfs-importer/chunker"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

/** A fresh data directory, removed with everything in it when the scope closes. */
const tempDataDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "cairn-helia-"))),
  (dataDir) => Effect.promise(() => fs.rm(dataDir, { recursive: true, force: true }))
)

contentStoreContract(
  "HeliaContentStore on the filesystem",
  Layer.unwrap(Effect.map(tempDataDir, (dataDir) => HeliaContentStore.layer({ dataDir })))
)

contentStoreContract("HeliaContentStore in memory", HeliaContentStore.layerMemory)

describe("HeliaContentStore on the filesystem", () => {
  it.effect("keeps content across closing and reopening the same data directory", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const content = new TextEncoder().encode("still here after a restart")
      const { cid } = yield* ContentStore.use((store) => store.add(Stream.make(content), { network: "private" })).pipe(
        Effect.provide(HeliaContentStore.layer({ dataDir }))
      )
      const reopened = yield* ContentStore.use((store) =>
        Effect.all({ read: Stream.mkUint8Array(store.cat(cid, "private")), onPublic: store.has(cid, "public") })
      ).pipe(Effect.provide(HeliaContentStore.layer({ dataDir })))
      assert.deepStrictEqual(reopened, { read: content, onPublic: false })
    }))

  it.effect("fails with ContentNotFound, rather than waiting, when a file has lost one of its blocks", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const content = deterministicBytes(2 * 1_048_576 + 1)
      const firstLeaf = CID.create(1, raw.code, yield* Effect.promise(async () => sha256.digest(content.subarray(0, 1_048_576))))
      yield* Effect.gen(function*() {
        const store = yield* ContentStore
        const { cid } = yield* store.add(Stream.make(content), { network: "public" })
        yield* Effect.promise(() => new FsBlockstore(path.join(dataDir, "ipfs", "public")).delete(firstLeaf))
        const failures = [
          yield* Effect.flip(Stream.runDrain(store.cat(cid, "public"))),
          yield* Effect.flip(Stream.runDrain(store.car(cid, "public")))
        ]
        for (const failure of failures) assert.deepInclude(failure, { _tag: "ContentNotFound", cid, network: "public" })
      }).pipe(Effect.provide(HeliaContentStore.layer({ dataDir })), Effect.timeout("10 seconds"))
    }))
})

describe("HeliaContentStore directories", () => {
  it.effect("lists a symlink as a symlink and does not follow it", () =>
    Effect.gen(function*() {
      const blocks = new MemoryBlockstore()
      const root = yield* Effect.promise(async () => {
        const candidates = [
          { path: "target.txt", content: new TextEncoder().encode("pointed at") },
          { path: "link", link: "target.txt" }
        ]
        let cid = ""
        for await (const entry of importer(candidates, blocks, { wrapWithDirectory: true })) if (entry.path === "") cid = entry.cid.toString()
        return cid
      })
      const store = yield* HeliaContentStore.make({ public: blocks, private: new MemoryBlockstore() })
      const entries = yield* store.walk(root, "public")
      assert.deepStrictEqual(entries.map(({ path, kind, size }) => ({ path, kind, size })), [
        { path: "link", kind: "symlink", size: 0 },
        { path: "target.txt", kind: "file", size: 10 }
      ])
      assert.deepInclude(yield* Effect.flip(store.walk(entries[0]!.cid, "public")), { _tag: "NotADirectory" })
    }))

  it.effect("walks a directory big enough to be sharded (HAMT), siblings in name order", () =>
    Effect.gen(function*() {
      const store = yield* ContentStore
      // ~3000 links of ~60 bytes pass the 256 KiB threshold, so the root is sharded.
      const files = Array.from({ length: 3000 }, (_, i) => ({
        path: `file-${String(i).padStart(4, "0")}-with-a-longer-name-to-pass-the-threshold.txt`,
        content: new TextEncoder().encode(`file ${i}`)
      }))
      const { cid } = yield* store.addDirectory(files, { network: "public" })
      const block = yield* store.block(cid, "public")
      assert.isTrue(block.length < 256 * 1024, "the root is one shard of many, not one flat node")
      const entries = yield* store.walk(cid, "public")
      assert.deepStrictEqual(entries.map((entry) => entry.path), files.map((file) => file.path))
      assert.isTrue(entries.every((entry) => entry.kind === "file"))
    }).pipe(Effect.provide(HeliaContentStore.layerMemory)))

  it.effect("fails a walk with ContentNotFound, rather than waiting, when a subdirectory's block is lost", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      yield* Effect.gen(function*() {
        const store = yield* ContentStore
        const { cid } = yield* store.addDirectory([{ path: "a/b.txt", content: new TextEncoder().encode("b") }], { network: "public" })
        const subdirectory = (yield* store.walk(cid, "public")).find((entry) => entry.path === "a")!
        yield* Effect.promise(() => new FsBlockstore(path.join(dataDir, "ipfs", "public")).delete(CID.parse(subdirectory.cid)))
        assert.deepInclude(yield* Effect.flip(store.walk(cid, "public")), { _tag: "ContentNotFound", cid, network: "public" })
      }).pipe(Effect.provide(HeliaContentStore.layer({ dataDir })), Effect.timeout("10 seconds"))
    }))
})

describe("HeliaContentStore: a file held in memory as pieces", () => {
  /** The bytes cut into uneven pieces, as a parser hands them over. */
  const piecesOf = (bytes: Uint8Array) => {
    const pieces: Array<Uint8Array> = []
    const sizes = [65_536, 3, 200_001, 1]
    for (let at = 0, i = 0; at < bytes.length; i++) {
      const piece = bytes.subarray(at, at + sizes[i % sizes.length]!)
      at += piece.length
      pieces.push(piece)
    }
    return pieces
  }

  const importerCid = (bytes: Uint8Array, cidVersion: 0 | 1) =>
    Effect.promise(async () => {
      let root: CID | undefined
      const options = { cidVersion, rawLeaves: cidVersion === 1, chunker: fixedSize({ chunkSize: 1_048_576 }), layout: balanced({ maxChildrenPerNode: 1024 }) }
      for await (const entry of importer([{ content: bytes }], new MemoryBlockstore(), options)) root = entry.cid
      return root!.toString()
    })

  const sizes = [1, 1000, 1_048_575, 1_048_576, 1_048_577]
  for (const [name, layer] of [
    ["on the filesystem", Layer.unwrap(Effect.map(tempDataDir, (dataDir) => HeliaContentStore.layer({ dataDir })))],
    ["in memory", HeliaContentStore.layerMemory]
  ] as const) {
    for (const size of sizes) {
      for (const cidVersion of [1, 0] as const) {
        it.effect(`${name}: ${size} bytes in pieces get the importer's CIDv${cidVersion} and read back`, () =>
          Effect.gen(function*() {
            const bytes = deterministicBytes(size)
            const store = yield* ContentStore
            const added = yield* store.add(heldContent({ pieces: piecesOf(bytes), size }), { network: "public", cidVersion })
            assert.deepStrictEqual(added, { cid: yield* importerCid(bytes, cidVersion), size })
            const read = yield* Stream.mkUint8Array(store.cat(added.cid, "public"))
            assert.isTrue(Buffer.from(read).equals(Buffer.from(bytes)), `cat ${added.cid} gave other bytes`)
          }).pipe(Effect.provide(layer), Effect.scoped))
      }
    }
  }

  it("gives a file's start from its pieces, joined only when the first is short", () => {
    const bytes = deterministicBytes(200_000)
    const pieces = piecesOf(bytes)
    assert.deepStrictEqual(Buffer.from(heldStart({ pieces, size: bytes.length }, 70_000)), Buffer.from(bytes.subarray(0, 70_000)))
    assert.strictEqual(heldStart({ pieces, size: bytes.length }, 1000).buffer, pieces[0]!.buffer)
    assert.strictEqual(heldStart({ pieces: [], size: 0 }, 1000).byteLength, 0)
  })
})
