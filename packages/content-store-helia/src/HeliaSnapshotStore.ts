/**
 * The SnapshotStore port on an embedded blockstore of its own: files under `<dataDir>/ipfs/snapshots` (never the
 * public or private files' stores, so collecting snapshot garbage cannot touch a user's files), or memory. Trees
 * are built by the modules under `snapshots/` (import, reuse by CID, directories and HAMT shards, listing) on any
 * block store, so KuboSnapshotStore runs the same code over Kubo's RPC API with `makeWith`. Here garbage is
 * collected by mark and sweep over the whole store.
 */
import {
  ContentNotFound,
  ContentStoreUnavailable,
  NotADirectory,
  SnapshotStore
} from "@cairn/content-store"
import type { UnixFS } from "@helia/unixfs"
import { CarWriter } from "@ipld/car"
import { MemoryBlockstore } from "blockstore-core"
import { FsBlockstore } from "blockstore-fs"
import { NextToLast } from "blockstore-fs/sharding"
import { Effect, Layer, Stream } from "effect"
import type { Blockstore } from "interface-blockstore"
import { CID } from "multiformats/cid"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type BlockSize, blockSizeByReading, collect, mapConcurrently, type TreeBlockstore } from "./snapshots/Blocks.ts"
import { dagBlocks } from "./snapshots/DagBlocks.ts"
import { diffTrees } from "./snapshots/DiffTrees.ts"
import { importTree } from "./snapshots/ImportTree.ts"
import { markAndSweep } from "./snapshots/MarkAndSweep.ts"
import { readTree, RootIsNotADirectory } from "./snapshots/ReadTree.ts"
import { KnownFiles } from "./snapshots/ReusedFile.ts"
import { unixfsModules } from "./UnixfsModules.ts"

export type { BlockSize, TreeBlockstore } from "./snapshots/Blocks.ts"

/** What the tree logic runs on: a block store, a cheap way to a block's size, and the store's own garbage collection. */
export interface Backend {
  readonly blockstore: TreeBlockstore
  readonly blockSize: BlockSize
  /** Removes every block no root of `live` reaches; gives how many went. */
  readonly collectGarbage: (live: ReadonlyArray<CID>) => Effect.Effect<number, ContentStoreUnavailable>
}

/** ContentNotFound names a network: snapshots are an agent's private content. */
const network = "private"

// A CID whose blocks this store lacks, or that names no UnixFS file: either way the store has no such content.
const absent = new Set(["NotFoundError", "NoResolverError", "NotUnixFSError", "NotAFileError"])

const failure = (operation: string, cid: string) => (cause: unknown) =>
  cause instanceof ContentStoreUnavailable
    ? cause
    : cause instanceof Error && absent.has(cause.name)
    ? new ContentNotFound({ cid, network })
    : new ContentStoreUnavailable({ operation, cause })

const parse = (cid: string) => Effect.try({ try: () => CID.parse(cid), catch: () => new ContentNotFound({ cid, network }) })

/** Malformed live CIDs name nothing stored: there is nothing of them to keep. */
const parseLive = (live: ReadonlyArray<string>) =>
  live.flatMap((cid) => {
    try {
      return [CID.parse(cid)]
    } catch {
      return []
    }
  })

export const makeWith = (backend: Backend) =>
  Effect.sync(() => {
    const { blockstore } = backend
    // Made on first use, with the modules (UnixfsModules).
    let made: UnixFS | undefined
    const files = async () => (made ??= (await unixfsModules()).unixfs({ blockstore }))
    const known = new KnownFiles()

    const hasBlock = (root: CID) =>
      Effect.tryPromise({
        try: async (signal) => blockstore.has(root, { signal }),
        catch: (cause) => cause instanceof ContentStoreUnavailable ? cause : new ContentStoreUnavailable({ operation: "has", cause })
      })

    return SnapshotStore.of({
      importTree: (entries) => importTree({ ...backend, known }, entries),
      readTree: (cid) =>
        parse(cid).pipe(Effect.flatMap((root) =>
          Effect.tryPromise({
            try: (signal) => readTree(blockstore, root, { signal }),
            catch: (cause) => cause instanceof RootIsNotADirectory ? new NotADirectory({ cid }) : failure("readTree", cid)(cause)
          })
        )),
      diffTrees: (from, to) =>
        Effect.all([parse(from), parse(to)]).pipe(Effect.flatMap(([before, after]) =>
          Effect.tryPromise({
            try: (signal) => diffTrees(blockstore, before, after, { signal }),
            catch: (cause) => {
              // Which tree lacks a block, or is no directory: the one whose root it is, else the newer tree's.
              const cid = cause instanceof Error && cause.message.startsWith(`${before} `) ? from : to
              return cause instanceof RootIsNotADirectory ? new NotADirectory({ cid }) : failure("diffTrees", cid)(cause)
            }
          })
        )),
      cat: (cid) =>
        Stream.unwrap(parse(cid).pipe(Effect.map((root) =>
          // offline: a missing block is an error at once, never a search.
          Stream.fromAsyncIterable(
            (async function*() {
              yield* (await files()).cat(root, { offline: true })
            })(),
            failure("cat", cid)
          )
        ))),
      car: (cid) =>
        Stream.unwrap(Effect.gen(function*() {
          const root = yield* parse(cid)
          // Fail before the CAR header goes out, so a caller can still answer "not found".
          if (!(yield* hasBlock(root))) return yield* new ContentNotFound({ cid, network })
          const { writer, out } = CarWriter.create([root])
          const write = Effect.tryPromise({
            try: async (signal) => {
              // Each put waits until `out` has been read: the walk goes no faster than the consumer.
              for await (const block of dagBlocks(blockstore, root, { signal })) await writer.put(block)
              await writer.close()
            },
            catch: failure("car", cid)
          })
          return Stream.fromAsyncIterable(out, failure("car", cid)).pipe(Stream.merge(Stream.fromEffectDrain(write)))
        })),
      has: (cid) =>
        parse(cid).pipe(
          Effect.flatMap(hasBlock),
          Effect.catchTag("ContentNotFound", () => Effect.succeed(false))
        ),
      collectGarbage: (live) =>
        Effect.sync(() => known.forget()).pipe(
          Effect.andThen(backend.collectGarbage(parseLive(live))),
          Effect.map((blocksRemoved) => ({ blocksRemoved }))
        )
    })
  })

/**
 * The blockstore with `putMany` writing only the blocks it lacks. FsBlockstore rewrites a block it has (a temporary
 * file and a rename, no fsync); asking first costs one `access` per block, an order of magnitude less than a rewrite
 * and a few percent of a new write.
 */
const skippingStored = (store: Blockstore): TreeBlockstore => ({
  get: (cid, options) => store.get(cid, options),
  has: (cid, options) => store.has(cid, options),
  put: (cid, bytes, options) => store.put(cid, bytes, options),
  putMany: async function*(source, options) {
    const pairs = await collect(source)
    const stored = await mapConcurrently(pairs, 50, async ({ cid }) => store.has(cid, options))
    yield* store.putMany(pairs.filter((_, index) => !stored[index]), options)
  }
})

/**
 * The SnapshotStore on any embedded blockstore (its own: garbage collection deletes every block no live root
 * reaches). `blockSize` tells a block's size without reading it where the store can; by default the block is read.
 */
export const make = (blockstore: Blockstore, options: { readonly blockSize?: BlockSize } = {}) =>
  makeWith({
    blockstore: skippingStored(blockstore),
    blockSize: options.blockSize ?? blockSizeByReading(blockstore),
    collectGarbage: (live) =>
      Effect.tryPromise({
        try: (signal) => markAndSweep(blockstore, live, { signal }),
        catch: (cause) => new ContentStoreUnavailable({ operation: "collectGarbage", cause })
      })
  })

/** A block's size from its file's metadata: FsBlockstore keeps each block in a file of its own. */
const fileSize = (location: string, sharding: NextToLast): BlockSize => async (cid) => {
  const { dir, file } = sharding.encode(cid)
  try {
    return (await fs.stat(path.join(location, dir, file))).size
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw cause
  }
}

/** Blocks kept as files under `<dataDir>/ipfs/snapshots`, the directory created on first use. */
export const layer = (options: { readonly dataDir: string }) => layerAt(path.join(options.dataDir, "ipfs", "snapshots"))

/** Blocks kept as files under `directory` (one several nodes of a host, or of a shared volume, may share). */
export const layerAt = (directory: string) =>
  Layer.effect(
    SnapshotStore,
    Effect.gen(function*() {
      const location = path.resolve(directory)
      const sharding = new NextToLast()
      const store = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const store = new FsBlockstore(location, { shardingStrategy: sharding })
            await store.open()
            return store
          },
          catch: (cause) => new ContentStoreUnavailable({ operation: "open", cause })
        }),
        (store) => Effect.promise(() => store.close())
      )
      return yield* make(store, { blockSize: fileSize(location, sharding) })
    })
  )

/** Blocks kept in memory, a fresh store each time the layer is built: for tests and the simulated runtime. */
export const layerMemory = Layer.effect(SnapshotStore, Effect.suspend(() => make(new MemoryBlockstore())))
